package world

import (
	"errors"
	"fmt"
	"testing"

	"github.com/simlab/simlab/sim"
)

// stepSetup describes the step row a case starts from.
type stepSetup struct {
	missing    bool
	status     StepStatus
	retryAfter sim.Time // pending via step_retrying with this time (attempt 1)
}

var (
	noStep      = stepSetup{missing: true}
	pendingStep = stepSetup{status: StepPending}
	runningStep = stepSetup{status: StepRunning}
	doneStep    = stepSetup{status: StepCompleted}
	failedStep  = stepSetup{status: StepFailed}
)

func retryStep(at sim.Time) stepSetup { return stepSetup{status: StepPending, retryAfter: at} }

const (
	theStep StepID   = 0
	now     sim.Time = 100
)

// build returns a store whose run 0 is in state run and whose step 0 is in
// state step, built only through accepted events so the log is realistic.
func build(t testing.TB, fence Fence, run RunStatus, step stepSetup) *Store {
	t.Helper()
	return buildFor(t, RulesDomain, fence, run, step)
}

// buildFor is build for a store applying the given rules.
func buildFor(t testing.TB, rules Rules, fence Fence, run RunStatus, step stepSetup) *Store {
	t.Helper()
	s := NewFor(rules, fence)
	id := s.CreateRun(0, 7, 3, -1)
	must := func(at sim.Time, ev Event) {
		t.Helper()
		ev.Run = id
		if res, _, _ := s.Apply(at, ev); res != OK {
			t.Fatalf("setup %v: %v", ev.Type, res)
		}
	}
	if run != RunPending {
		must(1, Event{Type: EvRunStarted, Step: NoStep})
	}
	if !step.missing {
		must(2, Event{Type: EvStepCreated, Step: theStep})
		switch {
		case step.retryAfter != 0:
			must(3, Event{Type: EvStepStarted, Step: theStep})
			must(4, Event{Type: EvStepRetrying, Step: theStep, RetryAfter: step.retryAfter})
		case step.status == StepRunning:
			must(3, Event{Type: EvStepStarted, Step: theStep})
		case step.status.Terminal():
			must(3, Event{Type: EvStepStarted, Step: theStep})
			must(4, Event{Type: map[StepStatus]EventType{StepCompleted: EvStepCompleted, StepFailed: EvStepFailed}[step.status], Step: theStep})
		}
	}
	switch run {
	case RunCompleted:
		must(10, Event{Type: EvRunCompleted, Step: NoStep})
	case RunFailed:
		must(10, Event{Type: EvRunFailed, Step: NoStep})
	case RunCancelled:
		must(10, Event{Type: EvRunCancelled, Step: NoStep})
	}
	return s
}

// outcome is what a case expects from Apply and the rows afterwards.
type outcome struct {
	res        Result
	retryAfter sim.Time
	grows      bool // the log gained exactly one event
	exists     bool // step 0 exists afterwards
	status     StepStatus
	attempt    int32
	run        RunStatus // run status afterwards
}

type variant struct {
	name   string
	run    RunStatus
	step   stepSetup
	ev     EventType
	evStep StepID // defaults to theStep for step events
	runID  RunID  // run addressed; 0 is the built run
	want   outcome
	prefix *outcome // FencePreFix expectation when it differs
}

type row struct {
	name     string // the DOMAIN §2 row, word for word where possible
	variants []variant
}

func (v variant) event() Event {
	ev := Event{Type: v.ev, Run: v.runID, Step: NoStep}
	if v.ev.IsStepEvent() {
		ev.Step = theStep
		if v.evStep != 0 {
			ev.Step = v.evStep
		}
	}
	return ev
}

func ok(st StepStatus, attempt int32, run RunStatus) outcome {
	return outcome{res: OK, grows: true, exists: true, status: st, attempt: attempt, run: run}
}

func refused(res Result, step stepSetup, run RunStatus) outcome {
	o := outcome{res: res, exists: !step.missing, status: step.status, run: run}
	if !step.missing && (step.status != StepPending || step.retryAfter != 0) {
		o.attempt = 1
	}
	return o
}

