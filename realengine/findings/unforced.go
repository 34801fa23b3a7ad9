package findings

import (
	"context"
	"errors"
	"fmt"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/realengine"
)

type unforced struct {
	row realengine.Row
	// terminal is every run's accepted terminal run events.
	terminal []int
}

// unforcedRuns runs the release o.Repetitions times at o.Branches on
// durabench-256's store scaled by o.TimeScale (the table's conditions in
// docs/VALIDATION.md), once per release and matrix.
func unforcedRuns(ctx context.Context, r *realengine.Runner, rel realengine.Release, o MatrixOptions) (*unforced, error) {
	return cached(ctx, "unforced "+rel.String(), func() (*unforced, error) { return runUnforced(ctx, r, rel, o) })
}

func runUnforced(ctx context.Context, r *realengine.Runner, rel realengine.Release, o MatrixOptions) (*unforced, error) {
	sc, ok := model.Builtin("durabench-256")
	if !ok {
		return nil, errors.New("no built-in scenario durabench-256")
	}
	sc = realengine.Scaled(sc, o.TimeScale)
	cfg, err := realengine.HarnessFor(sc, o.Branches)
	if err != nil {
		return nil, err
	}
	cfg = rel.On(cfg)
	var runs []*realengine.RealRun
	for rep := 1; rep <= o.Repetitions; rep++ {
		cfg.Seed = uint64(rep)
		run, err := r.Run(ctx, rel.Core, cfg, o.Timeout)
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	u := &unforced{row: realengine.RealRow(o.Branches, rel.Core, rel.WorldLocal, false, runs)}
	for _, run := range runs {
		for _, b := range run.ReadBack {
			u.terminal = append(u.terminal, b.TerminalEvents)
		}
	}
	return u, nil
}

func judgeUnforced(doubleEnd bool) func(ctx context.Context, r *realengine.Runner, rel realengine.Release, o MatrixOptions) (Judgement, error) {
	return func(ctx context.Context, r *realengine.Runner, rel realengine.Release, o MatrixOptions) (Judgement, error) {
		u, err := unforcedRuns(ctx, r, rel, o)
		if err != nil {
			return Judgement{}, err
		}
		row := u.row
		where := fmt.Sprintf("%d runs at %d branches, durabench-256 ×%g", row.Repetitions, row.Branches, o.TimeScale)
		if doubleEnd {
			ev := fmt.Sprintf("%d of %d runs with >1 terminal event (max %d; %.0f%% of fan-outs with concurrent last completers), %s",
				row.RunsMultiTerminal, row.RunsCounted, row.TerminalEventsMax, 100*row.ConcurrentLastCompleters, where)
			if row.RunsMultiTerminal > 0 {
				return Judgement{Holds, ev}, nil
			}
			return Judgement{NotSeen, ev}, nil
		}
		ev := fmt.Sprintf("%s lazy runs.get per fan-out (%s..%s), %.0f%% of fan-outs with concurrent last completers, %s prologue reads per run, %s",
			trimf(row.LazyPerFanout), trimf(row.LazyPerFanoutMin), trimf(row.LazyPerFanoutMax), 100*row.ConcurrentLastCompleters, trimf(row.RunsGetPrologue), where)
		switch {
		case !rel.Core.FetchFree() && row.LazyPerFanout == 0:
			return Judgement{NotApplicable, "no lazy read: the legacy prologue reads the run before each claim and the last completer reuses that row; " + ev}, nil
		case row.LazyPerFanout > 1:
			return Judgement{Holds, ev}, nil
		default:
			return Judgement{Fixed, ev}, nil
		}
	}
}
