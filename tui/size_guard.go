package tui

import (
	"fmt"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// Minimum terminal size: the runs view's columns and the timeline's bars
// need 80 columns, and the views plus header, prompt and footer 24 lines.
const (
	MinWidth  = 80
	MinHeight = 24
)

// sizeGuard wraps the whole screen. Below the minimum size it draws a
// message instead of a broken layout, and the app keeps running, so the
// views come back as soon as the terminal is enlarged.
type sizeGuard struct {
	*tview.Box
	inner tview.Primitive
	small bool
	// layout, if set, adapts the inner layout to the screen's size before
	// it is drawn.
	layout func(w, h int)
}

func newSizeGuard(inner tview.Primitive) *sizeGuard {
	return &sizeGuard{Box: tview.NewBox(), inner: inner}
}

func (g *sizeGuard) Draw(screen tcell.Screen) {
	x, y, w, h := g.GetRect()
	g.small = w < MinWidth || h < MinHeight
	if !g.small {
		if g.layout != nil {
			g.layout(w, h)
		}
		g.inner.SetRect(x, y, w, h)
		g.inner.Draw(screen)
		return
	}
	g.DrawForSubclass(screen, g)
	// Short lines, so that the message itself fits a small terminal
	// (40×10 and less).
	lines := []string{
		"simlab tui needs at least",
		fmt.Sprintf("%d×%d; this one is %d×%d.", MinWidth, MinHeight, w, h),
		"Enlarge it to go on,",
		"or press q to quit.",
	}
	top := y + max(0, (h-len(lines))/2)
	for i, l := range lines {
		l = fitLeft(l, w)
		put(screen, x+max(0, (w-width(l))/2), top+i, w, l, styleBase)
	}
}

func (g *sizeGuard) InputHandler() func(*tcell.EventKey, func(tview.Primitive)) {
	return g.inner.InputHandler()
}

func (g *sizeGuard) Focus(delegate func(tview.Primitive)) { delegate(g.inner) }

func (g *sizeGuard) HasFocus() bool { return g.inner.HasFocus() }

func (g *sizeGuard) PasteHandler() func(string, func(tview.Primitive)) {
	return g.inner.PasteHandler()
}

func (g *sizeGuard) MouseHandler() func(tview.MouseAction, *tcell.EventMouse, func(tview.Primitive)) (bool, tview.Primitive) {
	return g.inner.MouseHandler()
}
