package model

import (
	"time"

	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// This file is a write in flight on a World whose calls are not atomic
// (world.Txn): its steps are spread over its service time, the first (the
// adapter's validation read) when the store serves it and the last when it
// answers, the others evenly between, so that writes on one run whose
// service times overlap interleave their steps as the real adapters do
// (docs/CONFORMANCE.md: the concurrent differential test). A write waiting
// for a lock another holds (world-local's per-step lock) starts its steps
// when it has the lock. The answer reaches the caller at the end of the
// service time; what the write did is recorded when its last step takes
// effect (answerCreate), which is when readers can see it.

// flight is one write's Txn and its schedule.
type flight struct {
	txn   world.Txn
	lat   time.Duration // its drawn service time
	start sim.Time      // its first step (after any wait for a lock)
	// work0 is the shared capacity's work clock when the write joined it
	// (shared.go): its steps and answer are offsets from there.
	work0 int64
	steps uint8 // steps taken
	on    bool  // the write runs as a Txn
	begun bool  // its first step is taken
	due   bool  // its service time is over: answer once done
	// parked: the write waits in engine.parked (once, though both a
	// scheduled step and its answer may find it waiting: world-postgres's
	// lazy start waits mid-write for another's insert of the same row).
	parked bool
}

// park puts write idx among the writes waiting for a lock, once.
func (e *engine) park(idx int32) {
	if f := e.flightOf(idx); !f.parked {
		f.parked = true
		e.parked = append(e.parked, idx)
	}
}

// flightOf is the flight of call idx, which is in flight.
func (e *engine) flightOf(idx int32) *flight { return &e.flights[e.calls[idx].flight-1] }

// beginFlight starts write idx as a Txn with service time lat.
func (e *engine) beginFlight(idx int32, lat time.Duration) {
	c := &e.calls[idx]
	slot := takeSlot(&e.flights, &e.freeFlights)
	c.flight = slot + 1
	f := &e.flights[slot]
	*f = flight{txn: e.store.Begin(world.Event{Type: c.Event, Run: c.Run, Step: c.Step, RetryAfter: c.RetryAfter, Lazy: c.Lazy}, idx), lat: lat, on: true}
	if !e.store.Ready(&f.txn) {
		e.park(idx)
		return
	}
	e.takeOff(idx)
}

// endFlight gives the slot of answered write c's flight back.
func (e *engine) endFlight(c *Call) {
	if c.flight > 0 {
		e.freeFlights = append(e.freeFlights, c.flight-1)
		c.flight = 0
	}
}

// takeOff takes the write's first step now and schedules the rest and its
// answer.
func (e *engine) takeOff(idx int32) {
	c := &e.calls[idx]
	f := e.flightOf(idx)
	f.begun, f.start = true, e.k.Now()
	switch {
	case e.prof.SharedWrites && e.prof.WriteSlices > 0:
		e.rrJoin(idx, f.lat) // its slices take its steps (roundrobin.go)
	case e.prof.SharedWrites:
		f.work0 = e.sharedJoin()
		e.sharedMark(idx, f.work0, f.lat, true)
	default:
		e.k.AfterRef(f.lat, evCallDone, uint32(c.Caller.Delivery), c.serial, uint32(idx))
	}
	e.stepFlight(idx)
}

// stepFlight takes the write's next step if it can; a write that must wait
// for a lock waits (parked).
func (e *engine) stepFlight(idx int32) {
	f := e.flightOf(idx)
	if f.txn.Done() {
		return
	}
	if !e.store.Ready(&f.txn) {
		e.park(idx)
		return
	}
	e.store.Advance(&f.txn, e.k.Now())
	f.steps++
	if f.txn.Done() {
		e.landed(idx)
		return
	}
	// The next step at its share of the service time; the last one is
	// taken with the answer (callDone).
	if k := f.txn.MaxSteps() - 1; int(f.steps) < k && !f.due {
		offset := time.Duration(int64(f.lat) * int64(f.steps) / int64(k))
		if e.prof.SharedWrites {
			if e.prof.WriteSlices == 0 {
				e.sharedMark(idx, f.work0, offset, false)
			}
			return
		}
		at := f.start.Add(offset)
		if now := e.k.Now(); at < now {
			at = now
		}
		c := &e.calls[idx]
		e.k.ScheduleRef(at, evTxnStep, uint32(c.Caller.Delivery), c.serial, uint32(idx))
	}
}

// txnStep is a scheduled step of write idx.
func (e *engine) txnStep(idx int32) {
	// A step left over from a write that has answered (its flight given
	// back) does nothing, as one of a write whose service time is over.
	if e.calls[idx].flight == 0 {
		return
	}
	if f := e.flightOf(idx); f.on && !f.due {
		e.stepFlight(idx)
	}
}

// landFlight is write idx's service time over: it takes its remaining steps
// now. It reports whether the write is done and may answer; one waiting for
// a lock answers when it has taken its last step (unpark).
func (e *engine) landFlight(idx int32) bool {
	f := e.flightOf(idx)
	f.due = true
	for !f.txn.Done() {
		if !e.store.Ready(&f.txn) {
			e.park(idx)
			return false
		}
		e.store.Advance(&f.txn, e.k.Now())
		f.steps++
	}
	if !e.calls[idx].landed {
		e.landed(idx)
	}
	return true
}

// landed records what write idx did, the instant its last step took effect,
// and lets writes that waited for its lock go on.
func (e *engine) landed(idx int32) {
	c := &e.calls[idx]
	t := &e.flightOf(idx).txn
	res, retry, pos := t.Result()
	e.answerCreate(idx, c, res, retry, pos, t.Created())
	c.landed = true
	e.unpark()
}

// unpark lets every parked write that can go on, go on, in arrival order.
func (e *engine) unpark() {
	for moved := true; moved; {
		moved = false
		for i := 0; i < len(e.parked); i++ {
			idx := e.parked[i]
			f := e.flightOf(idx)
			if !e.store.Ready(&f.txn) {
				continue
			}
			e.parked = append(e.parked[:i], e.parked[i+1:]...)
			f.parked = false
			moved = true
			switch {
			case !f.begun:
				e.takeOff(idx)
			case f.due:
				if e.landFlight(idx) {
					e.answer(idx)
				}
			default:
				e.stepFlight(idx)
			}
			break
		}
	}
}
