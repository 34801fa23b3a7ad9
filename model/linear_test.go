package model

import (
	"testing"

	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// A replay starts after its run's settled fan-outs (finished, none failed);
// a failure accepted later in one of them (two racing completions of one
// step on a World whose calls are not atomic can finish a fan-out early)
// must unsettle it, so that the next replay fails the run as one that
// walked every fan-out would.
func TestLaterFailureUnsettlesAFanout(t *testing.T) {
	e := &engine{h: &History{Fanouts: []Fanout{
		{Run: 0, Index: 0, FirstStep: 0, Branches: 2},
		{Run: 0, Index: 1, FirstStep: 2, Branches: 2},
		{Run: 1, Index: 0, FirstStep: 0, Branches: 2},
	}}, k: sim.New(sim.Config{Handler: func(*sim.Event) {}})}
	lc := lastCompleter{engine: e, fans: []fanRT{{holder: -1}, {holder: -1}, {holder: -1}}, settled: []int32{2, 1}}
	lc.written(&Call{Event: world.EvStepCompleted, Fanout: 1, Step: 2, Caller: Caller{Delivery: -1}})
	if lc.settled[0] != 2 {
		t.Fatalf("a completion unsettled run 0: settled = %d, want 2", lc.settled[0])
	}
	lc.written(&Call{Event: world.EvStepFailed, Fanout: 1, Step: 3, Caller: Caller{Delivery: -1}})
	if lc.settled[0] != 1 || lc.settled[1] != 1 {
		t.Fatalf("step_failed in run 0's fan-out 1: settled = %v, want [1 1]", lc.settled)
	}
	lc.written(&Call{Event: world.EvStepFailed, Fanout: 0, Step: 0, Caller: Caller{Delivery: -1}})
	if lc.settled[0] != 0 {
		t.Fatalf("step_failed in run 0's fan-out 0: settled = %d, want 0", lc.settled[0])
	}
}

// A proc's root is History.Invocation of its delivery, kept as procs are
// made: chains of inline steps continuing the workflow, and deliveries of
// messages among them.
func TestProcRootIsTheInvocation(t *testing.T) {
	e := &engine{h: &History{}, k: sim.New(sim.Config{Handler: func(*sim.Event) {}})}
	mk := func(msg, parent int32) int32 { return e.newProc(Delivery{Msg: msg, Parent: parent}) }
	a := mk(0, -1)
	b := mk(-1, a)
	c := mk(-1, b)
	d := mk(1, -1)
	mk(-1, c)
	mk(-1, d)
	mk(-1, a)
	for p := range int32(len(e.procs)) {
		if got, want := e.procs[p].root, e.h.Invocation(p); got != want {
			t.Errorf("proc %d: root %d, History.Invocation %d", p, got, want)
		}
	}
	e.procs[c].crashed = true
	e.procs[a].crashed = true // crash marks the delivery and its invocation
	for p := range int32(len(e.procs)) {
		walk := false
		for q := p; q >= 0; q = e.procs[q].parent {
			walk = walk || e.procs[q].crashed
		}
		if got := e.crashedTree(p); got != walk {
			t.Errorf("proc %d: crashedTree %v, the walk up its chain %v", p, got, walk)
		}
	}
}

// A replay goes on from the log it loaded: a step that ended after the load
// is pending to it (logView, stepView), while the fan-out's live counts
// already show it finished. Before, the replay judged the fan-outs from the
// World as it was when the load's answer came, and went on past a fan-out
// whose last step it had not seen end (a second continuation where core
// arms a backstop, and a false one-body-at-a-time on world-local).
func TestReplayJudgesTheLogItLoaded(t *testing.T) {
	k := sim.New(sim.Config{Handler: func(*sim.Event) {}})
	e := &engine{h: &History{Fanouts: []Fanout{{Run: 0, Index: 0, FirstStep: 0, Branches: 2}}}, k: k}
	lc := lastCompleter{engine: e, fans: []fanRT{{holder: -1}}, settled: []int32{0}}
	at := func(when sim.Time) {
		k.Schedule(when, 0, 0, 0)
		if _, err := k.Run(sim.Limits{}); err != nil {
			t.Fatal(err)
		}
	}
	at(10)
	lc.written(&Call{Event: world.EvStepCreated, Fanout: 0, Step: 1, Caller: Caller{Delivery: -1}})
	at(20)
	lc.written(&Call{Event: world.EvStepStarted, Lazy: true, Fanout: 0, Step: 0, Caller: Caller{Delivery: -1}})
	at(30)
	lc.written(&Call{Event: world.EvStepCompleted, Fanout: 0, Step: 1, Caller: Caller{Delivery: -1}})
	at(40)
	lc.written(&Call{Event: world.EvStepFailed, Fanout: 0, Step: 0, Caller: Caller{Delivery: -1}})
	for _, c := range []struct {
		t                         sim.Time
		created, finished, failed int32
	}{{-1, 0, 0, 0}, {5, 0, 0, 0}, {10, 1, 0, 0}, {25, 2, 0, 0}, {35, 2, 1, 0}, {40, 2, 2, 1}, {99, 2, 2, 1}} {
		cr, fi, fa := lc.logView(0, c.t)
		if cr != c.created || fi != c.finished || fa != c.failed {
			t.Errorf("log loaded at %d: created %d finished %d failed %d, want %d %d %d", c.t, cr, fi, fa, c.created, c.finished, c.failed)
		}
	}
	if cr, fi := lc.stepView(0, 0, 35); !cr || fi {
		t.Errorf("step 0 in the log loaded at 35: created %v finished %v, want created, not finished", cr, fi)
	}
	if cr, fi := lc.stepView(0, 1, 35); !cr || !fi {
		t.Errorf("step 1 in the log loaded at 35: created %v finished %v, want both", cr, fi)
	}
}
