package world

import (
	"fmt"
	"maps"
	"strings"
)

// Clone returns a deep copy of the store: its rows, logs and steps share no
// memory with s, so either can be changed without the other seeing it. The
// conformance checks (conformance/) explore many orders of one batch of calls
// from the same state, each on its own copy.
func (s *Store) Clone() *Store {
	c := *s
	c.runs = make([]runRow, len(s.runs))
	c.locks = append([]stepLock(nil), s.locks...)
	if s.ids != nil {
		ids := &stepIDs{rows: map[namedRow]*Step{}, holder: maps.Clone(s.ids.holder), ghosts: maps.Clone(s.ids.ghosts)}
		for k, v := range s.ids.rows {
			row := *v
			ids.rows[k] = &row
		}
		c.ids = ids
	}
	for i := range s.runs {
		r := s.runs[i]
		r.log = append([]LoggedEvent(nil), r.log...)
		r.steps = append([]Step(nil), r.steps...)
		r.hist = append([]statusChange(nil), r.hist...)
		c.runs[i] = r
	}
	return &c
}

// Fingerprint is a canonical text of everything the store holds, hidden
// fields and the lock queue included: two stores with equal fingerprints
// answer every later call alike. For the conformance checks' memo tables,
// not the hot path.
func (s *Store) Fingerprint() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v %v %v|", s.fence, s.rules, s.Atomicity())
	for i := range s.runs {
		r := &s.runs[i]
		fmt.Fprintf(&b, "r%d %+v f%v s%d t%d n%d/%d [", i, r.view, r.fields, r.startedPos, r.terminalPos, r.nextPos, r.reserved)
		for j, st := range r.steps {
			if st.Exists {
				fmt.Fprintf(&b, "s%d=%v#%d@%d ", j, st.Status, st.Attempt, st.RetryAfter)
			}
		}
		b.WriteString("] [")
		for _, e := range r.log {
			fmt.Fprintf(&b, "%v:%d@%d ", e.Type, e.Step, e.Pos)
		}
		b.WriteString("]")
		for _, h := range r.hist {
			fmt.Fprintf(&b, "%v@%d ", h.status, h.at)
		}
		b.WriteString("|")
	}
	for _, l := range s.locks {
		fmt.Fprintf(&b, "L%d.%d.%d ", l.run, l.step, l.owner)
	}
	return b.String()
}

// Fingerprint is a canonical text of the call's progress and what its reads
// saw (see Store.Fingerprint).
func (t *Txn) Fingerprint() string {
	return fmt.Sprintf("%d/%d/%v/%v/%v/%d/%d/%d|%+v|%+v", t.Owner, t.pc, t.done, t.res, t.retry, t.pos, t.created, t.minted, t.snap, t.stepSnap)
}

// fnv64 is FNV-1a over 64-bit words: a cheap state hash for memo tables.
type fnv64 uint64

func (h *fnv64) add(v int64) {
	x := uint64(*h)
	for i := 0; i < 8; i++ {
		x ^= uint64(v) & 0xff
		x *= 1099511628211
		v >>= 8
	}
	*h = fnv64(x)
}

// HashRun hashes everything the store holds about one run, its locks
// included, the way Fingerprint describes it: the conformance checks explore
// one run at a time and key their memo tables on it.
func (s *Store) HashRun(id RunID) uint64 {
	h := fnv64(14695981039346656037)
	r := &s.runs[id]
	v := &r.view
	for _, x := range []int64{int64(v.Status), int64(v.StartedAt), int64(v.CompletedAt), int64(v.DeploymentID),
		int64(r.fields), int64(r.startedPos), int64(r.terminalPos), int64(r.nextPos), int64(r.reserved), int64(len(r.steps)), int64(len(r.log))} {
		h.add(x)
	}
	for j, st := range r.steps {
		if st.Exists {
			h.add(int64(j))
			h.add(int64(st.Status)<<32 | int64(st.Attempt))
			h.add(int64(st.RetryAfter))
		}
	}
	for _, e := range r.log {
		h.add(int64(e.Type)<<40 | int64(e.Step)<<8)
		h.add(int64(e.Pos))
	}
	for _, c := range r.hist {
		h.add(int64(c.status))
		h.add(int64(c.at))
	}
	for _, l := range s.locks {
		if l.run == id {
			h.add(int64(l.step)<<32 | int64(l.owner))
		}
	}
	return uint64(h)
}

// Hash hashes the call's progress and what its reads saw (see HashRun).
func (t *Txn) Hash() uint64 {
	h := fnv64(14695981039346656037)
	for _, x := range []int64{int64(t.Owner), int64(t.pc), b2i(t.done), int64(t.res), int64(t.retry), int64(t.pos), int64(t.created), int64(t.minted),
		int64(t.snap.Status), int64(t.snap.StartedAt), int64(t.stepSnap.Status), int64(t.stepSnap.Attempt), int64(t.stepSnap.RetryAfter), b2i(t.stepSnap.Exists)} {
		h.add(x)
	}
	return uint64(h)
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