// domainRows has one row per line of the DOMAIN §2 table.
var domainRows = []row{
	{"run terminal, run_cancelled on a cancelled run: accepted, idempotent", []variant{
		{name: "cancel again", run: RunCancelled, step: noStep, ev: EvRunCancelled,
			want: outcome{res: OK, run: RunCancelled}},
	}},
	{"run terminal, run_started: RunExpired", []variant{
		{name: "completed", run: RunCompleted, step: noStep, ev: EvRunStarted, want: refused(RunExpired, noStep, RunCompleted)},
		{name: "failed", run: RunFailed, step: noStep, ev: EvRunStarted, want: refused(RunExpired, noStep, RunFailed)},
		{name: "cancelled", run: RunCancelled, step: noStep, ev: EvRunStarted, want: refused(RunExpired, noStep, RunCancelled)},
	}},
	{"run terminal, any other run event, step_created, attr_set: EntityConflict", []variant{
		{name: "run_completed on cancelled", run: RunCancelled, step: noStep, ev: EvRunCompleted, want: refused(EntityConflict, noStep, RunCancelled)},
		{name: "run_completed on completed", run: RunCompleted, step: noStep, ev: EvRunCompleted, want: refused(EntityConflict, noStep, RunCompleted)},
		{name: "run_failed on completed", run: RunCompleted, step: noStep, ev: EvRunFailed, want: refused(EntityConflict, noStep, RunCompleted)},
		{name: "run_cancelled on completed", run: RunCompleted, step: noStep, ev: EvRunCancelled, want: refused(EntityConflict, noStep, RunCompleted)},
		{name: "run_cancelled on failed", run: RunFailed, step: noStep, ev: EvRunCancelled, want: refused(EntityConflict, noStep, RunFailed)},
		{name: "run_created on completed", run: RunCompleted, step: noStep, ev: EvRunCreated, want: refused(EntityConflict, noStep, RunCompleted)},
		{name: "step_created", run: RunCompleted, step: noStep, ev: EvStepCreated, want: refused(EntityConflict, noStep, RunCompleted)},
		{name: "attr_set", run: RunFailed, step: noStep, ev: EvAttrSet, want: refused(EntityConflict, noStep, RunFailed)},
	}},
	{"step already terminal, any step event: EntityConflict", []variant{
		{name: "step_started on completed", run: RunRunning, step: doneStep, ev: EvStepStarted, want: refused(EntityConflict, doneStep, RunRunning)},
		{name: "step_started on failed", run: RunRunning, step: failedStep, ev: EvStepStarted, want: refused(EntityConflict, failedStep, RunRunning)},
		{name: "step_completed on completed", run: RunRunning, step: doneStep, ev: EvStepCompleted, want: refused(EntityConflict, doneStep, RunRunning)},
		{name: "step_failed on completed", run: RunRunning, step: doneStep, ev: EvStepFailed, want: refused(EntityConflict, doneStep, RunRunning)},
		{name: "step_completed on failed", run: RunRunning, step: failedStep, ev: EvStepCompleted, want: refused(EntityConflict, failedStep, RunRunning)},
		{name: "step_retrying on completed", run: RunRunning, step: doneStep, ev: EvStepRetrying, want: refused(EntityConflict, doneStep, RunRunning)},
		{name: "step_created on completed", run: RunRunning, step: doneStep, ev: EvStepCreated, want: refused(EntityConflict, doneStep, RunRunning)},
		{name: "step_completed on completed, run terminal", run: RunCompleted, step: doneStep, ev: EvStepCompleted, want: refused(EntityConflict, doneStep, RunCompleted)},
	}},
	{"step_created for an existing (runId, stepId): EntityConflict", []variant{
		{name: "pending", run: RunRunning, step: pendingStep, ev: EvStepCreated, want: refused(EntityConflict, pendingStep, RunRunning)},
		{name: "running", run: RunRunning, step: runningStep, ev: EvStepCreated, want: refused(EntityConflict, runningStep, RunRunning)},
		{name: "run pending", run: RunPending, step: pendingStep, ev: EvStepCreated, want: refused(EntityConflict, pendingStep, RunPending)},
	}},
	{"step missing, step_started/step_completed/...: NotFound", []variant{
		{name: "step_started", run: RunRunning, step: noStep, ev: EvStepStarted, want: refused(NotFound, noStep, RunRunning)},
		{name: "step_completed", run: RunRunning, step: noStep, ev: EvStepCompleted, want: refused(NotFound, noStep, RunRunning)},
		{name: "step_failed", run: RunRunning, step: noStep, ev: EvStepFailed, want: refused(NotFound, noStep, RunRunning)},
		{name: "step_retrying", run: RunRunning, step: noStep, ev: EvStepRetrying, want: refused(NotFound, noStep, RunRunning)},
		{name: "step_completed, run terminal", run: RunCompleted, step: noStep, ev: EvStepCompleted, want: refused(NotFound, noStep, RunCompleted)},
		{name: "other step id beyond the table", run: RunRunning, step: pendingStep, ev: EvStepStarted, evStep: 9, want: refused(NotFound, pendingStep, RunRunning)},
		{name: "NoStep", run: RunRunning, step: pendingStep, ev: EvStepStarted, evStep: NoStep, want: refused(NotFound, pendingStep, RunRunning)},
	}},
	{"step_started while retryAfter is in the future: TooEarly(retryAfter)", []variant{
		{name: "future", run: RunRunning, step: retryStep(now + 50), ev: EvStepStarted,
			want: outcome{res: TooEarly, retryAfter: now + 50, exists: true, status: StepPending, attempt: 1, run: RunRunning}},
		{name: "due exactly now", run: RunRunning, step: retryStep(now), ev: EvStepStarted, want: ok(StepRunning, 2, RunRunning)},
	}},
	{"run terminal, step_started: RunExpired always, whatever the step's status (the fixed rule)", []variant{
		{name: "running step", run: RunCompleted, step: runningStep, ev: EvStepStarted,
			want:   refused(RunExpired, runningStep, RunCompleted),
			prefix: &outcome{res: OK, grows: true, exists: true, status: StepRunning, attempt: 2, run: RunCompleted}},
		{name: "running step, run cancelled", run: RunCancelled, step: runningStep, ev: EvStepStarted,
			want:   refused(RunExpired, runningStep, RunCancelled),
			prefix: &outcome{res: OK, grows: true, exists: true, status: StepRunning, attempt: 2, run: RunCancelled}},
		{name: "pending step", run: RunCompleted, step: pendingStep, ev: EvStepStarted, want: refused(RunExpired, pendingStep, RunCompleted)},
		{name: "pending step with future retryAfter", run: RunFailed, step: retryStep(now + 50), ev: EvStepStarted, want: refused(RunExpired, retryStep(now+50), RunFailed)},
		{name: "missing step", run: RunCancelled, step: noStep, ev: EvStepStarted, want: refused(RunExpired, noStep, RunCancelled)},
		{name: "completed step", run: RunCompleted, step: doneStep, ev: EvStepStarted, want: refused(RunExpired, doneStep, RunCompleted)},
		{name: "failed step", run: RunFailed, step: failedStep, ev: EvStepStarted, want: refused(RunExpired, failedStep, RunFailed)},
	}},
	{"run terminal, step_completed / step_failed of a running step: accepted, in-flight steps may finish", []variant{
		{name: "step_completed", run: RunCancelled, step: runningStep, ev: EvStepCompleted, want: ok(StepCompleted, 1, RunCancelled)},
		{name: "step_failed", run: RunCompleted, step: runningStep, ev: EvStepFailed, want: ok(StepFailed, 1, RunCompleted)},
	}},
	{"run terminal, other writes to a non-running step: RunExpired", []variant{
		{name: "step_completed of pending", run: RunCompleted, step: pendingStep, ev: EvStepCompleted, want: refused(RunExpired, pendingStep, RunCompleted)},
		{name: "step_failed of pending", run: RunCancelled, step: pendingStep, ev: EvStepFailed, want: refused(RunExpired, pendingStep, RunCancelled)},
		{name: "step_retrying of pending", run: RunFailed, step: pendingStep, ev: EvStepRetrying, want: refused(RunExpired, pendingStep, RunFailed)},
		// Not in the table: a retry of a running step would re-arm a start
		// that the fence must refuse anyway, so it is refused too.
		{name: "step_retrying of running", run: RunCompleted, step: runningStep, ev: EvStepRetrying, want: refused(RunExpired, runningStep, RunCompleted)},
	}},
	{"step_started on a running step (run not terminal): accepted, crash recovery, attempt += 1", []variant{
		{name: "running", run: RunRunning, step: runningStep, ev: EvStepStarted, want: ok(StepRunning, 2, RunRunning)},
	}},
}

