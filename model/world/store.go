package world

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/simlab/simlab/sim"
)

// statusChange is one entry of a run's status history, kept so that stale
// reads can be answered as of an earlier virtual time.
type statusChange struct {
	at     sim.Time
	status RunStatus
}

// runRow is everything the store knows about one run. The log and the steps
// slice survive Reset (truncated, capacity kept), so a store reused across
// simulation runs stops allocating once it has seen its high-water mark.
type runRow struct {
	view RunView
	// Every status the run had, in order. Sequentially a run changes status
	// at most three times (pending, running, terminal), but calls racing on a
	// non-atomic World can move it back (a run_started that read pending
	// overwriting a cancel), so the history is a slice; its capacity survives
	// Reset.
	hist []statusChange
	// fields are which of the row's status-dependent fields it holds
	// (output, error, completedAt). runs.get parses a row against its
	// status (WorkflowRunSchema in @workflow/world): a row whose fields do
	// not fit its status cannot be read back (Readable). Only racing
	// world-postgres UPDATEs, which set some fields and leave the others,
	// can make one.
	fields rowFields
	// Positions of the events that idempotent replays answer with.
	startedPos  int32
	terminalPos int32
	nextPos     int32 // the position the next logged event takes
	reserved    int32 // positions reserved and not yet committed
	log         []LoggedEvent
	steps       []Step // indexed by StepID; Exists marks created slots
}

func (r *runRow) record(at sim.Time, st RunStatus) {
	r.hist = append(r.hist, statusChange{at: at, status: st})
}

// append logs ev at the next position. Positions are handed out in order
// (reserve takes one for a write that commits later, as world-postgres's
// transactions do with the ids they mint); the log is kept sorted by
// position, and a position equals the event's index once every reserved
// one has committed.
func (r *runRow) append(now sim.Time, ev Event) int32 {
	pos := r.nextPos
	r.nextPos++
	if len(r.log) == cap(r.log) {
		// Doubled, not grown by a quarter: a long workflow's log is then
		// copied about once in all, not four times (model/grow.go).
		r.log = doubled(r.log)
	}
	r.log = append(r.log, LoggedEvent{Event: ev, At: now, Pos: pos})
	return pos
}

// reserve takes the next log position for an event that commits later
// (commitAt).
func (r *runRow) reserve() int32 {
	pos := r.nextPos
	r.nextPos++
	r.reserved++
	return pos
}

// commitAt logs ev at a position reserve handed out, before every event
// that took a later one.
func (r *runRow) commitAt(now sim.Time, pos int32, ev Event) {
	i := len(r.log)
	for i > 0 && r.log[i-1].Pos > pos {
		i--
	}
	r.log = slices.Insert(r.log, i, LoggedEvent{Event: ev, At: now, Pos: pos})
	r.reserved--
}

// abandon gives up the reserved position pos, which will never be committed
// (the write was refused after its id was minted): the log keeps a hole
// there, unless no position was taken after it.
func (r *runRow) abandon(pos int32) {
	r.reserved--
	if pos == r.nextPos-1 {
		r.nextPos--
	}
}

// Reserving reports whether a write holds a log position of the run it has
// not committed yet: until it does, the log may still grow in its middle.
func (s *Store) Reserving(id RunID) bool { return s.Has(id) && s.runs[id].reserved > 0 }

// LogIndex is the index in the run's log of the event at position pos, or
// -1: an event committed at a reserved position can sit before events that
// took later positions but committed first.
func (s *Store) LogIndex(id RunID, pos int32) int {
	if !s.Has(id) || pos < 0 {
		return -1
	}
	log := s.runs[id].log
	if n := len(log); n > 0 && log[n-1].Pos == pos {
		// The event just logged, nearly always (the model asks as soon
		// as a write lands): no search through a long workflow's log.
		return n - 1
	}
	i, ok := slices.BinarySearchFunc(log, pos, func(e LoggedEvent, p int32) int { return int(e.Pos - p) })
	if !ok {
		return -1
	}
	return i
}

