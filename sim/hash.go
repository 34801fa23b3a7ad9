package sim

import (
	"fmt"
	"math/bits"
)

const hashSeed = 0x6a09e667f3bcc908

// mix folds one word into the rolling hash. Multiplying by odd constants and
// rotating spreads every input bit over the whole word, so a change in any
// field of any event changes every later hash.
func mix(h, x uint64) uint64 {
	h ^= x * 0x9e3779b97f4a7c15
	h = bits.RotateLeft64(h, 31)
	return h * 0xbf58476d1ce4e5b9
}

// foldEvent folds what identifies a dispatched event: its time, kind, actor
// and payload digest. The insertion sequence is left out on purpose: it is
// an artefact of scheduling, already reflected in the order of events.
func foldEvent(h uint64, e *Event) uint64 {
	h = mix(h, uint64(e.At))
	// Kind and actor share one word; the payload is spread by an odd
	// multiplier and rotation first so that it cannot cancel them out.
	return mix(h, (uint64(e.Kind)<<32|uint64(e.Actor))^bits.RotateLeft64(e.Payload*0xd6e8feb86659fd93, 23))
}

// HashStream returns the hash a kernel would have after dispatching events.
func HashStream(events []Event) uint64 {
	h := uint64(hashSeed)
	for i := range events {
		h = foldEvent(h, &events[i])
	}
	return h
}

// Divergence names the first event where two recorded streams differ.
type Divergence struct {
	Index int    // position in both streams
	A, B  *Event // nil where that stream had already ended
}

func (d Divergence) String() string {
	side := func(e *Event) string {
		if e == nil {
			return "(stream ended)"
		}
		return fmt.Sprintf("t=%v kind=%d actor=%d payload=%#x", e.At, e.Kind, e.Actor, e.Payload)
	}
	return fmt.Sprintf("event #%d differs: a: %s; b: %s", d.Index, side(d.A), side(d.B))
}

// FirstDifference compares two recorded streams on what the hash covers and
// returns the first event where they differ, or ok=false if they are equal.
func FirstDifference(a, b []Event) (d Divergence, ok bool) {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		x, y := &a[i], &b[i]
		if x.At != y.At || x.Kind != y.Kind || x.Actor != y.Actor || x.Payload != y.Payload {
			return Divergence{Index: i, A: x, B: y}, true
		}
	}
	if len(a) == len(b) {
		return Divergence{}, false
	}
	d = Divergence{Index: n}
	if n < len(a) {
		d.A = &a[n]
	}
	if n < len(b) {
		d.B = &b[n]
	}
	return d, true
}
