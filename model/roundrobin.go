package model

import (
	"time"
)

// This file is the shared write capacity served round robin
// (Profile.WriteSlices > 0): each write's work is cut into slices, and the
// capacity's max_concurrent_writes servers take one slice at a time from
// the front of one queue, a write going to the back after each of its
// slices. A burst's writes then all progress together, as under
// processor sharing (shared.go), but they answer a slice apart, in the
// order they arrived: an event loop that runs each write's next
// continuation in turn, rather than an ideal sharing in which writes of
// equal work that arrived together answer at the same instant.

// rrWrite is one write served round robin.
type rrWrite struct {
	call   int32
	serial uint64
	work   time.Duration // its whole work
	done   int32         // slices served
}

// rrState is the round-robin queue: writes waiting for a server, in
// order, and the servers busy.
type rrState struct {
	writes []rrWrite
	free   []int32 // recycled slots of writes
	queue  []int32 // slots waiting for a server
	head   int
	busy   int
}

func (r *rrState) reset() {
	*r = rrState{writes: r.writes[:0], free: r.free[:0], queue: r.queue[:0]}
}

// rrJoin puts write idx, of work w, in the round-robin queue.
func (e *engine) rrJoin(idx int32, w time.Duration) {
	r := &e.rr
	slot := takeSlot(&r.writes, &r.free)
	r.writes[slot] = rrWrite{call: idx, serial: e.calls[idx].serial, work: w}
	r.queue = append(r.queue, slot)
	e.rrServe()
}

// rrServe gives every free server the write at the queue's front.
func (e *engine) rrServe() {
	r := &e.rr
	for r.head < len(r.queue) && (e.shared.limit == 0 || int64(r.busy) < e.shared.limit) {
		slot := popFront(&r.queue, &r.head)
		r.busy++
		w := &r.writes[slot]
		e.k.AfterRef(e.rrSlice(w), evSharedSlice, uint32(e.calls[w.call].Caller.Delivery), w.serial, uint32(slot))
	}
}

// rrSlice is the length of write w's next slice: its work over the
// profile's slices, the last taking what rounding left.
func (e *engine) rrSlice(w *rrWrite) time.Duration {
	n := int64(e.prof.WriteSlices)
	k := int64(w.done)
	return time.Duration(int64(w.work)*(k+1)/n - int64(w.work)*k/n)
}

// rrSliceDone is evSharedSlice: write slot's slice is served. Its last
// answers it; an earlier one takes the Txn steps its work has reached
// and sends it to the back of the queue.
func (e *engine) rrSliceDone(slot int32) {
	r := &e.rr
	r.busy--
	w := &r.writes[slot]
	w.done++
	idx := w.call
	if int(w.done) == e.prof.WriteSlices {
		r.free = append(r.free, slot)
		e.shared.leave(e.calls[idx].Run)
		e.callDone(idx)
	} else {
		if c := &e.calls[idx]; c.flight > 0 {
			e.rrSteps(idx, time.Duration(int64(w.work)*int64(w.done)/int64(e.prof.WriteSlices)))
		}
		r.queue = append(r.queue, slot)
	}
	e.rrServe()
}

// rrSteps takes write idx's Txn steps whose share of its work (as
// flight.go spreads them) is done.
func (e *engine) rrSteps(idx int32, done time.Duration) {
	for {
		f := e.flightOf(idx)
		k := f.txn.MaxSteps() - 1
		if f.txn.Done() || f.parked || int(f.steps) >= k ||
			time.Duration(int64(f.lat)*int64(f.steps)/int64(k)) > done {
			return
		}
		e.stepFlight(idx)
	}
}