// briefRows covers the transitions DOMAIN §2 leaves to the model.
var briefRows = []row{
	{"run missing: NotFound", []variant{
		{name: "run event", run: RunRunning, step: noStep, ev: EvRunStarted, runID: 5, want: refused(NotFound, noStep, RunRunning)},
		{name: "step event", run: RunRunning, step: pendingStep, ev: EvStepStarted, runID: 5, want: refused(NotFound, pendingStep, RunRunning)},
		{name: "negative run", run: RunRunning, step: noStep, ev: EvAttrSet, runID: -1, want: refused(NotFound, noStep, RunRunning)},
	}},
	{"run not terminal: run events", []variant{
		{name: "run_started on pending", run: RunPending, step: noStep, ev: EvRunStarted, want: outcome{res: OK, grows: true, run: RunRunning}},
		{name: "run_started on running is idempotent", run: RunRunning, step: noStep, ev: EvRunStarted, want: outcome{res: OK, run: RunRunning}},
		{name: "run_completed on running", run: RunRunning, step: noStep, ev: EvRunCompleted, want: outcome{res: OK, grows: true, run: RunCompleted}},
		{name: "run_completed on pending", run: RunPending, step: noStep, ev: EvRunCompleted, want: outcome{res: OK, grows: true, run: RunCompleted}},
		{name: "run_failed on running", run: RunRunning, step: noStep, ev: EvRunFailed, want: outcome{res: OK, grows: true, run: RunFailed}},
		{name: "run_cancelled on pending", run: RunPending, step: noStep, ev: EvRunCancelled, want: outcome{res: OK, grows: true, run: RunCancelled}},
		{name: "attr_set", run: RunRunning, step: noStep, ev: EvAttrSet, want: outcome{res: OK, grows: true, run: RunRunning}},
		{name: "run_created again", run: RunRunning, step: noStep, ev: EvRunCreated, want: refused(EntityConflict, noStep, RunRunning)},
	}},
	{"run not terminal: step transitions", []variant{
		{name: "step_created", run: RunRunning, step: noStep, ev: EvStepCreated, want: ok(StepPending, 0, RunRunning)},
		{name: "step_created on pending run", run: RunPending, step: noStep, ev: EvStepCreated, want: ok(StepPending, 0, RunPending)},
		{name: "step_created NoStep", run: RunRunning, step: noStep, ev: EvStepCreated, evStep: NoStep, want: refused(NotFound, noStep, RunRunning)},
		{name: "step_started on pending", run: RunRunning, step: pendingStep, ev: EvStepStarted, want: ok(StepRunning, 1, RunRunning)},
		{name: "step_completed of running", run: RunRunning, step: runningStep, ev: EvStepCompleted, want: ok(StepCompleted, 1, RunRunning)},
		{name: "step_failed of running", run: RunRunning, step: runningStep, ev: EvStepFailed, want: ok(StepFailed, 1, RunRunning)},
		{name: "step_completed of pending (never claimed)", run: RunRunning, step: pendingStep, ev: EvStepCompleted, want: refused(EntityConflict, pendingStep, RunRunning)},
		{name: "step_failed of pending (never claimed)", run: RunRunning, step: pendingStep, ev: EvStepFailed, want: refused(EntityConflict, pendingStep, RunRunning)},
		{name: "step_retrying of running", run: RunRunning, step: runningStep, ev: EvStepRetrying, want: ok(StepPending, 1, RunRunning)},
		{name: "step_retrying of pending", run: RunRunning, step: pendingStep, ev: EvStepRetrying, want: refused(EntityConflict, pendingStep, RunRunning)},
	}},
}

