package realworld

import (
	"cmp"
	"slices"
)

// This file counts the order a World answered concurrent writes in, the one
// measure simlab calibrate, validate --sim-store and the bursts of burst.go
// share: first come first served answers none out of order, random order of
// service about half of the pairs that wait together, processor sharing few
// (writes of like work that arrived in turn answer in turn).

// TogetherMS: writes that reached the World less than this apart have no
// arrival order of their own. The runtime issues a fan-out's creates, and
// its consumers their claims, from one synchronous loop, which the real
// World sees spread over a millisecond or two and simlab at one instant;
// the measured share moved by at most 0.02 for cut-offs from 0.5 to 10 ms
// on the calibration's runs.
const TogetherMS = 1.0

// Interval is one write's time in the World, in ms: when it reached the
// World and when it answered.
type Interval struct{ From, To float64 }

// WriteOrder counts the pairs of writes whose times in the World overlap and
// that arrived at least TogetherMS apart (Pairs), and of those the pairs the
// World answered in the reverse of their arrival order (Reversed).
type WriteOrder struct {
	Pairs    int `json:"pairs"`
	Reversed int `json:"reversed"`
}

// Share is the part of the pairs answered out of arrival order (0 with no
// pairs).
func (o WriteOrder) Share() float64 {
	if o.Pairs == 0 {
		return 0
	}
	return float64(o.Reversed) / float64(o.Pairs)
}

// Add is o and p's pairs together.
func (o WriteOrder) Add(p WriteOrder) WriteOrder {
	return WriteOrder{Pairs: o.Pairs + p.Pairs, Reversed: o.Reversed + p.Reversed}
}

// CountWriteOrder counts one run's writes (ws is sorted in place).
func CountWriteOrder(ws []Interval) WriteOrder {
	slices.SortFunc(ws, func(a, b Interval) int {
		if a.From != b.From {
			return cmp.Compare(a.From, b.From)
		}
		return cmp.Compare(a.To, b.To)
	})
	var o WriteOrder
	for i, a := range ws {
		for _, b := range ws[i+1:] {
			if b.From >= a.To {
				break // b, and every later arrival, came after a answered
			}
			if b.From-a.From < TogetherMS {
				continue
			}
			o.Pairs++
			if b.To < a.To {
				o.Reversed++
			}
		}
	}
	return o
}
