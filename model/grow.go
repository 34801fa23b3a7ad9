package model

// grow returns s with room for one more element, doubling its capacity when
// it is full. Past 256 elements append grows a slice by a quarter at a
// time, which copies each element about four times over in all; a large
// run's tables (calls, deliveries, messages) are then copied again and
// again, megabytes at a time, and a long copy also holds off the garbage
// collector's stack scans, which spin and signal the goroutine until it
// ends: the wider a fan-out or the longer a workflow, the more each branch
// cost (BenchmarkScale, docs/PERFORMANCE.md). Doubled, each element is
// copied about once.
func grow[S ~[]E, E any](s S) S {
	if len(s) < cap(s) {
		return s
	}
	return append(s[:cap(s)], make(S, max(cap(s), 8))...)[:len(s)]
}

// trim returns a long s with at most a quarter of its length spare, copying
// it when it has more: a slice grow doubled is kept by the caller of Run
// (the History), and without this it could hold twice the memory it uses.
// A short one is left as append would have left it (doubled too), so that
// a small run pays no copy.
func trim[S ~[]E, E any](s S) S {
	if len(s) < 1024 || cap(s)-len(s) <= len(s)/4 {
		return s
	}
	// Appended to nil, the copy is not zeroed first (make would be).
	return append(S(nil), s...)
}

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
