package model

import (
	"testing"
	"time"

	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// costPer is the cost a runtime call of the store pays per unit: list for
// an answered events.list, write for an answered events.create other than
// run_created (the client's), and 0 for any other call.
func costPer(c Call, list, write time.Duration) time.Duration {
	if c.Caller.Kind == CallerClient || c.Caller.Kind == CallerWorld || c.End <= 0 {
		return 0
	}
	switch {
	case c.Op == OpEventsList:
		return list
	case c.Op == OpEventsCreate && c.Event != world.EvRunCreated:
		return write
	}
	return 0
}

// A store model's cost per logged event makes a run's later lists and
// writes slower than its first: with fixed draws, each events.list and
// events.create takes its draw plus per times the events the run's log held
// when the call was served.
func TestPerEventCostGrowsWithTheLog(t *testing.T) {
	sc, _ := Builtin("fanout")
	p := &sc.Store
	p.RunsGet, p.EventsWrite, p.EventsList = sim.Fixed(time.Millisecond), sim.Fixed(time.Millisecond), sim.Fixed(time.Millisecond)
	p.MaxConcurrentReads, p.MaxConcurrentWrites = 0, 0
	p.ListPerEvent, p.WritePerEvent = 100*time.Microsecond, 200*time.Microsecond
	sc.Store.AtomicCalls = true // one answer per call: its duration is the service time
	r, err := Run(&sc, sim.NewPCG(1), Options{Record: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	checked := map[Op]int{}
	for _, c := range r.History.Calls {
		per := costPer(c, p.ListPerEvent, p.WritePerEvent)
		if per == 0 {
			continue
		}
		took := time.Duration(c.End - c.Served)
		extra := took - time.Millisecond
		if extra < per || extra%per != 0 {
			t.Fatalf("%v %v took %v: want 1ms plus a whole number (≥ 1) of %v", c.Op, c.Event, took, per)
		}
		checked[c.Op]++
	}
	if checked[OpEventsList] == 0 || checked[OpEventsCreate] == 0 {
		t.Fatalf("checked %v: want lists and writes", checked)
	}
}

// A cost per contending write makes a call slower by the writes of its run
// in the World when it is served, counted from each write's arrival to its
// answer (waiting for the one slot included), whatever the log's length:
// with fixed draws each write takes 1 ms plus per times those writes, and
// each list 1 ms plus its own per times them.
func TestPerContenderCostGrowsWithTheWritesInTheWorld(t *testing.T) {
	sc, _ := Builtin("fanout")
	p := &sc.Store
	p.RunsGet, p.EventsWrite, p.EventsList = sim.Fixed(time.Millisecond), sim.Fixed(time.Millisecond), sim.Fixed(time.Millisecond)
	p.MaxConcurrentReads, p.MaxConcurrentWrites = 0, 1
	p.ListPerEvent, p.WritePerEvent = 0, 0
	p.WritePerContender, p.ListPerContender = 300*time.Microsecond, 70*time.Microsecond
	sc.Store.AtomicCalls = true // one answer per call: its duration is the service time
	sc.Workflow.Fanouts = []int{32}
	r, err := Run(&sc, sim.NewPCG(1), Options{Record: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	calls := r.History.Calls
	// inWorld is how many of run's writes had arrived and not answered at
	// t, the write served at t included (its End is after t); those that
	// arrived at t itself may have come before or after the served call
	// in that instant, so they bound the count from above.
	inWorld := func(run world.RunID, t sim.Time) (atLeast, atMost time.Duration) {
		for _, w := range calls {
			if w.Op != OpEventsCreate || w.Run != run || w.Caller.Kind == CallerClient || w.Event == world.EvRunCreated || w.Start > t || w.End <= t {
				continue
			}
			atMost++
			if w.Start < t || w.Served == t {
				atLeast++
			}
		}
		return atLeast, atMost
	}
	checked, most := map[Op]int{}, time.Duration(0)
	for _, c := range calls {
		per := costPer(c, p.ListPerContender, p.WritePerContender)
		if per == 0 {
			continue
		}
		lo, hi := inWorld(c.Run, c.Served)
		took := time.Duration(c.End - c.Served)
		extra := took - time.Millisecond
		if extra%per != 0 || extra < per*lo || extra > per*hi {
			t.Fatalf("%v %v served at %v with %d..%d writes in the World took %v, want 1ms plus %v times their number", c.Op, c.Event, c.Served, lo, hi, took, per)
		}
		checked[c.Op]++
		most = max(most, extra/per)
	}
	if checked[OpEventsList] == 0 || checked[OpEventsCreate] == 0 || most < 16 {
		t.Fatalf("checked %v, at most %d writes in the World: want lists and writes, and a burst", checked, most)
	}
}
