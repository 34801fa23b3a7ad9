package world

import (
	"fmt"
	"strings"
	"testing"

	"github.com/simlab/simlab/sim"
	"pgregory.net/rapid"
)

// A Txn taken step after step with nothing between its steps is Apply: the
// same answers, rows and logs, for every rule set and fence. This is what
// lets the sequential conformance test (one call at a time) speak for the
// split calls too.
func TestTxnAloneIsApply(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rules := rapid.SampledFrom([]Rules{RulesDomain, RulesLocal, RulesPostgres}).Draw(t, "rules")
		fence := rapid.SampledFrom([]Fence{FenceFixed, FencePreFix}).Draw(t, "fence")
		a, b := NewFor(rules, fence), NewFor(rules, fence)
		runs := rapid.IntRange(1, 2).Draw(t, "runs")
		for i := 0; i < runs; i++ {
			a.CreateRun(0, 0, 7, -1)
			b.CreateRun(0, 0, 7, -1)
		}
		n := rapid.IntRange(1, 40).Draw(t, "calls")
		for i := 0; i < n; i++ {
			ev := Event{
				Type:       EventType(rapid.IntRange(int(EvRunStarted), int(EvStepRetrying)).Draw(t, "type")),
				Run:        RunID(rapid.IntRange(0, runs-1).Draw(t, "run")),
				Step:       StepID(rapid.IntRange(0, 2).Draw(t, "step")),
				Lazy:       rapid.Bool().Draw(t, "lazy"),
				RetryAfter: sim.Time(rapid.SampledFrom([]int64{0, 5, 1 << 40}).Draw(t, "retryAfter")),
			}
			now := sim.Time(10 * (i + 1))
			res, retry, pos := a.Apply(now, ev)
			tx := b.Begin(ev, int32(i))
			steps := 0
			for ; !tx.Done(); steps++ {
				if !b.Advance(&tx, now) || steps > 8 {
					t.Fatalf("call %d %+v: stuck after %d steps", i, ev, steps)
				}
			}
			if steps > tx.MaxSteps() {
				t.Fatalf("call %d %+v (%v): %d steps, MaxSteps %d", i, ev, rules, steps, tx.MaxSteps())
			}
			r2, retry2, pos2 := tx.Result()
			if res != r2 || retry != retry2 || pos != pos2 {
				t.Fatalf("call %d %+v (%v, %v): Apply %v/%v/%d, Txn %v/%v/%d", i, ev, rules, fence, res, retry, pos, r2, retry2, pos2)
			}
			if got, want := dump(b), dump(a); got != want {
				t.Fatalf("call %d %+v (%v, %v): state after Txn\n%s\nafter Apply\n%s", i, ev, rules, fence, got, want)
			}
		}
		if len(b.locks) != 0 {
			t.Fatalf("locks left: %+v", b.locks)
		}
	})
}

func dump(s *Store) string {
	out := ""
	for i := range s.runs {
		r := &s.runs[i]
		out += fmt.Sprintf("run %d %+v readable=%v\n", i, r.view, s.Readable(RunID(i)))
		for j, st := range r.steps {
			if st.Exists {
				out += fmt.Sprintf("  step %d %+v\n", j, st)
			}
		}
		for _, e := range r.log {
			out += fmt.Sprintf("  %v s%d at %v\n", e.Type, e.Step, e.At)
		}
	}
	return out
}

// Two run_completed that both read a live run are both accepted on
// world-local and the log holds two terminal events; world-postgres's
// guarded UPDATE refuses the second.
func TestTxnRacingTerminalWrites(t *testing.T) {
	for _, c := range []struct {
		rules Rules
		want  Result
		ends  int
	}{
		{RulesLocal, OK, 2},
		{RulesPostgres, EntityConflict, 1},
		{RulesDomain, EntityConflict, 1},
	} {
		s := NewFor(c.rules, FenceFixed)
		id := s.CreateRun(0, 0, 7, -1)
		s.Apply(1, Event{Type: EvRunStarted, Run: id})
		a := s.Begin(Event{Type: EvRunCompleted, Run: id}, 1)
		b := s.Begin(Event{Type: EvRunCompleted, Run: id}, 2)
		s.Advance(&a, 2) // both validation reads first
		s.Advance(&b, 2)
		for !a.Done() {
			s.Advance(&a, 3)
		}
		for !b.Done() {
			s.Advance(&b, 4)
		}
		ra, _, _ := a.Result()
		rb, _, _ := b.Result()
		ends := 0
		for _, e := range s.Log(id) {
			if e.Type.EndsRun() {
				ends++
			}
		}
		if ra != OK || rb != c.want || ends != c.ends {
			t.Errorf("%v: answers %v, %v with %d terminal events logged; want ok, %v with %d", c.rules, ra, rb, ends, c.want, c.ends)
		}
	}
}

