package program

import (
	"fmt"
	"slices"
	"strings"
)

// This file is core's replay (5.0.0-beta.50 to .55, dist/workflow.js,
// events-consumer.js, step.js, workflow/sleep.js; docs/MODEL.md, "The
// replay") over a log: the program runs from its start, each entity it
// creates takes the next ordinal, and the log is walked in order, each event
// offered to the live entity whose correlation id it carries.
//
//   - A step's consumer takes step_created, step_started, step_retrying,
//     and finishes on step_completed (its promise resolves with the result)
//     or step_failed (it rejects: the program throws, the run fails). A step
//     event naming another step diverges; an event type a step does not take
//     (a wait event under a step's id) diverges.
//   - A wait's consumer takes wait_created and finishes on wait_completed;
//     a wait_completed whose resumeAt is not the wait's diverges.
//   - A hook's consumer (workflow/hook.js) takes hook_created, whose token
//     must be the hook's (else it diverges: "belongs to token"), and
//     hook_received, each a payload: handed to the oldest receive awaiting
//     it, else buffered for the next; a hook_conflict (the World gave the
//     token to another hook) rejects its receives (up to core beta.53 at
//     once, ahead of what the walk resolved before it: ConflictAtOnce);
//     hook_disposed finishes it. hook_received and hook_conflict park when
//     nobody takes them, as wait_completed does. A dispose that drops a
//     receive still awaiting schedules a suspension (hook.js disposeHook):
//     the replay suspends at the walk's next stall, before the event
//     nobody takes can park or diverge, whatever the log holds past it.
//   - An event nobody takes is skipped when its class (created, started,
//     retrying, terminal) was already consumed for its entity: a straggler
//     of a concurrent replay. Else a wait_completed or run_cancelled is
//     parked for a consumer the program may create later, and anything
//     else diverges: "Replay could not consume event".
//   - The walk goes in passes (EventsConsumer.consume): a pass takes every
//     event in a row that a consumer already registered takes, and hands
//     what is parked to consumers registered since. What a pass resolved is
//     delivered one resolution at a time, the earliest in the log first (a
//     parked event taken late goes ahead of later ones), and the program
//     runs on from it until it awaits again, which may create entities;
//     another pass runs before the next delivery.
//   - Date.now() (a clock statement) is the replay's clock: up to core
//     beta.53 it moves to each event's createdAt as a pass takes it, so the
//     program reads the time of its pass's last event (ClockPerPass); from
//     beta.55 as each result or completion is delivered (ClockPerDelivery).
//   - Once the program has returned, the rest of the log is not read; an
//     event still parked then diverges ("Replay finished without consuming
//     event"). At the log's end a program that has not returned is
//     suspended on the entities it created and has not seen finish.

// Status is how a replay ended.
type Status uint8

const (
	Suspended Status = iota // the log ran out while the program awaited entities
	Completed               // the program returned
	Failed                  // a step failed and the program threw
	Diverged                // the log is not this program's (ReplayDivergenceError)
)

func (s Status) String() string {
	return [...]string{"suspended", "completed", "failed", "diverged"}[s]
}

// Divergence names why a replay diverged, as core's messages do.
type Divergence uint8

const (
	NoDivergence Divergence = iota
	// NameMismatch: "step event X for ID belongs to A, but the current step
	// consumer is B".
	NameMismatch
	// UnexpectedType: "Unexpected event type for step|wait ...".
	UnexpectedType
	// ResumeAtMismatch: "wait_completed event for ID has resumeAt X, but the
	// current wait consumer expects Y".
	ResumeAtMismatch
	// Unconsumable: "Replay could not consume event".
	Unconsumable
	// FinishedWithParked: "Replay finished without consuming event".
	FinishedWithParked
	// TokenMismatch: "hook event X for ID belongs to token A, but the
	// current hook consumer expects B".
	TokenMismatch
)

func (d Divergence) String() string {
	return [...]string{"", "name-mismatch", "unexpected-type", "resume-at-mismatch", "unconsumable", "finished-with-parked", "token-mismatch"}[d]
}

// Pending is an entity a suspended replay awaits: created by the program,
// not seen finished in the log.
type Pending struct {
	Ordinal int32
	Kind    EntityKind
	Name    string // the step's name; "" for a wait
	// Created: the log holds its step_created (wait_created).
	Created bool
	// Node is the statement that created it (its index in the program's
	// walk order, Compile), for the runtime to read its body and results.
	Node int32
	// A hook's token (its place in the run's token sequence), and whether
	// the program disposed of it with no hook_disposed in the log yet
	// (the suspension writes one).
	Token   int32
	Dispose bool
}

func (p Pending) String() string {
	s := fmt.Sprintf("%s#%d", p.Kind, p.Ordinal)
	if p.Name != "" {
		s += " " + p.Name
	}
	if p.Created {
		s += " (created)"
	}
	if p.Dispose {
		s += " (disposed)"
	}
	return s
}

