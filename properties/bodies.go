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
func oneBodyAtATime(o *observed) []Violation {
	h := o.h
	bs := o.bodies[:0]
	for i := range h.Deliveries {
		d := &h.Deliveries[i]
		if !d.BodyRan {
			continue
		}
		end := d.BodyEnd
		if end < d.BodyStart {
			end = d.End
		}
		bs = append(bs, stepBody{run: int32(d.Run), step: int32(d.Step), d: int32(i), start: int64(d.BodyStart), end: int64(end)})
	}
	o.bodies = bs
	// By step (run, then step), and within a step by start, then delivery.
	slices.SortFunc(bs, func(a, b stepBody) int {
		switch {
		case a.run != b.run:
			return int(a.run - b.run)
		case a.step != b.step:
			return int(a.step - b.step)
		case a.start != b.start:
			return cmpInt64(a.start, b.start)
		}
		return int(a.d - b.d)
	})
	var out []Violation
	for lo := 0; lo < len(bs); {
		hi := lo + 1
		for hi < len(bs) && bs[hi].run == bs[lo].run && bs[hi].step == bs[lo].step {
			hi++
		}
		step := bs[lo:hi]
		lo = hi
		// The body that ends last among those begun so far: a later body
		// beginning before it ends overlaps it.
		open := 0
		for j := 1; j < len(step); j++ {
			if step[j].start < step[open].end {
				r, st := world.RunID(step[0].run), world.StepID(step[0].step)
				da, db := step[open].d, step[j].d
				out = append(out, Violation{Run: r,
					Message:  fmt.Sprintf("the body of %s ran in deliveries d%d and d%d at once", stepLabel(h, r, st), da, db),
					Evidence: append(bodyEvidence(h, da, r, st, "begins"), bodyEvidence(h, db, r, st, "begins while the first still runs")...)})
				break
			}
			if step[j].end > step[open].end {
				open = j
			}
		}
	}
	return out
}

// stepBody is one delivery's run of a step's body.
type stepBody struct {
	run, step, d int32
	start, end   int64
}

// bodyEvidence is a delivery's claims of the step (whatever they answered:
// core's turbo first delivery runs an inline body before its claim is
// answered, realengine TestForcedEarlyQueuedCompletionAgainstTheInlineStep)
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