func TestDomainTable(t *testing.T) { runRows(t, domainRows) }

func TestBeyondDomainTable(t *testing.T) { runRows(t, briefRows) }

func runRows(t *testing.T, rows []row) {
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			for _, v := range r.variants {
				for _, fence := range []Fence{FenceFixed, FencePreFix} {
					t.Run(v.name+"/"+fence.String(), func(t *testing.T) {
						want := v.want
						if fence == FencePreFix && v.prefix != nil {
							want = *v.prefix
						}
						checkVariant(t, fence, v, want)
					})
				}
			}
		})
	}
}

func checkVariant(t *testing.T, fence Fence, v variant, want outcome) {
	s := build(t, fence, v.run, v.step)
	before := len(s.Log(0))
	ev := v.event()
	res, retry, pos := s.Apply(now, ev)
	if res != want.res || retry != want.retryAfter {
		t.Fatalf("Apply(%v) = %v, retryAfter %v; want %v, %v", ev.Type, res, retry, want.res, want.retryAfter)
	}
	log := s.Log(0)
	grew := len(log) - before
	switch {
	case want.grows && grew != 1, !want.grows && grew != 0:
		t.Fatalf("log grew by %d, want grows=%v", grew, want.grows)
	case res != OK && pos != -1:
		t.Fatalf("refused event returned pos %d, want -1", pos)
	case want.grows && (pos != int32(before) || log[pos].Type != ev.Type || log[pos].At != now):
		t.Fatalf("pos %d, log tail %+v; want the new event at %d", pos, log[len(log)-1], before)
	case res == OK && !want.grows && (pos < 0 || int(pos) >= len(log) || log[pos].Type != ev.Type):
		t.Fatalf("idempotent pos %d does not name an earlier %v", pos, ev.Type)
	}
	st := s.Step(0, theStep)
	if st.Exists != want.exists || (st.Exists && (st.Status != want.status || st.Attempt != want.attempt)) {
		t.Fatalf("step = %+v; want exists=%v %v attempt %d", st, want.exists, want.status, want.attempt)
	}
	if got := s.Get(0).Status; got != want.run {
		t.Fatalf("run status %v, want %v", got, want.run)
	}
	if err := s.Verify(); err != nil {
		t.Fatal(err)
	}
}

