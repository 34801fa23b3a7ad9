package findings

import (
	"context"
	"fmt"

	"github.com/simlab/simlab/realengine"
)

// judgeLazyReads reads the unforced runs' lazy runs.get per fan-out: holds
// when a fan-out gets more than one (its concurrent last completers each
// read the run), fixed at one or none, not applicable on the legacy
// prologue, which makes no lazy read.
func judgeLazyReads(ctx context.Context, r *realengine.Runner, rel realengine.Release, o MatrixOptions) (Judgement, error) {
	u, err := unforcedRuns(ctx, r, rel, o)
	if err != nil {
		return Judgement{}, err
	}
	row := u.row
	ev := fmt.Sprintf("%s lazy runs.get per fan-out (%s..%s), %.0f%% of fan-outs with concurrent last completers, %s prologue reads per run, %s",
		trimf(row.LazyPerFanout), trimf(row.LazyPerFanoutMin), trimf(row.LazyPerFanoutMax), 100*row.ConcurrentLastCompleters, trimf(row.RunsGetPrologue), where(row, o))
	switch {
	case !rel.Core.FetchFree() && row.LazyPerFanout == 0:
		return Judgement{NotApplicable, "no lazy read: the legacy prologue reads the run before each claim and the last completer reuses that row; " + ev}, nil
	case row.LazyPerFanout > 1:
		return Judgement{Holds, ev}, nil
	default:
		return Judgement{Fixed, ev}, nil
	}
}