// Outcome is what one replay of a log did.
type Outcome struct {
	Status Status
	// Pending lists, for a suspended replay, the entities it awaits in the
	// order the program created them.
	Pending []Pending
	// At is the index of the event a diverged replay stopped at, or of the
	// step_failed a failed one threw on.
	At         int
	Divergence Divergence
	// Minted is how many entities the program created.
	Minted int32
	// Consumed is how many events the walk read (all of them unless the
	// program returned, threw or diverged first).
	Consumed int
}

func (o Outcome) String() string {
	switch o.Status {
	case Diverged:
		return fmt.Sprintf("diverged at event %d (%s)", o.At, o.Divergence)
	case Failed:
		return fmt.Sprintf("failed at event %d", o.At)
	case Suspended:
		parts := make([]string, len(o.Pending))
		for i, p := range o.Pending {
			parts[i] = p.String()
		}
		return "suspended on " + strings.Join(parts, ", ")
	}
	return "completed"
}

// event classes a consumption records for its entity (the World's
// event-metadata classes).
const (
	classStepCreated uint8 = 1 << iota
	classStepStarted
	classStepRetrying
	classStepTerminal
	classWaitCreated
	classWaitCompleted
	classHookCreated
	classHookDisposed
)

func classOf(t EventType) uint8 {
	switch t {
	case StepCreated:
		return classStepCreated
	case StepStarted:
		return classStepStarted
	case StepRetrying:
		return classStepRetrying
	case StepCompleted, StepFailed:
		return classStepTerminal
	case WaitCreated:
		return classWaitCreated
	case WaitCompleted:
		return classWaitCompleted
	case HookCreated:
		return classHookCreated
	case HookDisposed:
		return classHookDisposed
	}
	return 0 // hook_received: a hook fires many times under one id
}

// parkable are the types core parks for a consumer the program may create
// later (events-consumer.js PARKABLE_EVENT_TYPES).
func parkable(t EventType) bool {
	return t == WaitCompleted || t == RunCancelled || t == HookReceived || t == HookConflict
}

// value is what a statement evaluates to, as far as an if can tell.
type value uint8

const (
	undefined value = iota
	falsy           // a step's result 0
	truthy          // any other result, an array
)

func valueOf(result int64) value {
	if result == 0 {
		return falsy
	}
	return truthy
}

type entity struct {
	kind     EntityKind
	name     string
	node     *cnode
	live     bool
	created  bool
	classes  uint8
	resumeAt int64
	// parent and slot are the frame awaiting it and its place there.
	parent, slot int32
	// A hook's token, that the World gave its token to another
	// (hook_conflict), and that the program disposed of it.
	token      int32
	conflicted bool
	disposed   bool
	// carriedAt is 1 + the log index of the payload the hook's carried
	// read settled on while none of the races awaiting it was live (0:
	// none): the read is kept, settled, and the hook's next carried
	// receives take it at once. dropped: a dispose dropped the carried
	// read while it awaited a payload; it never settles, and every later
	// carried receive of the hook awaits it.
	carriedAt int
	dropped   bool
}

// waiter is a receive awaiting hook ent's next payload; carried, the
// hook's carried read (its receives are the hook's carriers).
type waiter struct {
	ent          int32
	node         *cnode
	parent, slot int32
	carried      bool
}

// carrier is a carried receive awaiting its hook's carried read. A hook
// has one carried read at a time (the generated TypeScript's c_h), and
// every carried receive of the hook races it until it settles: the
// receives of races run one after another (a read a race lost is raced
// again by the next) and of races run at once alike.
type carrier struct {
	ent          int32
	node         *cnode
	parent, slot int32
}

// payload is a hook_received the walk took with no receive awaiting it:
// the hook's next receive takes it, delivered at its place in the log.
type payload struct {
	ent int32
	at  int
}

// frame is a statement in progress that awaits others: a seq (the program
// itself, an if's branch, a loop's body), an all, a race or a pool. Its
// children report to it by index (notify), so a replay allocates nothing
// once its tables have grown.
type frame struct {
	node         *cnode
	kids         []*cnode // seq: the statements run in order
	parent, slot int32
	next         int32 // seq: the next statement; pool: the next call
	left         int32 // all: children not settled; pool: workers running
	iter         int32 // loop: iterations done
	last         value // seq: the value of the statement last settled
	settled      bool
}

// ClockMode is when a replay's clock (the workflow's Date.now()) moves to
// an event's createdAt.
type ClockMode uint8