func TestIdempotentRunEvents(t *testing.T) {
	s := New(FenceFixed)
	id := s.CreateRun(0, 1, 1, -1)
	_, _, first := s.Apply(5, Event{Type: EvRunStarted, Run: id, Step: NoStep})
	res, _, again := s.Apply(9, Event{Type: EvRunStarted, Run: id, Step: NoStep})
	if res != OK || again != first || s.Get(id).StartedAt != 5 {
		t.Fatalf("second run_started: %v pos %d (first %d), StartedAt %v", res, again, first, s.Get(id).StartedAt)
	}
	_, _, cancel := s.Apply(20, Event{Type: EvRunCancelled, Run: id, Step: NoStep})
	for at := sim.Time(21); at < 24; at++ {
		if res, _, pos := s.Apply(at, Event{Type: EvRunCancelled, Run: id, Step: NoStep}); res != OK || pos != cancel {
			t.Fatalf("repeat cancel: %v pos %d, want ok %d", res, pos, cancel)
		}
	}
	n := 0
	for _, e := range s.Log(id) {
		if e.Type == EvRunCancelled {
			n++
		}
	}
	if n != 1 || s.Get(id).CompletedAt != 20 {
		t.Fatalf("%d cancel events, CompletedAt %v; want 1, +20ns", n, s.Get(id).CompletedAt)
	}
}

func TestGetAsOf(t *testing.T) {
	s := New(FenceFixed)
	s.CreateRun(0, 1, 1, -1) // run 0, so that run 1 checks ids and roots
	id := s.CreateRun(10, 4, 2, 0)
	s.Apply(20, Event{Type: EvRunStarted, Run: id})
	s.Apply(30, Event{Type: EvRunFailed, Run: id})
	ident := Identity{RunID: id, DeploymentID: 4, SpecVersion: 2, RootRunID: 0}
	started := ident
	started.StartedAt = 20
	for _, c := range []struct {
		at   sim.Time
		want RunView
	}{
		{5, RunView{Identity: ident, Status: RunPending}}, // before creation: as created
		{10, RunView{Identity: ident, Status: RunPending}},
		{19, RunView{Identity: ident, Status: RunPending}},
		{20, RunView{Identity: started, Status: RunRunning}},
		{29, RunView{Identity: started, Status: RunRunning}},
		{30, RunView{Identity: started, Status: RunFailed, CompletedAt: 30}},
		{1 << 40, RunView{Identity: started, Status: RunFailed, CompletedAt: 30}},
	} {
		if got := s.GetAsOf(id, c.at); got != c.want {
			t.Errorf("GetAsOf(%v) = %+v, want %+v", c.at, got, c.want)
		}
	}
	if s.Get(id) != s.GetAsOf(id, 1<<40) {
		t.Errorf("Get = %+v differs from GetAsOf(future)", s.Get(id))
	}
	if root := s.Get(0).RootRunID; root != 0 {
		t.Errorf("run 0 root %d, want itself", root)
	}
}

