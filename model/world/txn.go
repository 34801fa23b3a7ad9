package world

import (
	"fmt"

	"github.com/simlab/simlab/sim"
)

// Atomicity is how much of one events.create a World does at once. Apply is
// a whole call at once; a Txn takes a call in the adapter's own steps, each
// atomic, so that other calls on the run can land between them, as they do
// on the real Worlds (conformance/, docs/CONFORMANCE.md: the concurrent
// differential test is the judge of these steps).
type Atomicity uint8

// Atomicities.
const (
	// AtomicCall validates and applies a call in one step: DOMAIN.md §2's
	// World (world-vercel, whose store cannot be observed here: unverified).
	AtomicCall Atomicity = iota
	// AtomicLocal is @workflow/world-local 5.0.0-beta.43, .45 and .46
	// (dist/storage/events-storage.js, createImpl). A run event reads the
	// run file, validates against what it read, then writes the whole run
	// file from that read (writeRunUnderLifecycleLock re-reads only the
	// attributes) and publishes its event: two calls that both read a live
	// run are both accepted. A step event holds an in-process lock per
	// (run, step) from before its run read to after its publish, so step
	// events on one step are serialised in arrival order, but a run event
	// may land between a step event's run read and its write; a lazy
	// step_started publishes its step_created and its step_started in two
	// writes.
	AtomicLocal
	// AtomicPostgres is @workflow/world-postgres 5.0.0-beta.27 and .29
	// (dist/storage.js, events.create): a validation read of the run (and,
	// for step_started and step_retrying, of the step), then statements
	// without a transaction across them. run_completed, run_failed,
	// run_cancelled and the step terminal events are guarded UPDATEs
	// (refused once the row is terminal, a cancel included); run_started is
	// an unguarded UPDATE that sets running over whatever the row holds (a
	// cancelled row included, keeping its completedAt: a row runs.get can
	// no longer parse); step_started is one transaction (guarded UPDATE and
	// its event); every event is inserted by a statement of its own after
	// the row's.
	AtomicPostgres
)

func (a Atomicity) String() string {
	switch a {
	case AtomicCall:
		return "call"
	case AtomicLocal:
		return "world-local"
	case AtomicPostgres:
		return "world-postgres"
	}
	return fmt.Sprintf("Atomicity(%d)", uint8(a))
}

// AtomicityOf is the atomicity of a World applying rules r.
func AtomicityOf(r Rules) Atomicity {
	switch r {
	case RulesLocal:
		return AtomicLocal
	case RulesPostgres:
		return AtomicPostgres
	}
	return AtomicCall
}

// Txn is one events.create in flight. Begin starts it, Advance takes its next
// atomic step until Done; Result is then its answer. A Txn holds no pointer
// into the store, so the engine keeps one in each call's record and the
// conformance checks copy it with the store they clone.
type Txn struct {
	Ev Event
	// Owner names the Txn in the store's lock queue (world-local's step
	// locks): unique among the Txns in flight on one store.
	Owner int32
	pc    uint8
	done  bool
	res   Result
	retry sim.Time
	pos   int32
	// What the validation reads saw.
	snap     RunView
	stepSnap Step
	created  int32 // a lazy start: the step_created's position (-1 before or without one)
	minted   int32 // world-postgres: the position its event's id took
	atom     Atomicity
}

// Phase is where the call is: the adapter's step it takes next (0 before
// its first). The conformance checks map phases to the real adapter's own
// operations to force an interleaving on the real World.
func (t *Txn) Phase() uint8 { return t.pc }

// Pending lists the log positions the call holds and has not committed
// yet, with the event each will hold, and whether each may still be given up
// (a step_created whose INSERT can meet the events table's unique index):
// what the run's log will read once the call is done.
func (t *Txn) Pending() []PendingEntry {
	if t.done || t.atom != AtomicPostgres {
		return nil
	}
	ev := t.Ev
	switch {
	case t.pc == pgInsert:
		return []PendingEntry{{Pos: t.minted, Type: ev.Type, Step: ev.Step, Optional: ev.Type == EvStepCreated}}
	case ev.Lazy && t.pc == pgTxUpdate:
		return []PendingEntry{{Pos: t.created, Type: EvStepCreated, Step: ev.Step}}
	case ev.Lazy && t.pc == pgTxCommit:
		return []PendingEntry{{Pos: t.created, Type: EvStepCreated, Step: ev.Step}, {Pos: t.minted, Type: ev.Type, Step: ev.Step}}
	case t.pc == pgTxCommit:
		return []PendingEntry{{Pos: t.minted, Type: ev.Type, Step: ev.Step}}
	}
	return nil
}

