package tui

import (
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// Styles the views share. Colours say what kind of thing a cell is; no
// meaning rests on colour alone (marks and text say it too).
var (
	styleBase     = tcell.StyleDefault.Foreground(tcell.ColorWhite).Background(tcell.ColorBlack)
	styleDim      = styleBase.Foreground(tcell.ColorGray)
	styleHeader   = styleBase.Foreground(tcell.ColorAqua).Bold(true)
	styleSelected = styleBase.Reverse(true)
	styleKey      = styleBase.Foreground(tcell.ColorYellow).Bold(true)
	styleError    = styleBase.Foreground(tcell.ColorRed).Bold(true)
	styleOK       = styleBase.Foreground(tcell.ColorGreen)
	styleCursor   = styleBase.Foreground(tcell.ColorYellow).Bold(true)
	// styleHighlight marks workflow.step.dispatch_prologue wherever it shows.
	styleHighlight = styleBase.Foreground(tcell.ColorBlack).Background(tcell.ColorYellow).Bold(true)
)

// put writes text at (x, y), one cell per rune, clipped to maxWidth cells,
// and returns the cells written. Unlike tview.Print it does not interpret
// [style] tags, so names and values from a trace are shown as they are.
func put(screen tcell.Screen, x, y, maxWidth int, text string, style tcell.Style) int {
	n := 0
	for _, r := range text {
		if n >= maxWidth {
			break
		}
		screen.SetContent(x+n, y, r, nil, style)
		n++
	}
	return n
}

// fill paints w cells from (x, y) with r.
func fill(screen tcell.Screen, x, y, w int, r rune, style tcell.Style) {
	for i := 0; i < w; i++ {
		screen.SetContent(x+i, y, r, nil, style)
	}
}

// moveTable moves a table's row selection by delta selectable rows, skipping
// headings and fixed rows; a delta past either end stops at the last
// selectable row there.
func moveTable(t *tview.Table, delta int) {
	selectable := func(row int) bool {
		c := t.GetCell(row, 0)
		return c != nil && !c.NotSelectable
	}
	row, _ := t.GetSelection()
	step := 1
	if delta < 0 {
		step = -1
	}
	for moved := 0; moved != delta; moved += step {
		next := row + step
		for next >= 0 && next < t.GetRowCount() && !selectable(next) {
			next += step
		}
		if next < 0 || next >= t.GetRowCount() {
			break
		}
		row = next
	}
	if selectable(row) {
		t.Select(row, 0)
	}
}
