package tui

import (
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// commandHelp documents the `:` commands; App.execute carries them out.
var commandHelp = [][2]string{
	{":seed N", "simulate seed N with the current knobs and add its runs"},
	{":seeds A..B", "simulate seeds A to B with the current knobs"},
	{":scenario NAME|FILE", "switch to a built-in scenario or a scenario file (knobs reset) and simulate the seeds"},
	{":variant NAME[,NAME]", "switch protocol variants (none: the shipped protocol) and simulate the seeds"},
	{":set KEY=VALUE", "change a scenario field as --set does, e.g. workflow.fanouts=64, and simulate"},
	{":compare A B", "compare runs #A and #B side by side"},
	{":q", "quit"},
}

// helpView is the `?` screen: the keymap, exactly as it drives the keys,
// then the commands, the filter syntax and the timeline's marks. Lines too
// long for the screen wrap under their own description column, so that a
// key's column stays clear at 80×24.
type helpView struct {
	*tview.TextView
	width int
}

func newHelpView() *helpView {
	v := &helpView{TextView: tview.NewTextView()}
	v.SetWrap(true).SetWordWrap(true).SetTextStyle(styleBase)
	v.SetText(helpText(0))
	return v
}

func (v *helpView) Draw(screen tcell.Screen) {
	if _, _, w, _ := v.GetInnerRect(); w != v.width {
		v.width = w
		row, _ := v.GetScrollOffset()
		v.SetText(helpText(w))
		v.ScrollTo(row, 0)
	}
	v.TextView.Draw(screen)
}

// helpText is the help at width w (0: unwrapped).
func helpText(w int) string {
	var b strings.Builder
	b.WriteString("KEYS\n")
	for _, l := range helpLines(w - 3) {
		b.WriteString("  " + l + "\n")
	}
	b.WriteString("\nCOMMANDS (after :, ↑/↓ walk the history)\n")
	for _, c := range commandHelp {
		b.WriteString("  " + fit(c[0], 22) + " " + c[1] + "\n")
	}
	b.WriteString(`
FILTER (after /, on runs, timeline and span)
  text                   rows whose name, marks, attribute key or value contains it (any case)
  key=value              spans whose attribute (or resource attribute) key is exactly value
  !…                     inverts: /!workflow.step.dispatch_prologue=run_context (rows stay in tree order)

TIMELINE
  bars are scaled to the run's duration; START is the offset from the run's start (virtual time)
  DEPLOY/VER: deployment/version that handled the delivery (consumer), made the publish (producer)
  marks: ✗ error · !kind injected fault · ↻N redelivery attempt N · ⇄ misdelivered · ↪ re-routed
         ~stale stale read · lazy the last completer's lazy runs.get
         ctx / get: the step's dispatch prologue, run_context (fetch-free) or runs_get (legacy)
  the state panel replays the run's accepted log up to the time cursor (│, moved by [ and ])
`)
	if w <= 0 {
		return b.String()
	}
	var out strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		for _, part := range wrapHanging(l, w-1) {
			out.WriteString(part + "\n")
		}
	}
	return out.String()
}

// wrapHanging wraps line at word boundaries to at most w cells; the lines
// after the first start under the line's last column (after its last run of
// two or more spaces in the first half), or two cells in when it has none.
func wrapHanging(line string, w int) []string {
	if width(line) <= w || w < 20 {
		return []string{line}
	}
	runes := []rune(line)
	lead := len(runes) - len([]rune(strings.TrimLeft(line, " ")))
	indent := lead + 2
	for i := lead; i+2 < len(runes) && i < w/2; i++ {
		if runes[i] == ' ' && runes[i+1] == ' ' && runes[i+2] != ' ' {
			indent = i + 2
		}
	}
	// Split on single spaces, so runs of spaces (columns) survive inside a
	// line; a wrapped line never starts with them.
	var out []string
	cur, pad := "", string(runes[:indent])
	for _, word := range strings.Split(string(runes[indent:]), " ") {
		if cur != "" && width(pad)+width(cur)+1+width(word) > w {
			out = append(out, pad+strings.TrimRight(cur, " "))
			cur, pad = "", strings.Repeat(" ", indent)
		}
		switch {
		case cur == "" && word == "":
		case cur == "":
			cur = word
		default:
			cur += " " + word
		}
	}
	return append(out, pad+cur)
}

func (v *helpView) kind() ViewKind { return ViewHelp }

func (v *helpView) crumb() string { return "help" }

func (v *helpView) move(delta int) {
	row, _ := v.GetScrollOffset()
	v.ScrollTo(max(0, min(row+delta, strings.Count(v.GetText(false), "\n"))), 0)
}

func (v *helpView) page(delta int) {
	_, _, _, height := v.GetInnerRect()
	row, _ := v.GetScrollOffset()
	last := max(0, v.GetWrappedLineCount()-height)
	v.ScrollTo(min(max(0, row+delta*max(1, height/2)), last), 0)
}