// PendingEntry is a log position a call holds: see Txn.Pending.
type PendingEntry struct {
	Pos      int32
	Type     EventType
	Step     StepID
	Optional bool
}

// Done reports whether the call has answered.
func (t *Txn) Done() bool { return t.done }

// Result is the call's answer once Done, as Apply answers.
func (t *Txn) Result() (res Result, retryAfter sim.Time, pos int32) {
	return t.res, t.retry, t.pos
}

// Created is the log position of the step_created a lazy step_started
// logged with its start (-1 when it logged none): other calls' events can
// land between the two on a World whose calls are not atomic.
func (t *Txn) Created() int32 {
	if t.res != OK {
		return -1
	}
	return t.created
}

// finish answers the call.
func (t *Txn) finish(res Result, retry sim.Time, pos int32) bool {
	t.done, t.res, t.retry, t.pos = true, res, retry, pos
	return true
}

// SetAtomicity sets how the store's Txns split their calls (AtomicityOf its
// rules unless set). AtomicCall makes every Txn one step, which is Apply.
func (s *Store) SetAtomicity(a Atomicity) { s.atomicity, s.atomicitySet = a, true }

// Atomicity is how the store's Txns split their calls.
func (s *Store) Atomicity() Atomicity {
	if s.atomicitySet {
		return s.atomicity
	}
	return AtomicityOf(s.rules)
}

// rowFields are the run row's fields whose presence depends on its status.
type rowFields uint8

const (
	hasOutput rowFields = 1 << iota
	hasError
	hasCompletedAt
)

// fieldsOf are the fields a row of status st holds when one write built it
// whole: pending and running none; cancelled a completedAt; completed an
// output too, failed an error.
func fieldsOf(st RunStatus) rowFields {
	switch st {
	case RunCompleted:
		return hasOutput | hasCompletedAt
	case RunFailed:
		return hasError | hasCompletedAt
	case RunCancelled:
		return hasCompletedAt
	}
	return 0
}

// Readable reports whether runs.get can give the run's row back: its fields
// must fit its status (a running row with a completedAt, a cancelled one with
// an output, as racing world-postgres UPDATEs leave them, fail the schema).
func (s *Store) Readable(id RunID) bool {
	r := s.row(id)
	return r.fields == fieldsOf(r.view.Status)
}

// RowContents names the run row's status and the status-dependent fields
// it holds, as "running+output+completedAt": what an unreadable row holds.
func (s *Store) RowContents(id RunID) string {
	r := s.row(id)
	out := r.view.Status.String()
	for _, f := range []struct {
		bit  rowFields
		name string
	}{{hasOutput, "output"}, {hasError, "error"}, {hasCompletedAt, "completedAt"}} {
		if r.fields&f.bit != 0 {
			out += "+" + f.name
		}
	}
	return out
}

// Begin starts events.create(ev) on behalf of owner. It changes nothing but
// the lock queue: a world-local step event takes its place in its step's
// queue now, in arrival order.
func (s *Store) Begin(ev Event, owner int32) Txn {
	if !ev.Type.valid() {
		panic(fmt.Sprintf("world: Begin of unknown event type %d", uint8(ev.Type)))
	}
	if ev.Type != EvStepRetrying {
		ev.RetryAfter = 0
	}
	if ev.Type != EvStepStarted {
		ev.Lazy = false
	}
	if !ev.Type.IsStepEvent() {
		ev.Step = NoStep
	}
	t := Txn{Ev: ev, Owner: owner, pos: -1, created: -1, atom: s.Atomicity()}
	if t.atom == AtomicLocal && ev.Type.IsStepEvent() && s.Has(ev.Run) {
		s.locks = append(s.locks, stepLock{run: ev.Run, step: ev.Step, owner: owner})
	}
	return t
}

