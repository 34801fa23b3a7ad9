package model

// grow returns s with room for one more element, doubling its capacity when
// it is full. Past 256 elements append grows a slice by a quarter at a
// time, which copies each element about four times over in all; a large
// run's tables (calls, deliveries, messages) are then copied again and
// again, megabytes at a time, and a long copy also holds off the garbage
// collector's stack scans, which spin and signal the goroutine until it
// ends: the wider a fan-out or the longer a workflow, the more each branch
// cost (BenchmarkScale, docs/PERFORMANCE.md). Doubled, each element is
// copied about once, and a long slice is copied a chunk at a time
// (copyChunked).
func grow[S ~[]E, E any](s S) S {
	if len(s) < cap(s) {
		return s
	}
	if len(s) < copyChunk {
		return append(s[:cap(s)], make(S, max(cap(s), 8))...)[:len(s)]
	}
	t := make(S, len(s), 2*cap(s))
	copyChunked(t, s)
	return t
}

// copyChunk is how many elements copyChunked moves at once: at most a few
// hundred kilobytes for the largest table's elements (a recorded Call).
const copyChunk = 1024

// copyChunked copies src into dst (as long) a chunk at a time. One copy is
// one memmove, which the runtime cannot preempt: while a run copies a table
// of tens of megabytes (with a page fault every 4 KiB of fresh memory), a
// garbage collection that needs to stop the goroutine or scan its stack
// waits, spinning and signalling it every few microseconds, and each
// signal costs the copy more time. Between two chunks the goroutine stops
// at once (docs/PERFORMANCE.md, point 4, third pass).
func copyChunked[S ~[]E, E any](dst, src S) {
	for i := 0; i < len(src); i += copyChunk {
		copyPreemptible(dst[i:], src[i:min(i+copyChunk, len(src))])
	}
}

// copyPreemptible is copy behind a call: a signal almost never lands in
// copyChunked's loop rather than in a memmove, but a call's prologue is
// where a goroutine asked to stop stops.
//
//go:noinline
func copyPreemptible[S ~[]E, E any](dst, src S) { copy(dst, src) }

// zeroed returns s resliced to n zero elements, reusing its room when it
// has enough.
func zeroed[S ~[]E, E any](s S, n int) S {
	if cap(s) < n {
		return make(S, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// takeSlot is a slot of table for a new element: one given back to free,
// else a new one at the end; the caller fills it.
func takeSlot[T any](table *[]T, free *[]int32) int32 {
	if n := len(*free); n > 0 {
		slot := (*free)[n-1]
		*free = (*free)[:n-1]
		return slot
	}
	var zero T
	*table = append(*table, zero)
	return int32(len(*table) - 1)
}

// popFront takes the front of a queue kept as a slice and the index of its
// head. Under steady load the queue may never empty, so the served front is
// dropped once it is most of the slice, and the queue does not grow for the
// whole run.
func popFront(q *[]int32, head *int) int32 {
	next := (*q)[*head]
	*head++
	if *head == len(*q) {
		*q, *head = (*q)[:0], 0
	} else if *head >= 1024 && *head*2 >= len(*q) {
		n := copy(*q, (*q)[*head:])
		*q, *head = (*q)[:n], 0
	}
	return next
}
