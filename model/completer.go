package model

import (
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// This file is the fan-in of DOMAIN.md §6: after its terminal write a
// consumer lists the log to learn whether the fan-out is finished (or, with
// the atomic-fan-in variant, the World tells it in the write's answer); the
// one that sees it finished is a last completer: a fetch-free (v2) consumer
// makes the fan-out's one lazy runs.get, and any last completer still
// holding a running run continues the workflow (the orchestrator's replay).
// The per-fan-out state lives here: what the World's log shows of each
// fan-out and how many completers saw it finished.

// fanRT is one fan-out's runtime state.
type fanRT struct {
	created  int32 // step_created accepted
	finished int32 // step_completed or step_failed accepted
	// pending counts the steps whose step_created is logged and whose end
	// is not: what events.list shows as pending. On a World whose calls
	// are not atomic a step can end before its step_created is in the log
	// (world-postgres: the step row is there before the event); such a
	// step was never pending. lastCompleter.logged marks, per branch, what
	// is logged: this fan-out's marks are its Branches bytes there from
	// marksAt-1 (0 until its first mark).
	pending  int32
	marksAt  int32
	failed   int32
	lastSeen int32 // how many completers saw an empty pending set
	lazy     int32
	prologue int32
	holder   int32 // atomic-fan-in: the delivery the World told it was last
	// lastMark is when the fan-out's latest mark was logged: a log loaded
	// at or after it shows the fan-out as the counts above do (logView).
	lastMark sim.Time
}

// lastCompleter is the fan-in: every fan-out's state and the last
// completer's steps.
type lastCompleter struct {
	*engine
	fans []fanRT // by History.Fanouts index
	// logged is every fan-out's branches, one after the other, each
	// loggedCreated | loggedFinished: one pointer-free table rather than a
	// slice in each fanRT, which would make the garbage collector scan the
	// whole fans table (and allocate once per fan-out) in a run of many
	// fan-outs (docs/PERFORMANCE.md, point 4, third pass).
	logged []uint8
	// createdAt is, beside logged, when each branch's step_created was
	// logged: a replay's inline claim is lazy when the log it loaded did not
	// hold it yet (stepView).
	createdAt []sim.Time
	// finishedAt is, beside logged, when each branch's step_completed or
	// step_failed was logged (logView).
	finishedAt []sim.Time
	// owner is 1 + the queue message whose invocation's lazy claim created
	// each branch (core's inline ownership), 0 for none.
	owner []int32
	// settled is, per run, how many of its first fan-outs are finished
	// without a failure: what every replay passes over (orchestrator.replay
	// starts after them, so that a run of n sequential fan-outs replays in
	// O(n) in all, not O(n²)). A fan-out's finished count only grows, so only
	// a failure accepted later (written) can unsettle one.
	settled []int32
}

// checkPending lists the log to learn whether the fan-out is finished.
func (lc *lastCompleter) checkPending(p int32) {
	d := &lc.h.Deliveries[p]
	if lc.vs.atomicFanIn {
		// The atomic World answered with the write (or the refused claim).
		if c := &lc.calls[lc.procs[p].lastCall]; c.WasLast {
			lc.become(p)
			return
		}
		lc.done(p, DispAck, 0)
		return
	}
	if pr := &lc.procs[p]; d.Msg < 0 && pr.parent >= 0 && lc.procs[pr.parent].outstanding-lc.batchWorkOf(pr.parent) > 1 {
		// An inline step whose invocation still runs others of its inline
		// steps: core's orchestrator awaits all of them and lists the log
		// once after (runtime.js, "Load events to check if all parallel
		// steps are done"), so only the last to finish lists.
		lc.done(p, DispAck, 0)
		return
	}
	if d.Msg < 0 && lc.orch.parkFanIn(p) {
		return // (orchestrator.batchWorkDone goes on with fanIn)
	}
	lc.fanIn(p)
}

// fanIn loads the log (listing it, or from an inline delta) to learn
// whether the fan-out is finished.
func (lc *lastCompleter) fanIn(p int32) {
	d := &lc.h.Deliveries[p]
	if lc.inlineDelta(p) {
		// The write's answer carried the log's delta since the
		// invocation's cursor (what it appended, and anything else logged
		// since): the invocation goes on with that, as if it had listed
		// the log when the write landed.
		c := &lc.calls[lc.procs[p].lastCall]
		c.LogTerminal = lc.store.LogEnded(d.Run)
		c.PendingEmpty = lc.pendingEmpty(d.Fanout)
		lc.afterLoad(p, c.PendingEmpty)
		return
	}
	lc.procs[p].state = psListed
	lc.call(p, OpEventsList, 0, world.NoStep, d.Fanout)
}

// batchWorkOf is what of p's outstanding work is its batched suspension's
// creates and publishes, not its inline steps.
func (lc *lastCompleter) batchWorkOf(p int32) int32 {
	if lc.procs[p].state != psBatching {
		return 0
	}
	return lc.procs[p].batchWork
}

// inlineDelta reports whether inline step p's accepted step_completed
// answered with the log's delta, so that its invocation lists nothing after
// it (core's inline-delta path, runtime.js requestInlineDelta: a suspension
// of one step, claimed lazily and run inline, from a log with a cursor,
// which turbo's empty preload has not; the write passes sinceCursor and the
// loop goes on with the delta it answers with).
func (lc *lastCompleter) inlineDelta(p int32) bool {
	d := &lc.h.Deliveries[p]
	pr := &lc.procs[p]
	if d.Msg >= 0 || pr.parent < 0 || lc.vs.atomicFanIn || lc.h.Fanouts[d.Fanout].Branches != 1 {
		return false
	}
	c := &lc.calls[pr.lastCall]
	at := lc.procs[pr.parent].loadAt
	created, _ := lc.stepView(d.Fanout, d.Step, at)
	return c.Op == OpEventsCreate && c.Event == world.EvStepCompleted && c.Result == world.OK && at >= 0 && !created
}

// logAt is when the log p goes on with was read: its list's, as the store
// served it, or, after an inline delta, its write's landing (now).
func (lc *lastCompleter) logAt(p int32) sim.Time {
	if c := &lc.calls[lc.procs[p].lastCall]; c.Op == OpEventsList {
		return c.Served
	}
	return lc.k.Now()
}

// listed is the log listed: an empty pending set makes p a last completer.
func (lc *lastCompleter) listed(p int32) {
	lc.afterLoad(p, lc.calls[lc.procs[p].lastCall].PendingEmpty)
}

// afterLoad goes on from the log p loaded (listed, or an inline delta):
// pendingEmpty makes p a last completer.
func (lc *lastCompleter) afterLoad(p int32, pendingEmpty bool) {
	if !pendingEmpty {
		if d := &lc.h.Deliveries[p]; d.Msg < 0 && !lc.vs.atomicFanIn && !lc.calls[lc.procs[p].lastCall].LogTerminal {
			// The invocation's last inline step: core goes on with the
			// log it listed and replays (unless the log holds the run's
			// end), and its dispatch pass skips the steps this invocation
			// published but arms a backstop for an inline step another
			// message owns (orchestrator.backstops).
			lc.procs[p].loadAt = lc.logAt(p)
			if lc.orch.backstops(p, d.Fanout) > 0 {
				lc.procs[p].state = psAfterPublish
				return
			}
		}
		lc.done(p, DispAck, 0)
		return
	}
	lc.become(p)
}

// become makes delivery p a last completer: it saw the fan-out finished.
// The fetch-free path makes the fan-out's one lazy runs.get; an actor that
// already holds the run (the orchestrator's inline step, or a legacy
// consumer) continues with it.
func (lc *lastCompleter) become(p int32) {
	d := &lc.h.Deliveries[p]
	pr := &lc.procs[p]
	d.LastComplete = true
	f := &lc.fans[d.Fanout]
	f.lastSeen++
	if d.Msg >= 0 && d.Prologue == PrologueRunContext {
		f.lazy++
		lc.counts.LazyFetches++
		pr.state = psLazyRead
		lc.read(p, ReasonLastCompleter, d.Fanout)
		return
	}
	if pr.hasHeld && (pr.held.Terminal() || (lc.vs.strictGate && pr.held != world.RunRunning)) {
		if pr.held.Terminal() {
			lc.counts.EndSeen++
		}
		lc.done(p, DispAck, 0)
		return
	}
	lc.continueFanout(p)
}

// lazyRead is the last completer's lazy runs.get answered: continue the
// workflow only with a run that has not ended.
func (lc *lastCompleter) lazyRead(p int32) {
	pr := &lc.procs[p]
	if lc.readThrew(p) {
		return
	}
	c := &lc.calls[pr.getCall]
	st := c.StatusRead
	if st.Terminal() || (lc.vs.strictGate && st != world.RunRunning) {
		if st.Terminal() {
			lc.counts.EndSeen++
		}
		lc.done(p, DispAck, 0)
		return
	}
	pr.held, pr.hasHeld = st, true
	lc.continueFanout(p)
}

// continueFanout replays the workflow inline after a finished fan-out.
func (lc *lastCompleter) continueFanout(p int32) {
	d := &lc.h.Deliveries[p]
	fo := &lc.h.Fanouts[d.Fanout]
	if !fo.Continued {
		fo.Continued = true
		fo.ContinuedBy = lc.callerOf(p).Kind
	}
	d.Continued = true
	lc.procs[p].state = psReplayListed
	if d.Msg < 0 && !lc.vs.atomicFanIn {
		// The orchestrator's inline path replays from the list it just
		// made: core loads the log once after its inline steps and goes
		// on with that load (nextEventLogLoad), no second list.
		lc.procs[p].loadAt = lc.logAt(p) // (the list's log, as it was served)
		lc.orch.startReplay(p)
		return
	}
	lc.call(p, OpEventsList, 0, world.NoStep, -1)
}

// pendingEmpty is the last-completer test as the real consumer computes it
// from events.list: created − (completed ∪ failed). Steps whose step_created
// has not landed are invisible to it.
func (lc *lastCompleter) pendingEmpty(fan int32) bool {
	return lc.fans[fan].pending == 0
}

const (
	loggedCreated uint8 = 1 << iota
	loggedFinished
	loggedFailed // with loggedFinished: the end was a step_failed
)

// addFan adds the next fan-out's state.
func (lc *lastCompleter) addFan() {
	lc.fans = append(lc.fans, fanRT{holder: -1})
}

// note records that branch b of fan-out fan logged what (loggedCreated or
// loggedFinished) and keeps the pending count.
func (lc *lastCompleter) note(fan int32, step world.StepID, what uint8) {
	f := &lc.fans[fan]
	fo := &lc.h.Fanouts[fan]
	b := int(step - fo.FirstStep)
	if b < 0 || b >= int(fo.Branches) {
		return
	}
	if f.marksAt == 0 {
		// The fan-out's first mark: its branches' marks, zero, at the end.
		f.marksAt = int32(len(lc.logged)) + 1
		lc.logged = append(lc.logged, make([]uint8, fo.Branches)...)
		lc.createdAt = append(lc.createdAt, make([]sim.Time, fo.Branches)...)
		lc.finishedAt = append(lc.finishedAt, make([]sim.Time, fo.Branches)...)
		lc.owner = append(lc.owner, make([]int32, fo.Branches)...)
	}
	mark := &lc.logged[int(f.marksAt)-1+b]
	if *mark&what != 0 {
		return
	}
	had := *mark
	*mark |= what
	f.lastMark = lc.k.Now()
	if what == loggedCreated {
		lc.createdAt[int(f.marksAt)-1+b] = f.lastMark
	} else {
		lc.finishedAt[int(f.marksAt)-1+b] = f.lastMark
	}
	switch {
	case what == loggedCreated && had&loggedFinished == 0:
		f.pending++
	case what == loggedFinished && had&loggedCreated != 0:
		f.pending--
	}
}

// markOf is the index of step's marks (of fan-out fan), or -1.
func (lc *lastCompleter) markOf(fan int32, step world.StepID) int {
	f := &lc.fans[fan]
	b := int(step - lc.h.Fanouts[fan].FirstStep)
	if f.marksAt == 0 || b < 0 || b >= int(lc.h.Fanouts[fan].Branches) {
		return -1
	}
	return int(f.marksAt) - 1 + b
}

// ownerOf is the queue message that owns step by its lazy claim (inline
// ownership), or -1.
func (lc *lastCompleter) ownerOf(fan int32, step world.StepID) int32 {
	if i := lc.markOf(fan, step); i >= 0 {
		return lc.owner[i] - 1
	}
	return -1
}

// logView is what a log loaded at t (-1: turbo's empty preload) shows of
// fan-out fan: how many of its steps it holds created, finished and
// failed. A replay goes on from the log it loaded, not from the World as
// it is when the load's answer arrives: a step that ends between the two
// is still pending to it (core replays from the events it listed), so it
// suspends on the fan-out where the World already has it finished.
func (lc *lastCompleter) logView(fan int32, t sim.Time) (created, finished, failed int32) {
	f := &lc.fans[fan]
	if t >= f.lastMark && t >= 0 {
		return f.created, f.finished, f.failed
	}
	if t < 0 || f.marksAt == 0 {
		return 0, 0, 0
	}
	for b := range lc.h.Fanouts[fan].Branches {
		i := int(f.marksAt) - 1 + int(b)
		m := lc.logged[i]
		if m&loggedCreated != 0 && lc.createdAt[i] <= t {
			created++
		}
		if m&loggedFinished != 0 && lc.finishedAt[i] <= t {
			finished++
			if m&loggedFailed != 0 {
				failed++
			}
		}
	}
	return created, finished, failed
}

// stepView is what a log loaded at t shows of step (of fan-out fan):
// whether it holds its step_created (or the lazy claim that created it)
// and its end.
func (lc *lastCompleter) stepView(fan int32, step world.StepID, t sim.Time) (created, finished bool) {
	i := lc.markOf(fan, step)
	if t < 0 || i < 0 {
		return false, false
	}
	m := lc.logged[i]
	return m&loggedCreated != 0 && lc.createdAt[i] <= t, m&loggedFinished != 0 && lc.finishedAt[i] <= t
}

// prologueRead counts a legacy prologue read of one of fan-out fan's
// deliveries (History.Fanouts[fan].PrologueFetches at the end).
func (lc *lastCompleter) prologueRead(fan int32) { lc.fans[fan].prologue++ }

// answerConflict is the atomic World's answer to a completer whose write
// found the step already finished (a redelivery after a crash): if the
// fan-out is finished and the delivery it told was last died, this one is.
// It hands the continuation out like a lease: again only once the delivery
// that held it is known dead (its message came back).
func (lc *lastCompleter) answerConflict(c *Call) {
	f := &lc.fans[c.Fanout]
	holderDead := f.holder < 0 || lc.procs[f.holder].crashed || f.holder == c.Caller.Delivery
	c.WasLast = f.finished == lc.h.Fanouts[c.Fanout].Branches && holderDead
	if c.WasLast && c.Caller.Delivery >= 0 {
		f.holder = c.Caller.Delivery
	}
}

// written counts an accepted write of fan-out step c; the atomic-fan-in
// World knows, in the same write, whether it finished the fan-out.
func (lc *lastCompleter) written(c *Call) {
	f := &lc.fans[c.Fanout]
	switch {
	case c.Event == world.EvStepCreated || c.Event == world.EvStepStarted && c.Lazy:
		// A lazy claim logged the step's step_created with its start.
		f.created++
		lc.note(c.Fanout, c.Step, loggedCreated)
		if c.Lazy && c.Caller.Delivery >= 0 {
			// Core stamps the claim with its invocation's queue message:
			// the step's owner (inline ownership).
			if i := lc.markOf(c.Fanout, c.Step); i >= 0 {
				lc.owner[i] = lc.h.Deliveries[lc.rootOf(c.Caller.Delivery)].Msg + 1
			}
		}
	case c.Event == world.EvStepCompleted || c.Event == world.EvStepFailed:
		f.finished++
		lc.note(c.Fanout, c.Step, loggedFinished)
		if c.Event == world.EvStepFailed {
			if i := lc.markOf(c.Fanout, c.Step); i >= 0 {
				lc.logged[i] |= loggedFailed
			}
			f.failed++
			if fo := &lc.h.Fanouts[c.Fanout]; fo.Index < lc.settled[fo.Run] {
				lc.settled[fo.Run] = fo.Index
			}
		}
		c.WasLast = f.finished == lc.h.Fanouts[c.Fanout].Branches
	}
	if c.WasLast && c.Caller.Delivery >= 0 {
		f.holder = c.Caller.Delivery
	}
}