// Store is the pure World store: rows, logs and the validation rules of
// events.create. It is not safe for concurrent use; the simulation is
// single-threaded and the caller serialises calls in virtual time.
type Store struct {
	fence Fence
	rules Rules
	runs  []runRow // indexed by RunID
	ids   *stepIDs // step ids used outside their run (stepids.go); nil until one is
	// How Txns split their calls (txn.go), and world-local's step locks
	// held and waited for by the Txns in flight.
	atomicity    Atomicity
	atomicitySet bool
	locks        []stepLock
}

// New returns an empty store applying DOMAIN.md's rules (RulesDomain) and the
// given step_started fence.
func New(fence Fence) *Store { return &Store{fence: fence} }

// NewFor returns an empty store applying a World's rules and the given
// step_started fence.
func NewFor(rules Rules, fence Fence) *Store { return &Store{fence: fence, rules: rules} }

// Rules returns whose events.create rules the store applies.
func (s *Store) Rules() Rules { return s.rules }

// Reset empties the store for the next simulation run and sets its fence
// (its rules stay). It
// keeps every buffer's capacity, which is why rows beyond len(s.runs) may still
// hold stale data: CreateRun reinitialises a row before reusing it.
func (s *Store) Reset(fence Fence) {
	s.fence = fence
	s.runs = s.runs[:0]
	s.ids = nil
	s.locks = s.locks[:0]
}

// ResetFor empties the store for the next simulation run, as NewFor(rules,
// fence) would make it (its atomicity back to its rules'), keeping its
// buffers' room.
func (s *Store) ResetFor(rules Rules, fence Fence) {
	*s = Store{fence: fence, rules: rules, runs: s.runs[:0], locks: s.locks[:0]}
}

// Room is about how many bytes the store's tables hold: every run's log,
// steps and status history, and the rows.
func (s *Store) Room() int {
	n := cap(s.runs) * int(unsafe.Sizeof(runRow{}))
	for _, r := range s.runs[:cap(s.runs)] {
		n += cap(r.log)*int(unsafe.Sizeof(LoggedEvent{})) + cap(r.steps)*int(unsafe.Sizeof(Step{})) + cap(r.hist)*int(unsafe.Sizeof(statusChange{}))
	}
	return n
}

// Fence returns the step_started fence the store applies.
func (s *Store) Fence() Fence { return s.fence }

// Runs returns the number of runs created; valid ids are 0..Runs()-1.
func (s *Store) Runs() int { return len(s.runs) }

// Has reports whether id names a created run.
func (s *Store) Has(id RunID) bool { return id >= 0 && int(id) < len(s.runs) }

// CreateRun creates a pending run, appends its run_created event and returns
// its id. A negative root makes the run its own lineage root (DOMAIN §1).
func (s *Store) CreateRun(now sim.Time, deployment, specVersion int32, root RunID) RunID {
	id := RunID(len(s.runs))
	if root < 0 {
		root = id
	}
	if len(s.runs) < cap(s.runs) {
		s.runs = s.runs[:len(s.runs)+1]
	} else {
		s.runs = append(s.runs, runRow{})
	}
	r := &s.runs[id]
	*r = runRow{
		view: RunView{
			Identity: Identity{RunID: id, DeploymentID: deployment, SpecVersion: specVersion, RootRunID: root},
			Status:   RunPending,
		},
		startedPos:  -1,
		terminalPos: -1,
		log:         r.log[:0],
		steps:       r.steps[:0],
		hist:        r.hist[:0],
	}
	r.record(now, RunPending)
	r.append(now, Event{Type: EvRunCreated, Run: id, Step: NoStep})
	return id
}

