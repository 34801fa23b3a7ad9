package sim

import (
	"container/heap"
	"fmt"
	"testing"
)

// The hold model: P events pending; each dispatched event schedules one new
// event a pseudo-random increment later. The increments come from a table
// filled before the timer starts, so both benchmarks measure the queue, not
// the random number generator.

var pendingSizes = []int{100, 10000, 1000000}

func holdIncrements() []Time {
	c := NewPCG(42)
	inc := make([]Time, 1<<16)
	for i := range inc {
		inc[i] = Time(1 + c.Choose(1000000))
	}
	return inc
}

func reportEventsPerSecond(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkKernel(b *testing.B) {
	inc := holdIncrements()
	for _, p := range pendingSizes {
		b.Run(fmt.Sprintf("pending=%d", p), func(b *testing.B) {
			var k *Kernel
			i := 0
			k = New(Config{Capacity: p + 1, Handler: func(ev Event) {
				k.After(inc[i&(len(inc)-1)].Duration(), ev.Kind, ev.Actor, ev.Payload)
				i++
			}})
			for j := 0; j < p; j++ {
				k.Schedule(inc[j&(len(inc)-1)], 0, uint32(j), uint64(j))
			}
			b.ReportAllocs()
			b.ResetTimer()
			if _, err := k.Run(Limits{MaxEvents: int64(b.N)}); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			reportEventsPerSecond(b)
		})
	}
}

// baselineEvent and baselineHeap are the textbook container/heap event queue.
type baselineEvent struct {
	at    Time
	seq   uint64
	actor uint32
}

type baselineHeap []*baselineEvent

func (h baselineHeap) Len() int { return len(h) }
func (h baselineHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h baselineHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *baselineHeap) Push(x any)   { *h = append(*h, x.(*baselineEvent)) }
func (h *baselineHeap) Pop() any {
	old := *h
	n := len(old)
	x := old[n-1]
	*h = old[:n-1]
	return x
}

func BenchmarkContainerHeapBaseline(b *testing.B) {
	inc := holdIncrements()
	for _, p := range pendingSizes {
		b.Run(fmt.Sprintf("pending=%d", p), func(b *testing.B) {
			h := make(baselineHeap, 0, p+1)
			var seq uint64
			for j := 0; j < p; j++ {
				heap.Push(&h, &baselineEvent{at: inc[j&(len(inc)-1)], seq: seq, actor: uint32(j)})
				seq++
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ev := heap.Pop(&h).(*baselineEvent)
				heap.Push(&h, &baselineEvent{at: ev.at + inc[i&(len(inc)-1)], seq: seq, actor: ev.actor})
				seq++
			}
			b.StopTimer()
			reportEventsPerSecond(b)
		})
	}
}
