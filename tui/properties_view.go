package tui

import (
	"strings"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/simlab/simlab/properties"
)

// propertiesView lists every property's verdict for one run; under it, the
// story of the selected property's violations (properties.Story) and the
// command that replays the run.
type propertiesView struct {
	*tview.Flex
	run   *Run
	table *tview.Table
	story *tview.TextView
	props []properties.Property
}

func newPropertiesView(r *Run) *propertiesView {
	v := &propertiesView{Flex: tview.NewFlex().SetDirection(tview.FlexRow), run: r,
		table: tview.NewTable(), story: tview.NewTextView(), props: properties.All()}
	v.table.SetSelectable(true, false).SetFixed(1, 0).SetSelectedStyle(styleSelected)
	v.story.SetWrap(true).SetWordWrap(true)
	v.story.SetTextStyle(styleBase)
	v.table.SetSelectionChangedFunc(func(int, int) { v.showStory() })
	for c, t := range []string{"PROPERTY", "VERDICT", "WHAT IT SAYS"} {
		v.table.SetCell(0, c, tview.NewTableCell(t).SetStyle(styleHeader).SetSelectable(false))
	}
	for i, p := range v.props {
		judged, vs, _ := r.verdictOf(p.Name)
		n := len(vs)
		verdict, st := "✓ holds", styleOK
		switch {
		case !judged && r.Judged != nil:
			verdict, st = "not judged", styleDim
		case !judged:
			verdict, st = "n/a", styleDim
		case n > 0:
			verdict, st = "✗ "+itoa(n)+" violation", styleError
			if n > 1 {
				verdict += "s"
			}
		}
		v.table.SetCell(i+1, 0, tview.NewTableCell(p.Name).SetStyle(st))
		v.table.SetCell(i+1, 1, tview.NewTableCell(verdict).SetStyle(st))
		v.table.SetCell(i+1, 2, tview.NewTableCell(tview.Escape(p.Desc)).SetStyle(styleDim).SetExpansion(1).SetMaxWidth(70))
	}
	v.AddItem(v.table, len(v.props)+2, 0, true)
	v.AddItem(v.story, 0, 1, false)
	// Land on the first violated property: that is what the view is for.
	first := 1
	for i, p := range v.props {
		if _, vs, _ := r.verdictOf(p.Name); len(vs) > 0 {
			first = i + 1
			break
		}
	}
	v.table.Select(first, 0)
	v.showStory()
	return v
}

// storyRows is the least of the pane that the story keeps: on a small
// terminal (80×24) the table gives up rows, and scrolls to its selection,
// so that the story of the selected property is still read.
const storyRows = 8

// Draw gives the table the rows it needs, or, when the story would have
// fewer than storyRows, what the story leaves it.
func (v *propertiesView) Draw(screen tcell.Screen) {
	_, _, _, h := v.GetRect()
	rows := len(v.props) + 2
	if h-rows < storyRows {
		rows = max(h-storyRows, min(rows, 4))
	}
	v.ResizeItem(v.table, rows, 0)
	v.Flex.Draw(screen)
}

func (v *propertiesView) kind() ViewKind { return ViewProperties }

func (v *propertiesView) crumb() string { return "properties of " + v.run.Label() }

func (v *propertiesView) violations(name string) []properties.Violation {
	var out []properties.Violation
	for _, x := range v.run.Violations {
		if x.Property == name {
			out = append(out, x)
		}
	}
	return out
}

func (v *propertiesView) selected() (properties.Property, bool) {
	row, _ := v.table.GetSelection()
	if row < 1 || row > len(v.props) {
		return properties.Property{}, false
	}
	return v.props[row-1], true
}

func (v *propertiesView) showStory() {
	p, ok := v.selected()
	if !ok {
		return
	}
	var lines []string
	replay := v.run.Replay()
	judged, vs, why := v.run.verdictOf(p.Name)
	switch {
	case !judged && v.run.Judged != nil:
		lines = append(lines, p.Name+" is not judged from the spans of "+v.run.Source()+": "+why+".",
			"Replay the run to check it on its history:")
	case !judged:
		lines = append(lines, "Verdicts need the simulation's history; this run was read from "+v.run.Source()+".",
			"Replay it to check the properties:")
	case len(vs) == 0 && !v.run.Checked:
		lines = append(lines, p.Name+" holds in the spans of "+v.run.RunID+" ("+why+").", "Replay:")
	case len(vs) == 0:
		lines = append(lines, p.Name+" holds for "+v.run.RunID+".")
	default:
		for _, story := range vs {
			lines = append(lines, story...)
			lines = append(lines, "")
		}
		if v.run.Checked {
			lines = append(lines, "⏎ puts the timeline's cursor at the first event of the story. Replay:")
		} else {
			lines = append(lines, "Judged from the spans ("+why+"). Replay:")
		}
	}
	if replay == "" {
		replay = "(unknown: the trace does not say which seed and scenario made it)"
	}
	lines = append(lines, "  "+replay)
	v.story.SetText(strings.Join(lines, "\n"))
	v.story.ScrollToBeginning()
}

// firstEvidence is the offset of the selected property's first proof, for
// opening the timeline there.
func (v *propertiesView) firstEvidence() (time.Duration, bool) {
	p, ok := v.selected()
	if !ok {
		return 0, false
	}
	for _, x := range v.violations(p.Name) {
		for _, e := range x.Evidence {
			return historyOffset(v.run, e.At), true
		}
	}
	return 0, false
}

// page scrolls the story by half its pane, within its lines: the table
// keeps j/k, and a story longer than the pane (several violations) must
// still show its end, the replay command.
func (v *propertiesView) page(delta int) {
	_, _, _, height := v.story.GetInnerRect()
	row, _ := v.story.GetScrollOffset()
	last := max(0, v.story.GetWrappedLineCount()-height)
	v.story.ScrollTo(min(max(0, row+delta*max(1, height/2)), last), 0)
}

func (v *propertiesView) move(delta int) {
	moveTable(v.table, delta)
	v.showStory()
}