const (
	// ClockPerPass: as the walk consumes each event (core 5.0.0-beta.50 to
	// .53, workflow.js onConsumedEvent). The walk consumes, in one pass,
	// every event in a row a registered consumer takes before the program
	// runs on, so the program reads the time of the pass's last event: a
	// replay of a longer log can read a later time at the same point of
	// the program than one whose log ended at the event it awaited.
	ClockPerPass ClockMode = iota
	// ClockPerDelivery: as the program is handed each branch-deciding
	// delivery (a step's result, a wait's completion), in log order (core
	// 5.0.0-beta.55's advanceClock): the program reads the time of the
	// delivery it runs on from (and of those before it), whatever the walk
	// read past it.
	ClockPerDelivery
)

func (c ClockMode) String() string { return [...]string{"per-pass", "per-delivery"}[c] }

// ConflictMode is when a hook_conflict's rejection reaches the receives
// awaiting the hook.
type ConflictMode uint8

const (
	// ConflictAtOnce: as the walk takes the hook_conflict (core
	// 5.0.0-beta.50 to .53: hook.js chains the rejection on the promise
	// queue, while every result, completion and payload waits out the
	// deliveries before it in the log and a quiescence turn): ahead of
	// everything the walk resolved and has not delivered, earlier in the
	// log or not. A race whose sleep completed just before the conflict
	// rejects.
	ConflictAtOnce ConflictMode = iota
	// ConflictInLogOrder: at its place in the log, as any delivery
	// (beta.55's deliverRegistration, behind a delivery barrier).
	ConflictInLogOrder
)

func (c ConflictMode) String() string { return [...]string{"at-once", "in-log-order"}[c] }

// Replayer replays logs, reusing its tables from one replay to the next. Its
// zero value is ready to use; it is not safe for use by more than one
// goroutine at a time.
type Replayer struct {
	// Explain keeps, for each race the replay settles, which branch won
	// and on which event (Wins); off, a replay records nothing more.
	Explain bool
	// CallSite mints call-site correlation ids (the team's proposed fix,
	// vercel/workflow #3179): an entity's id is its statement's and which
	// of that statement's entities it is in the replay (Compiled's
	// site ranges), not its place in the order the replay created
	// entities, so a replay that took another branch names the entities
	// of every other statement as any replay does. Off, ids are positional,
	// as every pinned core's.
	CallSite bool
	// Conflicts is when the release delivers a hook_conflict's rejection
	// (ConflictAtOnce, the pinned core's, by default).
	Conflicts ConflictMode
	// Clock is the release's clock (ClockPerPass, the pinned core's, by
	// default).
	Clock ClockMode
	// Wins are the races settled by the last Replay, in the order they
	// settled, and Clocks the clock statements it ran, in order (with
	// Explain; valid until the next Replay).
	Wins   []RaceWin
	Clocks []ClockRead
	// Retained are the clock reads a live VM already made, in the order it
	// made them: a replay resumed in a retained VM (core's
	// WORKFLOW_RETAINED_VM, on by default: an invocation that ran steps
	// inline appends the new events to its parked VM instead of replaying
	// afresh) does not run those statements again, so the nth run of a
	// clock statement that the list holds answers as it did then, and
	// only the reads past it read the clock.
	Retained []ClockRead

	prog *Compiled
	log  []Event
	ents []entity
	// order is the ordinals minted, in the order the program created
	// them (ents is by ordinal, which with call-site ids is another
	// order, with holes); occ counts each statement's entities so far.
	order []int32
	occ   []int32
	// hookVars are the hook variables (the entity each last minted, -1:
	// none yet), tokens how many tokens the replay drew; waiters and
	// payloads the receives awaiting and the payloads buffered, oldest
	// first.
	hookVars []int32
	tokens   int32
	waiters  []waiter
	payloads []payload
	frames   []frame
	vars     []value
	parked   []int
	pending  []Pending
	returned bool
	threw    bool
	// suspending: the program disposed of a hook a receive awaited, which
	// schedules core's suspension at once (hook.js disposeHook); it fires
	// at the walk's next stall, stalled, before an event nobody takes can
	// be parked or found unconsumable.
	suspending, stalled bool

	at int // the event being offered
	// clocksRun are the clock statements run so far, in order (to pair
	// each with its Retained read by statement and occurrence).
	clocksRun []int32
	// clock is the VM's Date.now() as ms since the run was created (the
	// workflow's start reads 0: core's fixedTimestamp is the run id's
	// time): the latest CreatedMS of the events consumed (ClockPerPass) or
	// delivered (ClockPerDelivery) so far.
	clock int64
	// lastTaken is the last event a consumer took (for ClockRead.Last).
	lastTaken int
	// resolved are the entities the walk saw finish, not yet delivered
	// (deliverNext).
	resolved []resolution
	failAt   int
	div      Divergence
	divAt    int

	// carriers are the carried receives awaiting their hook's carried
	// read, in the order they began to; targets is deliverCarried's.
	carriers, targets []carrier
}

// Replay replays program p against log, as core's replay does.
func Replay(p *Compiled, log []Event) Outcome {
	var r Replayer
	return r.Replay(p, log)
}