// stepLock is one place in world-local's per-(run, step) in-process lock:
// the first entry for a (run, step) holds it, the others wait in order.
type stepLock struct {
	run   RunID
	step  StepID
	owner int32
	// row: world-postgres's lock on an existing step row, held by
	// step_started's transaction from its guarded UPDATE to its COMMIT;
	// otherwise the lock of a key being inserted (or world-local's).
	row bool
}

func (s *Store) holdsLock(t *Txn) bool {
	for _, l := range s.locks {
		if l.run == t.Ev.Run && l.step == t.Ev.Step {
			return l.owner == t.Owner
		}
	}
	return false
}

// holdsRowLock reports whether t holds world-postgres's lock on its step's
// row (stepLock.row).
func (s *Store) holdsRowLock(t *Txn) bool {
	for _, l := range s.locks {
		if l.run == t.Ev.Run && l.step == t.Ev.Step && l.owner == t.Owner && l.row {
			return true
		}
	}
	return false
}

func (s *Store) claimedByOther(t *Txn, row bool) bool {
	for _, l := range s.locks {
		if l.run == t.Ev.Run && l.step == t.Ev.Step && l.owner != t.Owner && l.row == row {
			return true
		}
	}
	return false
}

func (s *Store) unlock(t *Txn) {
	for i, l := range s.locks {
		if l.owner == t.Owner && l.run == t.Ev.Run && l.step == t.Ev.Step {
			s.locks = append(s.locks[:i], s.locks[i+1:]...)
			return
		}
	}
}

// Ready reports whether the call's next step can be taken now: false only
// while it waits for a lock another call holds.
func (s *Store) Ready(t *Txn) bool {
	if t.done {
		return false
	}
	if !t.Ev.Type.IsStepEvent() || !s.Has(t.Ev.Run) {
		return true
	}
	switch t.atom {
	case AtomicLocal:
		return t.pc > 0 || s.holdsLock(t)
	case AtomicPostgres:
		// An INSERT of a step row waits while a transaction that inserted
		// the same key has not committed, and a guarded UPDATE of the row
		// while a step_started's transaction that updated it has not.
		inserts := (t.Ev.Type == EvStepCreated && t.pc == pgInsertRow) || (t.Ev.Lazy && t.pc == pgTxBegin)
		updates := (t.pc == pgUpdate && t.Ev.Type != EvStepCreated) || (!t.Ev.Lazy && t.pc == pgTxUpdate)
		return !(inserts && s.claimedByOther(t, false) || updates && s.claimedByOther(t, true))
	}
	return true
}

// Advance takes the call's next atomic step at now and reports whether it took
// one (false: not Ready). When a step answers the call, Done becomes true.
func (s *Store) Advance(t *Txn, now sim.Time) bool {
	if !s.Ready(t) {
		return false
	}
	if !s.Has(t.Ev.Run) {
		return t.finish(NotFound, 0, -1)
	}
	if t.Ev.idFrom != 0 || s.ids != nil {
		// A step id reused across runs (stepids.go) is only ever sent one
		// call at a time, by the sequential conformance test: atomic.
		return t.finish(s.Apply(now, t.Ev))
	}
	switch t.atom {
	case AtomicLocal:
		if t.Ev.Type.IsStepEvent() {
			return s.stepLocalStep(t, now)
		}
		return s.stepLocalRun(t, now)
	case AtomicPostgres:
		if t.Ev.Type.IsStepEvent() {
			return s.stepPostgresStep(t, now)
		}
		return s.stepPostgresRun(t, now)
	}
	return t.finish(s.Apply(now, t.Ev))
}

