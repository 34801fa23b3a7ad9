package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	seedgrammar "github.com/simlab/simlab/model/seeds"
)

// fmtDur renders a virtual duration with about four significant digits, in
// the unit people read best at its size. Wall-clock instants never reach the
// screen; everything shown is a duration or an offset from a run's start.
func fmtDur(d time.Duration) string {
	neg := d < 0
	if neg {
		d = -d
	}
	var s string
	switch {
	case d == 0:
		s = "0"
	case d < time.Microsecond:
		s = strconv.FormatInt(int64(d), 10) + "ns"
	case d < time.Millisecond:
		s = trimFloat(float64(d)/1e3, 1) + "µs"
	case d < time.Second:
		s = trimFloat(float64(d)/1e6, 2) + "ms"
	case d < time.Minute:
		s = trimFloat(float64(d)/1e9, 3) + "s"
	default:
		m := d / time.Minute
		s = fmt.Sprintf("%dm%ss", m, trimFloat(float64(d-m*time.Minute)/1e9, 1))
	}
	if neg {
		return "-" + s
	}
	return s
}

// fmtOffset renders an instant as its offset from the run's start.
func fmtOffset(d time.Duration) string {
	if d < 0 {
		return fmtDur(d)
	}
	return "+" + fmtDur(d)
}

func trimFloat(f float64, prec int) string {
	s := strconv.FormatFloat(f, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// width is a string's width in terminal cells. Every symbol the TUI draws
// (…, ✓, ✗, ↻, ▾, █, ›, µ) is one cell wide, so counting runes is exact for
// its own text; names and values from a trace file are shown as they come.
func width(s string) int { return utf8.RuneCountInString(s) }

// fit truncates s to at most w cells, marking a cut with "…", and pads it
// with spaces to exactly w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if width(s) <= w {
		return s + strings.Repeat(" ", w-width(s))
	}
	var b strings.Builder
	used := 0
	for _, r := range s {
		if used+1 > w-1 {
			break
		}
		b.WriteRune(r)
		used++
	}
	b.WriteString("…")
	used++
	return b.String() + strings.Repeat(" ", max(0, w-used))
}

// fitLeft is fit without the padding.
func fitLeft(s string, w int) string {
	if width(s) <= w {
		return s
	}
	return strings.TrimRight(fit(s, w), " ")
}

// seedList renders seeds compactly for people, in the one seed grammar
// (seeds.Format) with an en dash for ranges: 1–8, 1,3,5, or 1–8,42.
func seedList(seeds []uint64) string {
	if len(seeds) == 0 {
		return "none"
	}
	return strings.ReplaceAll(seedgrammar.Format(seeds), "..", "–")
}