// Replay replays program p against log, as core's replay does. The
// Outcome's Pending is the Replayer's, valid until its next Replay.
func (m *Replayer) Replay(p *Compiled, log []Event) Outcome {
	*m = Replayer{Explain: m.Explain, Clock: m.Clock, Conflicts: m.Conflicts, CallSite: m.CallSite, order: m.order[:0], occ: m.occ[:0], Wins: m.Wins[:0], Clocks: m.Clocks[:0], Retained: m.Retained, clocksRun: m.clocksRun[:0], lastTaken: -1, prog: p, log: log, ents: m.ents[:0], frames: m.frames[:0], vars: m.vars[:0],
		parked: m.parked[:0], pending: m.pending[:0], resolved: m.resolved[:0], at: -1,
		hookVars: m.hookVars[:0], waiters: m.waiters[:0], payloads: m.payloads[:0], carriers: m.carriers[:0], targets: m.targets[:0]}
	for range p.labels {
		m.vars = append(m.vars, undefined)
	}
	for range p.hooks {
		m.hookVars = append(m.hookVars, -1)
	}
	m.startSeq(p.root, p.root.kids, -1, 0)
	// The walk goes in passes, as core's EventsConsumer drains: a pass
	// takes every event in a row that a consumer already registered takes
	// (or steps over as a straggler), advancing the clock as it goes, and
	// hands parked events to consumers registered since. What a pass
	// resolved is delivered to the program one resolution at a time, the
	// earliest in the log first, and each time the program has run on
	// (registering consumers) another pass runs before the next delivery.
	// An event nothing takes once nothing is left to deliver is parked or
	// diverges.
	consumed, i := 0, 0
	for !m.stopped() {
		for !m.stopped() {
			m.drainParked()
			if m.stopped() || i >= len(log) {
				break
			}
			m.at = i
			if !m.take(i) {
				break
			}
			i++
			consumed = i
		}
		if m.stopped() {
			break
		}
		if m.deliverNext() {
			continue
		}
		if i >= len(log) {
			break
		}
		if m.suspending {
			m.stalled = true
			break
		}
		m.at = i
		m.reject(i)
		i++
		consumed = i
	}
	o := Outcome{Minted: int32(len(m.order)), Consumed: consumed}
	switch {
	case m.div != NoDivergence:
		o.Status, o.At, o.Divergence = Diverged, m.divAt, m.div
	case m.threw:
		o.Status, o.At = Failed, m.failAt
	case m.returned && len(m.parked) > 0:
		o.Status, o.At, o.Divergence = Diverged, m.parked[0], FinishedWithParked
	case m.returned:
		o.Status = Completed
	case !m.stalled && len(m.parked) > 0 && len(log) > 0 && terminal(log[len(log)-1].Type):
		// Nothing will claim what is parked once the log has ended the run
		// (a replay that suspended at a stall never read its end).
		o.Status, o.At, o.Divergence = Diverged, m.parked[0], Unconsumable
	default:
		o.Status = Suspended
		for _, k := range m.order {
			e := &m.ents[k]
			if e.live && !e.conflicted {
				m.pending = append(m.pending, Pending{Ordinal: k, Kind: e.kind, Name: e.name, Created: e.created, Node: e.node.index,
					Token: e.token, Dispose: e.disposed})
			}
		}
		o.Pending = m.pending
	}
	return o
}

// consumed is ev taken by a consumer: with ClockPerPass the VM's clock
// moves forward to its time at once (core's onConsumedEvent); with
// ClockPerDelivery only a delivery moves it (deliverNext).
func (m *Replayer) consumed(ev *Event) {
	m.lastTaken = m.at
	if m.Clock == ClockPerPass {
		m.clock = max(m.clock, ev.CreatedMS)
	}
}

func terminal(t EventType) bool { return t == RunCompleted || t == RunFailed || t == RunCancelled }

func (m *Replayer) diverge(d Divergence, at int) {
	if m.div == NoDivergence {
		m.div, m.divAt = d, at
	}
}

func (m *Replayer) stopped() bool { return m.returned || m.threw || m.div != NoDivergence }

// take offers log[i] to the walk's pass: it reports whether the event was
// taken (by a registered consumer, or stepped over as a straggler, or a
// run_cancelled parked for later), so the pass goes on.
func (m *Replayer) take(i int) bool {
	ev := &m.log[i]
	switch ev.Type {
	case RunCreated:
		m.consumed(ev)
		return true
	case RunStarted:
		m.consumed(ev) // the first is the run's; a second, a straggler, is skipped
		return true
	case RunCompleted, RunFailed:
		return false
	case RunCancelled:
		m.parked = append(m.parked, i)
		return true
	}
	if m.claim(i) {
		return true
	}
	if ev.Ordinal >= 0 && int(ev.Ordinal) < len(m.ents) {
		if e := &m.ents[ev.Ordinal]; e.kind == ev.Kind && e.classes&classOf(ev.Type) != 0 {
			return true // a straggler of a class already consumed
		}
	}
	return false
}

