package sim

import "math/bits"

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
type eventQueue struct {
	last    Time // every pending event is at or after last
	buckets [65][]Event
	head    int // next event to take from bucket 0
	n       int
}

func bucketOf(at, last Time) int { return bits.Len64(uint64(at ^ last)) }

func (q *eventQueue) len() int { return q.n }

func (q *eventQueue) push(e Event) {
	if e.At < q.last {
		// Only possible after Run stopped at a time limit with the next
		// event past it: the clock then sits before q.last.
		q.rebase(e.At)
	}
	b := bucketOf(e.At, q.last)
	q.buckets[b] = append(q.buckets[b], e)
	q.n++
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
	sortBySeq(pending)
	for i := range q.buckets {
		q.buckets[i] = q.buckets[i][:0]
	}
	q.head = 0
	q.last = t
	for _, e := range pending {
		b := bucketOf(e.At, t)
		q.buckets[b] = append(q.buckets[b], e)
	}
}

func sortBySeq(es []Event) {
	for i := 1; i < len(es); i++ {
		for j := i; j > 0 && es[j].Seq < es[j-1].Seq; j-- {
			es[j], es[j-1] = es[j-1], es[j]
		}
	}
}

// fill makes bucket 0 hold the earliest events; the queue must not be empty.
func (q *eventQueue) fill() {
	if q.head < len(q.buckets[0]) {
		return
	}
	q.buckets[0] = q.buckets[0][:0]
	q.head = 0
	i := 1
	for len(q.buckets[i]) == 0 {
		i++
	}
	b := q.buckets[i]
	min := b[0].At
	for k := 1; k < len(b); k++ {
		if b[k].At < min {
			min = b[k].At
		}
	}
	q.last = min
	for k := range b {
		j := bucketOf(b[k].At, min)
		q.buckets[j] = append(q.buckets[j], b[k])
	}
	q.buckets[i] = b[:0]
}

// peek returns the earliest event; the queue must not be empty.
func (q *eventQueue) peek() *Event {
	q.fill()
	return &q.buckets[0][q.head]
}

// pop removes and returns the earliest event; the queue must not be empty.
func (q *eventQueue) pop() Event {
	q.fill()
	e := q.buckets[0][q.head]
	q.head++
	q.n--
	return e
}
