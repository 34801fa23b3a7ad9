package properties

import (
	"fmt"
	"slices"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/world"
)

// oneBodyAtATime: a step's body never runs in two deliveries at once. Two
// bodies of one step overlapping in time both do the step's side effects
// while neither knows of the other: what an engine's at-least-once
// delivery must not turn into (a second continuation claiming a step
// another invocation runs, or a body begun before its claim was answered).
// A body ends when it returns, or when its delivery ends (a crash kills it).
func oneBodyAtATime(h *model.History) []Violation {
	type body struct {
		d          int32
		start, end int64
	}
	byStep := map[[2]int32][]body{}
	for i := range h.Deliveries {
		d := &h.Deliveries[i]
		if !d.BodyRan {
			continue
		}
		end := d.BodyEnd
		if end < d.BodyStart {
			end = d.End
		}
		k := [2]int32{int32(d.Run), int32(d.Step)}
		byStep[k] = append(byStep[k], body{d: int32(i), start: int64(d.BodyStart), end: int64(end)})
	}
	keys := make([][2]int32, 0, len(byStep))
	for k := range byStep {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]int32) int {
		if a[0] != b[0] {
			return int(a[0] - b[0])
		}
		return int(a[1] - b[1])
	})
	var out []Violation
	for _, k := range keys {
		bs := byStep[k]
		slices.SortFunc(bs, func(a, b body) int {
			if a.start != b.start {
				return cmpInt64(a.start, b.start)
			}
			return int(a.d - b.d)
		})
		// The body that ends last among those begun so far: a later body
		// beginning before it ends overlaps it.
		open := 0
		for j := 1; j < len(bs); j++ {
			if bs[j].start < bs[open].end {
				r, step := world.RunID(k[0]), world.StepID(k[1])
				da, db := bs[open].d, bs[j].d
				out = append(out, Violation{Run: r,
					Message:  fmt.Sprintf("the body of %s ran in deliveries d%d and d%d at once", stepLabel(h, r, step), da, db),
					Evidence: append(bodyEvidence(h, da, r, step, "begins"), bodyEvidence(h, db, r, step, "begins while the first still runs")...)})
				break
			}
			if bs[j].end > bs[open].end {
				open = j
			}
		}
	}
	return out
}

// bodyEvidence is a delivery's claims of the step (whatever they answered:
// core's turbo first delivery runs an inline body before its claim is
// answered, conformance/engine TestForcedEarlyQueuedCompletionAgainstTheInlineStep)
// and its body's beginning.
func bodyEvidence(h *model.History, d int32, r world.RunID, step world.StepID, what string) []Evidence {
	var ev []Evidence
	for i := range h.Calls {
		c := &h.Calls[i]
		if c.Caller.Delivery == d && c.Run == r && c.Step == step && c.Op == model.OpEventsCreate && c.Event == world.EvStepStarted {
			ev = append(ev, callEvidence(h, c))
		}
	}
	del := &h.Deliveries[d]
	return append(ev, Evidence{At: del.BodyStart, Text: actor(h, model.Caller{Kind: callerKind(h, d), Delivery: d}) + ": body of " + stepLabel(h, r, step) + " " + what})
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