// stepLocalStep: world-local step events. 0: take the lock (Ready), read
// the run. 1: validate the step (stable: the lock is held) against that
// read and write; a lazy start that creates its step writes step_created
// here and 2: its step_started.
func (s *Store) stepLocalStep(t *Txn, now sim.Time) bool {
	r := &s.runs[t.Ev.Run]
	switch t.pc {
	case 0:
		t.snap = r.view
		t.pc = 1
		return true
	case 1:
		runDone := t.snap.Status.Terminal()
		ev := t.Ev
		if ev.Lazy && !runDone && ev.Step >= 0 && !r.stepExists(ev.Step) {
			t.created = r.create(now, ev)
			t.pc = 2
			return true
		}
		s.unlock(t)
		return t.finish(s.applyStepReal(r, now, ev, runDone))
	default:
		ev := t.Ev
		ev.Lazy = false
		s.unlock(t)
		return t.finish(s.applyStepReal(r, now, ev, false))
	}
}

// stepLocalRun: world-local run events. 0: read the run and validate
// against it (a refusal or an idempotent answer ends here). 1: write the run
// file, built whole from that read. 2: publish the event. Between 1 and 2
// the file and the log disagree, and another call's write can land in
// between: the last file written and the last event logged need not be the
// same call's.
func (s *Store) stepLocalRun(t *Txn, now sim.Time) bool {
	r := &s.runs[t.Ev.Run]
	switch t.pc {
	case 0:
		t.snap = r.view
		if res, pos, ok := decideRun(r, t.snap.Status, t.Ev); ok {
			return t.finish(res, 0, pos)
		}
		t.pc = 1
		if t.Ev.Type == EvAttrSet {
			t.pc = 2
		}
		return true
	case 1:
		switch t.Ev.Type {
		case EvRunStarted:
			// startedAt: the read's, or now; no completedAt.
			r.view.Status = RunRunning
			r.view.StartedAt = t.snap.StartedAt
			if r.view.StartedAt == 0 {
				r.view.StartedAt = now
			}
			r.view.CompletedAt, r.fields = 0, 0
			r.record(now, RunRunning)
		default: // run_completed, run_failed, run_cancelled
			term := runTerminal(t.Ev.Type)
			r.view.Status = term
			r.view.StartedAt = t.snap.StartedAt
			r.view.CompletedAt, r.fields = now, fieldsOf(term)
			r.record(now, term)
		}
		t.pc = 2
		return true
	}
	pos := r.append(now, t.Ev)
	switch {
	case t.Ev.Type == EvRunStarted:
		r.startedPos = pos
	case t.Ev.Type.EndsRun():
		r.terminalPos = pos
	}
	return t.finish(OK, 0, pos)
}

// decideRun is the validation of a run event against the status a call
// read: ok is true when that alone answers the call (a refusal, or an
// idempotent repeat answered with the original event's position).
func decideRun(r *runRow, read RunStatus, ev Event) (res Result, pos int32, ok bool) {
	if read.Terminal() {
		switch {
		case ev.Type == EvRunCancelled && read == RunCancelled:
			return OK, r.terminalPos, true
		case ev.Type == EvRunStarted:
			return RunExpired, -1, true
		default:
			return EntityConflict, -1, true
		}
	}
	switch ev.Type {
	case EvRunCreated:
		return EntityConflict, -1, true
	case EvRunStarted:
		if read == RunRunning {
			return OK, r.startedPos, true
		}
	}
	return OK, -1, false
}

// The phases of a world-postgres call (Txn.pc): each is one statement, or
// one transaction, of events.create in dist/storage.js.
const (
	pgReadRun    = iota // the validation read of the run (getRunForValidation)
	pgReadStep          // the validation read of the step (step_started, step_retrying)
	pgInsertRow         // step_created: INSERT the step row ON CONFLICT DO NOTHING
	pgUpdate            // the UPDATE of the row (guarded, but for run_started)
	pgReselect          // the guarded UPDATE matched nothing: SELECT the row to say why
	pgInsert            // the event's INSERT
	pgMint              // the event's id minted: the JS that goes on after the statement before the INSERT
	pgTxBegin           // step_started's transaction: the lazy row and step_created
	pgTxUpdate          // ... its guarded UPDATE (matched: step_started's id minted)
	pgTxReselect        // ... the SELECT after an UPDATE that matched nothing (the id minted when it goes on)
	pgTxCommit          // ... step_started's INSERT and the COMMIT: its events seen
)

