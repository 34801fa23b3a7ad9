package tui

import (
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// header is the top line: the breadcrumb of open views on the left (what
// Esc walks back through) and what the session was opened on at the right.
type header struct {
	*tview.Box
	crumbs []string
	right  string
}

func newHeader() *header { return &header{Box: tview.NewBox()} }

func (h *header) Draw(screen tcell.Screen) {
	h.DrawForSubclass(screen, h)
	x, y, w, _ := h.GetInnerRect()
	fill(screen, x, y, w, ' ', styleHeader.Reverse(true))
	right := h.right
	if width(right)+2 > w/2 {
		right = fitLeft(right, max(0, w/2-2))
	}
	rw := width(right)
	// Two spaces at least between the trail and the status, which would
	// otherwise read as one word (…timeline /workflow.step.d…golden-t2).
	avail := max(0, w-rw-3)
	// When the trail is too long, the oldest crumbs give way: the view on
	// top is the one being looked at.
	crumbs := h.crumbs
	left := " simlab › " + strings.Join(crumbs, " › ")
	for len(crumbs) > 1 && width(left) > avail {
		crumbs = crumbs[1:]
		left = " simlab › … › " + strings.Join(crumbs, " › ")
	}
	put(screen, x, y, avail, fitLeft(left, avail), styleHeader.Reverse(true))
	put(screen, x+w-rw-1, y, rw, right, styleHeader.Reverse(true))
}