// reject is log[i] that nothing took, once the program had run on: a
// wait_completed is parked for a consumer the program may register later;
// anything else diverges.
func (m *Replayer) reject(i int) {
	if parkable(m.log[i].Type) {
		m.parked = append(m.parked, i)
		return
	}
	m.diverge(Unconsumable, i)
}

// deliverNext delivers the earliest (in the log) resolution not yet
// delivered (an eager one first), and the program runs on from it; it
// reports whether there was one.
func (m *Replayer) deliverNext() bool {
	if len(m.resolved) == 0 {
		return false
	}
	j := 0
	for i := range m.resolved {
		if r, q := &m.resolved[i], &m.resolved[j]; r.eager && !q.eager || r.eager == q.eager && r.at < q.at {
			j = i
		}
	}
	r := m.resolved[j]
	m.resolved = append(m.resolved[:j], m.resolved[j+1:]...)
	if m.Clock == ClockPerDelivery {
		// A branch-deciding delivery moves the clock (core beta.55's
		// advanceClock), whatever the walk read past it.
		m.clock = max(m.clock, r.clock)
	}
	at := m.at
	m.at = r.at
	if r.carried {
		m.deliverCarried(r)
	} else if r.node != nil {
		// A hook's payload (or its conflict) to the receive awaiting it.
		if r.node.label >= 0 && !r.failed {
			m.vars[r.node.label] = r.v
		}
		m.notify(r.parent, r.slot, r.v, r.failed)
	} else {
		m.settle(r.k, r.v, r.failed)
	}
	m.at = at
	return true
}

// deliverCarried is hook r.k's carried read settled (r.failed: rejected
// by a hook_conflict): every carried receive awaiting it resumes, in the
// order it began to, each taking the value whether its race is still live
// or not (a lost race's ignores it), as each await of the generated
// TypeScript's c_h does. One whose race was live when the read settled
// uses the read up (it clears c_h): the hook's next carried receive begins
// another. Else the read is kept, settled, for the next to take at once.
// A rejected read is never cleared: the hook is conflicted.
func (m *Replayer) deliverCarried(r resolution) {
	m.targets = m.targets[:0]
	kept := m.carriers[:0]
	for _, c := range m.carriers {
		if c.ent == r.k {
			m.targets = append(m.targets, c)
		} else {
			kept = append(kept, c)
		}
	}
	m.carriers = kept
	if !r.failed {
		live := false
		for _, c := range m.targets {
			live = live || !m.frames[c.parent].settled
			if c.node.label >= 0 {
				m.vars[c.node.label] = r.v
			}
		}
		m.ents[r.k].carriedAt = 0
		if !live {
			m.ents[r.k].carriedAt = r.at + 1
		}
	}
	for _, c := range m.targets {
		m.notify(c.parent, c.slot, r.v, r.failed)
	}
}

// reading reports whether hook k's carried read is outstanding: awaiting
// a payload, or settled and not yet delivered.
func (m *Replayer) reading(k int32) bool {
	for _, w := range m.waiters {
		if w.ent == k && w.carried {
			return true
		}
	}
	for _, r := range m.resolved {
		if r.k == k && r.carried {
			return true
		}
	}
	return false
}

// claim offers log[i] to the live entity its correlation id names; it
// reports whether one took it (or diverged on it).
func (m *Replayer) claim(i int) bool {
	ev := &m.log[i]
	if ev.Ordinal < 0 || int(ev.Ordinal) >= len(m.ents) {
		return false
	}
	e := &m.ents[ev.Ordinal]
	if !e.live || e.kind != ev.Kind {
		return false
	}
	m.consumed(ev)
	switch e.kind {
	case EntityStep:
		if ev.Name != "" && ev.Name != e.name {
			m.diverge(NameMismatch, i)
			return true
		}
		switch ev.Type {
		case StepCreated:
			e.created = true
		case StepStarted, StepRetrying:
		case StepCompleted, StepFailed:
			e.classes |= classOf(ev.Type)
			e.live = false
			m.settleEntity(ev.Ordinal, valueOf(ev.Result), ev.Type == StepFailed)
			return true
		default:
			m.diverge(UnexpectedType, i)
			return true
		}
	case EntityWait:
		switch ev.Type {
		case WaitCreated:
			e.created, e.resumeAt = true, ev.ResumeAt
		case WaitCompleted:
			if ev.ResumeAt != 0 && (!e.created || ev.ResumeAt != e.resumeAt) {
				m.diverge(ResumeAtMismatch, i)
				return true
			}
			e.classes |= classWaitCompleted
			e.live = false
			m.settleEntity(ev.Ordinal, undefined, false)
			return true
		default:
			m.diverge(UnexpectedType, i)
			return true
		}
	case EntityHook:
		switch ev.Type {
		case HookCreated, HookConflict:
			if ev.Token != e.token {
				m.diverge(TokenMismatch, i)
				return true
			}
			e.created = true
			if ev.Type == HookConflict {
				// The token is another hook's: every receive awaiting
				// this one rejects, and so will every later one.
				e.conflicted = true
				for j := 0; j < len(m.waiters); {
					if w := m.waiters[j]; w.ent == ev.Ordinal {
						m.resolved = append(m.resolved, resolution{k: w.ent, failed: true, at: i, clock: ev.CreatedMS, node: w.node, parent: w.parent, slot: w.slot, carried: w.carried, eager: m.Conflicts == ConflictAtOnce})
						m.waiters = append(m.waiters[:j], m.waiters[j+1:]...)
						continue
					}
					j++
				}
				return true
			}
		case HookReceived:
			// A payload: to the oldest receive awaiting it, else kept
			// for the next. It records no class: a hook fires many
			// times.
			for j, w := range m.waiters {
				if w.ent == ev.Ordinal {
					m.resolved = append(m.resolved, resolution{k: w.ent, v: truthy, at: i, clock: ev.CreatedMS, node: w.node, parent: w.parent, slot: w.slot, carried: w.carried})
					m.waiters = append(m.waiters[:j], m.waiters[j+1:]...)
					return true
				}
			}
			m.payloads = append(m.payloads, payload{ent: ev.Ordinal, at: i})
			return true
		case HookDisposed:
			e.live = false
		default:
			m.diverge(UnexpectedType, i)
			return true
		}
	}
	e.classes |= classOf(ev.Type)
	return true
}

