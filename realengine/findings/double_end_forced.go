package findings

import (
	"context"
	"fmt"

	"github.com/simlab/simlab/realengine"
)

// gatedRace is the fan-in race of a fan-out's concurrent last completers,
// forced by the gate (gate.mjs) instead of met by timing: one fan-out of
// `branches` steps (one inline, the rest queued), no drawn latency, no pool
// bound; every delivery's pending check after its own step_completed is
// held until all the fan-out's step_completed were written, so every branch
// sees an empty pending set and continues the workflow; their run_completed
// writes are held until all `branches` are pending and released in one
// tick. `runs` runs in one harness process, each gated on its own.
func gatedRace(branches, runs int) realengine.HarnessConfig {
	return realengine.HarnessConfig{
		Seed: 1, Fanouts: []int{branches}, MaxInline: 1, Runs: runs,
		Gate:        &realengine.GateConfig{FanIn: branches, RunCompleted: branches},
		ProbeReplay: true,
	}
}

// gatedCorrupt counts the gated runs whose log holds more than one accepted
// run_completed, and the accepted run_completed per run.
func gatedCorrupt(out *realengine.RealRun) (corrupt int, accepted []int) {
	for _, b := range out.ReadBack {
		n := b.TerminalByType["run_completed"]
		accepted = append(accepted, n)
		if n > 1 {
			corrupt++
		}
	}
	return corrupt, accepted
}

func judgeGated(ctx context.Context, r *realengine.Runner, rel realengine.Release, o MatrixOptions) (Judgement, error) {
	const branches, runs = 4, 10
	out, err := r.Run(ctx, rel.Core, rel.On(gatedRace(branches, runs)), o.Timeout)
	if err != nil {
		return Judgement{}, err
	}
	if out.Gate == nil || len(out.Gate.Escapes) > 0 {
		return Judgement{Undecided, fmt.Sprintf("the gate escaped %d times: the race was not forced", len(out.Gate.Escapes))}, nil
	}
	corrupt, accepted := gatedCorrupt(out)
	ev := fmt.Sprintf("%d of %d gated runs hold more than one accepted run_completed (per run: %v)", corrupt, len(out.ReadBack), accepted)
	switch corrupt {
	case len(out.ReadBack):
		return Judgement{Holds, ev}, nil
	case 0:
		return Judgement{Fixed, ev}, nil
	default:
		return Judgement{Undecided, ev}, nil
	}
}