// stepPostgresStep: world-postgres step events, statement by statement.
func (s *Store) stepPostgresStep(t *Txn, now sim.Time) bool {
	r := &s.runs[t.Ev.Run]
	ev := t.Ev
	if t.pc == pgReadRun {
		// step_completed and step_retrying skip the run read; step_failed's
		// answer does not depend on it.
		t.snap = r.view
		switch ev.Type {
		case EvStepCreated:
			if t.snap.Status.Terminal() {
				return t.finish(EntityConflict, 0, -1)
			}
			if ev.Step < 0 {
				return t.finish(NotFound, 0, -1)
			}
			t.pc = pgInsertRow
		case EvStepStarted:
			if t.snap.Status.Terminal() && ev.Lazy {
				return t.finish(EntityConflict, 0, -1)
			}
			t.pc = pgReadStep
		case EvStepRetrying:
			t.pc = pgReadStep
		default:
			t.pc = pgUpdate
		}
		return true
	}
	switch t.pc {
	case pgReadStep:
		st, ok := r.stepRow(ev.Step)
		switch {
		case !ok && !ev.Lazy:
			return t.finish(NotFound, 0, -1)
		case ok && ev.Lazy:
			return t.finish(EntityConflict, 0, -1)
		case ok && st.Status.Terminal():
			return t.finish(EntityConflict, 0, -1)
		case ok && ev.Type == EvStepStarted && t.snap.Status.Terminal() &&
			(st.Status != StepRunning || s.fence == FenceFixed):
			// No published world-postgres has the fence (FenceFixed is
			// what a fixed one would answer); the pre-fix one starts a
			// running step of an ended run again.
			return t.finish(RunExpired, 0, -1)
		}
		t.stepSnap = st
		t.pc = pgUpdate
		if ev.Type == EvStepStarted {
			t.pc = pgTxBegin
		}
		return true
	case pgInsertRow:
		if !r.stepExists(ev.Step) {
			r.growSteps(int(ev.Step) + 1)
			r.steps[ev.Step] = Step{Exists: true, Status: StepPending}
		}
		t.mint(r)
		return true
	case pgUpdate: // step_completed, step_failed, step_retrying
		st, ok := r.stepRow(ev.Step)
		if !ok || st.Status.Terminal() {
			t.pc = pgReselect
			return true
		}
		row := &r.steps[ev.Step]
		if ev.Type == EvStepRetrying {
			row.Status, row.RetryAfter = StepPending, ev.RetryAfter
		} else {
			row.Status = stepTerminal(ev.Type)
		}
		t.mint(r)
		return true
	case pgReselect:
		// A row created, or taken out of a terminal state, since the
		// UPDATE matched nothing is not refused: the event is inserted
		// with the row untouched.
		if res, ok := refuseStepWrite(r, ev.Step); ok {
			return t.finish(res, 0, -1)
		}
		t.mint(r)
		return true
	case pgMint:
		t.minted = r.reserve()
		t.pc = pgInsert
		return true
	case pgInsert:
		if ev.Type == EvStepCreated && r.loggedCreate(ev.Step) {
			// The events table's unique index on (run, correlation id,
			// step_created): the minted id goes unused.
			r.abandon(t.minted)
			return t.finish(EntityConflict, 0, -1)
		}
		r.commitAt(now, t.minted, ev)
		return t.finish(OK, 0, t.minted)
	case pgTxBegin:
		if ev.Lazy {
			// The INSERT of the step row (a second insert of the key waits
			// for this transaction: Ready) and of its step_created, whose
			// id is minted now; nobody sees either before the commit.
			if r.stepExists(ev.Step) {
				return t.finish(EntityConflict, 0, -1)
			}
			s.locks = append(s.locks, stepLock{run: ev.Run, step: ev.Step, owner: t.Owner})
			t.created = r.reserve()
		} else if t.stepSnap.RetryAfter > now {
			// retryAfter as the validation read saw it.
			return t.finish(TooEarly, t.stepSnap.RetryAfter, -1)
		}
		t.pc = pgTxUpdate
		return true
	case pgTxUpdate:
		// step_started's id is minted once the guarded UPDATE has passed
		// (dist/storage.js: "Allocate the step_started ULID only after the
		// guarded step UPDATE"), and its INSERT commits after that: another
		// call's event can be minted and seen in between, so a step_started
		// can sort before a run_completed that was seen first.
		if ev.Lazy {
			// The row is the transaction's own: the UPDATE passes. Nobody
			// sees the row before the COMMIT (a bare step_started's read
			// in between finds no step).
			t.minted, t.pc = r.reserve(), pgTxCommit
			return true
		}
		st, ok := r.stepRow(ev.Step)
		if !ok || st.Status.Terminal() {
			t.pc = pgTxReselect
			return true
		}
		// The UPDATE takes the row's lock; the row others read changes at
		// the COMMIT.
		s.locks = append(s.locks, stepLock{run: ev.Run, step: ev.Step, owner: t.Owner, row: true})
		t.minted, t.pc = r.reserve(), pgTxCommit
		return true
	case pgTxReselect:
		// A row created since the UPDATE matched nothing lets the
		// step_started in without the UPDATE: the attempt stays.
		if res, refused := refuseStepWrite(r, ev.Step); refused {
			return t.finish(res, 0, -1)
		}
		t.minted, t.pc = r.reserve(), pgTxCommit
		return true
	default: // pgTxCommit
		switch {
		case ev.Lazy:
			created := ev
			created.Type, created.Lazy = EvStepCreated, false
			r.commitAt(now, t.created, created)
			r.growSteps(int(ev.Step) + 1)
			r.steps[ev.Step] = Step{Exists: true, Status: StepRunning, Attempt: 1}
			ev.Lazy = false
			s.unlock(t)
		case s.holdsRowLock(t):
			// The UPDATE matched (not the SELECT after one that did not).
			row := &r.steps[ev.Step]
			row.Status, row.Attempt, row.RetryAfter = StepRunning, row.Attempt+1, 0
			s.unlock(t)
		}
		r.commitAt(now, t.minted, ev)
		return t.finish(OK, 0, t.minted)
	}
}