// Apply is events.create: it validates ev against the rows as they are at now
// and, only when the result is OK, appends it and updates the projections. pos
// is the event's log position when OK (for an idempotent replay, the position
// of the event it repeats) and -1 otherwise; retryAfter is set only for
// TooEarly. Apply panics on an undeclared event type, which only a model bug
// can produce.
func (s *Store) Apply(now sim.Time, ev Event) (res Result, retryAfter sim.Time, pos int32) {
	if !ev.Type.valid() {
		panic(fmt.Sprintf("world: Apply of unknown event type %d", uint8(ev.Type)))
	}
	if !s.Has(ev.Run) {
		return NotFound, 0, -1
	}
	r := &s.runs[ev.Run]
	// Canonical log entries: fields an event type does not use are zeroed, so
	// two logs that mean the same thing compare equal.
	if ev.Type != EvStepRetrying {
		ev.RetryAfter = 0
	}
	if ev.Type != EvStepStarted {
		ev.Lazy = false
	}
	if ev.Type.IsStepEvent() {
		if s.rules == RulesDomain {
			return s.applyStep(r, now, ev)
		}
		return s.applyStepReal(r, now, ev, r.view.Status.Terminal())
	}
	ev.Step, ev.idFrom = NoStep, 0
	return applyRun(r, now, ev)
}

// applyRun applies a run-level event (run_* and attr_set).
func applyRun(r *runRow, now sim.Time, ev Event) (Result, sim.Time, int32) {
	st := r.view.Status
	if st.Terminal() {
		switch {
		case ev.Type == EvRunCancelled && st == RunCancelled:
			// Cancelling twice is how every client retries a cancel; answer with
			// the original event rather than logging a second one.
			return OK, 0, r.terminalPos
		case ev.Type == EvRunStarted:
			return RunExpired, 0, -1
		default:
			return EntityConflict, 0, -1
		}
	}
	switch ev.Type {
	case EvRunCreated:
		// The run already exists; CreateRun is the only way to create one.
		return EntityConflict, 0, -1
	case EvRunStarted:
		if st == RunRunning {
			// A workflow replay re-sends run_started; startedAt is immutable,
			// so the first one stands and nothing is logged.
			return OK, 0, r.startedPos
		}
		r.view.Status = RunRunning
		r.view.StartedAt = now
		r.record(now, RunRunning)
		r.startedPos = r.append(now, ev)
		return OK, 0, r.startedPos
	case EvRunCompleted, EvRunFailed, EvRunCancelled:
		// Accepted from pending too: a run that never started can still be
		// cancelled from outside, and completing or failing it is terminal
		// either way; its StartedAt simply stays 0.
		term := runTerminal(ev.Type)
		r.view.Status = term
		r.view.CompletedAt = now
		r.fields = fieldsOf(term)
		r.record(now, term)
		r.terminalPos = r.append(now, ev)
		return OK, 0, r.terminalPos
	default: // EvAttrSet: logged, no projection changes.
		return OK, 0, r.append(now, ev)
	}
}

