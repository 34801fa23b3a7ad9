package sim

import (
	"container/heap"
	"testing"
)

// refHeap is the obviously correct reference: a binary heap on (time, seq).
type refHeap []Event

func (h refHeap) Len() int { return len(h) }
func (h refHeap) Less(i, j int) bool {
	if h[i].At != h[j].At {
		return h[i].At < h[j].At
	}
	return h[i].Seq < h[j].Seq
}
func (h refHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *refHeap) Push(x any)   { *h = append(*h, x.(Event)) }
func (h *refHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// The radix queue must give exactly the (time, insertion) order of a sorted
// reference while pushes and pops interleave, as they do in a run.
func TestQueueMatchesSortedReferenceUnderInterleaving(t *testing.T) {
	c := NewPCG(9)
	var q eventQueue
	ref := &refHeap{}
	var now Time
	var seq uint64
	for step := 0; step < 200000; step++ {
		if ref.Len() == 0 || c.Choose(3) > 0 {
			// Many equal times and a wide spread of distances.
			var d Time
			switch c.Choose(4) {
			case 0:
				d = 0
			case 1:
				d = Time(c.Choose(8))
			case 2:
				d = Time(c.Choose(1 << 20))
			default:
				d = Time(c.Choose(1 << 30))
			}
			e := Event{At: now + d, Seq: seq}
			seq++
			q.push(e)
			heap.Push(ref, e)
			continue
		}
		want := heap.Pop(ref).(Event)
		got := q.pop()
		if got != want {
			t.Fatalf("step %d: popped %+v, want %+v", step, got, want)
		}
		now = got.At
		if q.len() != ref.Len() {
			t.Fatalf("len %d, want %d", q.len(), ref.Len())
		}
	}
}

// After Run stops at a time limit, the clock sits before the next event;
// an event scheduled in between must still come out first.
func TestSchedulingBetweenTheTimeLimitAndTheNextEvent(t *testing.T) {
	var order []uint64
	k := New(Config{Handler: func(ev *Event) { order = append(order, ev.Payload) }})
	k.Schedule(10, 0, 0, 1)
	k.Schedule(26, 0, 0, 4)
	if st, err := k.Run(Limits{MaxTime: 25}); err != nil || st.Reason != TimeLimit {
		t.Fatalf("stats %+v, err %v", st, err)
	}
	k.Schedule(25, 0, 0, 2)
	k.Schedule(25, 0, 0, 3)
	if _, err := k.Run(Limits{}); err != nil {
		t.Fatal(err)
	}
	want := []uint64{1, 2, 3, 4}
	for i := range want {
		if i >= len(order) || order[i] != want[i] {
			t.Fatalf("order %v, want %v", order, want)
		}
	}
}

// A peek moves the queue's base to the next event, past the clock; an event
// pushed between the clock and that base (what the kernel does after Run
// stops at a time limit) re-files every pending one. Order must survive
// many of them, with ties, among hundreds pending.
func TestQueueRebasesKeepOrder(t *testing.T) {
	c := NewPCG(21)
	var q eventQueue
	ref := &refHeap{}
	var now Time
	var seq uint64
	push := func(at Time) {
		e := Event{At: at, Seq: seq}
		seq++
		q.push(e)
		heap.Push(ref, e)
	}
	for range 300 {
		push(Time(c.Choose(1 << 20)))
	}
	for step := 0; step < 20000; step++ {
		switch c.Choose(4) {
		case 0:
			// Peek, then push between the clock and the next event.
			if q.len() == 0 {
				continue
			}
			next := q.peek().At
			if next > now {
				push(now + Time(c.Choose(int(next-now))))
			}
		case 1:
			push(now + Time(c.Choose(1<<12)))
		default:
			if ref.Len() == 0 {
				continue
			}
			want := heap.Pop(ref).(Event)
			got := q.pop()
			if got != want {
				t.Fatalf("step %d: popped %+v, want %+v", step, got, want)
			}
			now = got.At
		}
	}
}