func TestLogPositions(t *testing.T) {
	s := New(FenceFixed)
	id := s.CreateRun(0, 1, 1, -1)
	evs := []Event{
		{Type: EvRunStarted},
		{Type: EvStepStarted, Step: 0}, // refused: not found
		{Type: EvStepCreated, Step: 0},
		{Type: EvStepCreated, Step: 0}, // refused: conflict
		{Type: EvStepStarted, Step: 0},
		{Type: EvStepRetrying, Step: 0, RetryAfter: 50},
		{Type: EvStepStarted, Step: 0}, // refused: too early
		{Type: EvAttrSet},
		{Type: EvRunCompleted},
		{Type: EvStepStarted, Step: 0}, // refused: run expired
	}
	accepted := 0
	for i, ev := range evs {
		ev.Run = id
		if !ev.Type.IsStepEvent() {
			ev.Step = NoStep
		}
		res, _, pos := s.Apply(sim.Time(i+1), ev)
		if res != OK {
			continue
		}
		accepted++
		if pos != int32(accepted) { // position 0 is run_created
			t.Fatalf("event %d (%v) at pos %d, want %d", i, ev.Type, pos, accepted)
		}
	}
	log := s.Log(id)
	if len(log) != accepted+1 {
		t.Fatalf("log has %d events, want %d", len(log), accepted+1)
	}
	for i, e := range log {
		if e.Pos != int32(i) {
			t.Fatalf("log[%d].Pos = %d", i, e.Pos)
		}
	}
	if got := fmt.Sprint(types(log)); got != "[run_created run_started step_created step_started step_retrying attr_set run_completed]" {
		t.Fatalf("log = %s", got)
	}
	if err := s.Verify(); err != nil {
		t.Fatal(err)
	}
}

func types(log []LoggedEvent) []EventType {
	out := make([]EventType, len(log))
	for i, e := range log {
		out[i] = e.Type
	}
	return out
}