// applyStep applies a step event. The checks run in this order, and the order
// is the rule (DOMAIN §2 lists situations, not precedence):
//
//  1. step_created: run terminal → EntityConflict; step exists → EntityConflict;
//     else the step is created pending with attempt 0.
//  2. step_started on a terminal run → RunExpired whatever the step's status,
//     even missing or terminal (the fix). Under FencePreFix a step that still
//     reads running is accepted instead (attempt += 1): the historical bug.
//  3. step missing → NotFound.
//  4. step terminal → EntityConflict, for every step event.
//  5. run terminal, step_completed/step_failed of a running step → accepted:
//     in-flight steps may finish.
//  6. run terminal, any other write (step_retrying, or a write to a pending
//     step) → RunExpired.
//  7. step_started: retryAfter in the future → TooEarly(retryAfter); otherwise
//     pending → running, or running → running (crash recovery); attempt += 1.
//  8. step_completed/step_failed: running → terminal; pending → EntityConflict.
//  9. step_retrying: running → pending with the event's retryAfter; pending →
//     EntityConflict.
//
// Rule 2 before 3 and 4 is what makes "always" true: a redelivered start on an
// ended run is told the run is gone, never that the step is missing or done.
func (s *Store) applyStep(r *runRow, now sim.Time, ev Event) (Result, sim.Time, int32) {
	runDone := r.view.Status.Terminal()
	var st *Step
	if ev.Step >= 0 && int(ev.Step) < len(r.steps) && r.steps[ev.Step].Exists {
		st = &r.steps[ev.Step]
	}
	if ev.idFrom != 0 {
		// Another run's step id: keyed per run, a step of this run's own.
		st = s.namedRow(r.view.RunID, ev.name())
	}

	// 1.
	if ev.Type == EvStepCreated {
		switch {
		case runDone, st != nil:
			return EntityConflict, 0, -1
		case ev.Step < 0:
			// NoStep (or any negative id) has no slot; treat it as a step that
			// cannot exist rather than panicking on a malformed request.
			return NotFound, 0, -1
		}
		if ev.idFrom != 0 {
			return OK, 0, s.createNamed(r, now, ev)
		}
		return OK, 0, r.create(now, ev)
	}

	// A lazy step_started (core's claim of an inline step) creates its
	// step, logging step_created first, as the real adapters do
	// (applyStepReal's rule 3): refused on an ended run, and on a step
	// that already exists ("already created", the runtime's skip).
	if ev.Type == EvStepStarted && ev.Lazy {
		switch {
		case runDone, st != nil:
			return EntityConflict, 0, -1
		case ev.Step < 0:
			return NotFound, 0, -1
		}
		r.create(now, ev)
		st = &r.steps[ev.Step]
		ev.Lazy = false
	}

	// 2.
	if ev.Type == EvStepStarted && runDone {
		if s.fence == FencePreFix && st != nil && st.Status == StepRunning {
			st.Attempt++
			return OK, 0, r.append(now, ev)
		}
		return RunExpired, 0, -1
	}

	// 3, 4.
	if st == nil {
		return NotFound, 0, -1
	}
	if st.Status.Terminal() {
		return EntityConflict, 0, -1
	}

	// 5, 6.
	if runDone {
		if ev.Type.EndsStep() && st.Status == StepRunning {
			st.Status = stepTerminal(ev.Type)
			return OK, 0, r.append(now, ev)
		}
		return RunExpired, 0, -1
	}

	switch ev.Type {
	case EvStepStarted: // 7.
		if st.RetryAfter > now {
			return TooEarly, st.RetryAfter, -1
		}
		st.Status = StepRunning
		st.Attempt++
	case EvStepCompleted, EvStepFailed: // 8.
		if st.Status != StepRunning {
			// The real World wants a claim before an outcome; simlab's
			// consumers always claim first, so this only catches model bugs.
			return EntityConflict, 0, -1
		}
		st.Status = stepTerminal(ev.Type)
	default: // 9. EvStepRetrying
		if st.Status != StepRunning {
			return EntityConflict, 0, -1
		}
		st.Status = StepPending
		st.RetryAfter = ev.RetryAfter
	}
	return OK, 0, r.append(now, ev)
}

// create makes the step row pending and logs its step_created.
func (r *runRow) create(now sim.Time, ev Event) int32 {
	r.growSteps(int(ev.Step) + 1)
	created := ev
	created.Type, created.Lazy = EvStepCreated, false
	pos := r.append(now, created)
	r.steps[ev.Step] = Step{Exists: true, Status: StepPending}
	return pos
}

