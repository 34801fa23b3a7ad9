package tui

import (
	"strings"

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
// then the commands, the filter syntax and the timeline's marks.
type helpView struct {
	*tview.TextView
}

func newHelpView() *helpView {
	v := &helpView{TextView: tview.NewTextView()}
	v.SetWrap(true).SetWordWrap(true).SetTextStyle(styleBase)
	var b strings.Builder
	b.WriteString("KEYS\n")
	for _, l := range helpLines() {
		b.WriteString("  " + l + "\n")
	}
	b.WriteString("\nCOMMANDS (after :, ↑/↓ walk the history)\n")
	for _, c := range commandHelp {
		b.WriteString("  " + fit(c[0], 22) + " " + c[1] + "\n")
	}
	b.WriteString(`
FILTER (after /, on runs, timeline and span)
  text                   rows whose name, attribute key or value contains it (any case)
  key=value              spans whose attribute (or resource attribute) key is exactly value
  !…                     inverts: /!workflow.step.dispatch_prologue=run_context

TIMELINE
  bars are scaled to the run's duration; START is the offset from the run's start (virtual time)
  DEPLOY/VER: deployment/version that handled the delivery (consumer), made the publish (producer)
  marks: ✗ error · !kind injected fault · ↻N redelivery attempt N · ⇄ misdelivered · ↪ re-routed
         ~stale stale read · lazy the last completer's lazy runs.get
         ctx / get: the step's dispatch prologue, run_context (fetch-free) or runs_get (legacy)
  the state panel replays the run's accepted log up to the time cursor (│, moved by [ and ])
`)
	v.SetText(b.String())
	return v
}

func (v *helpView) kind() ViewKind { return ViewHelp }

func (v *helpView) crumb() string { return "help" }

func (v *helpView) move(delta int) {
	row, _ := v.GetScrollOffset()
	v.ScrollTo(max(0, min(row+delta, strings.Count(v.GetText(false), "\n"))), 0)
}
