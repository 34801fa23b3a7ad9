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

// place calls at for each hint with its line and column when the hints
// are wrapped at width w, and returns the number of lines they take.
func (f *footer) place(w int, at func(it hint, row, col int)) int {
	col, row := 1, 0
	for _, it := range footerItems(f.view) {
		need := width(it.label) + 1 + width(it.action)
		if col+need > w && col > 1 {
			row, col = row+1, 1
		}
		at(it, row, col)
		col += need + 2
	}
	return row + 1
}

// lines is how many lines the hints need at width w, so the layout can
// give the footer all of them: a hint cut off would be a key nobody finds.
func (f *footer) lines(w int) int { return f.place(w, func(hint, int, int) {}) }

func (f *footer) Draw(screen tcell.Screen) {
	f.DrawForSubclass(screen, f)
	x, y, w, h := f.GetInnerRect()
	f.place(w, func(it hint, row, col int) {
		if row >= h {
			return
		}
		// The key in one colour, its action's name in another.
		col += put(screen, x+col, y+row, w-col, it.label, styleKey)
		put(screen, x+col, y+row, w-col, " "+it.action, styleDim)
	})
}
