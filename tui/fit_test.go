package tui

import (
	"strings"
	"testing"
)

// at80x24 is a harness on the smallest terminal the TUI supports, drawn
// once as a terminal would before the first key.
func at80x24(t *testing.T, cfg Config) *harness {
	t.Helper()
	h := newHarness(t, cfg)
	h.screen.SetSize(80, 24)
	h.draw()
	return h
}

func lines(screen string) []string { return strings.Split(screen, "\n") }

// lineWith is the first screen line containing s.
func lineWith(t *testing.T, screen, s string) string {
	t.Helper()
	for _, l := range lines(screen) {
		if strings.Contains(l, s) {
			return l
		}
	}
	t.Fatalf("no line shows %q:\n%s", s, screen)
	return ""
}

// At 80×24 the compare view shows both runs whole: both titles, both
// values of every figure, and the knob that differs with each side's value.
func TestCompareFitsAt80x24(t *testing.T) {
	h := at80x24(t, Config{Scenario: "golden-t2", Seeds: []uint64{1}})
	h.command("set workflow.max_inline=0")
	h.command("compare 1 2")
	s := h.draw()
	if head := lines(s)[1]; !strings.Contains(head, " #1 ") || !strings.HasSuffix(head, " #2") {
		t.Fatalf("the column titles are not both whole: %q", head)
	}
	for label, want := range map[string][2]string{
		"run":                   {"wrun_0000 seed 1", "wrun_0000 seed 1"},
		"knobs (--set)":         {"—", "workflow.max_inline=0"},
		"  workflow.max_inline": {"1", "0"},
		"spans":                 {"22", "28"},
	} {
		l := lineWith(t, s, label+" ")
		rest := strings.TrimSuffix(l, " "+want[1])
		if rest == l || !strings.HasSuffix(strings.TrimRight(rest, " "), " "+want[0]) {
			t.Errorf("row %q: %q, want %q then %q, whole", label, l, want[0], want[1])
		}
	}
	if l := lineWith(t, s, "workflow.max_inline "); !strings.HasPrefix(l, "≠") {
		t.Errorf("the differing knob is not marked ≠: %q", l)
	}
	for _, l := range lines(s) {
		if w := width(l); w > 80 {
			t.Errorf("line wider than the screen (%d): %q", w, l)
		}
	}
	// Long run titles are cut at their end, never at their start.
	cv := h.top().(*compareView)
	cv.rows[0].y = "wrun_0000 seed 1 and a very long tail that cannot fit in any column at all"
	cv.width = 0
	if l := lineWith(t, h.draw(), " run "); !strings.Contains(l, "wrun_0000 seed 1 and") || !strings.HasSuffix(l, "…") {
		t.Errorf("a long value is not cut at its end: %q", l)
	}
}

// The runs view never shows a column cut by the screen's edge: every
// heading is whole, columns that do not fit wait to the right, and h/l
// (shown in the footer and in ?) scroll to them.
func TestRunsColumnsFitAndScroll(t *testing.T) {
	h := at80x24(t, defaultConfig())
	titles := map[string]bool{}
	for _, c := range runColumns {
		titles[c.title] = true
		titles[c.title+"▲"] = true
		titles[c.title+"▼"] = true
	}
	heading := func() []string {
		f := strings.Fields(strings.TrimRight(lines(h.draw())[1], "←→ "))
		for _, tok := range f {
			if !titles[tok] {
				t.Fatalf("mangled column heading %q in %q", tok, lines(h.draw())[1])
			}
		}
		return f
	}
	first := heading()
	if slicesContains(first, "REDELIV") || !strings.HasSuffix(lines(h.draw())[1], "→") {
		t.Fatalf("at 80 columns REDELIV should wait to the right behind a →: %q", lines(h.draw())[1])
	}
	for range len(runColumns) {
		h.keys("l")
	}
	if last := heading(); !slicesContains(last, "REDELIV") || !strings.Contains(lines(h.draw())[1], "←") {
		t.Fatalf("l did not scroll to REDELIV: %q", lines(h.draw())[1])
	}
	h.keys("<Left>")
	for range len(runColumns) {
		h.keys("h")
	}
	if again := heading(); strings.Join(again, " ") != strings.Join(first, " ") {
		t.Fatalf("h did not scroll back: %v, want %v", again, first)
	}
	s := h.draw()
	if !strings.Contains(s, "h/← left") || !strings.Contains(s, "l/→ right") {
		t.Fatalf("the footer does not show horizontal scrolling:\n%s", s)
	}
	h.keys("?")
	if s := h.draw(); !strings.Contains(s, "scroll the columns left") {
		t.Fatalf("? does not list horizontal scrolling:\n%s", s)
	}
}

func slicesContains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// Runs re-simulated with other knobs are told apart in the runs view.
func TestRunsWithOtherKnobsAreDistinguishable(t *testing.T) {
	h := at80x24(t, Config{Scenario: "golden-t2", Seeds: []uint64{1}})
	h.command("set workflow.max_inline=0")
	s := lines(h.draw())
	one, two := strings.TrimSpace(s[2])[1:], strings.TrimSpace(s[3])[1:]
	if one == two || !strings.Contains(two, "max_inline=0") {
		t.Fatalf("the two runs look alike apart from #:\n%s\n%s", s[2], s[3])
	}
}

// A filter that matches nothing says so, in every view that filters.
func TestEmptyFilterSaysSo(t *testing.T) {
	t2 := Config{Scenario: "golden-t2", Seeds: []uint64{1}}
	for _, c := range []struct {
		keys, want string
	}{
		{"/no-such-run<Enter>", "no run matches /no-such-run"},
		{"<Enter>/no-such-span<Enter>", "no span matches /no-such-span"},
		{"<Enter><Enter>/no-such-attr<Enter>", "nothing here matches /no-such-attr"},
	} {
		h := at80x24(t, t2)
		h.keys(c.keys)
		if s := h.draw(); !strings.Contains(s, c.want) || !strings.Contains(s, "esc clears the filter") {
			t.Errorf("%s: the screen does not say %q:\n%s", c.keys, c.want, s)
		}
	}
}

// At 80×24 the help wraps each line under its own description: no wrapped
// text starts at the screen's left edge, where only headings belong.
func TestHelpWrapsUnderItsColumnAt80x24(t *testing.T) {
	h := at80x24(t, Config{Scenario: "golden-t2", Seeds: []uint64{1}})
	h.keys("?")
	for page := 0; page < 5; page++ {
		s := lines(h.draw())
		for _, l := range s[1 : len(s)-3] { // between the header and the footer
			if first := strings.Fields(l + " x")[0]; l != "" && l[0] != ' ' && strings.ToUpper(first) != first {
				t.Errorf("help line at the left edge: %q", l)
			}
		}
		for range 18 {
			h.keys("j")
		}
	}
}
