package findings

import (
	"context"
	"fmt"

	"github.com/simlab/simlab/realengine"
)

// judgeDoubleEndUnforced reads the unforced runs' logs: holds when one
// holds more than one accepted terminal event, not seen otherwise (too few
// runs to call it fixed).
func judgeDoubleEndUnforced(ctx context.Context, r *realengine.Runner, rel realengine.Release, o MatrixOptions) (Judgement, error) {
	u, err := unforcedRuns(ctx, r, rel, o)
	if err != nil {
		return Judgement{}, err
	}
	row := u.row
	ev := fmt.Sprintf("%d of %d runs with >1 terminal event (max %d; %.0f%% of fan-outs with concurrent last completers), %s",
		row.RunsMultiTerminal, row.RunsCounted, row.TerminalEventsMax, 100*row.ConcurrentLastCompleters, where(row, o))
	if row.RunsMultiTerminal > 0 {
		return Judgement{Holds, ev}, nil
	}
	return Judgement{NotSeen, ev}, nil
}
