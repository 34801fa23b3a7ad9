package findings

import (
	"context"
	"testing"
	"time"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/realengine"
	"github.com/simlab/simlab/sim"
)

// TestStalePendingLazyReadFailsTheRealRun: when a last completer's lazy
// runs.get answers with a stale pending row, the published runtime does not
// replay on (as DOMAIN §7 and the review fix's comment say): the row has no
// startedAt and the replay fails the run, on every fetch-free release
// (core beta.52 on) over every pinned world-local. simlab does the same by
// default; its variant replay-on-stale-pending continues, as DOMAIN §7 says.
func TestStalePendingLazyReadFailsTheRealRun(t *testing.T) {
	r := prepared(t)
	sc, _ := model.Builtin("fanout")
	cfg, err := stalePendingConfig()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("real", func(t *testing.T) {
		for _, rel := range realengine.PinnedReleases() {
			if !rel.Core.FetchFree() {
				continue
			}
			t.Run(rel.String(), func(t *testing.T) {
				t.Parallel()
				_, err := r.Run(context.Background(), rel.Core, rel.On(cfg), time.Minute)
				if v := judgeStalePending(err); v.Verdict != Holds {
					t.Fatalf("got %v (%s), want the run failed for want of startedAt", err, v.Evidence)
				}
			})
		}
	})
	sc.Workflow.ResilientDispatch = false
	sc.Faults.StaleRead = 1
	sc.Store.StaleLag = time.Minute
	// simlab, the same scenario over 10 seeds: failed by default wherever a
	// queued completer (not the orchestrator's inline step) finished the
	// fan-out, continued on every stale pending read with the variant.
	failed := map[bool]int{}
	for _, variant := range []bool{false, true} {
		s := sc
		if variant {
			s.Variants = []string{"replay-on-stale-pending"}
		}
		for seed := uint64(1); seed <= 10; seed++ {
			res, err := model.Run(&s, sim.NewPCG(seed), model.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.History.FinalRuns[0].Status.String() == "failed" {
				failed[variant]++
			}
		}
	}
	if failed[false] == 0 || failed[true] != 0 {
		t.Errorf("simlab runs failed: %d by default (want some, as published), %d with replay-on-stale-pending (want 0)", failed[false], failed[true])
	}
}
