package properties

import (
	"fmt"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// maxReroutes is the deployment guard's limit (DOMAIN §7): a message
// re-routed this many times fails its run the next time it meets the wrong
// deployment.
const maxReroutes = 3

// runFailsForAReason: every accepted run_failed names the write that failed
// the run and that write's cause, each visible to an observer, and the
// cause must be the write's own, not any fact elsewhere in the run:
//   - the World wrote it when the queue retired one of the run's messages
//     at the delivery cap (the message's last delivery ended before);
//   - the deployment guard wrote it for a message that had run out of
//     re-routes (it carries the limit's retry count) and met the wrong
//     deployment again;
//   - a replay wrote it after the log it loaded held an accepted step_failed
//     of the run (a step failed for good).
//
// Anything else is a run the engine failed on its own, such as a replay
// that could not start from the stale row it read.
func runFailsForAReason(o *observed) []Violation {
	h := o.h
	var out []Violation
	for i := range h.Accepted {
		a := &h.Accepted[i]
		if a.Type != world.EvRunFailed {
			continue
		}
		c := &h.Calls[a.Call]
		cause, ev := o.failCause(a)
		if cause != "" {
			continue
		}
		v := Violation{Run: a.Run, Message: "the run failed although the write that failed it had no cause: " + ev.reason,
			Evidence: append([]Evidence{acceptedEvidence(h, a)}, ev.evidence...)}
		// The reads the failing actor made before its write say what it
		// acted on (for example a stale pending row, which has no startedAt).
		if d := c.Caller.Delivery; d >= 0 {
			for _, j := range o.calls[d] {
				if r := &h.Calls[j]; r.Op == model.OpRunsGet && r.End <= c.Start {
					v.Evidence = append(v.Evidence, callEvidence(h, r))
				}
			}
		}
		out = append(out, v)
	}
	return out
}

type failEvidence struct {
	reason   string
	evidence []Evidence
}

// failCause names the cause of an accepted run_failed, or "" with why not.
func (o *observed) failCause(a *model.Accepted) (string, failEvidence) {
	h := o.h
	c := &h.Calls[a.Call]
	if c.Caller.Kind == model.CallerWorld {
		for _, m := range h.Retired {
			if h.Messages[m].Run != a.Run {
				continue
			}
			last := int32(-1)
			for j := range h.Deliveries {
				if h.Deliveries[j].Msg == m {
					last = int32(j)
				}
			}
			if last < 0 || h.Deliveries[last].End <= c.Start {
				return fmt.Sprintf("message %d retired at the delivery cap", m), failEvidence{}
			}
		}
		return "", failEvidence{reason: "the World failed it, but none of the run's messages had been retired at the delivery cap"}
	}
	d := c.Caller.Delivery
	if d < 0 {
		return "", failEvidence{reason: fmt.Sprintf("%s wrote it", c.Caller.Kind)}
	}
	del := &h.Deliveries[d]
	if del.Msg >= 0 {
		if m := &h.Messages[del.Msg]; m.Reroutes >= maxReroutes && del.Deployment != o.created[a.Run].DeploymentID {
			return fmt.Sprintf("message %d ran out of deployment re-routes", m.ID), failEvidence{}
		}
	}
	// A replay's cause is in the log it loaded: the newest listing the
	// actor made before the write (every events.list lists the whole run;
	// the orchestrator's inline path replays from its one list after its
	// inline steps, which the model tags with the fan-out it checked).
	list := int32(-1)
	loaded := sim.Time(0) // when the log it acted on was read
	for _, j := range o.calls[d] {
		l := &h.Calls[j]
		switch {
		case l.End > c.Start:
		case l.Op == model.OpEventsList:
			list, loaded = j, l.Served
		case l.Op == model.OpEventsCreate && l.Event == world.EvRunStarted && l.Result == world.OK && !o.turbo(d):
			// world-local answers run_started with the log it preloads
			// after the write; turbo's first delivery skips the preload.
			list, loaded = j, l.End
		}
	}
	if list < 0 {
		return "", failEvidence{reason: fmt.Sprintf("delivery d%d wrote it without a re-route limit or a log to act on", d)}
	}
	for j := range h.Accepted {
		f := &h.Accepted[j]
		if f.Run == a.Run && f.Type == world.EvStepFailed && h.Calls[f.Call].End <= loaded {
			return "step " + stepLabel(h, f.Run, f.Step) + " failed for good", failEvidence{}
		}
	}
	l := &h.Calls[list]
	return "", failEvidence{reason: fmt.Sprintf("the log delivery d%d loaded held no step_failed", d),
		evidence: []Evidence{{At: l.End, Text: callText(h, l) + ": the log holds no step_failed"}}}
}

// turbo says delivery d is its run's first message's first delivery (the
// message carries the run's input), core's turbo path: its run_started
// preloads no log.
func (o *observed) turbo(d int32) bool {
	del := &o.h.Deliveries[d]
	return del.Msg >= 0 && del.Kind == model.MsgWorkflow && del.Attempt == 1 && o.h.Messages[del.Msg].HasInput
}
