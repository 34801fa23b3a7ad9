package realengine

import (
	"context"
	"reflect"
	"testing"

	"github.com/simlab/simlab/model"
)

// TestValidateSimSideRunsTheHarnessWorld: the simlab side of validate runs
// the World the real side runs, world-local's rules and split calls, under
// the scenario's own store model; so on durabench-256 (world-vercel's atomic
// model by itself) it predicts what the real world-local side shows, runs
// with more than one accepted terminal event, where the scenario's own World
// (--sim-world scenario) predicts none. No Node: simlab rows only.
func TestValidateSimSideRunsTheHarnessWorld(t *testing.T) {
	sc, ok := model.Builtin("durabench-256")
	if !ok {
		t.Fatal("no built-in scenario durabench-256")
	}
	if sc.World == HarnessWorld {
		t.Fatalf("durabench-256 runs on %s: the test needs a scenario whose own World is not the harness's", sc.World)
	}
	ssc := SimScenario(sc, "")
	if ssc.World != HarnessWorld || !reflect.DeepEqual(ssc.Store, sc.Store) || ssc.Store.Name != sc.World {
		t.Fatalf("SimScenario: world %s, store %s (changed: %v), want world %s and the scenario's own store model", ssc.World, ssc.Store.Name, !reflect.DeepEqual(ssc.Store, sc.Store), HarnessWorld)
	}
	if got := SimScenario(sc, SimWorldScenario); got.World != sc.World {
		t.Fatalf("--sim-world scenario: world %s, want %s", got.World, sc.World)
	}
	run := func(simWorld string) *Result {
		t.Helper()
		res, err := Validate(context.Background(), nil, sc, Options{Branches: []int{48}, Repetitions: 1, Seeds: 20, TimeScale: 5, SimWorld: simWorld})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	local, own := run(""), run(SimWorldScenario)
	if local.SimWorld != HarnessWorld || local.SimAtomicity != "world-local" || local.StoreProfile != sc.Store.Name {
		t.Errorf("result: sim world %q, atomicity %q, store %q; want world-local, world-local, %s", local.SimWorld, local.SimAtomicity, local.StoreProfile, sc.Store.Name)
	}
	if own.SimWorld != sc.World || own.SimAtomicity != "call" {
		t.Errorf("--sim-world scenario: sim world %q, atomicity %q; want %s, call", own.SimWorld, own.SimAtomicity, sc.World)
	}
	multi := func(res *Result) (n, runs int) {
		for _, r := range res.Rows {
			if r.Engine != "simlab" || r.World != res.SimWorld || r.Atomicity != res.SimAtomicity {
				t.Errorf("row %+v: want a simlab row on %s (%s)", r, res.SimWorld, res.SimAtomicity)
			}
			n += r.RunsMultiTerminal
			runs += r.RunsCounted
		}
		return n, runs
	}
	if n, runs := multi(local); n == 0 || runs != 40 {
		t.Errorf("world-local's split calls: %d of %d runs with more than one terminal event, want some of 40", n, runs)
	}
	if n, runs := multi(own); n != 0 || runs != 40 {
		t.Errorf("the scenario's atomic World: %d of %d runs with more than one terminal event, want none of 40", n, runs)
	}
	if err := (&Options{Branches: []int{4}, Repetitions: 1, Seeds: 1, SimWorld: "world-postgres"}).Check(sc); err == nil {
		t.Error("--sim-world world-postgres: accepted, want it refused (the real side runs world-local)")
	}
}
