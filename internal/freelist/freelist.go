package freelist

import "sync"

// List is a free list of *T; New makes one when none is free. The zero
// List with New set is ready.
type List[T any] struct {
	New  func() *T
	mu   sync.Mutex
	free []*T
}

// Get takes a free value, or a new one.
func (l *List[T]) Get() *T {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.free); n > 0 {
		v := l.free[n-1]
		l.free = l.free[:n-1]
		return v
	}
	return l.New()
}

// Put gives v back.
func (l *List[T]) Put(v *T) {
	l.mu.Lock()
	l.free = append(l.free, v)
	l.mu.Unlock()
}
