package model

import (
	"fmt"
	"testing"
	"time"

	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// fanoutWith runs the fanout scenario with settings kvs on seed, recorded,
// and fails the test unless the run drained and completed.
func fanoutWith(t *testing.T, seed uint64, kvs ...string) (*Scenario, *History) {
	t.Helper()
	return builtinWith(t, "fanout", seed, kvs...)
}

// builtinWith is fanoutWith on the built-in scenario name.
func builtinWith(t *testing.T, name string, seed uint64, kvs ...string) (*Scenario, *History) {
	t.Helper()
	sc, _ := Builtin(name)
	for _, kv := range kvs {
		if err := sc.Set(kv); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Run(&sc, sim.NewPCG(seed), Options{Record: true, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	if h := r.History; !h.Drained || h.ReadBack[0].Status != world.RunCompleted {
		t.Fatalf("seed %d: drained %v, run %v; want a completed run", seed, h.Drained, h.ReadBack[0].Status)
	}
	return &sc, r.History
}

// A replay's cost passes between the log's answer and the replay's first
// act: the write that ends the run comes that long after the read that
// loaded its log, and no sooner; a replay that runs no workflow code (its
// log holds the run's end) costs nothing.
func TestReplayCostDelaysTheReplaysAct(t *testing.T) {
	const base, perEntity, perEvent = 40 * time.Millisecond, 3 * time.Millisecond, time.Millisecond
	for seed := uint64(1); seed <= 20; seed++ {
		sc, h := fanoutWith(t, seed, "workflow.replay_base=40ms", "workflow.replay_per_entity=3ms", "workflow.replay_per_event=1ms")
		branches := sc.Workflow.Fanouts[0]
		ends := 0
		for i, c := range h.Calls {
			if c.Op != OpEventsCreate || c.Event != world.EvRunCompleted {
				continue
			}
			ends++
			// The replay went on from its delivery's last read of the
			// log before the write.
			load := -1
			for j := i - 1; j >= 0; j-- {
				if h.Calls[j].Caller == c.Caller && h.Calls[j].Op == OpEventsList {
					load = j
					break
				}
			}
			if load < 0 {
				t.Fatalf("seed %d: run_completed by %v with no list before it", seed, c.Caller)
			}
			l := h.Calls[load]
			// Every branch minted; the log as the list answered holds at
			// least the run's creation, start and each step's create and end.
			least := base + perEntity*time.Duration(branches) + perEvent*time.Duration(2+2*branches)
			if gap := time.Duration(c.Start - l.End); gap < least {
				t.Fatalf("seed %d: run_completed %v after its list answered, want at least the replay's cost %v", seed, gap, least)
			}
		}
		if ends == 0 {
			t.Fatalf("seed %d: no run_completed", seed)
		}
	}
}

// With no replay cost nothing waits: the terminal write follows its list
// at once.
func TestNoReplayCostActsAtOnce(t *testing.T) {
	sc, _ := Builtin("fanout")
	sc.Workflow.ReplayBase, sc.Workflow.ReplayPerEntity, sc.Workflow.ReplayPerEvent = 0, 0, 0
	r, err := Run(&sc, sim.NewPCG(1), Options{Record: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	h := r.History
	for i, c := range h.Calls {
		if c.Op == OpEventsCreate && c.Event == world.EvRunCompleted {
			for j := i - 1; j >= 0; j-- {
				if p := h.Calls[j]; p.Caller == c.Caller && p.Op == OpEventsList {
					if c.Start != p.End {
						t.Fatalf("run_completed %v after its list with no replay cost", time.Duration(c.Start-p.End))
					}
					return
				}
			}
		}
	}
	t.Fatal("no run_completed after a list")
}

func TestReplayCostRefusesANegativeDuration(t *testing.T) {
	for _, key := range []string{"replay_base", "replay_per_entity", "replay_per_event"} {
		sc, _ := Builtin("fanout")
		if err := sc.Set(fmt.Sprintf("workflow.%s=-1ms", key)); err == nil {
			if err = sc.Validate(); err == nil {
				t.Fatalf("workflow.%s=-1ms accepted", key)
			}
		}
	}
}
