package model

import (
	"testing"

	"github.com/simlab/simlab/sim"
)

// The engine never names one run's step in another run's event: every event
// a World accepted carries its own run's step id. world-postgres keys a step
// by its id alone (model/world/stepids.go), so a reuse would change what the
// store answers; since none happens, no verdict depends on that rule.
func TestEngineNeverReusesAStepIDAcrossRuns(t *testing.T) {
	multi := 0 // scenarios with more than one run, where a reuse could happen
	for _, name := range BuiltinNames() {
		sc, _ := Builtin(name)
		worlds := []string{sc.World}
		if name == "faults" { // every profile, and the real rules on two of them
			worlds = []string{"world-local", "world-postgres", "world-vercel"}
		}
		for _, w := range worlds {
			sc := sc
			sc.World = w
			steps := 0 // step events checked over the seeds (a swarm seed may cancel its run before any step)
			for seed := uint64(1); seed <= 3; seed++ {
				r, err := Run(&sc, sim.NewPCG(seed), Options{Record: true})
				if err != nil {
					t.Fatalf("%s on %s seed %d: %v", name, w, seed, err)
				}
				if len(r.History.Runs) > 1 {
					multi++
				}
				for _, a := range r.History.Accepted {
					if a.Type.IsStepEvent() {
						steps++
					}
					if a.StepIDOf() != a.Run {
						t.Fatalf("%s on %s seed %d: run %d accepted %v of run %d's step %d", name, w, seed, a.Run, a.Type, a.StepIDOf(), a.Step)
					}
				}
			}
			if steps == 0 {
				t.Fatalf("%s on %s seeds 1..3: no step event accepted: nothing was checked", name, w)
			}
		}
	}
	if multi == 0 {
		t.Fatal("no scenario ran more than one run: nothing was checked")
	}
}
