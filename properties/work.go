package properties

import (
	"fmt"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/world"
)

// boundedWorkAfterEnd counts the work nobody can use: per actor (a
// delivery, or an inline step), the reads (runs.get), listings
// (events.list, a replay's load among them) and step bodies it began after
// its run's end was accepted, when any actor could know the run had ended.
// An actor may begin at most the scenario's budget.work_after_end of them
// (default 2: a fan-in listing and a lazy read, how a fetch-free last
// completer learns the end); every one beyond is a violation.
// no-work-after-visible-end forbids writes after an actor was told; this
// bounds the looking, told or not.
func boundedWorkAfterEnd(o *observed) []Violation {
	h := o.h
	budget := int(h.Declared.WorkAfterEnd)
	var out []Violation
	for i := range h.Deliveries {
		d := int32(i)
		del := &h.Deliveries[i]
		t := o.terminal[del.Run]
		if t == nil {
			continue
		}
		end := h.Calls[t.Call].End
		var work []Evidence
		for _, j := range o.calls[d] {
			c := &h.Calls[j]
			if c.Start >= end && (c.Op == model.OpRunsGet || c.Op == model.OpEventsList) {
				work = append(work, Evidence{At: c.Start, Text: callText(h, c) + " (begun after the end)"})
			}
		}
		if del.BodyRan && del.BodyStart >= end {
			work = append(work, deliveryEvidence(h, d, "body of "+stepLabel(h, del.Run, del.Step)+" begins after the end"))
		}
		if len(work) <= budget {
			continue
		}
		out = append(out, Violation{Run: del.Run,
			Message: fmt.Sprintf("delivery d%d began %d reads, listings, replays and bodies after the run's %s was accepted; the budget is %d (budget.work_after_end)",
				d, len(work), t.Type, budget),
			Evidence: append([]Evidence{acceptedEvidence(h, t)}, work...)})
	}
	return out
}

// stepFailsForAReason: an accepted step_failed shows a cause an observer
// could see: it was written by the delivery that ran the step's body, after
// the body ended (the body failed), and either the body's claim answered an
// attempt past the workflow's max_retries (its retries were spent) or the
// step is one the workflow fails fatally; or the step's message had been
// retired at the delivery cap. Anything else records a failure nobody saw.
func stepFailsForAReason(o *observed) []Violation {
	h := o.h
	retired := map[stepKey]bool{}
	for _, m := range h.Retired {
		retired[stepKey{h.Messages[m].Run, h.Messages[m].Step}] = true
	}
	var out []Violation
	for i := range h.Accepted {
		a := &h.Accepted[i]
		if a.Type != world.EvStepFailed {
			continue
		}
		c := &h.Calls[a.Call]
		why := ""
		d := c.Caller.Delivery
		switch {
		case retired[stepKey{a.Run, a.Step}]:
			continue
		case d < 0:
			why = fmt.Sprintf("%s wrote it, not a delivery that ran its body", c.Caller.Kind)
		case !h.Deliveries[d].BodyRan || h.Deliveries[d].Step != a.Step || h.Deliveries[d].BodyEnd > c.Start:
			why = fmt.Sprintf("delivery d%d wrote it without having run the step's body", d)
		default:
			attempt := int32(0)
			for _, j := range o.calls[d] {
				if s := &h.Calls[j]; s.Op == model.OpEventsCreate && s.Event == world.EvStepStarted && s.Step == a.Step && s.Result == world.OK {
					attempt = s.Attempt
				}
			}
			if attempt > h.Declared.MaxRetries || o.fatal(a.Run, a.Step) {
				continue
			}
			why = fmt.Sprintf("its body ran at attempt %d of a retry policy of %d and the step is not fatal: retries were not spent", attempt, h.Declared.MaxRetries)
		}
		out = append(out, Violation{Run: a.Run,
			Message:  fmt.Sprintf("%s was recorded failed with no cause an observer could see: %s", stepLabel(h, a.Run, a.Step), why),
			Evidence: []Evidence{acceptedEvidence(h, a)}})
	}
	return out
}

// fatal says the workflow code fails step fatally (the last
// workflow.fatal_steps of each fan-out throw a fatal error).
func (o *observed) fatal(run world.RunID, step world.StepID) bool {
	h := o.h
	for _, f := range h.Runs[run].Fanouts {
		fo := &h.Fanouts[f]
		if step >= fo.FirstStep && step < fo.FirstStep+world.StepID(fo.Branches) {
			return int32(step-fo.FirstStep) >= fo.Branches-h.Declared.FatalSteps
		}
	}
	return false
}
