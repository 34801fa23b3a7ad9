package findings

import (
	"context"
	"fmt"
	"strings"

	"github.com/simlab/simlab/realengine"
)

// This file is the real-engine side of the turbo finding (docs/MODEL.md,
// "Turbo starts inline bodies before their claims"): the harness config
// that forces a cancel into a run's first delivery while it suspends, and
// the judge of one run of it (TestTurboRunsAnInlineBodyOnACancelledRun and
// the releases matrix's turbo-body-after-cancel row).

// cancelBeforeTheFanOut forces a cancel into the turbo invocation's
// suspension, by what happens, never by when: the harness cancels each run
// (Run#cancel) as the run's own delivery's run_started is answered, and the
// orchestrator's step_created of its queued step is held until that cancel
// has been answered. A fan-out of two, one inline step and one queued;
// non-resilient dispatch (the published runtime's default); the runtime's
// delivery cap at 1, so the queued step's message, whose step was never
// created, is given up after one redelivery instead of 48.
func cancelBeforeTheFanOut(runs int) realengine.HarnessConfig {
	return realengine.HarnessConfig{
		Seed: 1, Fanouts: []int{2}, MaxInline: 1, Runs: runs, DefaultDispatch: true, MaxQueueDeliveries: 1,
		Gate: &realengine.GateConfig{
			Actions: []realengine.GateAction{{Name: "cancel_on_start", On: realengine.HoldPattern{Kind: "answer", Op: "events.create", Event: "run_started", From: "run"}, Do: "cancel"}},
			Holds: []realengine.HoldRule{{
				Name:  "create_after_cancel",
				What:  realengine.HoldPattern{Kind: "call", Op: "events.create", Event: "step_created", From: "run"},
				Until: realengine.HoldPattern{Kind: "answer", Op: "events.create", Event: "run_cancelled", Result: "ok"},
			}},
		},
		RecordBodies: true, DumpCalls: true,
	}
}

// judgeBodyAfterCancel checks run i of out for the finding: the cancel
// answered ok, the orchestrator's step_created refused after it, an inline
// body that began after the cancel's answer, its lazy claim refused, no
// step of the run completed, and the run cancelled.
func judgeBodyAfterCancel(out *realengine.RealRun, i int) error {
	run := out.Runs[i].RunID
	var cancelled float64 = -1
	created, claim, completed := "", "", 0
	for _, c := range out.Calls {
		if c.Run != run || c.Op != "events.create" {
			continue
		}
		switch {
		case c.Event == "run_cancelled" && c.Delivery < 0:
			if c.Result != "ok" {
				return fmt.Errorf("the cancel answered %s %s", c.Result, c.Error)
			}
			cancelled = c.End
		case c.Event == "step_created" && created == "":
			created = c.Result
		case c.Event == "step_started" && c.Lazy && claim == "":
			claim = c.Result
		case c.Event == "step_completed" && c.Result == "ok":
			completed++
		}
	}
	if cancelled < 0 {
		return fmt.Errorf("no cancel was made")
	}
	if created != "EntityConflictError" {
		return fmt.Errorf("the orchestrator's step_created answered %q, want EntityConflictError (the run was cancelled)", created)
	}
	var body *realengine.Body
	for j := range out.Bodies {
		if b := &out.Bodies[j]; b.Run == run && b.Index == 0 {
			body = b
		}
	}
	switch {
	case body == nil:
		return fmt.Errorf("the inline step's body never began")
	case body.Begin < cancelled:
		return fmt.Errorf("the inline body began at %.1f ms, before the cancel's answer at %.1f ms", body.Begin, cancelled)
	case claim != "EntityConflictError":
		return fmt.Errorf("the inline step's lazy claim answered %q, want EntityConflictError", claim)
	case completed > 0:
		return fmt.Errorf("%d step_completed accepted on the cancelled run", completed)
	case out.Runs[i].ReturnValue == nil || out.Runs[i].ReturnValue.State != "rejected" || !strings.Contains(out.Runs[i].ReturnValue.Message, "cancelled"):
		return fmt.Errorf("the client's returnValue %+v, want it rejected as cancelled", out.Runs[i].ReturnValue)
	}
	return nil
}

// judgeTurboBody forces a cancel into each run's first (turbo) delivery
// while it suspends on a two-step fan-out (cancelBeforeTheFanOut) and reads
// whether the inline step's body still began after the cancel, its claim
// refused: the optimistic start of every release that forces it in turbo.
func judgeTurboBody(ctx context.Context, r *realengine.Runner, rel realengine.Release, o MatrixOptions) (Judgement, error) {
	const runs = 10
	out, err := r.Run(ctx, rel.Core, rel.On(cancelBeforeTheFanOut(runs)), o.Timeout)
	if err != nil {
		return Judgement{}, err
	}
	if out.Gate == nil || len(out.Gate.Escapes) > 0 {
		return Judgement{Undecided, "the gate escaped: the cancel was not forced into the suspension"}, nil
	}
	forced, noBody := 0, 0
	var first error
	for i := range out.Runs {
		switch err := judgeBodyAfterCancel(out, i); {
		case err == nil:
			forced++
		case strings.Contains(err.Error(), "never began"):
			noBody++
		case first == nil:
			first = err
		}
	}
	ev := fmt.Sprintf("%d of %d runs: the inline body began after the cancel, its claim refused, no step completed; %d ran no body", forced, len(out.Runs), noBody)
	switch {
	case forced == len(out.Runs) && forced > 0:
		return Judgement{Holds, ev}, nil
	case noBody == len(out.Runs):
		return Judgement{Fixed, ev}, nil
	case first != nil:
		return Judgement{Undecided, ev + "; " + first.Error()}, nil
	default:
		return Judgement{Undecided, ev}, nil
	}
}
