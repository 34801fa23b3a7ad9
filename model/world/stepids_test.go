package world

import "testing"

// stepWant is a step row a case expects; exists false means none.
type stepWant struct {
	exists  bool
	status  StepStatus
	attempt int32
}

var (
	noRow      = stepWant{}
	pendingRow = stepWant{true, StepPending, 0}
	runningRow = stepWant{true, StepRunning, 1}
)

// idCall is an event on run of step theStep, under the id run from minted.
type idCall struct {
	run, from RunID
	typ       EventType
	lazy      bool
}

func (c idCall) event() Event {
	ev := Event{Type: c.typ, Run: c.run, Step: theStep, Lazy: c.lazy}
	if c.typ == EvStepRetrying {
		ev.RetryAfter = now - 50
	}
	return ev.WithStepIDOf(c.from)
}

// TestReusedStepIDs pins what each World does with a step id used in a run
// other than the one that minted it, each case with the published versions
// whose answers the differential test compared (conformance/testdata/
// known.json and the generated sequences, docs/CONFORMANCE.md): world-postgres
// 5.0.0-beta.27 and beta.29 key the steps table by the id alone, world-local
// 5.0.0-beta.43, beta.45 and beta.46 key a step per run. The engine never
// reuses an id (docs/MODEL.md).
func TestReusedStepIDs(t *testing.T) {
	const pg, local = RulesPostgres, RulesLocal
	r0created := idCall{0, 0, EvStepCreated, false}
	r1TakesR0s := idCall{1, 0, EvStepStarted, true} // run 1 lazily starts under run 0's id
	cases := []struct {
		shownBy string
		rules   Rules
		setup   []idCall // each accepted
		call    idCall
		want    Result
		logged  int      // events the call appended to its run's log
		row     stepWant // the call's run's row under the id, afterwards
		minter  stepWant // the minter's own row under the id, afterwards
	}{
		{"world-postgres 5.0.0-beta.27, beta.29: step_created in another run under a created id is accepted and logged, with no row", pg,
			[]idCall{r0created}, idCall{1, 0, EvStepCreated, false}, OK, 1, noRow, pendingRow},
		{"world-postgres 5.0.0-beta.27, beta.29: a second step_created there conflicts (events unique per run, id, type)", pg,
			[]idCall{r0created, {1, 0, EvStepCreated, false}}, idCall{1, 0, EvStepCreated, false}, EntityConflict, 0, noRow, pendingRow},
		{"world-postgres 5.0.0-beta.27, beta.29: a bare step_started there is not found", pg,
			[]idCall{r0created, {1, 0, EvStepCreated, false}}, idCall{1, 0, EvStepStarted, false}, NotFound, 0, noRow, pendingRow},
		{"world-postgres 5.0.0-beta.27, beta.29: a lazy step_started there conflicts (already created)", pg,
			[]idCall{r0created}, idCall{1, 0, EvStepStarted, true}, EntityConflict, 0, noRow, pendingRow},
		{"world-postgres 5.0.0-beta.27, beta.29: step_completed there is not found", pg,
			[]idCall{r0created, {1, 0, EvStepCreated, false}}, idCall{1, 0, EvStepCompleted, false}, NotFound, 0, noRow, pendingRow},
		{"world-postgres 5.0.0-beta.27, beta.29: step_failed there is not found", pg,
			[]idCall{r0created, {0, 0, EvStepStarted, false}}, idCall{1, 0, EvStepFailed, false}, NotFound, 0, noRow, runningRow},
		{"world-postgres 5.0.0-beta.27, beta.29: step_retrying there is not found", pg,
			[]idCall{r0created}, idCall{1, 0, EvStepRetrying, false}, NotFound, 0, noRow, pendingRow},
		{"world-postgres 5.0.0-beta.27, beta.29: an id nobody holds is created in the run that uses it first", pg,
			nil, idCall{1, 0, EvStepCreated, false}, OK, 1, pendingRow, noRow},
		{"world-postgres 5.0.0-beta.27, beta.29: then its minter's step_created is accepted with no row", pg,
			[]idCall{r1TakesR0s}, r0created, OK, 1, noRow, noRow},
		{"world-postgres 5.0.0-beta.27, beta.29: and its minter's bare start is not found", pg,
			[]idCall{r1TakesR0s, r0created}, idCall{0, 0, EvStepStarted, false}, NotFound, 0, noRow, noRow},
		{"world-postgres 5.0.0-beta.27, beta.29: a third run's step_created is accepted with no row too", pg,
			[]idCall{r1TakesR0s}, idCall{2, 0, EvStepCreated, false}, OK, 1, noRow, noRow},
		{"world-postgres 5.0.0-beta.27, beta.29: the holder's row follows every rule", pg,
			[]idCall{r1TakesR0s, {0, 0, EvStepCreated, false}}, idCall{1, 0, EvStepCompleted, false}, OK, 1, stepWant{true, StepCompleted, 1}, noRow},
		{"world-local 5.0.0-beta.43, beta.45, beta.46: step_created in another run under a created id is a step of that run", local,
			[]idCall{r0created}, idCall{1, 0, EvStepCreated, false}, OK, 1, pendingRow, pendingRow},
		{"world-local 5.0.0-beta.43, beta.45, beta.46: a bare step_started there before it is created is not found", local,
			[]idCall{r0created}, idCall{1, 0, EvStepStarted, false}, NotFound, 0, noRow, pendingRow},
		{"world-local 5.0.0-beta.43, beta.45, beta.46: a lazy step_started there creates and starts it", local,
			[]idCall{r0created}, idCall{1, 0, EvStepStarted, true}, OK, 2, runningRow, pendingRow},
		{"world-local 5.0.0-beta.43, beta.45, beta.46: the minter creates its own after another run took the id", local,
			[]idCall{r1TakesR0s}, r0created, OK, 1, pendingRow, pendingRow},
		{"domain (DOMAIN.md §1: keyed by run and id): step_created in another run is a step of that run", RulesDomain,
			[]idCall{r0created}, idCall{1, 0, EvStepCreated, false}, OK, 1, pendingRow, pendingRow},
	}
	for _, c := range cases {
		t.Run(c.shownBy, func(t *testing.T) {
			s := NewFor(c.rules, FencePreFix)
			for r := 0; r < 3; r++ {
				id := s.CreateRun(0, 7, 3, -1)
				s.Apply(1, Event{Type: EvRunStarted, Run: id, Step: NoStep})
			}
			for _, sc := range c.setup {
				if res, _, _ := s.Apply(now, sc.event()); res != OK {
					t.Fatalf("setup %+v: %v", sc, res)
				}
			}
			before := len(s.Log(c.call.run))
			if res, _, _ := s.Apply(now, c.call.event()); res != c.want {
				t.Fatalf("%+v: got %v, want %v", c.call, res, c.want)
			}
			if grew := len(s.Log(c.call.run)) - before; grew != c.logged {
				t.Fatalf("the call logged %d events, want %d", grew, c.logged)
			}
			check := func(what string, st Step, w stepWant) {
				t.Helper()
				if st.Exists != w.exists || (w.exists && (st.Status != w.status || st.Attempt != w.attempt)) {
					t.Fatalf("%s afterwards %+v, want %+v", what, st, w)
				}
			}
			check("the call's run's row", s.StepOf(c.call.run, c.call.from, theStep), c.row)
			check("the minter's row", s.Step(c.call.from, theStep), c.minter)
			if err := s.Verify(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Verify knows a step_created without a row from a lost row, and keeps the
// world-postgres rule that an id has one row.
func TestVerifyChecksReusedStepIDs(t *testing.T) {
	s := NewFor(RulesPostgres, FencePreFix)
	s.CreateRun(0, 7, 3, -1)
	s.CreateRun(0, 7, 3, -1)
	s.Apply(now, idCall{0, 0, EvStepCreated, false}.event())
	s.Apply(now, idCall{1, 0, EvStepCreated, false}.event())
	if err := s.Verify(); err != nil {
		t.Fatal(err)
	}
	// A row for run 1 under run 0's id, beside run 0's own: two rows for one id.
	s.ids.rows[namedRow{run: 1, name: stepName{from: 0, step: theStep}}] = &Step{Exists: true}
	if err := s.Verify(); err == nil {
		t.Fatal("Verify accepted two rows for one world-postgres step id")
	}
	delete(s.ids.rows, namedRow{run: 1, name: stepName{from: 0, step: theStep}})
	// A step_created logged with no row and no reason for it.
	delete(s.ids.ghosts, namedRow{run: 1, name: stepName{from: 0, step: theStep}})
	if err := s.Verify(); err == nil {
		t.Fatal("Verify accepted a step_created without a row that no other run explains")
	}
}

// The engine's own ids keep the store allocation free after Reset on the
// real rule sets, and Reset forgets every reused id.
func TestOwnStepIDsStayOnTheFastPath(t *testing.T) {
	for _, rules := range []Rules{RulesLocal, RulesPostgres} {
		s := NewFor(rules, FenceFixed)
		fan := func() {
			s.Reset(FenceFixed)
			id := s.CreateRun(0, 7, 3, -1)
			for st := StepID(0); st < 16; st++ {
				s.Apply(2, Event{Type: EvStepCreated, Run: id, Step: st})
				s.Apply(3, Event{Type: EvStepStarted, Run: id, Step: st})
				s.Apply(4, Event{Type: EvStepCompleted, Run: id, Step: st})
			}
		}
		fan()
		if n := testing.AllocsPerRun(20, fan); n != 0 {
			t.Errorf("%v: %v allocs per fan-out after Reset, want 0", rules, n)
		}
		s.CreateRun(0, 7, 3, -1)
		s.Apply(now, idCall{1, 0, EvStepStarted, true}.event())
		if s.ids == nil {
			t.Fatalf("%v: a reused id left no trace", rules)
		}
		fan()
		if s.ids != nil || !s.Step(0, 15).Exists {
			t.Errorf("%v: Reset kept reused ids (%v) or lost the own steps", rules, s.ids != nil)
		}
	}
}
