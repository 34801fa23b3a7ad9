package findings

import (
	"context"
	"fmt"

	"github.com/simlab/simlab/realengine"
)

// defaultDispatchConfig is one run of 8 branches with
// WORKFLOW_RESILIENT_STEP_DISPATCH unset, every call recorded.
func defaultDispatchConfig() realengine.HarnessConfig {
	return realengine.HarnessConfig{Seed: 1, Fanouts: []int{8}, MaxInline: 3, Runs: 1, DefaultDispatch: true, DumpCalls: true}
}

// dispatchOrder reads a run's step publishes: how many there were, how many
// carried stepInput (resilient dispatch) and how many began before their
// step's step_created was accepted.
func dispatchOrder(out *realengine.RealRun) (publishes, withInput, early int) {
	created := map[string]float64{} // step -> when its step_created answered ok
	for _, c := range out.Calls {
		if c.Op == "events.create" && c.Event == "step_created" && c.Result == "ok" {
			if _, ok := created[c.Correlation]; !ok {
				created[c.Correlation] = c.End
			}
		}
	}
	for _, c := range out.Calls {
		if c.Op != "queue" || c.Step == "" {
			continue
		}
		publishes++
		if c.StepInput {
			withInput++
		}
		if at, ok := created[c.Step]; !ok || c.Start < at {
			early++
		}
	}
	return publishes, withInput, early
}

// defaultRun is the release's default-dispatch run, once per matrix.
func defaultRun(ctx context.Context, r *realengine.Runner, rel realengine.Release, o MatrixOptions) (*realengine.RealRun, error) {
	return cached(ctx, "default "+rel.String(), func() (*realengine.RealRun, error) {
		return r.Run(ctx, rel.Core, rel.On(defaultDispatchConfig()), o.Timeout)
	})
}

func judgeDefaultDispatch(ctx context.Context, r *realengine.Runner, rel realengine.Release, o MatrixOptions) (Judgement, error) {
	out, err := defaultRun(ctx, r, rel, o)
	if err != nil {
		return Judgement{}, err
	}
	pubs, input, early := dispatchOrder(out)
	ev := fmt.Sprintf("WORKFLOW_RESILIENT_STEP_DISPATCH unset: %d step publishes, %d with stepInput, %d before their step_created was accepted", pubs, input, early)
	switch {
	case pubs == 0:
		return Judgement{Undecided, ev}, nil
	case input == 0 && early == 0:
		return Judgement{Holds, ev}, nil
	default:
		return Judgement{Fixed, ev + " (the default dispatch changed)"}, nil
	}
}
