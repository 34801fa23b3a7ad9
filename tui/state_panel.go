package tui

import (
	"fmt"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// statePanel sits under the waterfall: where the time cursor is, which
// event of the run's log it stands on, and the run's state as of then.
type statePanel struct {
	*tview.Box
	tm     *timeModel
	cursor int
}

const statePanelHeight = 3

func newStatePanel(tm *timeModel) *statePanel {
	return &statePanel{Box: tview.NewBox(), tm: tm}
}

func (p *statePanel) Draw(screen tcell.Screen) {
	p.DrawForSubclass(screen, p)
	x, y, w, h := p.GetInnerRect()
	if h < 1 {
		return
	}
	n := len(p.tm.moments)
	title := "─ state "
	if n == 0 {
		title += "(no events recorded) "
	} else {
		m := p.tm.moments[p.cursor]
		title += fmt.Sprintf("at %s · event %d/%d: %s ", fmtOffset(m.At), p.cursor+1, n, m.text(p.tm.stepNames))
	}
	fill(screen, x, y, w, '─', styleDim)
	put(screen, x, y, w, fitLeft(title, w), styleCursor)
	if h < 2 {
		return
	}
	st := p.tm.stateAt(p.cursor)
	if n == 0 {
		st = p.tm.stateAt(-1)
	}
	put(screen, x+1, y+1, w-1, fitLeft(st.String(), w-1), styleBase)
	if h < 3 || n == 0 {
		return
	}
	next := "last event of the run · [ steps back"
	if p.cursor+1 < n {
		m := p.tm.moments[p.cursor+1]
		next = fmt.Sprintf("next at %s: %s · ] steps forward, [ back", fmtOffset(m.At), m.text(p.tm.stepNames))
	}
	put(screen, x+1, y+2, w-1, fitLeft(next, w-1), styleDim)
}
