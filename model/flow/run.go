package flow

import (
	"slices"
	"time"

	"github.com/simlab/simlab/model/program"
	wworld "github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// This file is the runtime (core 5.0.0-beta.52, runtime.js and
// runtime/suspension-handler.js, step-executor.js; docs/MODEL.md, "The
// replay"): a workflow invocation loads the run's log, stops if it holds
// the run's end, completes the waits that are due, replays the program,
// and acts on the replay: a divergence queues a fresh replay (up to the
// recovery budget, then the run fails CORRUPTED_EVENT_LOG); a suspension
// creates what the program awaits and does not find created (the first
// MaxInline new steps it runs itself, lazily claimed; the rest are
// created and queued; a wait is created with its due time) and queues one
// delayed invocation for the soonest wait; after its inline steps it loads
// the log again. A queued step claims, runs, writes its result and lists
// the log; if no created step is left pending it reads the run (the lazy
// read) and, the run not ended, replays the workflow inline from the log
// it listed.

// Kernel event kinds.
const (
	evDeliver uint32 = iota + 1 // payload: message
	evLand                      // actor: the actor whose call landed
	evReplay                    // actor: its replay is done
	evBody                      // actor: its step body is done
	evKill                      // actor: its time limit
	evTick                      // the outside driver's tick (payload 1: at a wait's deadline)
	evLookup                    // actor: an outside resume's hook lookup answered
)

type msgKind uint8

const (
	msgWorkflow msgKind = iota
	msgStep
)

type message struct {
	kind    msgKind
	ordinal int32
	node    int32
	name    string
	attempt int32 // recovery replays so far
	// reinvoked counts the re-invocations a refused write's replay made
	// (core's preconditionReinvocations, carried in the message).
	reinvoked int32
	wake      int64 // a wait's delayed invocation: the resumeAt it is for
	cause     Cause
	// delivered counts its deliveries.
	delivered int32
}

type callKind uint8

const (
	callNone callKind = iota
	callList
	callRead
	callWrite
)

// write is a write an actor has yet to issue, and what follows it.
type write struct {
	ev   Entry
	lazy bool
	// endedAtIssue: the run had ended when the write's call began.
	endedAtIssue bool
	// inline: a claim an invocation makes for a step it runs itself
	// (lazy, or its own step again after its redelivery): the claim
	// stamps the invocation's message as the step's owner.
	inline  bool
	publish bool // publish the step's message once the suspension's creates are answered
	node    int32
}

type state uint8

const (
	stStart     state = iota // workflow: writing run_started
	stLoad                   // workflow: listing the log
	stWaits                  // writing the due waits' completions
	stReplaying              // replaying
	stActing                 // writing what the replay asked for
	stInline                 // awaiting its inline steps
	stClaim                  // step: claiming
	stBody                   // step: running the body
	stResult                 // step: writing the result
	stFanIn                  // step: listing after its result
	stLazyRead               // step: the lazy runs.get
	stLookup                 // resume: looking the hook up by its token
	stResume                 // resume: writing hook_received
	stDone
)

// actor is an Actor's runtime state (Result.Actors[i] is its record).
type actor struct {
	st     state
	call   callKind
	served int // a list's answer: the log's length then
	// callAt and replayAt are when its call in flight, and its replay in
	// progress, began.
	callAt, replayAt sim.Time
	writes           []write
	wi               int
	// The log the actor goes on with: the first viewLen events, and with
	// ViewOwnWrites its own accepted writes after them (positions).
	viewLen int32
	own     []int32
	inline  []int32 // steps to run inline after the writes (by pending index)
	// outbox holds the step messages of its accepted creates until all
	// its writes are answered: core publishes a suspension's queued steps
	// after its creates (suspension-handler.js: the creates run at once,
	// the dispatch pass publishes once they settled), so no step of a
	// suspension is claimed before the suspension's last create lands.
	outbox []message
	pend   []program.Pending // what its last replay awaits
	// clocks are its last replay's Date.now() reads, and retained says
	// that replay's VM is parked for it to resume (Config.RetainedVM: it
	// suspended with steps to run inline).
	clocks   []program.ClockRead
	retained bool
	// saw and loaded are its last replay's log: its length, and how much
	// of it was the run's log as it is (Entry.Saw, Entry.Loaded).
	saw, loaded int32
	inlineN     int32 // inline steps not finished
	locked      bool
	dead        bool
	replay      bool // a replay in progress
	attempt     int32
	// restarts counts its in-process restarts after a refused write
	// (core's preconditionRestarts, per delivery), and staleClaim says a
	// refused inline claim restarts it once its inline steps are done.
	restarts   int32
	staleClaim bool
	result     int64
	node       int32
	msg        int32
}

type runner struct {
	cfg    Config
	c      sim.Chooser
	k      *sim.Kernel
	res    *Result
	w      world
	msgs   []message
	actors []actor
	lock   int32 // the actor holding the sequential-replay lock, or -1
	// replaying counts the replays in progress.
	replaying int
	wakes     []int64 // delayed invocations queued and not yet delivered
	// backstops are the ownership epochs (a claim's time) a backstop was
	// armed for: core's key for it absorbs a second.
	backstops []int64
	rep       program.Replayer
	view      []program.Event
	// memo holds the outcome of replaying the log's first n events, by n
	// (memo[n].ok): the log only grows, so a prefix never changes, and
	// many invocations replay the same one (nothing landed between their
	// lists). Its pending entities live in memoPend.
	memo     []memoOutcome
	memoPend []program.Pending
	// resumes is afterLoad's scratch: each wait's resume time, by ordinal.
	resumes  []int64
	scratch  []uint8
	waitsDue []int32
	// ticks counts the outside driver's cadence ticks so far; live is
	// tick's scratch.
	ticks int
	live  []int32
}

func (r *runner) startRun() {
	r.lock = -1
	r.w.append(0, &Entry{Event: program.E(program.RunCreated, -1), By: -1, Saw: -1, Loaded: -1})
	r.publish(message{kind: msgWorkflow, cause: CauseStart}, 0)
	if d := r.cfg.Resumes; d.Count > 0 {
		r.k.After(d.Every, evTick, 0, 0)
	}
}

func (r *runner) dispatch(ev *sim.Event) {
	switch ev.Kind {
	case evDeliver:
		r.deliver(int32(ev.Payload))
	case evLand:
		r.land(int32(ev.Actor))
	case evReplay:
		r.replayed(int32(ev.Actor))
	case evBody:
		r.bodyDone(int32(ev.Actor))
	case evKill:
		r.kill(int32(ev.Actor))
	case evTick:
		r.tick(ev.Payload == 1)
	case evLookup:
		r.lookedUp(int32(ev.Actor))
	}
}

func (r *runner) now() sim.Time { return r.k.Now() }

// publish queues message m, delivered after the queue's delay and delay.
func (r *runner) publish(m message, delay time.Duration) {
	r.msgs = append(r.msgs, m)
	r.k.After(delay+r.cfg.Deliver.Draw(r.c), evDeliver, 0, uint64(len(r.msgs)-1))
}

// reset makes r ready for a run of cfg under c into res, keeping every
// table's room from the runs before.
func (r *runner) reset(cfg Config, c sim.Chooser, res *Result) {
	*res = Result{Log: res.Log[:0], Writes: res.Writes[:0], Calls: res.Calls[:0], Actors: res.Actors[:0]}
	*r = runner{cfg: cfg, c: c, res: res,
		w: world{log: res.Log[:0], events: r.w.events[:0], steps: r.w.steps[:0], waits: r.w.waits[:0], hookIDs: r.w.hookIDs[:0],
			hooks: wworld.Hooks{Rules: wworld.RulesLocal}},
		msgs: r.msgs[:0], actors: r.actors[:0], wakes: r.wakes[:0], backstops: r.backstops[:0],
		rep: r.rep, view: r.view[:0], scratch: r.scratch, waitsDue: r.waitsDue[:0],
		memo: r.memo[:0], memoPend: r.memoPend[:0], resumes: r.resumes}
	r.rep.Clock, res.Clock, res.View = cfg.Clock, cfg.Clock, cfg.View
	res.Conflicts, res.CallSite = cfg.Conflicts, cfg.CallSiteIDs
	r.rep.Conflicts, r.rep.CallSite = cfg.Conflicts, cfg.CallSiteIDs
	// A retained VM's clock reads are only kept for programs that read the
	// clock: for the rest a resumed replay is a fresh one.
	r.rep.Explain = cfg.RetainedVM && cfg.Program.ReadsClock()
}

func (r *runner) newActor(kind ActorKind, msg, parent int32) int32 {
	// Reuse the room an earlier run's actor at this index left: its
	// slices keep their arrays.
	rec := Actor{Kind: kind, Message: msg, Parent: parent, Start: r.now(), Ordinal: -1, Node: -1}
	if n := len(r.res.Actors); n < cap(r.res.Actors) {
		r.res.Actors = r.res.Actors[:n+1]
		rec.Replays = r.res.Actors[n].Replays[:0]
		r.res.Actors[n] = rec
	} else {
		r.res.Actors = append(r.res.Actors, rec)
	}
	st := actor{msg: msg, node: -1}
	if n := len(r.actors); n < cap(r.actors) {
		r.actors = r.actors[:n+1]
		old := &r.actors[n]
		st.writes, st.own, st.inline, st.pend, st.outbox, st.clocks = old.writes[:0], old.own[:0], old.inline[:0], old.pend[:0], old.outbox[:0], old.clocks[:0]
		*old = st
	} else {
		r.actors = append(r.actors, st)
	}
	a := int32(len(r.actors) - 1)
	if (kind == ActorWorkflow || kind == ActorStep) && r.cfg.MaxDuration > 0 {
		r.k.After(r.cfg.MaxDuration, evKill, uint32(a), 0)
	}
	return a
}

func (r *runner) deliver(mi int32) {
	r.msgs[mi].delivered++
	m := r.msgs[mi]
	switch m.kind {
	case msgWorkflow:
		if m.wake != 0 {
			r.wakes = slices.DeleteFunc(r.wakes, func(w int64) bool { return w == m.wake })
		}
		a := r.newActor(ActorWorkflow, mi, -1)
		r.actors[a].attempt = m.attempt
		r.res.Actors[a].Cause, r.res.Actors[a].Attempt, r.res.Actors[a].Delivery = m.cause, m.attempt, m.delivered
		if m.delivered > int32(r.cfg.MaxDeliveries) {
			// Past the cap the runtime fails the run, loading nothing
			// (core's workflow handler: MAX_DELIVERIES_EXCEEDED).
			ac := &r.actors[a]
			ac.st, ac.pend, ac.inline = stActing, ac.pend[:0], ac.inline[:0]
			ac.writes = append(ac.writes[:0], write{ev: Entry{Event: program.E(program.RunFailed, -1), Saw: -1, Loaded: -1}})
			r.issueAll(a)
			return
		}
		if m.cause == CauseStart {
			// The run's first invocation starts it (run_started).
			r.actors[a].st = stStart
			r.issue(a, write{ev: Entry{Event: program.E(program.RunStarted, -1), Saw: -1, Loaded: -1}})
			return
		}
		r.load(a)
	case msgStep:
		a := r.newActor(ActorStep, mi, -1)
		rec := &r.res.Actors[a]
		rec.Ordinal, rec.Name, rec.Node = m.ordinal, m.name, m.node
		r.actors[a].node = m.node
		if m.delivered > int32(r.cfg.StepMaxRetries+1) && r.budgetSpent(m.ordinal) {
			r.exceeded(a, m.ordinal)
			return
		}
		r.actors[a].st = stClaim
		r.issue(a, write{ev: Entry{Event: program.E(program.StepStarted, m.ordinal), Saw: -1, Loaded: -1}})
	}
}

// load lists the log, once the actor may replay (the sequential-replay
// lock): a workflow invocation that may not waits and tries again.
func (r *runner) load(a int32) {
	if !r.takeLock(a) {
		// The same message waits and comes back: a per-run topic consumed
		// one at a time holds it, so it keeps its id (an inline claim's
		// owner) and this wait is no delivery the runtime counts.
		mi := r.actors[a].msg
		r.finishActor(a)
		m := &r.msgs[mi]
		m.delivered--
		m.cause = CauseLock
		r.k.After(r.cfg.SequentialRetry+r.cfg.Deliver.Draw(r.c), evDeliver, 0, uint64(mi))
		return
	}
	r.actors[a].st = stLoad
	r.callAt(a, callList, r.cfg.List)
}

func (r *runner) takeLock(a int32) bool {
	if !r.cfg.SequentialReplays || r.lock == a {
		return true
	}
	if r.lock >= 0 {
		return false
	}
	r.lock, r.actors[a].locked = a, true
	return true
}

func (r *runner) callAt(a int32, k callKind, d sim.Dist) {
	ac := &r.actors[a]
	ac.call, ac.callAt = k, r.now()
	if k == callWrite {
		ac.writes[ac.wi].endedAtIssue = r.w.ended
	}
	r.k.After(d.Draw(r.c), evLand, uint32(a), 0)
}

// issue issues one write.
func (r *runner) issue(a int32, w write) {
	ac := &r.actors[a]
	ac.writes = append(ac.writes[:0], w)
	ac.wi = 0
	r.callAt(a, callWrite, r.cfg.Write)
}

// issueAll issues the actor's queued writes one after the other, then
// goes on (afterWrites).
func (r *runner) issueAll(a int32) {
	ac := &r.actors[a]
	ac.wi = 0
	if len(ac.writes) == 0 {
		r.afterWrites(a)
		return
	}
	r.callAt(a, callWrite, r.cfg.Write)
}

// land is the actor's call answered: a write takes effect as it lands,
// whether or not its actor is still alive to hear the answer.
func (r *runner) land(a int32) {
	ac := &r.actors[a]
	switch ac.call {
	case callList:
		ac.served = len(r.w.log)
		r.res.Calls = append(r.res.Calls, Call{Actor: a, Kind: CallList, Start: ac.callAt, End: r.now(), Served: int32(ac.served)})
	case callRead:
		r.res.Calls = append(r.res.Calls, Call{Actor: a, Kind: CallRead, Start: ac.callAt, End: r.now(), Served: -1})
	case callWrite:
		w := &ac.writes[ac.wi]
		w.ev.By = a
		// world-local stamps createdAt when the call enters create(), and
		// takes the event's slot when it commits: an event's time is its
		// call's start, so the log's times need not grow in log order.
		w.ev.CreatedMS = int64(ac.callAt / sim.Time(time.Millisecond))
		if w.ev.Saw >= 0 && r.refusesStale(r.decider(a)) {
			// A write a replay decided, from a log the fence or the
			// guard refuses.
			r.res.Writes = append(r.res.Writes, Write{Entry: w.ev, Fenced: true, Issued: ac.callAt})
			r.res.Writes[len(r.res.Writes)-1].At = r.now()
			r.res.FenceRestarts++
			if ac.dead {
				return
			}
			if ac.st == stClaim {
				// An inline step's lazy claim: refused as a claim is, and
				// the invocation restarts once its inline steps are done.
				if d := r.decider(a); d != a {
					r.actors[d].staleClaim = true
				}
				ac.call = callNone
				r.finishActor(a)
				return
			}
			r.restartFenced(a)
			return
		}
		owner := int32(0)
		if w.inline {
			owner = r.invocationMsg(a) + 1
		}
		ok := r.w.apply(r.now(), &w.ev, w.lazy, owner, w.endedAtIssue)
		if ok && w.ev.Type == program.WaitCreated && r.cfg.Resumes.AtDeadlines {
			// The driver aims a tick at the wait's deadline: its resumes
			// land within Spread around it, half before, half after.
			delay := time.Duration(w.ev.ResumeAt)*time.Millisecond - r.cfg.Resumes.Spread/2 - time.Duration(r.now())
			r.k.After(max(0, delay), evTick, 0, 1)
		}
		r.res.Writes = append(r.res.Writes, Write{Entry: w.ev, Accepted: ok, Issued: ac.callAt})
		r.res.Writes[len(r.res.Writes)-1].At = r.now()
		if w.ev.Type == program.RunFailed || w.ev.Type == program.RunCompleted {
			r.res.RunEndAttempts++
			if ok && r.w.ends == 1 && ac.st == stActing && w.ev.Type == program.RunFailed && r.corruptedWrite(a) {
				r.w.corrupted = true
			}
		}
		if ac.dead {
			return
		}
		r.wrote(a, w, ok)
		return
	}
	ac.call = callNone
	if ac.dead {
		return
	}
	switch ac.st {
	case stLoad:
		ac.viewLen, ac.own = int32(ac.served), ac.own[:0]
		r.afterLoad(a)
	case stFanIn:
		// Steps still pending: the last to finish continues the run,
		// unless one of them this delivery's own message claimed inline
		// (an earlier delivery of it ran the step inline as the fan-out's
		// last completer and died mid-body): only that message may run it
		// again before the lease runs out, so it goes on to the replay
		// and its owned recovery (core beta.52, runtime.js: "falling
		// through to recover an inline step owned by this message").
		if pending, owned := r.w.pendingSteps(ac.served, r.invocationMsg(a)+1); pending && !owned {
			r.finishActor(a)
			return
		}
		ac.st = stLazyRead
		r.callAt(a, callRead, r.cfg.Read)
	case stLazyRead:
		if r.w.ended {
			r.finishActor(a)
			return
		}
		if r.cfg.SequentialReplays && !r.takeLock(a) {
			// Another invocation replays: hand the continuation to the
			// queue, whose invocation waits for the lock.
			r.finishActor(a)
			r.publish(message{kind: msgWorkflow, cause: CauseHandOff}, 0)
			return
		}
		ac.viewLen, ac.own = int32(ac.served), ac.own[:0]
		r.afterLoad(a)
	}
}

// refusesStale says the World's fence or count guard, when it has one,
// refuses a write decided by actor a's replay.
func (r *runner) refusesStale(a int32) bool {
	switch r.cfg.View {
	case ViewTailFence:
		return !r.atTail(a)
	case ViewCountGuard:
		return r.holeBelowWatermark(a)
	}
	return false
}

// holeBelowWatermark is the count guard's test of actor a's snapshot, the
// log it loaded: the World holds more events stamped at or before the
// latest stamp it loaded (the watermark) than it loaded, so one of them
// committed after the read. Stamps are the calls' starts (world-local's
// createdAt), commits their landings, so a slow write stamped early can
// land behind a read that saw a later-stamped one. The actor's own writes
// came after its read, and are stamped after the watermark; a log that is
// complete but old passes (vercel/workflow #3177: "a complete-but-stale
// prefix passes by construction").
func (r *runner) holeBelowWatermark(a int32) bool {
	ac := &r.actors[a]
	if ac.viewLen == 0 {
		return false
	}
	watermark := int64(-1)
	for p := range int(ac.viewLen) {
		watermark = max(watermark, r.w.log[p].CreatedMS)
	}
	for p := int(ac.viewLen); p < len(r.w.log); p++ {
		if r.w.log[p].CreatedMS <= watermark && !slices.Contains(ac.own, int32(p)) {
			return true
		}
	}
	return false
}

// atTail says the fence takes actor a's write: nothing but its own writes
// and its inline steps' landed since the log it loaded.
func (r *runner) atTail(a int32) bool {
	for p := int(r.actors[a].viewLen); p < len(r.w.log); p++ {
		if by := r.w.log[p].By; by != a && (by < 0 || r.res.Actors[by].Parent != a) {
			return false
		}
	}
	return true
}

// decider is the actor whose replay decided actor a's writes: an inline
// step's invocation, else a itself.
func (r *runner) decider(a int32) int32 {
	if rec := &r.res.Actors[a]; rec.Kind == ActorInline && rec.Parent >= 0 {
		return rec.Parent
	}
	return a
}

// restartFenced is the runtime's answer to a fenced write: the replay
// restarts in-process, from a fresh list of the log; what the refused
// replay planned (its other writes, its inline steps) goes with it. Past
// StaleRestarts restarts in one delivery it re-invokes the run instead
// (reinvokeStale).
func (r *runner) restartFenced(a int32) {
	ac := &r.actors[a]
	ac.call = callNone
	ac.writes, ac.inline = ac.writes[:0], ac.inline[:0]
	r.dropOutbox(a)
	if ac.restarts >= int32(r.cfg.StaleRestarts) {
		r.reinvokeStale(a)
		return
	}
	ac.restarts++
	ac.st = stLoad
	r.callAt(a, callList, r.cfg.List)
}

// reinvokeStale is core's reinvokeAfterStaleRejection: the invocation
// ends and its run is invoked again StaleReinvokeDelay later for a fresh
// replay; past StaleReinvocations re-invocations the run fails ("this run
// cannot observe its own event log completely enough to make progress", a
// runtime error core writes as run_failed).
func (r *runner) reinvokeStale(a int32) {
	ac := &r.actors[a]
	reinvoked := r.msgs[ac.msg].reinvoked
	if reinvoked >= int32(r.cfg.StaleReinvocations) {
		r.res.StaleFailures++
		ac.st, ac.pend = stActing, ac.pend[:0]
		ac.writes = append(ac.writes[:0], write{ev: Entry{Event: program.E(program.RunFailed, -1), Saw: -1, Loaded: -1}})
		r.issueAll(a)
		return
	}
	r.res.StaleReinvocations++
	r.releaseLock(a)
	r.finishActor(a)
	r.publish(message{kind: msgWorkflow, cause: CauseStale, reinvoked: reinvoked + 1}, r.cfg.StaleReinvokeDelay)
}

// corruptedWrite reports whether actor a's run_failed is the one its
// exhausted recovery wrote.
func (r *runner) corruptedWrite(a int32) bool {
	rs := r.res.Actors[a].Replays
	return len(rs) > 0 && rs[len(rs)-1].Outcome == program.Diverged
}

func (r *runner) scratchFor() []uint8 {
	if n := max(len(r.w.steps), len(r.w.waits)); len(r.scratch) < n {
		r.scratch = make([]uint8, n)
	}
	return r.scratch
}

// wrote is a write's answer reaching a live actor.
func (r *runner) wrote(a int32, w *write, ok bool) {
	ac := &r.actors[a]
	ac.call = callNone
	if ok {
		switch r.cfg.View {
		case ViewPrefix:
			// The answer brings the events others wrote below it.
			ac.viewLen = int32(len(r.w.log))
		case ViewOwnWrites, ViewTailFence, ViewCountGuard:
			for p := len(r.w.log) - 1; p >= 0 && r.w.log[p].By == a; p-- {
				if !slices.Contains(ac.own, int32(p)) {
					ac.own = append(ac.own, int32(p))
				}
			}
			slices.Sort(ac.own)
		}
		if w.publish {
			r.w.entity(w.ev.Ordinal).queued = true
			ac.outbox = append(ac.outbox, message{kind: msgStep, ordinal: w.ev.Ordinal, node: w.node, name: w.ev.Name})
		}
	} else if r.w.ended && (ac.st == stWaits || ac.st == stActing) {
		// Refused because the run has ended: the World answers
		// run_expired, which core throws out of the invocation (only an
		// entity conflict is skipped), so it writes nothing more.
		r.finishActor(a)
		return
	} else if r.cfg.View == ViewPrefix && (ac.st == stWaits || ac.st == stActing) {
		// A refused create or completion answers with the log that
		// refused it (core reloads on a conflict).
		ac.viewLen = int32(len(r.w.log))
	}
	switch ac.st {
	case stStart:
		r.load(a)
		return
	case stResume:
		// resumeHook publishes the wake only once its hook_received is
		// in (a refused one throws to its caller).
		if ok {
			r.publish(message{kind: msgWorkflow, cause: CauseResume}, 0)
		}
		r.finishActor(a)
		return
	case stClaim:
		if !ok {
			if r.res.Actors[a].Kind == ActorStep && !r.w.ended && r.w.entity(r.res.Actors[a].Ordinal).finished {
				// A queued step found finished (its message came back
				// after the delivery that ran it died): core goes on to
				// the fan-in as after its own result (model/consumer.go,
				// an EntityConflict claim), so its inline continuation
				// is not lost with the dead delivery.
				ac.st = stFanIn
				r.callAt(a, callList, r.cfg.List)
				return
			}
			r.finishActor(a)
			return
		}
		if r.cfg.Crash > 0 && sim.Chance(r.c, r.cfg.Crash) {
			// The process dies between the claim and the body: a queued
			// step's delivery, or the invocation running it inline.
			r.res.Crashes++
			victim := a
			if p := r.res.Actors[a].Parent; p >= 0 {
				victim = p
			}
			r.kill(victim)
			return
		}
		r.startBody(a)
		return
	case stResult:
		if r.res.Actors[a].Kind == ActorInline || !ok && r.w.ended {
			r.inlineDone(a)
			return
		}
		// A queued step's result, or its refusal because the step had
		// finished already (core: skipped), goes on to the fan-in;
		// only a run that has ended stops it (run_expired: gone).
		ac.st = stFanIn
		r.callAt(a, callList, r.cfg.List)
		return
	}
	ac.wi++
	if ac.wi < len(ac.writes) {
		r.callAt(a, callWrite, r.cfg.Write)
		return
	}
	r.afterWrites(a)
}

// dropOutbox forgets the step messages actor a held for its accepted
// creates: it dies, or its replay restarts, before its dispatch pass
// publishes them. Their steps are created and unqueued, so the next
// replay that reaches them queues them (leftToItsOwner, core's "a later
// handler queues it").
func (r *runner) dropOutbox(a int32) {
	ac := &r.actors[a]
	for _, m := range ac.outbox {
		r.w.entity(m.ordinal).queued = false
	}
	ac.outbox = ac.outbox[:0]
}

func (r *runner) afterWrites(a int32) {
	ac := &r.actors[a]
	ac.writes = ac.writes[:0]
	for _, m := range ac.outbox {
		r.publish(m, 0)
	}
	ac.outbox = ac.outbox[:0]
	switch ac.st {
	case stWaits:
		r.startReplay(a)
	case stActing:
		r.acted(a)
	}
}

// buildView is the log actor a goes on with.
func (r *runner) buildView(a int32) []program.Event {
	ac := &r.actors[a]
	if len(ac.own) == 0 || ac.own[len(ac.own)-1] < ac.viewLen {
		return r.w.events[:ac.viewLen] // a prefix: read in place
	}
	r.view = append(r.view[:0], r.w.events[:ac.viewLen]...)
	for _, p := range ac.own {
		if p >= ac.viewLen {
			r.view = append(r.view, r.w.events[p])
		}
	}
	return r.view
}

// afterLoad goes on from a loaded log: stop at the run's end, else
// complete the waits that are due and replay.
func (r *runner) afterLoad(a int32) {
	ac := &r.actors[a]
	view := r.buildView(a)
	// One pass over the log: the run's end, the waits completed, and each
	// wait created (in log order) with its resume time (+1: 0 is none).
	done := r.scratchFor()
	clear(done)
	if n := len(done); len(r.resumes) < n {
		r.resumes = make([]int64, n)
	}
	resumes := r.resumes[:len(done)]
	clear(resumes)
	r.waitsDue = r.waitsDue[:0]
	for _, e := range view {
		switch e.Type {
		case program.RunCompleted, program.RunFailed, program.RunCancelled:
			r.finishActor(a)
			return
		case program.WaitCompleted:
			if int(e.Ordinal) < len(done) {
				done[e.Ordinal] = 1
			}
		case program.WaitCreated:
			if resumes[e.Ordinal] == 0 {
				resumes[e.Ordinal] = e.ResumeAt + 1
				r.waitsDue = append(r.waitsDue, e.Ordinal)
			}
		}
	}
	// Of those, the waits not completed whose time has come: their
	// completions are written before the replay.
	now := int64(r.now() / sim.Time(time.Millisecond))
	due := r.waitsDue[:0]
	for _, o := range r.waitsDue {
		if resumes[o]-1 <= now && done[o] == 0 {
			due = append(due, o)
		}
	}
	r.waitsDue = due
	ac.writes = ac.writes[:0]
	for _, o := range r.waitsDue {
		ev := program.E(program.WaitCompleted, o)
		ev.ResumeAt = resumes[o] - 1
		ac.writes = append(ac.writes, write{ev: Entry{Event: ev, Saw: int32(len(view)), Loaded: ac.viewLen}})
	}
	ac.st = stWaits
	r.issueAll(a)
}

func (r *runner) startReplay(a int32) {
	ac := &r.actors[a]
	view := r.buildView(a)
	ac.st, ac.replay, ac.replayAt = stReplaying, true, r.now()
	r.replaying++
	r.res.MaxConcurrentReplays = max(r.res.MaxConcurrentReplays, r.replaying)
	entities := int32(0) // positional ordinals are minted in order from 0
	for i := range view {
		if view[i].Kind == program.EntityNone {
			continue
		}
		if r.cfg.CallSiteIDs {
			// Call-site ids have holes: count the entities created.
			if t := view[i].Type; t == program.StepCreated || t == program.WaitCreated || t == program.HookCreated {
				entities++
			}
			continue
		}
		entities = max(entities, view[i].Ordinal+1)
	}
	r.k.After(r.cfg.Replay.Of(int(entities), len(view)), evReplay, uint32(a), 0)
}

// memoOutcome is a replay's outcome kept for its prefix's length; its
// Pending are memoPend[off:off+n].
type memoOutcome struct {
	ok     bool
	o      program.Outcome
	off, n int32
}

// replayPrefix is the outcome of replaying the log's first n events,
// replayed once per run and length. Its Pending are valid until the next
// replay.
func (r *runner) replayPrefix(n int) program.Outcome {
	if n < len(r.memo) && r.memo[n].ok {
		m := &r.memo[n]
		o := m.o
		o.Pending = r.memoPend[m.off : m.off+m.n]
		return o
	}
	o := r.rep.Replay(r.cfg.Program, r.w.events[:n])
	for len(r.memo) <= n {
		r.memo = append(r.memo, memoOutcome{})
	}
	m := memoOutcome{ok: true, o: o, off: int32(len(r.memoPend)), n: int32(len(o.Pending))}
	m.o.Pending = nil
	r.memo[n] = m
	r.memoPend = append(r.memoPend, o.Pending...)
	return o
}

// replayed is a's replay done: act on its outcome.
func (r *runner) replayed(a int32) {
	ac := &r.actors[a]
	if ac.dead {
		return
	}
	ac.replay = false
	r.replaying--
	view := r.buildView(a)
	var o program.Outcome
	resumed := ac.retained && len(ac.clocks) > 0
	if resumed {
		// Its parked VM goes on: the clock reads it made stand. A
		// resumed replay that diverges falls back to a fresh one.
		r.rep.Retained = ac.clocks
		o = r.rep.Replay(r.cfg.Program, view)
		r.rep.Retained = nil
	}
	if !resumed || o.Status == program.Diverged {
		if len(view) == int(ac.viewLen) && !r.rep.Explain {
			o = r.replayPrefix(len(view)) // the log as it was: a prefix
		} else {
			o = r.rep.Replay(r.cfg.Program, view)
		}
	}
	if r.rep.Explain {
		ac.clocks = append(ac.clocks[:0], r.rep.Clocks...)
	}
	ac.retained = false
	rec := &r.res.Actors[a]
	rec.Replays = append(rec.Replays, Replay{Start: ac.replayAt, At: r.now(), Saw: int32(len(view)), Outcome: o.Status, Div: o.Divergence, DivAt: int32(o.At), Minted: o.Minted})
	saw := int32(len(view))
	ac.saw, ac.loaded = saw, ac.viewLen
	ac.writes, ac.inline = ac.writes[:0], ac.inline[:0]
	ac.st = stActing
	end := func(t program.EventType) {
		ac.writes = append(ac.writes, write{ev: Entry{Event: program.E(t, -1), Saw: saw, Loaded: ac.viewLen}})
	}
	switch o.Status {
	case program.Diverged:
		r.res.Divergences++
		if ac.attempt < int32(r.cfg.RecoveryReplays) {
			r.releaseLock(a)
			r.finishActor(a)
			r.publish(message{kind: msgWorkflow, attempt: ac.attempt + 1, cause: CauseRecovery}, 0)
			return
		}
		end(program.RunFailed)
	case program.Completed:
		end(program.RunCompleted)
	case program.Failed:
		end(program.RunFailed)
	case program.Suspended:
		ac.pend = append(ac.pend[:0], o.Pending...)
		// Core keeps the VM of a suspension with steps for the
		// invocation's next pass (runtime.js getRetentionDecision); the
		// invocation has one only when it runs steps inline.
		ac.retained = r.cfg.RetainedVM
		nowMS := int64(r.now() / sim.Time(time.Millisecond))
		// Hooks first (suspension-handler.js: "to prevent race conditions
		// with webhook receivers"): the creates the log lacks, then the
		// disposals the program made.
		for _, p := range ac.pend {
			if p.Kind != program.EntityHook {
				continue
			}
			if !p.Created {
				ev := program.E(program.HookCreated, p.Ordinal)
				ev.Token = p.Token
				ac.writes = append(ac.writes, write{ev: Entry{Event: ev, Saw: saw, Loaded: ac.viewLen}})
			}
			if p.Dispose {
				ac.writes = append(ac.writes, write{ev: Entry{Event: program.E(program.HookDisposed, p.Ordinal), Saw: saw, Loaded: ac.viewLen}})
			}
		}
		for i, p := range ac.pend {
			if p.Kind == program.EntityHook {
				continue
			}
			if p.Created {
				if p.Kind == program.EntityStep {
					r.leftToItsOwner(a, i, p)
				}
				continue
			}
			switch p.Kind {
			case program.EntityStep:
				if len(ac.inline) < r.cfg.MaxInline {
					ac.inline = append(ac.inline, int32(i))
					continue
				}
				ev := program.E(program.StepCreated, p.Ordinal).Named(p.Name)
				ac.writes = append(ac.writes, write{ev: Entry{Event: ev, Saw: saw, Loaded: ac.viewLen}, publish: true, node: p.Node})
			case program.EntityWait:
				ev := program.E(program.WaitCreated, p.Ordinal)
				ev.ResumeAt = nowMS + r.cfg.Program.Sleep(p.Node).Milliseconds()
				ac.writes = append(ac.writes, write{ev: Entry{Event: ev, Saw: saw, Loaded: ac.viewLen}})
			}
		}
	}
	r.issueAll(a)
}

// acted is what a replay asked for written: queue the soonest wait's
// invocation, run the inline steps, or finish.
func (r *runner) acted(a int32) {
	ac := &r.actors[a]
	if r.w.ended {
		r.releaseLock(a)
		r.finishActor(a)
		return
	}
	// The soonest wait the run awaits (created, in the World, not done).
	soonest := int64(-1)
	for _, p := range ac.pend {
		if p.Kind != program.EntityWait {
			continue
		}
		if e := r.w.wait(p.Ordinal); e.kind == program.EntityWait && !e.finished && (soonest < 0 || e.resumeAt < soonest) {
			soonest = e.resumeAt
		}
	}
	if soonest >= 0 && !slices.Contains(r.wakes, soonest) {
		r.wakes = append(r.wakes, soonest)
		delay := time.Duration(soonest)*time.Millisecond - time.Duration(r.now())
		r.publish(message{kind: msgWorkflow, wake: soonest, cause: CauseWake}, max(0, delay))
	}
	if len(ac.inline) == 0 {
		r.releaseLock(a)
		r.finishActor(a)
		return
	}
	ac.st = stInline
	ac.inlineN = int32(len(ac.inline))
	for j := range ac.inline {
		// newActor grows the actors: read the invocation afresh.
		ac := &r.actors[a]
		i, again := ac.inline[j], false
		if i < 0 {
			i, again = -i-1, true
		}
		p := ac.pend[i]
		c := r.newActor(ActorInline, -1, a)
		rec := &r.res.Actors[c]
		rec.Ordinal, rec.Name, rec.Node = p.Ordinal, p.Name, p.Node
		r.actors[c].node = p.Node
		r.actors[c].st = stClaim
		// The claim creates the step its invocation's replay named.
		saw, loaded := r.actors[a].saw, r.actors[a].loaded
		if again {
			// Its own step again (owned recovery): a plain claim, unless
			// its earlier attempts spent the retry budget.
			if r.budgetSpent(p.Ordinal) {
				r.exceeded(c, p.Ordinal)
				continue
			}
			r.issue(c, write{ev: Entry{Event: program.E(program.StepStarted, p.Ordinal), Saw: -1, Loaded: -1}, inline: true})
			continue
		}
		r.issue(c, write{ev: Entry{Event: program.E(program.StepStarted, p.Ordinal).Named(p.Name), Saw: saw, Loaded: loaded}, lazy: true, inline: true})
	}
}

// budgetSpent reports whether step ord's next attempt would pass its retry
// budget: StepMaxRetries+1 attempts started already.
func (r *runner) budgetSpent(ord int32) bool {
	return r.w.entity(ord).started >= int32(r.cfg.StepMaxRetries+1)
}

// exceeded is actor a's step past its retry budget with no error to show
// (its attempts were killed or crashed): core writes step_failed ("exceeded
// max retries") instead of starting another, and goes on as after a
// failed body (a queued step to the fan-in).
func (r *runner) exceeded(a, ord int32) {
	r.actors[a].st = stResult
	r.issue(a, write{ev: Entry{Event: program.E(program.StepFailed, ord), Saw: -1, Loaded: -1}})
}

func (r *runner) startBody(a int32) {
	ac := &r.actors[a]
	ac.st = stBody
	rec := &r.res.Actors[a]
	rec.Body, rec.BodyStart = true, r.now()
	body := r.cfg.Program.Body(ac.node, r.cfg.Body).Draw(r.c)
	ac.result = 1
	if n := r.cfg.Program.Results(ac.node); n > 0 {
		ac.result = int64(r.c.Choose(n))
	}
	rec.Result = ac.result
	if int(r.w.entity(r.res.Actors[a].Ordinal).started) <= r.cfg.Program.Hangs(ac.node) {
		// This attempt hangs (hangs: N, its first N attempts): only a
		// time limit ends it, killing its invocation.
		return
	}
	r.k.After(body, evBody, uint32(a), 0)
}

func (r *runner) bodyDone(a int32) {
	ac := &r.actors[a]
	if ac.dead {
		return
	}
	r.res.Actors[a].BodyEnd = r.now()
	ac.st = stResult
	ev := program.E(program.StepCompleted, r.res.Actors[a].Ordinal)
	ev.Result = ac.result
	r.issue(a, write{ev: Entry{Event: ev, Saw: -1, Loaded: -1}})
}

// inlineDone is an inline step finished (or its claim or result refused):
// the last of an invocation's inline steps loads the log again.
func (r *runner) inlineDone(a int32) {
	parent := r.res.Actors[a].Parent
	r.finishActor(a)
	if parent < 0 {
		return
	}
	pa := &r.actors[parent]
	if pa.dead {
		return
	}
	if pa.inlineN--; pa.inlineN == 0 {
		if pa.staleClaim {
			// A claim of its was refused as stale: a restart, as core's
			// 'inline-claim' restart.
			pa.staleClaim = false
			r.restartFenced(parent)
			return
		}
		pa.st = stLoad
		r.callAt(parent, callList, r.cfg.List)
	}
}

func (r *runner) releaseLock(a int32) {
	if ac := &r.actors[a]; ac.locked {
		ac.locked, r.lock = false, -1
	}
}

func (r *runner) finishActor(a int32) {
	ac := &r.actors[a]
	if ac.st == stClaim && r.res.Actors[a].Kind == ActorInline {
		// A refused inline claim: the step is another's.
		ac.st = stDone
		r.inlineDone(a)
		return
	}
	r.releaseLock(a)
	ac.st = stDone
	r.res.Actors[a].End = r.now()
}

// kill is an invocation's time limit: it writes nothing more, its inline
// steps die with it, and its message comes back.
func (r *runner) kill(a int32) {
	ac := &r.actors[a]
	if ac.st == stDone || ac.dead {
		return
	}
	r.res.Actors[a].Killed = true
	r.die(a)
	// Not acked: the queue delivers the same message again. A workflow
	// message comes back past the cap too: that delivery fails the run
	// (deliver); a step's is dropped at the cap.
	m := &r.msgs[ac.msg]
	if m.kind == msgStep && m.delivered >= int32(r.cfg.MaxDeliveries) {
		return
	}
	if m.kind == msgWorkflow {
		m.cause = CauseRedelivery
	}
	r.k.After(r.cfg.Redeliver+r.cfg.Deliver.Draw(r.c), evDeliver, 0, uint64(ac.msg))
}

func (r *runner) die(a int32) {
	ac := &r.actors[a]
	ac.dead = true
	r.dropOutbox(a)
	r.res.Actors[a].End = r.now()
	if ac.replay {
		ac.replay = false
		r.replaying--
	}
	r.releaseLock(a)
	for c := range r.res.Actors {
		if r.res.Actors[c].Parent == a && !r.actors[c].dead && r.actors[c].st != stDone {
			r.res.Actors[c].Killed = true
			r.die(int32(c))
		}
	}
}

func (r *runner) finish(stats sim.Stats) {
	res := r.res
	res.Log = r.w.log
	res.Stats = stats
	for i := range res.Actors {
		if a := &res.Actors[i]; a.End == 0 {
			// Still at work when nothing was left to happen (a body that
			// hangs with no time limit) or at the time bound.
			a.End, a.Unfinished = stats.Now, true
		}
	}
	res.RunEnds = r.w.ends
	switch {
	case !r.w.ended:
		res.End = Stuck
	case r.w.end == program.RunCompleted:
		res.End = Completed
	case r.w.corrupted:
		res.End = Corrupted
	default:
		res.End = Failed
	}
	for i := range r.w.steps {
		if e := &r.w.steps[i]; e.started > 1 {
			res.DuplicateStarts++
			if !e.finished {
				res.HungSteps++
			}
		}
	}
	for i := range res.Actors {
		if res.Actors[i].Killed && res.Actors[i].Kind != ActorInline {
			res.Killed++ // (an inline step dies with its invocation)
		}
	}
	res.Fresh = r.rep.Replay(r.cfg.Program, program.BeforeEnd(r.w.events))
	res.Fresh.Pending = slices.Clone(res.Fresh.Pending)
}

// invocationMsg is the queue message of the invocation actor a runs in
// (an inline step's, its invocation's).
func (r *runner) invocationMsg(a int32) int32 {
	if p := r.res.Actors[a].Parent; p >= 0 {
		return r.actors[p].msg
	}
	return r.actors[a].msg
}

// leftToItsOwner is what a suspension does with pending step p (the i-th
// the replay awaits), created and not finished in its log: a queued step's
// message is out already; one whose creator died before publishing it is
// queued now; a step claimed inline by this invocation's own
// message (it was killed and is redelivered) runs again inline; one another
// invocation owns is left to it until the lease from its latest claim runs
// out (a backstop invocation decides again then), and past the lease its
// message goes out. The owner and the claim's time are the World's
// (core reads them from the log's step_started: the same but for a claim
// the log the replay loaded does not show yet).
func (r *runner) leftToItsOwner(a int32, i int, p program.Pending) {
	ac := &r.actors[a]
	e := r.w.entity(p.Ordinal)
	if e.finished || e.queued {
		return
	}
	if e.owner == 0 {
		// Created, never claimed, and its message never went out: the
		// invocation that created it died before publishing. Core queues
		// it now (runtime.js: "if a prior handler wrote step_created but
		// crashed before queueing, a later handler queues it").
		e.queued = true
		r.publish(message{kind: msgStep, ordinal: p.Ordinal, node: p.Node, name: p.Name}, 0)
		return
	}
	if e.owner == r.invocationMsg(a)+1 {
		if len(ac.inline) < r.cfg.MaxInline {
			ac.inline = append(ac.inline, int32(-i-1))
		}
		return
	}
	left := time.Duration(e.lastStart) + r.cfg.InlineLease - time.Duration(r.now())
	if left > 0 {
		key := int64(e.lastStart) // the step's ownership epoch
		if !slices.Contains(r.backstops, key) {
			r.backstops = append(r.backstops, key)
			r.publish(message{kind: msgWorkflow, cause: CauseBackstop}, left)
		}
		return
	}
	e.queued = true
	r.publish(message{kind: msgStep, ordinal: p.Ordinal, node: p.Node, name: p.Name}, 0)
}

// tick is the outside driver's tick: every hook the World holds live now
// gets Burst resumes, each after a delay drawn from [0, Spread]. A cadence
// tick schedules the next until Count; a deadline tick does not count.
func (r *runner) tick(deadline bool) {
	d := r.cfg.Resumes
	if !deadline {
		if r.ticks++; r.ticks < d.Count {
			r.k.After(d.Every, evTick, 0, 0)
		}
	}
	if r.w.ended {
		return
	}
	burst := max(1, d.Burst)
	r.live = r.w.liveHooks(r.live[:0])
	if d.One && len(r.live) > 0 {
		pick := r.live[r.c.Choose(len(r.live))]
		r.live = append(r.live[:0], pick)
	}
	for _, k := range r.live {
		for range burst {
			a := r.newActor(ActorResume, -1, -1)
			r.res.Actors[a].Ordinal = int32(k)
			var spread time.Duration
			if d.Spread > 0 {
				spread = time.Duration(r.c.Choose(int(d.Spread/time.Microsecond)+1)) * time.Microsecond
			}
			ac := &r.actors[a]
			ac.st, ac.call, ac.callAt = stLookup, callRead, r.now()+sim.Time(spread)
			r.k.After(spread+r.cfg.Read.Draw(r.c), evLookup, uint32(a), 0)
		}
	}
}

// lookedUp is an outside resume's hooks.getByToken answered: a hook the
// World no longer holds live (disposed, or the run ended and its hooks
// with it) is not found and the resume throws to its caller; else it
// writes hook_received.
func (r *runner) lookedUp(a int32) {
	ac := &r.actors[a]
	ac.call = callNone
	ord := r.res.Actors[a].Ordinal
	r.res.Calls = append(r.res.Calls, Call{Actor: a, Kind: CallHook, Start: ac.callAt, End: r.now(), Served: -1})
	if r.w.ended || !r.w.hooks.Live(ord) {
		r.finishActor(a)
		return
	}
	ac.st = stResume
	r.issue(a, write{ev: Entry{Event: program.E(program.HookReceived, ord), Saw: -1, Loaded: -1}})
}
