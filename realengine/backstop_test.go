package realengine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/sim"
)

// TestReplayLeavesAClaimedInlineStepToABackstop: a queued step's
// continuation whose replay loads a log where the orchestrator's inline
// step is already claimed (its lazy claim landed before the list) does not
// run that step: core's inline ownership has the replay arm a delayed
// backstop, a plain continuation of the run keyed by the step's ownership
// epoch, for what is left of the lease. The model does the same (a
// workflow message at SiteBackstop, delayed by the lease left, in whole
// seconds), and its History, forced on core beta.52 over world-local as a
// plan, is honoured call for call with the same publish: the real call
// record holds the backstop, delay 1 s (lease 1 s), key "<step>:backstop:…".
// (The model once ran the step again in the replay, with a claim the real
// runtime never made: its plan broke at that claim.)
func TestReplayLeavesAClaimedInlineStepToABackstop(t *testing.T) {
	// What a user runs: simlab check --scenario durabench-256 --set
	// world=world-local --set workflow.fanouts=2 --set workflow.max_inline=1
	// --set workflow.inline_ownership_lease=1s.
	sc, err := model.Spec{Scenario: "durabench-256", Sets: []string{"world=world-local", "workflow.fanouts=2",
		"workflow.max_inline=1", "workflow.inline_ownership_lease=1s"}}.Load()
	if err != nil {
		t.Fatal(err)
	}
	// The first seed whose History arms a backstop.
	var h *model.History
	backstops := 0
	for seed := uint64(1); seed <= 2000 && backstops == 0; seed++ {
		res, err := model.Run(&sc, sim.NewPCG(seed), model.Options{Record: true, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		h = res.History
		for _, p := range h.Publishes {
			if p.Site == model.SiteBackstop && p.Msg >= 0 {
				if m := h.Messages[p.Msg]; m.Kind != model.MsgWorkflow || m.Delay != sim.Time(time.Second) {
					t.Fatalf("seed %d: the model's backstop %+v, want a workflow message delayed 1s", seed, m)
				}
				backstops++
			}
		}
		if backstops > 0 {
			t.Logf("seed %d arms %d backstop(s)", seed, backstops)
		}
	}
	if backstops == 0 {
		t.Fatal("no seed of 1..2000 arms a backstop: the premise (a continuation finds the inline step claimed) never happens")
	}
	plan, err := PlanFrom(h)
	if err != nil {
		t.Fatal(err)
	}
	r := prepared(t)
	core, err := CoreByVersion(ReproduceCore)
	if err != nil {
		t.Fatal(err)
	}
	cfg := planConfig(sc, plan)
	out, err := r.run(context.Background(), core, cfg, time.Minute)
	if out == nil {
		t.Fatal(err)
	}
	pr := out.Plan
	if pr == nil || pr.Broken != nil || pr.Released != len(plan.Entries) || len(pr.Mismatches) > 0 {
		t.Fatalf("the plan on the real core: %+v; want every entry released with the History's answers", pr)
	}
	for _, u := range pr.Unplanned {
		if u.Write {
			t.Errorf("an unplanned write reached the real World: %+v", u)
		}
	}
	real := 0
	for _, c := range out.Calls {
		if c.Op == "queue" && strings.Contains(c.Key, ":backstop:") {
			if c.Delay != 1 {
				t.Errorf("the real backstop's delay is %v s, want 1", c.Delay)
			}
			real++
		}
	}
	if real != backstops {
		t.Errorf("the real runtime published %d backstops, the model %d", real, backstops)
	}
}
