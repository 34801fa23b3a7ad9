package model

import (
	"testing"
	"time"

	"github.com/simlab/simlab/sim"
)

// TestRunContextFromHeldRow: a producer stamps runContext from the run row
// it holds (the real runtime's runDispatchContext(run)). A last completer
// that continued on a stale pending row holds no startedAt, so the next
// fan-out's messages carry none; with fresh reads every message carries the
// run's startedAt.
func TestRunContextFromHeldRow(t *testing.T) {
	count := func(stale float64) (missing, stamped int) {
		for seed := uint64(1); seed <= 20; seed++ {
			sc := DefaultScenario()
			sc.World = "world-vercel"
			sc.Store = VercelProfile()
			sc.Store.StaleLag = 10 * time.Second
			sc.Workflow.Fanouts = []int{12, 6}
			sc.Faults.StaleRead = stale
			res, err := Run(&sc, sim.NewPCG(seed), Options{Record: true, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range res.History.Messages {
				if m.Kind != MsgStep || !m.HasCtx {
					continue
				}
				stamped++
				if m.Ctx.StartedAt == 0 {
					missing++
				}
			}
		}
		return missing, stamped
	}
	if missing, stamped := count(0); stamped == 0 || missing != 0 {
		t.Errorf("fresh reads: %d of %d stamped messages lack startedAt, want 0 of more than 0", missing, stamped)
	}
	if missing, _ := count(1); missing == 0 {
		t.Errorf("every read stale: no message lacks startedAt; a last completer continuing on a stale pending row should stamp none")
	}
}