// applyStepReal applies a step event as the real world-local (RulesLocal)
// and world-postgres (RulesPostgres) adapters do, in their order of checks.
// Each rule names the real version that showed it through the differential
// test (conformance/, docs/CONFORMANCE.md):
//
//  1. The adapters read the run only for step_created, step_started and
//     step_failed (step_completed and step_retrying skip it, "runtime
//     events"). On a terminal run step_created and a lazy step_started are
//     EntityConflict ("Cannot create new entities"), before anything about
//     the step is looked at.
//  2. step_created of an existing step: EntityConflict (world-postgres: its
//     events table refuses a second step_created for the correlation id).
//  3. step missing → NotFound (a lazy step_started creates it instead, logging
//     step_created first); a lazy step_started of an existing step →
//     EntityConflict ("already created": the runtime's skip).
//  4. step terminal → EntityConflict, for every step event.
//  5. run terminal (only for the events that read it: step_started, and
//     step_failed on world-local) and the step not running → RunExpired;
//     a step_started of a running step → RunExpired with the fixed fence,
//     accepted (attempt + 1) with the pre-fix one.
//  6. step_started: retryAfter in the future → TooEarly; otherwise running,
//     attempt + 1, retryAfter cleared. step_completed / step_failed: from
//     pending or running to terminal. step_retrying: from pending or running
//     to pending with the event's retryAfter.
//
// A step id used in another run than its minter's (never by the engine)
// takes rules 2 and 3 from stepids.go: world-postgres keys a step by its id
// alone (5.0.0-beta.27, beta.29), world-local per run.
//
// runDone is whether the run is terminal as the call's validation read saw
// it: the run's status now for an atomic call, an earlier one for a Txn
// whose read came before another call's write.
func (s *Store) applyStepReal(r *runRow, now sim.Time, ev Event, runDone bool) (Result, sim.Time, int32) {
	var st *Step
	if ev.Step >= 0 && int(ev.Step) < len(r.steps) && r.steps[ev.Step].Exists {
		st = &r.steps[ev.Step]
	}
	// 1.
	if runDone && (ev.Type == EvStepCreated || ev.Lazy) {
		return EntityConflict, 0, -1
	}
	if ev.idFrom != 0 || s.ids != nil {
		// Rules 2 and 3 for a step id used outside the run that minted it,
		// or in a store that has seen one (stepids.go; never the engine's
		// calls): st is the row found or created, or nil when that decided.
		var res Result
		var pos int32
		if st, res, pos = s.resolveNamed(r, now, ev); st == nil {
			return res, 0, pos
		}
		ev.Lazy = false // a lazy start has created its row: rule 3 passes
	}
	// 2.
	if ev.Type == EvStepCreated {
		switch {
		case st != nil:
			return EntityConflict, 0, -1
		case ev.Step < 0:
			return NotFound, 0, -1
		}
		return OK, 0, r.create(now, ev)
	}
	// 3.
	switch {
	case st == nil && ev.Lazy && ev.Step >= 0:
		r.create(now, ev)
		st = &r.steps[ev.Step]
	case st == nil:
		return NotFound, 0, -1
	case ev.Lazy:
		return EntityConflict, 0, -1
	}
	// 4.
	if st.Status.Terminal() {
		return EntityConflict, 0, -1
	}
	// 5. world-postgres reads the run for step_failed too but, unlike
	// world-local, validates the step against it only for step_started and
	// step_retrying (and step_retrying skips the run read).
	checksRun := ev.Type == EvStepStarted || (ev.Type == EvStepFailed && s.rules == RulesLocal)
	if checksRun && runDone {
		if st.Status != StepRunning || (ev.Type == EvStepStarted && s.fence == FenceFixed) {
			return RunExpired, 0, -1
		}
	}
	// 6.
	switch ev.Type {
	case EvStepStarted:
		if st.RetryAfter > now {
			return TooEarly, st.RetryAfter, -1
		}
		st.Status = StepRunning
		st.Attempt++
		st.RetryAfter = 0
	case EvStepCompleted, EvStepFailed:
		st.Status = stepTerminal(ev.Type)
	default: // EvStepRetrying
		st.Status = StepPending
		st.RetryAfter = ev.RetryAfter
	}
	ev.Lazy = false
	return OK, 0, r.append(now, ev)
}

// stepTerminal maps a terminal step event to the status it leaves.
func stepTerminal(t EventType) StepStatus {
	if t == EvStepFailed {
		return StepFailed
	}
	return StepCompleted
}

