package sim

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
)

// Event is one scheduled occurrence. Kind, Actor and Payload are opaque to the
// kernel: the model decides what they mean. Payload should identify the data
// the event carries (an index into a model table, or a digest of it) because
// it is folded into the run's hash.
type Event struct {
	At      Time
	Seq     uint64 // insertion order; breaks ties between events at the same time
	Kind    uint32
	Actor   uint32
	Payload uint64
	// Ref is a handle the model may use to find the event's data (a slot in
	// a table it recycles). It is not hashed: which slot held the data is
	// not part of what happened.
	Ref uint32
}

// eventQueue is a radix heap: event times never go backwards, so each
// pending event lives in the bucket named by the highest bit in which its
// time differs from the last minimum taken out. Pushing is an append; a
// pop empties the lowest non-empty bucket into lower ones only when the
// bucket of equal times (bucket 0) runs dry, so every event moves at most
// once per bit of its distance from the clock. Buckets keep insertion order
// and are redistributed in order, so events at the same time come out in
// insertion order: (time, sequence) order without comparing sequences. The
// bucket slices are reused, so a run in steady state allocates nothing.
//
// What made it fast enough (docs/PERFORMANCE.md, issue 21): a mask of the
// non-empty buckets instead of a scan for the lowest; a bucket of one event
// trading slices with bucket 0 instead of moving it (half the refills at
// 10 k pending); events written straight into their bucket, never copied
// through a temporary (see put); a refill that stores only the length of
// the bucket it appends to, and each bucket's earliest time kept inverted
// so that updating it is a conditional move (tops).
type eventQueue struct {
	last    Time // every pending event is at or after last
	buckets [64][]Event
	// tops[i] is ^t for the earliest time t in bucket i, 0 when it is
	// empty: stored inverted, so that the zero value means "none" and an
	// event entering takes max(tops[i], ^at), one conditional move rather
	// than two branches (one of them on whether the bucket was empty).
	tops [64]uint64
	full uint64 // bit i set: bucket i (i ≥ 1) holds events
	head int    // next event to take from bucket 0
	n    int

	// For the kernel's add: the next sequence number (the count of events
	// ever added) and the most events pending at once.
	seq  uint64
	maxN int
}

// bucketOf is the bucket of an event at time at. Times are never negative
// (the kernel's clock starts at 0 and never goes back), so at ^ last has
// its top bit clear and there are 64 buckets, not 65.
func bucketOf(at, last Time) int { return bits.Len64(uint64(at ^ last)) }

func (q *eventQueue) len() int { return q.n }

func (q *eventQueue) push(e Event) {
	if e.At < q.last {
		// Only possible after Run stopped at a time limit with the next
		// event past it: the clock then sits before q.last.
		q.rebase(e.At)
	}
	q.put(bucketOf(e.At, q.last), &e)
	q.n++
}

// add pushes the event with these fields and the next sequence number,
// writing them straight into its bucket: the kernel's Schedule, which
// builds no Event to copy. now is the kernel's clock. It is never after
// q.last (Run leaves the clock at the event it took out, at q.last, or at
// a time limit before it), so one comparison with q.last on the fast path
// also catches an event scheduled in the past.
func (q *eventQueue) add(at Time, kind, actor uint32, payload uint64, ref uint32, now Time) {
	if at < q.last {
		q.early(at, kind, actor, now)
	}
	seq := q.seq
	q.seq++
	b := bucketOf(at, q.last)
	s := q.buckets[b]
	if len(s) == cap(s) {
		s = slices.Grow(s, 1)
	}
	s = s[:len(s)+1]
	e := &s[len(s)-1]
	e.At, e.Seq, e.Kind, e.Actor, e.Payload, e.Ref = at, seq, kind, actor, payload, ref
	q.buckets[b] = s
	q.tops[b] = max(q.tops[b], ^uint64(at))
	q.full |= 1 << b
	q.n++
	if q.n > q.maxN {
		q.maxN = q.n
	}
}

