package conformance

import (
	"fmt"
	"math"
	"slices"
)

// This file measures a real World's own costs under a burst with no runtime
// in front of it: driver.mjs issues a fan-out's writes of one run at once
// (each kind in turn: its creates, its claims, its completions) and times
// every call. It is how simlab calibrate measures world-postgres, which no
// published core runs on (docs/VALIDATION.md), and measures world-local the
// same way for comparison.

// BurstStaggerUS spaces a burst's calls on the driver's clock, so that they
// have an arrival order to be answered in or out of (the runtime issues a
// fan-out's writes from one loop, a fraction of a millisecond apart).
const BurstStaggerUS = 300

// BurstKinds are the writes a burst issues, one batch each, in order.
var BurstKinds = []string{"step_created", "step_started", "step_completed"}

// BurstKind is what the World did with one batch of width concurrent writes
// of one kind: each call's own time (ms), the gaps between consecutive
// answers (ms), the whole batch's span from its first call to its last
// answer (ms), and the order it answered them in.
type BurstKind struct {
	Kind  string     `json:"kind"`
	Calls int        `json:"calls"`
	OK    int        `json:"ok"`
	Own   []float64  `json:"own_ms"`
	Gaps  []float64  `json:"answer_gaps_ms"`
	Span  float64    `json:"span_ms"`
	Order WriteOrder `json:"order"`
}

// BurstRow is one width's bursts.
type BurstRow struct {
	Width int         `json:"width"`
	Kinds []BurstKind `json:"kinds"`
}

// Burst runs reps bursts of width on d's World, each on a fresh run, and
// returns each kind's calls of all of them together.
func Burst(d *Driver, width, reps int) (BurstRow, error) {
	if width < 1 || reps < 1 {
		return BurstRow{}, fmt.Errorf("burst of width %d, %d repetitions: want both at least 1", width, reps)
	}
	row := BurstRow{Width: width}
	for _, k := range BurstKinds {
		row.Kinds = append(row.Kinds, BurstKind{Kind: k})
	}
	for range reps {
		h := History{Runs: 1, Batches: []Batch{{Calls: []ConcCall{{Call: Call{Op: "event", Type: "run_started"}}}}}}
		for _, k := range BurstKinds {
			var b Batch
			for i := range width {
				b.Calls = append(b.Calls, ConcCall{Call: Call{Op: "event", Type: k, Step: i}, DelayUS: i * BurstStaggerUS})
			}
			h.Batches = append(h.Batches, b)
		}
		res, err := d.RunHistory(h)
		if err != nil {
			return row, err
		}
		for ki := range BurstKinds {
			row.Kinds[ki].add(res[ki+1].Replies)
		}
	}
	return row, nil
}

// add counts one batch's replies.
func (k *BurstKind) add(reps []Reply) {
	ws := make([]Interval, len(reps))
	ends := make([]float64, len(reps))
	for i, r := range reps {
		ws[i] = Interval{From: float64(r.T0) / 1e6, To: float64(r.T1) / 1e6}
		ends[i] = ws[i].To
		k.Own = append(k.Own, ws[i].To-ws[i].From)
		if r.Res == "ok" {
			k.OK++
		}
	}
	k.Calls += len(reps)
	slices.Sort(ends)
	for i := 1; i < len(ends); i++ {
		k.Gaps = append(k.Gaps, ends[i]-ends[i-1])
	}
	first := math.Inf(1)
	for _, w := range ws {
		first = math.Min(first, w.From)
	}
	if len(ws) > 0 {
		k.Span += ends[len(ends)-1] - first
	}
	k.Order = k.Order.Add(CountWriteOrder(ws))
}

// Median is the nearest-rank median of xs (0 when empty).
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}
