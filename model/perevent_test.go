package model

import (
	"testing"
	"time"

	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

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
		if c.Caller.Kind == CallerClient || c.Caller.Kind == CallerWorld || c.End <= 0 {
			continue
		}
		var per time.Duration
		switch {
		case c.Op == OpEventsList:
			per = p.ListPerEvent
		case c.Op == OpEventsCreate && c.Event != world.EvRunCreated:
			per = p.WritePerEvent
		default:
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