// early handles an event before q.last: a model bug if it is before now
// too, otherwise (after Run stopped at a time limit with the next event
// past it, the clock now sits before q.last) the queue is re-based on it.
// Out of line: add's fast path stays small.
//
//go:noinline
func (q *eventQueue) early(at Time, kind, actor uint32, now Time) {
	if at < now {
		panic(fmt.Sprintf("sim: event kind %d for actor %d scheduled at %v, before now (%v)", kind, actor, at, now))
	}
	q.rebase(at)
}

// put appends *e to bucket b. It copies the event straight from where it
// is into the bucket: append(q.buckets[b], *e) copies it through a
// temporary on the stack first, and reading the 40-byte event back from
// the overlapping 16-byte stores that wrote it defeats store-to-load
// forwarding, a stall that was most of the cost of moving an event.
func (q *eventQueue) put(b int, e *Event) {
	s := q.buckets[b]
	if len(s) == cap(s) {
		s = slices.Grow(s, 1)
	}
	s = s[:len(s)+1]
	s[len(s)-1] = *e
	q.buckets[b] = s
	q.tops[b] = max(q.tops[b], ^uint64(e.At))
	q.full |= 1 << b
}

// rebase lowers last to t and re-files every pending event, in order.
func (q *eventQueue) rebase(t Time) {
	var pending []Event
	pending = append(pending, q.buckets[0][q.head:]...)
	for i := 1; i < len(q.buckets); i++ {
		pending = append(pending, q.buckets[i]...)
	}
	// Re-filing by (time, seq) keeps the order invariant: within one
	// bucket, events of equal time stay in insertion order.
	slices.SortFunc(pending, func(a, b Event) int { return cmp.Compare(a.Seq, b.Seq) })
	for i := range q.buckets {
		q.buckets[i] = q.buckets[i][:0]
	}
	q.head, q.full = 0, 0
	q.tops = [64]uint64{}
	q.last = t
	for k := range pending {
		q.put(bucketOf(pending[k].At, t), &pending[k])
	}
}

// fill makes bucket 0 hold the earliest events and returns the first of
// them; the queue must not be empty. Returning it lets the caller index
// nothing: the test for a dry bucket 0 is the only bounds check.
func (q *eventQueue) fill() *Event {
	if b0, h := q.buckets[0], q.head; uint(h) < uint(len(b0)) {
		return &b0[h]
	}
	q.buckets[0] = q.buckets[0][:0]
	q.head = 0
	i := bits.TrailingZeros64(q.full&^1) & 63 // bit 0: bucket 0 is drained; & 63 drops a bounds check (full != 0)
	b := q.buckets[i]
	q.full &^= 1 << i
	min := Time(^q.tops[i])
	q.tops[i] = 0
	if len(b) == 1 {
		// Half the time at 10 k pending: the one event is the minimum;
		// the two buckets trade slices instead of moving it.
		q.last = min
		q.buckets[0], q.buckets[i] = b, q.buckets[0]
		return &b[0]
	}
	q.last = min
	full := q.full // kept in a register, not written back per event
	for k := range b {
		at := b[k].At
		j := bucketOf(at, min) & 63 // at ^ min < 2^63: the mask only drops a bounds check
		s := &q.buckets[j]
		n := len(*s)
		if n == cap(*s) {
			q.grow(j)
		}
		*s = (*s)[:n+1]
		(*s)[n] = b[k]
		q.tops[j] = max(q.tops[j], ^uint64(at))
		full |= 1 << j
	}
	q.full = full
	q.buckets[i] = b[:0]
	// The minimum came from bucket i and went to bucket 0.
	return &q.buckets[0][0]
}

// grow makes room for one more event in bucket j, out of line so that
// fill's loop keeps its values in registers.
//
//go:noinline
func (q *eventQueue) grow(j int) { q.buckets[j] = slices.Grow(q.buckets[j], 1) }

// peek returns the earliest event; the queue must not be empty.
func (q *eventQueue) peek() *Event { return q.fill() }

// drop removes the event peek returned.
func (q *eventQueue) drop() {
	q.head++
	q.n--
}

// pop removes and returns the earliest event; the queue must not be empty.
func (q *eventQueue) pop() Event {
	e := *q.fill()
	q.head++
	q.n--
	return e
}
