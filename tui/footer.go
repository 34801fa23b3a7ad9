package tui

import (
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// footer is the key hint line: every binding of the keymap that applies to
// the current view, wrapped over as many lines as the footer has.
type footer struct {
	*tview.Box
	view ViewKind
}

func newFooter() *footer { return &footer{Box: tview.NewBox()} }

func (f *footer) Draw(screen tcell.Screen) {
	f.DrawForSubclass(screen, f)
	x, y, w, h := f.GetInnerRect()
	col, row := 1, 0
	for _, it := range footerItems(f.view) {
		need := width(it.label) + 1 + width(it.action)
		if col+need > w && col > 1 {
			row, col = row+1, 1
		}
		if row >= h {
			break
		}
		// The key in one colour, its action's name in another.
		col += put(screen, x+col, y+row, w-col, it.label, styleKey)
		col += put(screen, x+col, y+row, w-col, " "+it.action, styleDim)
		col += 2
	}
}
