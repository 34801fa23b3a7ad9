package model

import (
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// orderScenario is the fanout at branches on world-local's rules with one
// write served at a time, each 3 ms, in the given order.
func orderScenario(branches int, order string) Scenario {
	sc, _ := Builtin("fanout")
	sc.World = "world-local"
	sc.Store = LocalProfile()
	p := &sc.Store
	p.RunsGet, p.EventsList, p.EventsWrite = sim.Fixed(time.Millisecond), sim.Fixed(time.Millisecond), sim.Fixed(3*time.Millisecond)
	p.MaxConcurrentReads, p.MaxConcurrentWrites = 0, 1
	p.WriteOrder = order
	sc.Workflow.Fanouts = []int{branches}
	return sc
}

// servedOrder runs seed of sc and reports, over its runtime writes, the
// pairs of writes that waited for the slot together (the later arrived
// before the earlier was served) and how many of them the later was
// served first; and whether every step's own writes were served in the
// order they arrived.
func servedOrder(t *testing.T, sc Scenario, seed uint64) (pairs, reversed int, stepsInOrder bool, res *Result) {
	t.Helper()
	res, err := Run(&sc, sim.NewPCG(seed), Options{Record: true, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	var ws []Call
	for _, c := range res.History.Calls {
		if c.Op == OpEventsCreate && c.Caller.Kind != CallerClient && c.End >= c.Served && c.Event != world.EvRunCreated {
			ws = append(ws, c)
		}
	}
	stepsInOrder = true
	for i, a := range ws {
		for _, b := range ws[i+1:] {
			if b.Start <= a.Start {
				continue
			}
			if b.Start < a.Served {
				pairs++
				if b.Served < a.Served {
					reversed++
				}
			}
			if a.Event.IsStepEvent() && b.Event.IsStepEvent() && a.Run == b.Run && a.Step == b.Step && b.Served < a.Served {
				stepsInOrder = false
			}
		}
	}
	return pairs, reversed, stepsInOrder, res
}

// TestRandomWriteOrderServesWaitingWritesAtRandom: with write_order random a
// freed slot goes to a waiting write drawn at random, so about half of the
// pairs that wait together are served in the reverse of their arrival;
// first come first served reverses none. A step's own writes keep their
// arrival order either way (world-local's per-step lock is taken as a call
// arrives), so no claim is served before its step's create and refused.
func TestRandomWriteOrderServesWaitingWritesAtRandom(t *testing.T) {
	for _, order := range []string{WriteOrderFIFO, WriteOrderRandom} {
		var pairs, reversed, rejected int
		for seed := uint64(1); seed <= 5; seed++ {
			p, r, inOrder, res := servedOrder(t, orderScenario(48, order), seed)
			pairs, reversed, rejected = pairs+p, reversed+r, rejected+res.Counts.StepStartedRejected
			if !inOrder {
				t.Errorf("%s, seed %d: a step's writes were served out of their arrival order", order, seed)
			}
			if fr := res.History.FinalRuns; len(fr) != 1 || fr[0].Status != world.RunCompleted {
				t.Errorf("%s, seed %d: runs at the end %+v, want one completed", order, seed, fr)
			}
		}
		if pairs < 100 {
			t.Fatalf("%s: only %d pairs of writes waited together: the scenario does not contend", order, pairs)
		}
		share := float64(reversed) / float64(pairs)
		switch order {
		case WriteOrderFIFO:
			if reversed != 0 {
				t.Errorf("fifo: %d of %d waiting pairs served out of arrival order, want none", reversed, pairs)
			}
		case WriteOrderRandom:
			if share < 0.3 || share > 0.6 {
				t.Errorf("random: %.2f of %d waiting pairs served out of arrival order, want about half", share, pairs)
			}
		}
		if rejected != 0 {
			t.Errorf("%s: %d step_started refused over 5 seeds, want none (a claim waits behind its step's create)", order, rejected)
		}
	}
}

// TestRandomWriteOrderIsOneHistoryPerSeed: the draws come from the run's
// chooser, so a seed still gives one history, and two seeds two.
func TestRandomWriteOrderIsOneHistoryPerSeed(t *testing.T) {
	sc := orderScenario(48, WriteOrderRandom)
	hash := func(seed uint64) uint64 {
		r, err := Run(&sc, sim.NewPCG(seed), Options{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return r.History.Hash
	}
	if a, b := hash(3), hash(3); a != b {
		t.Errorf("seed 3 twice: hashes %x and %x", a, b)
	}
	if hash(3) == hash(4) {
		t.Errorf("seeds 3 and 4 gave one history: the order is not drawn")
	}
}

func TestWriteOrderIsValidated(t *testing.T) {
	for _, tc := range []struct {
		order   string
		shared  bool
		writes  int
		wantErr string
	}{
		{"lifo", false, 1, `write_order = "lifo"`},
		{WriteOrderRandom, true, 1, "write_order = random needs"},
		{WriteOrderRandom, false, 0, "write_order = random needs"},
		{WriteOrderRandom, false, 1, ""},
		{WriteOrderFIFO, true, 1, ""},
		{"", false, 0, ""},
	} {
		p := LocalProfile()
		p.WriteOrder, p.SharedWrites, p.MaxConcurrentWrites = tc.order, tc.shared, tc.writes
		err := p.Validate()
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%+v: %v, want no error", tc, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%+v: %v, want an error naming %q", tc, err, tc.wantErr)
		}
	}
}