// mint moves the call to where world-postgres mints its event's id: the
// id (a monotonic ULID, which is what the log is ordered by) is minted when
// the INSERT is built, in the JavaScript that goes on once the statement
// before it has answered, which can be after other calls' statements ran;
// the event is seen once the INSERT has run (pgMint, then pgInsert).
func (t *Txn) mint(r *runRow) { t.pc = pgMint }

// refuseStepWrite is what a write of a step answers when the step is missing
// (NotFound) or already terminal (EntityConflict); ok is false when it may
// go on.
func refuseStepWrite(r *runRow, id StepID) (Result, bool) {
	st, ok := r.stepRow(id)
	switch {
	case !ok:
		return NotFound, true
	case st.Status.Terminal():
		return EntityConflict, true
	}
	return OK, false
}

// stepPostgresRun: world-postgres run events: the validation read, the
// UPDATE (guarded for the terminal events, unguarded for run_started), the
// SELECT when a guarded UPDATE matched nothing, the event's INSERT.
func (s *Store) stepPostgresRun(t *Txn, now sim.Time) bool {
	r := &s.runs[t.Ev.Run]
	switch t.pc {
	case pgReadRun:
		t.snap = r.view
		if res, pos, ok := decideRun(r, t.snap.Status, t.Ev); ok {
			return t.finish(res, 0, pos)
		}
		t.pc = pgUpdate
		if t.Ev.Type == EvAttrSet {
			t.mint(r)
		}
		return true
	case pgUpdate:
		if t.Ev.Type == EvRunStarted {
			// WHERE id = run: over whatever the row holds now, its output,
			// error and completedAt kept.
			r.view.Status = RunRunning
			r.view.StartedAt = now
			r.record(now, RunRunning)
			t.mint(r)
			return true
		}
		if r.view.Status.Terminal() {
			// WHERE status NOT IN terminal matched nothing.
			t.pc = pgReselect
			return true
		}
		term := runTerminal(t.Ev.Type)
		r.view.Status = term
		r.view.CompletedAt = now
		switch term {
		case RunCompleted:
			r.fields |= hasOutput | hasCompletedAt
		case RunFailed:
			r.fields |= hasError | hasCompletedAt
		default:
			r.fields |= hasCompletedAt
		}
		r.record(now, term)
		t.mint(r)
		return true
	case pgReselect:
		// A run_started in between took the row out of its terminal state:
		// the event is inserted, the row left as it is.
		if r.view.Status.Terminal() {
			return t.finish(EntityConflict, 0, -1)
		}
		t.mint(r)
		return true
	case pgMint:
		t.minted = r.reserve()
		t.pc = pgInsert
		return true
	}
	pos := t.minted
	r.commitAt(now, pos, t.Ev)
	switch {
	case t.Ev.Type == EvRunStarted:
		r.startedPos = pos
	case t.Ev.Type.EndsRun():
		r.terminalPos = pos
	}
	return t.finish(OK, 0, pos)
}

