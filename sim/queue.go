package sim

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

// before orders events by (time, insertion sequence), which makes the order
// of simultaneous events a property of the model rather than of the heap.
func (e *Event) before(o *Event) bool {
	if e.At != o.At {
		return e.At < o.At
	}
	return e.Seq < o.Seq
}

// eventHeap is a 4-ary min-heap of Events stored by value. Four children per
// node halve the depth of a binary heap, and a node's children share a cache
// line or two, which is what makes sift-down cheap; storing values (no
// interface boxing, no pointers) keeps pushes allocation-free once the slice
// has grown to the run's high-water mark.
type eventHeap struct {
	items []Event
}

func (h *eventHeap) len() int { return len(h.items) }

func (h *eventHeap) push(e Event) {
	h.items = append(h.items, e)
	items := h.items
	i := len(items) - 1
	for i > 0 {
		parent := (i - 1) / 4
		if !e.before(&items[parent]) {
			break
		}
		items[i] = items[parent]
		i = parent
	}
	items[i] = e
}

// peek returns the earliest event; the heap must not be empty.
func (h *eventHeap) peek() *Event { return &h.items[0] }

// pop removes and returns the earliest event; the heap must not be empty.
func (h *eventHeap) pop() Event {
	items := h.items
	top := items[0]
	n := len(items) - 1
	last := items[n]
	h.items = items[:n]
	if n == 0 {
		return top
	}
	items = items[:n]
	i := 0
	for {
		first := 4*i + 1
		if first >= n {
			break
		}
		best := first
		end := first + 4
		if end > n {
			end = n
		}
		for c := first + 1; c < end; c++ {
			if items[c].before(&items[best]) {
				best = c
			}
		}
		if !items[best].before(&last) {
			break
		}
		items[i] = items[best]
		i = best
	}
	items[i] = last
	return top
}

func (h *eventHeap) reset() { h.items = h.items[:0] }
