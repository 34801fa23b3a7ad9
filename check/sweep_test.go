package check

import (
	"slices"
	"testing"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/seeds"
	"github.com/simlab/simlab/properties"
	"github.com/simlab/simlab/sim"
)

// A sweep in which an outcome the scenario turns on never happened fails
// and says which (an Antithesis-style "sometimes" assertion).
func TestSweepFailsWhenADeclaredOutcomeNeverHappened(t *testing.T) {
	sc := model.DefaultScenario()
	sc.Faults.Crash = 0.5
	sc.Faults.Until = 1 // on, but the fault phase ends before anything runs
	rep, err := Sweep(SweepConfig{Scenario: sc, Seeds: seeds.Count(2), Props: properties.All()})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Failed() || !slices.Contains(rep.Missing, "crash") {
		t.Fatalf("missing = %v, failed = %v, coverage %v, declared %v; want crash reported", rep.Missing, rep.Failed(), rep.Coverage, rep.Declared)
	}
	sc.Faults.Until = 0
	rep, err = Sweep(SweepConfig{Scenario: sc, Seeds: seeds.Count(8), Props: properties.All()})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(rep.Missing, "crash") || rep.Coverage["crash"] == 0 {
		t.Fatalf("crash never counted at rate 0.2: coverage %v", rep.Coverage)
	}
}

func TestStoriesAreInVirtualTimeOrder(t *testing.T) {
	sc, _ := model.Builtin("faults")
	found := 0
	for seed := uint64(1); seed <= 60; seed++ {
		res, err := model.Run(&sc, sim.NewPCG(seed), model.Options{Record: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range properties.Check(res.History, properties.All()) {
			found++
			if len(v.Evidence) == 0 {
				t.Fatalf("%s carries no evidence", v)
			}
			for i := 1; i < len(v.Evidence); i++ {
				if v.Evidence[i].At < v.Evidence[i-1].At {
					t.Fatalf("%s: evidence out of order: %+v", v, v.Evidence)
				}
			}
			if story := properties.Story(v); len(story) != len(v.Evidence)+1 {
				t.Fatalf("story has %d lines for %d events", len(story), len(v.Evidence))
			}
		}
	}
	if found == 0 {
		t.Fatal("the faults scenario produced no violation in 60 seeds")
	}
}

// Minimizing stops when told (a Ctrl-C during a check), returning what it
// has, which still violates the property: the scenario as found.
func TestMinimizeStopsWhenTold(t *testing.T) {
	sc, err := model.Spec{Scenario: "faults", Variants: []string{"pre-fix-fence"}}.Load()
	if err != nil {
		t.Fatal(err)
	}
	p, _ := properties.ByName("one-lazy-fetch-per-fanout")
	for seed := uint64(1); seed < 50; seed++ {
		res, choices, err := Record(&sc, sim.NewPCG(seed), seed)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Check(res.History)) == 0 {
			continue
		}
		stopped, _, h := MinimizeUntil(sc, choices, p, func() bool { return true })
		full, _, _ := Minimize(sc, choices, p)
		if stopped.Runs != sc.Runs || !slices.Equal(stopped.Workflow.Fanouts, sc.Workflow.Fanouts) || len(p.Check(h)) == 0 {
			t.Fatalf("stopped at once: %d runs %v (found: %d runs %v), violating %v", stopped.Runs, stopped.Workflow.Fanouts, sc.Runs, sc.Workflow.Fanouts, len(p.Check(h)) > 0)
		}
		if full.Runs == stopped.Runs && slices.Equal(full.Workflow.Fanouts, stopped.Workflow.Fanouts) {
			t.Fatalf("precondition: minimizing seed %d changes nothing", seed)
		}
		return
	}
	t.Fatal("no seed of faults violates one-lazy-fetch-per-fanout")
}

// A counterexample shrinks only within what the real engine can run: the
// runtime runs at least one step inline, so a scenario with inline steps
// keeps one (golden-t3's stale-pending failure shrank to max_inline 0 and a
// single branch before, a schedule simlab reproduce had to refuse). A
// scenario that asks for none keeps none.
func TestShrinkingKeepsAnInlineStep(t *testing.T) {
	p, _ := properties.ByName("run-fails-for-a-reason")
	for _, c := range []struct {
		name      string
		maxInline int
	}{{"golden-t3", 1}, {"golden-t3", 0}} {
		sc, _ := model.Builtin(c.name)
		sc.Workflow.MaxInline = c.maxInline
		res, choices, err := Record(&sc, sim.NewPCG(1), 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Check(res.History)) == 0 {
			t.Fatalf("precondition: %s (max_inline %d) seed 1 does not violate %s", c.name, c.maxInline, p.Name)
		}
		msc, _, h := Minimize(sc, choices, p)
		if len(p.Check(h)) == 0 {
			t.Fatalf("%s: the minimized case no longer violates %s", c.name, p.Name)
		}
		if msc.Workflow.MaxInline != c.maxInline {
			t.Errorf("%s from max_inline %d: shrunk to max_inline %d (fan-outs %v), want %d kept", c.name, c.maxInline, msc.Workflow.MaxInline, msc.Workflow.Fanouts, c.maxInline)
		}
	}
}