// drainParked offers what is parked, oldest first, until nothing more is
// taken; a parked event whose class its entity has since consumed is
// dropped.
func (m *Replayer) drainParked() {
	for progressed := len(m.parked) > 0; progressed; {
		progressed = false
		kept := m.parked[:0]
		for _, i := range m.parked {
			ev := &m.log[i]
			if ev.Ordinal >= 0 && int(ev.Ordinal) < len(m.ents) {
				if e := &m.ents[ev.Ordinal]; e.kind == ev.Kind && e.classes&classOf(ev.Type) != 0 {
					continue
				}
			}
			kept = append(kept, i)
		}
		m.parked = kept
		for j, i := range m.parked {
			if m.log[i].Type == RunCancelled {
				continue
			}
			at := m.at
			m.at = i
			took := m.claim(i)
			m.at = at
			if took {
				m.parked = append(m.parked[:j], m.parked[j+1:]...)
				progressed = len(m.parked) > 0 && m.div == NoDivergence && !m.returned && !m.threw
				break
			}
		}
	}
}

// NodeOf is the statement (its index in Compiled.Nodes) that minted entity
// ordinal in the last Replay; false when that replay minted no such
// entity. Two replays that diverge mint one ordinal from different
// statements: that is what a divergence is.
func (m *Replayer) NodeOf(ordinal int32) (int32, bool) {
	if ordinal < 0 || int(ordinal) >= len(m.ents) || m.ents[ordinal].node == nil {
		return -1, false
	}
	return m.ents[ordinal].node.index, true
}

// retained is the live VM's read of clock statement node at this run of
// it (the same occurrence), if it made one.
func (m *Replayer) retained(node int32) (ClockRead, bool) {
	if len(m.Retained) == 0 {
		return ClockRead{}, false
	}
	nth := 0
	for _, n := range m.clocksRun {
		if n == node {
			nth++
		}
	}
	for _, r := range m.Retained {
		if r.Node != node {
			continue
		}
		if nth == 0 {
			return r, true
		}
		nth--
	}
	return ClockRead{}, false
}

// mint creates the program's next entity, awaited by frame parent at slot,
// and returns its ordinal: the next of the replay's (positional ids), or
// its statement's next call-site id (CallSite).
func (m *Replayer) mint(kind EntityKind, n *cnode, parent, slot int32) int32 {
	e := entity{kind: kind, name: n.step, node: n, live: true, parent: parent, slot: slot}
	k := int32(len(m.ents))
	if m.CallSite {
		// The statement's next call-site id (its range is Compiled's).
		for len(m.occ) < len(m.prog.Nodes) {
			m.occ = append(m.occ, 0)
		}
		k = m.prog.siteBase[n.index] + m.occ[n.index]
		m.occ[n.index]++
		for int(k) >= len(m.ents) {
			m.ents = append(m.ents, entity{})
		}
		m.ents[k] = e
	} else {
		m.ents = append(m.ents, e)
	}
	m.order = append(m.order, k)
	return k
}

// settleEntity is entity k finished on event m.at: its resolution waits
// for the walk to deliver it (deliverNext).
func (m *Replayer) settleEntity(k int32, v value, failed bool) {
	m.resolved = append(m.resolved, resolution{k: k, v: v, failed: failed, at: m.at, clock: m.log[m.at].CreatedMS})
}

