package realengine

import (
	"cmp"
	"slices"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/realworld"
)

// This file measures the order a World answers concurrent writes in, the
// same way on the real World's call record and on simlab's History
// (realworld.CountWriteOrder), so that the store model's write discipline
// (model.Profile.WriteOrder) is a claim a real run can contradict.

// WriteOrder is realworld.WriteOrder: the pairs of a run's writes in the
// World together, and those answered out of arrival order.
type WriteOrder = realworld.WriteOrder

// interval is one write's time in the World, in ms.
type interval = realworld.Interval

// writeOrderOf counts one run's writes.
func writeOrderOf(ws []interval) WriteOrder { return realworld.CountWriteOrder(ws) }

// realWriteOrder is the write order of a real run's runtime writes.
func realWriteOrder(run *RealRun) WriteOrder {
	order, byRun := realWrites(run)
	return writeOrderOfRuns(order, byRun)
}

// realWrites is a real run's runtime writes by workflow run (the client's
// are not the runtime's), each from when it left the wrapper to the end of
// the real World's own time, and the runs in the order they first wrote.
func realWrites(run *RealRun) ([]string, map[string][]interval) {
	byRun := map[string][]interval{}
	var order []string
	for _, c := range run.Calls {
		if c.Op == "events.create" && c.Delivery >= 0 && c.End >= 0 {
			if _, seen := byRun[c.Run]; !seen {
				order = append(order, c.Run)
			}
			byRun[c.Run] = append(byRun[c.Run], interval{From: c.Served, To: c.Served + c.Real})
		}
	}
	return order, byRun
}

// simWriteOrder is the same count on a recorded History: the writes of the
// runtime's actors, from their arrival at the store to their answer.
func simWriteOrder(h *model.History) WriteOrder {
	byRun := map[world.RunID][]interval{}
	var order []world.RunID
	for i := range h.Calls {
		c := &h.Calls[i]
		if c.Op != model.OpEventsCreate || c.Caller.Kind == model.CallerClient || c.Caller.Kind == model.CallerWorld || c.End < c.Start {
			continue
		}
		if _, seen := byRun[c.Run]; !seen {
			order = append(order, c.Run)
		}
		byRun[c.Run] = append(byRun[c.Run], interval{From: msOf(c.Start.Duration()), To: msOf(c.End.Duration())})
	}
	return writeOrderOfRuns(order, byRun)
}

// writeOrderOfRuns adds up the runs' counts, in order.
func writeOrderOfRuns[K comparable](order []K, byRun map[K][]interval) WriteOrder {
	var o WriteOrder
	for _, id := range order {
		o = o.Add(writeOrderOf(byRun[id]))
	}
	return o
}

// callCost is one call's cost and what it met: took is a write's time
// from the answer before it to its own (it arrived before that answer, so
// the World was busy with its run's writes: with one write served at a
// time, its service time) or a list's own time; inWorld the run's writes in
// the World then (a write counts itself), logged the writes answered
// before it.
type callCost struct {
	took    float64
	inWorld int
	logged  int
}

// servedWrites is each run's writes (realWrites) answered back to back:
// with one write served at a time, took is the service time of a write, and
// how it grows with inWorld or logged says what a write costs.
func servedWrites(order []string, byRun map[string][]interval) []callCost {
	var out []callCost
	for _, id := range order {
		ws := byRun[id]
		slices.SortFunc(ws, func(a, b interval) int { return cmp.Compare(a.To, b.To) })
		for i := 1; i < len(ws); i++ {
			prev := ws[i-1].To
			if ws[i].From >= prev {
				continue // the World was idle for this run when it came
			}
			in := 0
			for _, w := range ws[i:] {
				if w.From <= prev {
					in++
				}
			}
			out = append(out, callCost{took: ws[i].To - prev, inWorld: in, logged: i})
		}
	}
	return out
}

// listCosts is every runtime events.list of a real run, beside its writes
// (realWrites).
func listCosts(run *RealRun, byRun map[string][]interval) []callCost {
	var out []callCost
	for _, c := range run.Calls {
		if c.Op != "events.list" || c.Delivery < 0 || c.End < 0 {
			continue
		}
		l := callCost{took: c.Real}
		for _, w := range byRun[c.Run] {
			switch {
			case w.To <= c.Served:
				l.logged++
			case w.From <= c.Served:
				l.inWorld++
			}
		}
		out = append(out, l)
	}
	return out
}