func TestReset(t *testing.T) {
	s := New(FenceFixed)
	a := s.CreateRun(0, 1, 1, -1)
	s.Apply(1, Event{Type: EvRunStarted, Run: a})
	for i := range StepID(8) {
		s.Apply(2, Event{Type: EvStepCreated, Run: a, Step: i})
		s.Apply(3, Event{Type: EvStepStarted, Run: a, Step: i})
	}
	s.Apply(4, Event{Type: EvRunCancelled, Run: a})
	s.CreateRun(5, 1, 1, -1)

	s.Reset(FencePreFix)
	if s.Runs() != 0 || s.Fence() != FencePreFix || s.Has(1) {
		t.Fatalf("after Reset: %d runs, fence %v", s.Runs(), s.Fence())
	}
	b := s.CreateRun(0, 9, 9, -1)
	if v := s.Get(b); b != 0 || v.Status != RunPending || v.StartedAt != 0 || v.CompletedAt != 0 || v.DeploymentID != 9 {
		t.Fatalf("fresh run %d = %+v", b, v)
	}
	if len(s.Log(b)) != 1 {
		t.Fatalf("fresh log %v", types(s.Log(b)))
	}
	for i := range StepID(8) {
		if st := s.Step(b, i); st.Exists {
			t.Fatalf("step %d survived Reset: %+v", i, st)
		}
	}
	// Growing into the reused step buffer must not resurrect old rows.
	s.Apply(1, Event{Type: EvStepCreated, Run: b, Step: 5})
	for i := range StepID(8) {
		if st := s.Step(b, i); st.Exists != (i == 5) || st.Attempt != 0 {
			t.Fatalf("step %d = %+v", i, st)
		}
	}
	if res, _, _ := s.Apply(2, Event{Type: EvStepStarted, Run: b, Step: 0}); res != NotFound {
		t.Fatalf("step 0 of the old run answers %v", res)
	}
	if err := s.Verify(); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyCatchesDrift(t *testing.T) {
	s := build(t, FenceFixed, RunRunning, runningStep)
	if err := s.Verify(); err != nil {
		t.Fatal(err)
	}
	s.runs[0].steps[theStep].Attempt = 2
	if err := s.Verify(); !errors.Is(err, ErrInvariant) {
		t.Fatalf("Verify = %v, want ErrInvariant", err)
	}
}

func TestStrings(t *testing.T) {
	got := fmt.Sprint(RunCancelled, StepFailed, EvRunCreated, EvStepRetrying, EvAttrSet, TooEarly, FencePreFix, EventType(99))
	if want := "cancelled failed run_created step_retrying attr_set too_early prefix EventType(99)"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if !RunCancelled.Terminal() || RunRunning.Terminal() || !StepFailed.Terminal() || StepRunning.Terminal() {
		t.Fatal("Terminal")
	}
	if EvAttrSet.IsStepEvent() || EvRunCancelled.IsStepEvent() || !EvStepCreated.IsStepEvent() || !EvStepRetrying.IsStepEvent() {
		t.Fatal("IsStepEvent")
	}
}

const fanOut = 256

// fanOutRun drives one run through a fan-out: the shape of DOMAIN §10's burst.
func fanOutRun(s *Store) {
	s.Reset(FenceFixed)
	id := s.CreateRun(0, 1, 1, -1)
	s.Apply(1, Event{Type: EvRunStarted, Run: id, Step: NoStep})
	for i := range StepID(fanOut) {
		s.Apply(2, Event{Type: EvStepCreated, Run: id, Step: i})
	}
	for i := range StepID(fanOut) {
		at := sim.Time(3 + 2*int64(i))
		s.Apply(at, Event{Type: EvStepStarted, Run: id, Step: i})
		s.Apply(at+1, Event{Type: EvStepCompleted, Run: id, Step: i})
	}
	s.Apply(1<<20, Event{Type: EvRunCompleted, Run: id, Step: NoStep})
}

func TestSteadyStateAllocs(t *testing.T) {
	s := New(FenceFixed)
	fanOutRun(s)
	if n := testing.AllocsPerRun(20, func() { fanOutRun(s) }); n != 0 {
		t.Fatalf("%v allocs per fan-out after Reset, want 0", n)
	}
	if err := s.Verify(); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkApply(b *testing.B) {
	s := New(FenceFixed)
	b.ReportAllocs()
	for b.Loop() {
		fanOutRun(s)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(3+3*fanOut), "ns/event") // run_created, run_started, run_completed and three per step
}

// LogIndex finds an event by its log position, which is its index only
// until a reserved position commits behind later ones or is abandoned.
func TestLogIndexFindsEveryPosition(t *testing.T) {
	s := New(FenceFixed)
	id := s.CreateRun(0, 0, 1, -1) // position 0
	r := &s.runs[id]
	a := r.reserve()                             // 1, commits last
	r.append(1, Event{Type: EvAttrSet, Run: id}) // 2
	b := r.reserve()                             // 3, abandoned: a hole
	r.append(2, Event{Type: EvAttrSet, Run: id}) // 4
	r.abandon(b)
	r.commitAt(3, a, Event{Type: EvAttrSet, Run: id})
	for i, e := range s.Log(id) {
		if got := s.LogIndex(id, e.Pos); got != i {
			t.Errorf("LogIndex(pos %d) = %d, want %d", e.Pos, got, i)
		}
	}
	for _, pos := range []int32{b, 5, -1} {
		if got := s.LogIndex(id, pos); got != -1 {
			t.Errorf("LogIndex(pos %d) = %d, want -1 (never logged)", pos, got)
		}
	}
	if got := s.LogIndex(id+1, 0); got != -1 {
		t.Errorf("LogIndex of an unknown run = %d, want -1", got)
	}
}