// resolution is an entity a pass saw finish, the program not yet run on
// from it.
type resolution struct {
	// eager: a hook_conflict's rejection with ConflictAtOnce, delivered
	// ahead of every other.
	eager  bool
	k      int32
	v      value
	failed bool
	at     int   // the event's index in the log
	clock  int64 // the event's CreatedMS
	// node, parent and slot are, for a hook's payload, the receive it
	// goes to (nil: the entity's own statement); carried, that it settles
	// the hook's carried read, for every carrier awaiting it
	// (deliverCarried).
	node         *cnode
	parent, slot int32
	carried      bool
}

// settle is entity k's value going to the frame awaiting it, after its
// label (a pool's calls are its own, and label nothing).
func (m *Replayer) settle(k int32, v value, failed bool) {
	e := &m.ents[k]
	if e.node.kind != KindPool && e.node.label >= 0 && !failed {
		m.vars[e.node.label] = v
	}
	m.notify(e.parent, e.slot, v, failed)
}

// start runs statement n, child slot of frame parent, until it awaits.
func (m *Replayer) start(n *cnode, parent, slot int32) {
	switch n.kind {
	case KindStep:
		m.mint(EntityStep, n, parent, slot)
	case KindSleep:
		m.mint(EntityWait, n, parent, slot)
	case KindSeq:
		m.startSeq(n, n.kids, parent, slot)
	case KindIf:
		take := m.vars[n.cond] == truthy
		if n.not {
			take = !take
		}
		branch := n.then
		if !take {
			branch = n.els
		}
		m.startSeq(n, branch, parent, slot)
	case KindLoop:
		m.startSeq(n, n.kids, parent, slot)
	case KindAll, KindRace:
		f := m.push(n, parent, slot)
		m.frames[f].left = int32(len(n.kids))
		for i, c := range n.kids {
			m.start(c, f, int32(i))
		}
	case KindPool:
		f := m.push(n, parent, slot)
		workers := int32(min(n.pool, n.n))
		m.frames[f].left = workers
		for i := range workers {
			m.poolNext(f, i)
		}
	case KindHook:
		k := m.mint(EntityHook, n, -1, -1)
		m.ents[k].token = m.tokens
		m.tokens++
		m.hookVars[n.hook] = k
		m.notify(parent, slot, undefined, false)
	case KindReceive:
		m.receive(n, parent, slot)
	case KindDispose:
		if k := m.hookVars[n.hook]; k >= 0 && !m.ents[k].disposed {
			// Its receives still awaiting never settle (core drops
			// them); the next suspension writes hook_disposed. Unless
			// the log's hook_disposed was read (a replay's dispose is a
			// no-op then), dropping an awaiting receive schedules a
			// suspension: the replay suspends at the walk's next stall,
			// whatever the log holds past it.
			m.ents[k].disposed = true
			n := len(m.waiters)
			m.waiters = slices.DeleteFunc(m.waiters, func(w waiter) bool {
				m.ents[k].dropped = m.ents[k].dropped || w.ent == k && w.carried
				return w.ent == k
			})
			m.suspending = m.suspending || m.ents[k].live && len(m.waiters) < n
		}
		m.notify(parent, slot, undefined, false)
	case KindClock:
		v := falsy
		read := ClockRead{Node: n.index, Clock: m.clock, Last: m.lastTaken, Truthy: m.clock >= n.clock}
		if r, ok := m.retained(n.index); ok {
			// The live VM ran this statement already: its answer stands.
			read = r
		}
		if len(m.Retained) > 0 {
			m.clocksRun = append(m.clocksRun, n.index)
		}
		if read.Truthy {
			v = truthy
		}
		if m.Explain {
			m.Clocks = append(m.Clocks, read)
		}
		if n.label >= 0 {
			m.vars[n.label] = v
		}
		m.notify(parent, slot, v, false)
	}
}

// receive is receive statement n awaiting its hook's next payload: a
// buffered one is delivered at its own place in the log (core's claim is
// anchored to the event, not to the await); a conflicted hook rejects;
// else it waits for the walk.
func (m *Replayer) receive(n *cnode, parent, slot int32) {
	k := m.hookVars[n.hook]
	e := &m.ents[k]
	if n.carry {
		// The hook's carried read: outstanding (awaiting a payload, or
		// settled and not yet delivered), this receive awaits it too, as
		// the receives before it do, whether their races were lost or
		// are live; settled and kept, it settles this race at once (at
		// its own place in the log); else this receive begins one, as a
		// plain receive reads.
		m.carriers = append(m.carriers, carrier{ent: k, node: n, parent: parent, slot: slot})
		if e.dropped || m.reading(k) {
			return
		}
		if at := e.carriedAt; at > 0 {
			m.resolved = append(m.resolved, resolution{k: k, v: truthy, at: at - 1, clock: m.log[at-1].CreatedMS, node: n, parent: parent, slot: slot, carried: true})
			return
		}
	}
	if e.conflicted {
		m.resolved = append(m.resolved, resolution{k: k, failed: true, at: m.at, node: n, parent: parent, slot: slot, carried: n.carry})
		return
	}
	for j, p := range m.payloads {
		if p.ent == k {
			m.payloads = append(m.payloads[:j], m.payloads[j+1:]...)
			m.resolved = append(m.resolved, resolution{k: k, v: truthy, at: p.at, clock: m.log[p.at].CreatedMS, node: n, parent: parent, slot: slot, carried: n.carry})
			return
		}
	}
	m.waiters = append(m.waiters, waiter{ent: k, node: n, parent: parent, slot: slot, carried: n.carry})
}

