package findings

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/realengine"
)

// stalePendingConfig is 8 branches of fanout with every runs.get stale,
// reaching back before run_started (a pending row without startedAt).
func stalePendingConfig() (realengine.HarnessConfig, error) {
	sc, ok := model.Builtin("fanout")
	if !ok {
		return realengine.HarnessConfig{}, errors.New("no built-in scenario fanout")
	}
	sc.Workflow.ResilientDispatch = false
	sc.Faults.StaleRead = 1
	sc.Store.StaleLag = time.Minute // every stale read reaches back before run_started
	cfg, err := realengine.HarnessFor(sc, 8)
	if err != nil {
		return cfg, err
	}
	cfg.Seed = 1
	return cfg, nil
}

// judgeStalePending reads the stale-pending run's outcome: failed for want
// of startedAt (holds), or completed (fixed).
func judgeStalePending(err error) Judgement {
	var re *realengine.RunError
	switch {
	case err == nil:
		return Judgement{Fixed, "the run completed although every runs.get answered a stale pending row"}
	case errors.As(err, &re) && strings.Contains(re.Msg, `no "startedAt"`) && len(re.RunIDs) == 1:
		msg := re.Msg
		if i := strings.Index(msg, "failed: "); i >= 0 {
			msg = msg[i+len("failed: "):]
		}
		return Judgement{Holds, "the run failed: " + realengine.FirstLine(msg, 160)}
	default:
		return Judgement{Undecided, "the run ended otherwise: " + realengine.FirstLine(err.Error(), 200)}
	}
}

// legacyStaleWait bounds the legacy path's stale-pending run: its
// consumers ack without claiming, and nothing is left to end the run.
const legacyStaleWait = 20 * time.Second

func judgeStalePendingRun(ctx context.Context, r *realengine.Runner, rel realengine.Release, o MatrixOptions) (Judgement, error) {
	cfg, err := stalePendingConfig()
	if err != nil {
		return Judgement{}, err
	}
	timeout := o.Timeout
	if !rel.Core.FetchFree() {
		cfg.DumpCalls = true
		timeout = min(timeout, legacyStaleWait)
	}
	_, err = r.Run(ctx, rel.Core, rel.On(cfg), timeout)
	if ctx.Err() != nil {
		return Judgement{}, err
	}
	var re *realengine.RunError
	if !rel.Core.FetchFree() && errors.As(err, &re) && re.Summary != nil && strings.Contains(re.Msg, "timed out") {
		return Judgement{NotApplicable, "no lazy read on the legacy path; " + legacySkips(re.Summary, timeout)}, nil
	}
	return judgeStalePending(err), nil
}

// legacySkips says what the legacy consumers did with a stale pending
// prologue read: how many queued deliveries acked without a claim.
func legacySkips(out *realengine.RealRun, waited time.Duration) string {
	byDelivery := map[int][]realengine.Call{}
	for _, c := range out.Calls {
		byDelivery[c.Delivery] = append(byDelivery[c.Delivery], c)
	}
	steps, skipped, pending := 0, 0, 0
	for _, d := range out.Deliveries {
		if d.Step == "" {
			continue
		}
		steps++
		claimed := false
		for _, c := range byDelivery[d.Index] {
			claimed = claimed || (c.Op == "events.create" && c.Event == "step_started")
			if c.Op == "runs.get" && c.Status == "pending" {
				pending++
			}
		}
		if !claimed && d.Status == 200 {
			skipped++
		}
	}
	return fmt.Sprintf("its prologue runs.get answered a stale pending row %d times, and %d of %d queued deliveries acked without claiming their step (the runtime's \"skipping background step\"): %d steps started (the inline ones), the run had not ended after %v",
		pending, skipped, steps, out.Counts.StepStartedAccepted, waited)
}