// world-postgres's run_started that read a pending run sets running over a
// cancel that landed since: the row is running again, keeps its completedAt,
// and can no longer be read back.
func TestTxnPostgresRunStartedOverACancel(t *testing.T) {
	s := NewFor(RulesPostgres, FencePreFix)
	id := s.CreateRun(0, 0, 7, -1)
	start := s.Begin(Event{Type: EvRunStarted, Run: id}, 1)
	s.Advance(&start, 1) // read: pending
	s.Apply(2, Event{Type: EvRunCancelled, Run: id})
	for !start.Done() {
		s.Advance(&start, 3)
	}
	if res, _, _ := start.Result(); res != OK || s.Get(id).Status != RunRunning || s.Readable(id) {
		t.Fatalf("run_started answered %v, row %v, readable %v; want ok, running, unreadable", res, s.Get(id).Status, s.Readable(id))
	}
	// world-local writes the whole row from its read: running again, but
	// readable (no completedAt).
	s = NewFor(RulesLocal, FenceFixed)
	id = s.CreateRun(0, 0, 7, -1)
	start = s.Begin(Event{Type: EvRunStarted, Run: id}, 1)
	s.Advance(&start, 1)
	s.Apply(2, Event{Type: EvRunCancelled, Run: id})
	for !start.Done() {
		s.Advance(&start, 3)
	}
	if s.Get(id).Status != RunRunning || !s.Readable(id) {
		t.Fatalf("world-local: row %v readable %v; want running, readable", s.Get(id).Status, s.Readable(id))
	}
}

// world-local's step events on one step wait for each other in arrival
// order: the second cannot take a step while the first holds the lock.
func TestTxnLocalStepLockIsFIFO(t *testing.T) {
	s, id := runWithPendingStep(RulesLocal, FenceFixed)
	a := s.Begin(Event{Type: EvStepStarted, Run: id, Step: 0}, 1)
	b := s.Begin(Event{Type: EvStepCompleted, Run: id, Step: 0}, 2)
	if s.Ready(&b) || !s.Ready(&a) {
		t.Fatalf("ready: a %v b %v; want only a", s.Ready(&a), s.Ready(&b))
	}
	for !a.Done() {
		s.Advance(&a, 2)
	}
	if !s.Ready(&b) {
		t.Fatal("b still waits after a answered")
	}
	for !b.Done() {
		s.Advance(&b, 3)
	}
	if rb, _, _ := b.Result(); rb != OK || s.Step(id, 0).Status != StepCompleted {
		t.Fatalf("b answered %v, step %v", rb, s.Step(id, 0).Status)
	}
}

// world-postgres's step_started mints its event's id once its guarded
// UPDATE has passed and commits afterwards (dist/storage.js): a run_completed
// minted and committed in between is seen first yet sorts after it, the row
// others read changes only at the COMMIT, and a step write's UPDATE of the
// row waits for it. Found by TestConcurrent on world-postgres beta.29, where
// an events.list saw run_completed without the step_started logged before it.
func TestTxnPostgresStartCommitsAfterItsMint(t *testing.T) {
	s, id := runWithPendingStep(RulesPostgres, FencePreFix)
	start := s.Begin(Event{Type: EvStepStarted, Run: id, Step: 0}, 1)
	for range 4 { // the run read, the step read, BEGIN, the guarded UPDATE
		s.Advance(&start, 3)
	}
	if start.Done() {
		t.Fatalf("step_started committed with its guarded UPDATE")
	}
	if st := s.Step(id, 0); st.Status != StepPending || st.Attempt != 0 {
		t.Errorf("before the commit the row reads %v#%d; want pending#0", st.Status, st.Attempt)
	}
	complete := s.Begin(Event{Type: EvStepCompleted, Run: id, Step: 0}, 2)
	s.Advance(&complete, 4) // the skipped run read
	if s.Ready(&complete) {
		t.Errorf("step_completed's UPDATE is ready while step_started holds the row")
	}
	end := s.Begin(Event{Type: EvRunCompleted, Run: id}, 3)
	for !end.Done() {
		s.Advance(&end, 5)
	}
	if res, _, _ := end.Result(); res != OK || logTypes(s, id) != "run_created run_started step_created run_completed" {
		t.Fatalf("run_completed answered %v, log %s; want ok and the completion seen", res, logTypes(s, id))
	}
	for !start.Done() {
		s.Advance(&start, 6)
	}
	if res, _, _ := start.Result(); res != OK || logTypes(s, id) != "run_created run_started step_created step_started run_completed" {
		t.Errorf("step_started answered %v, log %s; want ok, logged before the completion", res, logTypes(s, id))
	}
	if st := s.Step(id, 0); st.Status != StepRunning || st.Attempt != 1 {
		t.Errorf("after the commit the row reads %v#%d; want running#1", st.Status, st.Attempt)
	}
	for !complete.Done() {
		if !s.Advance(&complete, 7) {
			t.Fatal("step_completed still waits after the commit")
		}
	}
	if res, _, _ := complete.Result(); res != OK || s.Step(id, 0).Status != StepCompleted {
		t.Errorf("step_completed answered %v, row %v; want ok, completed", res, s.Step(id, 0).Status)
	}
}

func logTypes(s *Store, id RunID) string {
	var out []string
	for _, e := range s.Log(id) {
		out = append(out, e.Type.String())
	}
	return strings.Join(out, " ")
}

// runWithPendingStep is a store with one running run whose step 0 is
// created and pending.
func runWithPendingStep(rules Rules, fence Fence) (*Store, RunID) {
	s := NewFor(rules, fence)
	id := s.CreateRun(0, 0, 7, -1)
	s.Apply(1, Event{Type: EvRunStarted, Run: id})
	s.Apply(1, Event{Type: EvStepCreated, Run: id, Step: 0})
	return s, id
}