func (m *Replayer) push(n *cnode, parent, slot int32) int32 {
	m.frames = append(m.frames, frame{node: n, parent: parent, slot: slot})
	return int32(len(m.frames) - 1)
}

// startSeq runs kids in order as statement n (a seq, an if's branch, a
// loop's body; the program itself when parent is -1).
func (m *Replayer) startSeq(n *cnode, kids []*cnode, parent, slot int32) {
	f := m.push(n, parent, slot)
	m.frames[f].kids = kids
	m.seqNext(f)
}

// seqNext starts frame f's next statement, or settles f after its last.
func (m *Replayer) seqNext(f int32) {
	fr := &m.frames[f]
	if int(fr.next) < len(fr.kids) {
		fr.next++
		m.start(fr.kids[fr.next-1], f, fr.next-1)
		return
	}
	if fr.node.kind == KindLoop {
		fr.iter++
		if int(fr.iter) < fr.node.loop && (fr.node.cond < 0 || m.vars[fr.node.cond] != truthy) {
			fr.next = 0
			m.seqNext(f)
			return
		}
	}
	m.complete(f, fr.last, false)
}

// poolNext starts worker slot's next call of pool frame f, or ends the
// worker when every call has started.
func (m *Replayer) poolNext(f, slot int32) {
	fr := &m.frames[f]
	if int(fr.next) >= fr.node.n {
		if fr.left--; fr.left == 0 {
			m.complete(f, truthy, false)
		}
		return
	}
	fr.next++
	m.mint(EntityStep, fr.node, f, slot)
}

// complete settles frame f with v: its label, then the frame awaiting it.
func (m *Replayer) complete(f int32, v value, failed bool) {
	fr := &m.frames[f]
	if fr.settled {
		return
	}
	fr.settled = true
	if n := fr.node; n.label >= 0 && !failed {
		m.vars[n.label] = v
	}
	m.notify(fr.parent, fr.slot, v, failed)
}

// notify is child slot of frame f settled with v.
func (m *Replayer) notify(f, slot int32, v value, failed bool) {
	if f < 0 {
		if failed {
			m.threw, m.failAt = true, m.at
		} else {
			m.returned = true
		}
		return
	}
	fr := &m.frames[f]
	switch fr.node.kind {
	case KindAll:
		if fr.settled {
			return
		}
		if failed {
			m.complete(f, undefined, true)
			return
		}
		if fr.left--; fr.left == 0 {
			m.complete(f, truthy, false)
		}
	case KindRace:
		if m.Explain && !fr.settled {
			m.Wins = append(m.Wins, RaceWin{Node: fr.node.index, Branch: slot, At: m.at})
		}
		m.complete(f, v, failed)
	case KindPool:
		if failed {
			// Promise.all of the workers rejects with the first failure;
			// the other workers go on, each starting its next call when
			// its own ends, as JavaScript's do.
			m.complete(f, undefined, true)
			m.frames[f].left--
			return
		}
		m.poolNext(f, slot)
	default: // seq, if, loop, the program
		if failed {
			m.complete(f, undefined, true)
			return
		}
		fr.last = v
		m.seqNext(f)
	}
}

// BeforeEnd is log up to its first terminal run event: what a fresh replay
// of the run reads, since the runtime replays no log holding the run's end
// (runtime.js, hasRecordedTerminalRunEvent) and the replay that wrote the
// end had consumed what came before it.
func BeforeEnd(log []Event) []Event {
	for i, e := range log {
		if terminal(e.Type) {
			return log[:i]
		}
	}
	return log
}

// ClockRead is a clock statement a replay ran: the statement (its index in
// Compiled.Nodes), the clock it read (ms past the workflow's start), what
// it made of it, and the last event a consumer had taken then (its index
// in the replayed log; -1: none).
type ClockRead struct {
	Node   int32
	Clock  int64
	Truthy bool
	Last   int
}

// RaceWin is a race a replay settled: the race statement (its index in
// Compiled.Nodes), the branch that settled first, and the event whose
// consumption settled it (its index in the replayed log).
type RaceWin struct {
	Node, Branch int32
	At           int
}
