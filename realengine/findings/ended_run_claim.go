package findings

import (
	"context"
	"fmt"
	"strings"

	"github.com/simlab/simlab/realengine"
)

// claimCap is the runtime's delivery cap (WORKFLOW_MAX_QUEUE_DELIVERIES)
// in the ended-run-claim runs: 48 by default, lowered so that the loop's end is seen
// in a few of world-local's 5 s backoffs.
const claimCap = 2

// endedRunClaimConfig is one run of 8 branches, then, once it has ended, one step
// message of a step that was never created (a fresh step id in the first
// queued step's message): with resilient dispatch its stepInput is kept,
// without it the message has none (a bare claim). Every redelivery is
// recorded until one is acked.
func endedRunClaimConfig(resilient bool) realengine.HarnessConfig {
	kind := "ghost_bare"
	if resilient {
		kind = "ghost"
	}
	return realengine.HarnessConfig{Seed: 1, Fanouts: []int{8}, MaxInline: 3, Runs: 1, ResilientDispatch: resilient,
		ProbeReplay: true, ProbeKinds: []string{kind}, ProbeUntilAcked: true, MaxQueueDeliveries: claimCap}
}

// deliveriesStory is one such message's deliveries: each attempt's calls and
// answer, runs of equal attempts folded ("attempts 1-3: ...").
func deliveriesStory(ps []realengine.Probe) string {
	var parts []string
	for i := 0; i < len(ps); {
		j := i
		for j+1 < len(ps) && ps[j+1].Story() == ps[i].Story() {
			j++
		}
		at := fmt.Sprintf("attempt %d", ps[i].Attempt)
		if j > i {
			at = fmt.Sprintf("attempts %d-%d", ps[i].Attempt, ps[j].Attempt)
		}
		parts = append(parts, at+": "+ps[i].Story())
		i = j + 1
	}
	return strings.Join(parts, "; ")
}

// judgeEndedRunClaimRuns judges the two ended-run-claim runs (bare, then with stepInput):
// holds when the first delivery throws and world-local delivers it again.
func judgeEndedRunClaimRuns(outs []*realengine.RealRun) Judgement {
	var parts []string
	loops, worldFirst := 0, ""
	for _, out := range outs {
		ps := out.Probes
		if len(ps) == 0 {
			return Judgement{Undecided, "no probe was delivered"}
		}
		what := "bare message (default dispatch)"
		if ps[0].StepInput {
			what = "message with stepInput (resilient dispatch)"
		}
		parts = append(parts, fmt.Sprintf("%s, %d deliveries: %s", what, len(ps), deliveriesStory(ps)))
		switch {
		case ps[0].Status >= 400 && len(ps) > 1:
			loops++
		case ps[0].Status >= 400:
			return Judgement{Undecided, "the first delivery threw and no redelivery was recorded: " + deliveriesStory(ps)}
		}
		for _, c := range ps[0].Calls {
			if c.Op == "events.create" && c.Event == "step_started" && worldFirst == "" {
				worldFirst = c.Result
				if strings.Contains(strings.ToLower(c.Error), "not found") {
					worldFirst += " (not found)"
				}
			}
		}
	}
	ev := strings.Join(parts, " | ")
	if loops > 0 {
		return Judgement{Holds, fmt.Sprintf("the claim answers %s and the delivery throws; world-local delivers it again, the same way, until the runtime's delivery cap (WORKFLOW_MAX_QUEUE_DELIVERIES=%d here, 48 by default) writes run_failed, refused on the ended run, and acks: %s", worldFirst, claimCap, ev)}
	}
	return Judgement{NotApplicable, "the runtime acks at once (the legacy prologue reads the run first and sees it ended): " + ev}
}

func judgeEndedRunClaim(ctx context.Context, r *realengine.Runner, rel realengine.Release, o MatrixOptions) (Judgement, error) {
	var outs []*realengine.RealRun
	for _, resilient := range []bool{false, true} {
		out, err := r.Run(ctx, rel.Core, rel.On(endedRunClaimConfig(resilient)), o.Timeout)
		if err != nil {
			return Judgement{}, err
		}
		if len(out.Probes) > 0 && out.Probes[0].StepInput != resilient {
			return Judgement{Undecided, fmt.Sprintf("the probe's message carried stepInput %v with resilient dispatch %v", out.Probes[0].StepInput, resilient)}, nil
		}
		outs = append(outs, out)
	}
	return judgeEndedRunClaimRuns(outs), nil
}
