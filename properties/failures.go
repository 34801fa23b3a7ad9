package properties

import (
	"fmt"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/world"
)

// maxReroutes is the deployment guard's limit (DOMAIN §7): a message
// re-routed this many times fails its run the next time it meets the wrong
// deployment.
const maxReroutes = 3

// runFailsForAReason: a run_failed is accepted only for a reason the
// workflow or the protocol gives, each visible to an observer: one of the
// run's steps failed for good (an accepted step_failed), a message of the
// run ran out of deployment re-routes (it carries the limit's retry count),
// or the queue retired one of its messages at the delivery cap. Anything
// else is a run the engine failed on its own, such as a replay that could
// not start from the row it read.
func runFailsForAReason(h *model.History) []Violation {
	stepFailed := make([]bool, len(h.Runs))
	rerouted := make([]bool, len(h.Runs))
	retired := make([]bool, len(h.Runs))
	for i := range h.Accepted {
		if a := &h.Accepted[i]; a.Type == world.EvStepFailed {
			stepFailed[a.Run] = true
		}
	}
	for i := range h.Messages {
		if m := &h.Messages[i]; m.Reroutes >= maxReroutes {
			rerouted[m.Run] = true
		}
	}
	for _, m := range h.Retired {
		retired[h.Messages[m].Run] = true
	}
	var out []Violation
	for i := range h.Accepted {
		a := &h.Accepted[i]
		if a.Type != world.EvRunFailed || stepFailed[a.Run] || rerouted[a.Run] || retired[a.Run] {
			continue
		}
		v := Violation{Run: a.Run,
			Message:  "the run failed although no step failed for good, no message ran out of re-routes and none was retired",
			Evidence: []Evidence{acceptedEvidence(h, a)}}
		// The reads the failing actor made before its write say what it
		// acted on (for example a stale pending row, which has no startedAt).
		failer := h.Calls[a.Call].Caller.Delivery
		for j := range h.Calls {
			c := &h.Calls[j]
			if c.Op == model.OpRunsGet && c.Caller.Delivery == failer && failer >= 0 && c.End <= h.Calls[a.Call].Start {
				v.Evidence = append(v.Evidence, callEvidence(h, c))
			}
		}
		if len(v.Evidence) == 1 {
			v.Evidence = append(v.Evidence, Evidence{At: a.At, Text: fmt.Sprintf("no accepted step_failed in %s's log", model.RunName(a.Run))})
		}
		out = append(out, v)
	}
	return out
}