// runTerminal maps a terminal run event to the status it leaves.
func runTerminal(t EventType) RunStatus {
	switch t {
	case EvRunFailed:
		return RunFailed
	case EvRunCancelled:
		return RunCancelled
	}
	return RunCompleted
}

// growSteps makes r.steps at least n long. Slots between the old length and n
// are zeroed because, after Reset, the reused backing array holds the previous
// simulation's steps.
func (r *runRow) growSteps(n int) {
	old := len(r.steps)
	if n <= old {
		return
	}
	if n <= cap(r.steps) {
		r.steps = r.steps[:n]
	} else {
		r.steps = append(r.steps, make([]Step, n-old)...)
	}
	clear(r.steps[old:n])
}

// row returns the run's row, panicking on an id the store never issued: the
// reads take ids from the store's own answers, so a bad one is a model bug.
func (s *Store) row(id RunID) *runRow {
	if !s.Has(id) {
		panic(fmt.Sprintf("world: no run %d (store has %d)", id, len(s.runs)))
	}
	return &s.runs[id]
}

// Get is a fresh runs.get. It panics on an unknown id (see Has).
func (s *Store) Get(id RunID) RunView { return s.row(id).view }

// GetAsOf returns the run row as it was at virtual time t, for stale reads. A
// change made at time T is visible at T. Only status, StartedAt and CompletedAt
// vary; the other identity fields never change. A t before the run's creation
// answers as at creation (pending), since a caller cannot hold an id earlier.
func (s *Store) GetAsOf(id RunID, t sim.Time) RunView {
	r := s.row(id)
	n := 0
	for n < len(r.hist) && r.hist[n].at <= t {
		n++
	}
	v := r.view
	if n == len(r.hist) {
		return v
	}
	if n == 0 {
		n = 1
	}
	v.Status = r.hist[n-1].status
	if !v.Status.Terminal() {
		v.CompletedAt = 0
	}
	if v.Status == RunPending {
		v.StartedAt = 0
	}
	return v
}

// Log is events.list. It returns the store's own slice, valid until the next
// Apply or Reset; callers must not modify it. An unknown id has no log.
func (s *Store) Log(id RunID) []LoggedEvent {
	if !s.Has(id) {
		return nil
	}
	return s.runs[id].log
}

// LogEnded reports whether the run's log holds a terminal run event: what
// core's replay loop looks for in the events it listed
// (findRecordedTerminalRunEvent), whatever the run row's status says. On a
// non-atomic World the two differ: a run_started that read pending can
// write a cancelled run back to running after run_cancelled was logged.
func (s *Store) LogEnded(id RunID) bool { return s.Has(id) && s.runs[id].terminalPos >= 0 }

// Step returns the step row; Exists is false for unknown runs or steps.
func (s *Store) Step(id RunID, step StepID) Step {
	if !s.Has(id) || step < 0 || int(step) >= len(s.runs[id].steps) {
		return Step{}
	}
	return s.runs[id].steps[step]
}

// doubled returns s with twice its room (at least 8), as model/grow.go's
// grow does, a long one copied a chunk at a time there: one memmove of a
// long log cannot be preempted, and a garbage collection waiting to stop
// the goroutine signals it every few microseconds until the copy ends.
func doubled[S ~[]E, E any](s S) S {
	const chunk = 1024
	if len(s) < chunk {
		return append(s[:cap(s)], make(S, max(cap(s), 8))...)[:len(s)]
	}
	t := make(S, len(s), 2*cap(s))
	for i := 0; i < len(s); i += chunk {
		copyPreemptible(t[i:], s[i:min(i+chunk, len(s))])
	}
	return t
}

// copyPreemptible is copy behind a call, where a goroutine asked to stop
// stops (a signal almost never lands outside the memmove).
//
//go:noinline
func copyPreemptible[S ~[]E, E any](dst, src S) { copy(dst, src) }