func (r *runRow) stepExists(id StepID) bool {
	return id >= 0 && int(id) < len(r.steps) && r.steps[id].Exists
}

func (r *runRow) stepRow(id StepID) (Step, bool) {
	if !r.stepExists(id) {
		return Step{}, false
	}
	return r.steps[id], true
}

// loggedCreate reports whether the run's log holds a step_created for id.
func (r *runRow) loggedCreate(id StepID) bool {
	for i := range r.log {
		if r.log[i].Type == EvStepCreated && r.log[i].Step == id {
			return true
		}
	}
	return false
}

// MaxSteps is the most steps the call can take on its World: the engine
// spreads them over the call's service time (model/flight.go).
func (t *Txn) MaxSteps() int {
	ev := t.Ev
	switch t.atom {
	case AtomicLocal:
		switch {
		case ev.Type.IsStepEvent() && ev.Lazy:
			return 3
		case ev.Type.IsStepEvent(), ev.Type == EvAttrSet:
			return 2
		}
		return 3
	case AtomicPostgres:
		switch ev.Type {
		case EvRunStarted, EvStepCreated:
			return 4
		case EvRunCompleted, EvRunFailed, EvRunCancelled, EvStepCompleted, EvStepFailed:
			return 5
		case EvStepStarted:
			if ev.Lazy {
				return 5
			}
			return 6
		case EvStepRetrying:
			return 6
		}
		return 3
	}
	return 1
}

// Results is a set of Results.
type Results uint8

// Has reports whether r is in the set.
func (rs Results) Has(r Result) bool { return rs&(1<<r) != 0 }

func resultsOf(rs ...Result) Results {
	var out Results
	for _, r := range rs {
		out |= 1 << r
	}
	return out
}

const allResults Results = 1<<OK | 1<<RunExpired | 1<<EntityConflict | 1<<NotFound | 1<<TooEarly

// Possible is the set of answers the call can still give from where it is
// (a superset): the conformance checks drop an interleaving as soon as a
// call can no longer answer what the real World answered.
func (t *Txn) Possible() Results {
	if t.done {
		return resultsOf(t.res)
	}
	if t.pc == 0 {
		return allResults
	}
	ev := t.Ev
	switch t.atom {
	case AtomicLocal:
		if !ev.Type.IsStepEvent() || t.pc == 2 {
			return resultsOf(OK) // past the read, or a lazy start's second write
		}
		return allResults
	case AtomicPostgres:
		switch {
		case ev.Type == EvRunStarted, (t.pc == pgInsert || t.pc == pgMint || t.pc == pgTxCommit) && ev.Type != EvStepCreated:
			return resultsOf(OK)
		case !ev.Type.IsStepEvent(), ev.Type == EvStepCreated:
			return resultsOf(OK, EntityConflict)
		case ev.Type == EvStepStarted && ev.Lazy && t.pc == pgTxUpdate:
			return resultsOf(OK)
		case ev.Type == EvStepStarted && ev.Lazy && t.pc == pgTxBegin:
			return resultsOf(OK, EntityConflict)
		case t.pc == pgUpdate, t.pc == pgReselect, t.pc == pgTxUpdate, t.pc == pgTxReselect:
			return resultsOf(OK, NotFound, EntityConflict)
		}
	}
	return allResults
}
