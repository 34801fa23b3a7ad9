package findings

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/simlab/simlab/realengine"
)

// judgeInvoke runs the default dispatch's run on a wrapped World that
// declares capabilities.invoke (harness.mjs keeps its one runner per run)
// and reads whether the core took the queued-replay path: every queued step
// that finished hands the replay to the run's workflow lane (a workflow
// message published from the step's delivery), the run's own message is
// delivered once more per hand-off, and no delivery makes a lazy runs.get.
// A core before beta.55 ignores the capability: not applicable.
func judgeInvoke(ctx context.Context, r *realengine.Runner, rel realengine.Release, o MatrixOptions) (Judgement, error) {
	out, err := cached(ctx, "invoke "+rel.String(), func() (*realengine.RealRun, error) {
		cfg := defaultDispatchConfig()
		cfg.Invoke = true
		return r.Run(ctx, rel.Core, rel.On(cfg), o.Timeout)
	})
	if err != nil {
		return Judgement{}, err
	}
	runMsgs, queued := 0, 0
	fromStep := map[int]bool{}
	for _, d := range out.Deliveries {
		if d.Step == "" {
			runMsgs++
		} else {
			queued++
			fromStep[d.Index] = true
		}
	}
	handOffs := 0
	for _, c := range out.Calls {
		if c.Op == "queue" && c.Step == "" && fromStep[c.Delivery] {
			handOffs++
		}
	}
	ev := fmt.Sprintf("the World declared [%s]; %d queued step deliveries, %d hand-offs to the workflow lane, %d deliveries of the run's own message, %d lazy runs.get",
		strings.Join(out.WorldCapabilities, ", "), queued, handOffs, runMsgs, out.Counts.RunsGetLazy)
	switch {
	case !slices.Contains(out.WorldCapabilities, "invoke"):
		return Judgement{Undecided, "the harness did not declare the capability: " + ev}, nil
	case !rel.Core.InvokePath():
		if handOffs != 0 {
			return Judgement{Undecided, "a core before beta.55 handed off: " + ev}, nil
		}
		return Judgement{NotApplicable, "core before beta.55 ignores the capability: " + ev}, nil
	case handOffs > 0 && handOffs == queued && runMsgs == 1+handOffs && out.Counts.RunsGetLazy == 0:
		return Judgement{Holds, ev}, nil
	default:
		return Judgement{Undecided, "not the queued-replay path as modelled: " + ev}, nil
	}
}
