package findings

import (
	"context"
	"errors"
	"fmt"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/realengine"
)

// unforced is the unforced runs of one release, counted as validate counts
// them: the lazy reads and the terminal events both findings judge.
type unforced struct {
	row realengine.Row
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
	return &unforced{row: realengine.RealRow(o.Branches, rel.Core, rel.WorldLocal, false, runs)}, nil
}

// where says under what the unforced runs ran.
func where(row realengine.Row, o MatrixOptions) string {
	return fmt.Sprintf("%d runs at %d branches, durabench-256 ×%g", row.Repetitions, row.Branches, o.TimeScale)
}
