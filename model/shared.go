package model

import (
	"math"
	"math/bits"
	"time"

	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// This file is the World's write capacity shared among the writes in
// flight (Profile.SharedWrites): processor sharing, where the FIFO pool of
// service.go serves max_concurrent_writes writes at a time in arrival order
// and makes the rest wait. A write's drawn service time is an amount of
// work; with n writes in service and a capacity of c, each does min(1, c/n)
// of its work per unit of time. Every write in service has therefore done
// the same work since it joined: the work done per write since the run
// began, v, is one clock for all of them, and a write that joined at v0
// reaches offset w of its work when v reaches v0 + w. Its Txn steps
// (flight.go) and its answer are such offsets, kept in one heap, and one
// kernel event (evSharedWake) is scheduled for the earliest; a change of n
// changes the rate, so the event is scheduled again and the older one,
// found stale by its generation, does nothing.

// sharedWrites is the shared capacity's state.
type sharedWrites struct {
	limit int64 // c: writes served at full speed; 0 is no limit
	n     int64 // writes in service
	// v is the work each write in service has done since the run began,
	// in picoseconds, brought up to date at at.
	v     int64
	at    sim.Time
	marks []serviceMark // a min-heap by (v, seq)
	seq   uint64
	gen   uint64 // the generation of the evSharedWake scheduled last
	// waking: the marks due now are being handled; the wake is scheduled
	// once they are.
	waking bool
	// writes is each run's writes in flight, from their arrival to their
	// answer (the cost per logged event counts them, service.go).
	writes []int32
}

// onRun is how many of run's writes are in flight.
func (s *sharedWrites) onRun(run world.RunID) int32 {
	if int(run) < len(s.writes) {
		return s.writes[run]
	}
	return 0
}

// enter counts a write of run in flight, until its answer (leave).
func (s *sharedWrites) enter(run world.RunID) {
	for int(run) >= len(s.writes) {
		s.writes = append(grow(s.writes), 0)
	}
	s.writes[run]++
}

func (s *sharedWrites) leave(run world.RunID) { s.writes[run]-- }

// serviceMark is the instant a write's work reaches one of its offsets:
// its next Txn step or its answer.
type serviceMark struct {
	v      int64
	seq    uint64
	serial uint64 // the call's serial, so a recycled slot is never mistaken
	call   int32
	answer bool
}

// psPerNS: v counts picoseconds, so that a share of a nanosecond is kept.
const psPerNS = 1000

func (s *sharedWrites) reset(limit int) {
	*s = sharedWrites{limit: int64(limit), marks: s.marks[:0], writes: s.writes[:0]}
}

// advance brings v up to now.
func (s *sharedWrites) advance(now sim.Time) {
	if dt := int64(now - s.at); dt > 0 && s.n > 0 {
		served := s.n
		if s.limit > 0 {
			served = min(s.limit, s.n)
		}
		s.v += int64(mulDiv(uint64(dt)*psPerNS, uint64(served), uint64(s.n)))
	}
	s.at = now
}

// mulDiv is a × b / c rounded down, and mulDivUp rounded up, computed in
// 128 bits; a quotient past 64 bits (never, for a run's times) saturates.
func mulDiv(a, b, c uint64) uint64 {
	q, _ := mulDivRem(a, b, c)
	return q
}

func mulDivUp(a, b, c uint64) uint64 {
	q, r := mulDivRem(a, b, c)
	if r > 0 && q < math.MaxUint64 {
		q++
	}
	return q
}

func mulDivRem(a, b, c uint64) (q, r uint64) {
	hi, lo := bits.Mul64(a, b)
	if hi >= c {
		return math.MaxUint64, 0
	}
	return bits.Div64(hi, lo, c)
}

// push adds a mark to the heap.
func (s *sharedWrites) push(m serviceMark) {
	s.seq++
	m.seq = s.seq
	s.marks = append(s.marks, m)
	for i := len(s.marks) - 1; i > 0; {
		parent := (i - 1) / 2
		if !s.marks[i].before(s.marks[parent]) {
			break
		}
		s.marks[i], s.marks[parent] = s.marks[parent], s.marks[i]
		i = parent
	}
}

// pop removes the earliest mark.
func (s *sharedWrites) pop() serviceMark {
	top := s.marks[0]
	last := len(s.marks) - 1
	s.marks[0] = s.marks[last]
	s.marks = s.marks[:last]
	for i := 0; ; {
		l, r, least := 2*i+1, 2*i+2, i
		if l < last && s.marks[l].before(s.marks[least]) {
			least = l
		}
		if r < last && s.marks[r].before(s.marks[least]) {
			least = r
		}
		if least == i {
			break
		}
		s.marks[i], s.marks[least] = s.marks[least], s.marks[i]
		i = least
	}
	return top
}

func (m serviceMark) before(o serviceMark) bool {
	return m.v < o.v || m.v == o.v && m.seq < o.seq
}

// sharedJoin puts write idx in service now and returns the work done so
// far (its offsets count from there).
func (e *engine) sharedJoin() int64 {
	s := &e.shared
	s.advance(e.k.Now())
	s.n++
	e.sharedWake()
	return s.v
}

// sharedMark schedules write idx's step (or its answer) for when its work,
// counted from v0, reaches offset.
func (e *engine) sharedMark(idx int32, v0 int64, offset time.Duration, answer bool) {
	s := &e.shared
	s.advance(e.k.Now())
	v := v0 + int64(offset)*psPerNS
	top := len(s.marks) == 0 || s.marks[0].v > v
	s.push(serviceMark{v: v, serial: e.calls[idx].serial, call: idx, answer: answer})
	if top {
		e.sharedWake()
	}
}

// sharedWake schedules the wake for the earliest mark at the current rate,
// unless the marks due now are being handled.
func (e *engine) sharedWake() {
	s := &e.shared
	if s.waking || len(s.marks) == 0 {
		return
	}
	s.gen++
	now := e.k.Now()
	at := now
	if ahead := s.marks[0].v - s.v; ahead > 0 && s.n > 0 {
		served := s.n
		if s.limit > 0 {
			served = min(s.limit, s.n)
		}
		at = now + sim.Time(mulDivUp(uint64(ahead), uint64(s.n), uint64(served)*psPerNS))
	}
	e.k.Schedule(at, evSharedWake, 0, s.gen)
}

// sharedWoken is evSharedWake: every mark whose work is done now is
// handled, in the heap's order; a stale wake does nothing.
func (e *engine) sharedWoken(gen uint64) {
	s := &e.shared
	if gen != s.gen {
		return
	}
	e.active()
	s.advance(e.k.Now())
	s.waking = true
	for len(s.marks) > 0 && s.marks[0].v <= s.v {
		m := s.pop()
		if e.calls[m.call].serial != m.serial {
			continue
		}
		if m.answer {
			// Its work is done: it leaves the share whatever it waits
			// for next (a lock another write holds).
			s.n--
			s.leave(e.calls[m.call].Run)
			e.callDone(m.call)
		} else {
			e.txnStep(m.call)
		}
		s.advance(e.k.Now())
	}
	s.waking = false
	e.sharedWake()
}
