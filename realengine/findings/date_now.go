package findings

import (
	"context"
	"fmt"

	"github.com/simlab/simlab/realengine"
)

// judgeDateNow decides the Date.now() finding on a release from its core's
// own replay of realengine's probe logs (offline: the World plays no part,
// so every world-local of one core gets the same verdict).
func judgeDateNow(ctx context.Context, r *realengine.Runner, rel realengine.Release, o MatrixOptions) (Judgement, error) {
	rs, err := cached(ctx, "datenow "+rel.Core.Version, func() (realengine.DateNowReplays, error) {
		return r.ProbeDateNow(ctx, rel.Core)
	})
	if err != nil {
		return Judgement{}, err
	}
	return judgeDateNowReplays(rs), nil
}

// judgeDateNowReplays reads the probe: after a (ended at 2 s) the program
// picks x once Date.now() is 2.5 s past its start, else y. A replay of the
// log that ended at a's end picks y; one whose log goes on to b's end at
// 3 s picks x if its clock ran ahead with the pass (holds), y if it reads
// a's time (fixed); the log the first replay wrote then diverges, or not.
func judgeDateNowReplays(rs realengine.DateNowReplays) Judgement {
	pick := func(rr realengine.RealReplay) string {
		for _, p := range rr.Pending {
			if p.Ordinal == 2 {
				return p.Name
			}
		}
		return ""
	}
	ev := fmt.Sprintf("offline, the core's own replay: a log ending at a's end (2 s) picks %q; the same log with b's end at 3 s picks %q; the log the first wrote (its y after b's end) %s",
		pick(rs.Short), pick(rs.Longer), rs.Stale)
	switch {
	case pick(rs.Short) != "y":
		return Judgement{Undecided, ev + " (the probe's first replay did not read 2 s)"}
	case pick(rs.Longer) == "x" && rs.Stale.Outcome == "diverged":
		return Judgement{Holds, ev}
	case pick(rs.Longer) == "y" && rs.Stale.Outcome == "suspended":
		return Judgement{Fixed, ev}
	}
	return Judgement{Undecided, ev}
}
