package model

import (
	"time"

	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// This file is the World as a simulated service: store calls that wait for a
// free slot in their pool, take a drawn latency, and apply at their answer's
// instant. The queue is queue.go.

// service is the World's calls in flight: every call's record (a slot,
// recycled when the History does not keep calls) and the two pools a call
// waits in for a free connection.
type service struct {
	reads  pool
	writes pool
	shared sharedWrites // the writes' capacity when it is shared (shared.go)
	rr     rrState      // and when it is served round robin (roundrobin.go)
	calls  []Call
	// flights are the writes in flight as Txns (txn.go in model/world: the
	// adapter's own steps), in slots a call names (Call.flight) while it
	// is in flight and gives back with its answer, so that they stay as
	// few as the writes in flight when the History keeps every call;
	// parked are the calls waiting for a lock another write holds, in
	// arrival order.
	flights     []flight
	freeFlights []int32
	parked      []int32
	free        []int32 // recycled call slots when not recording
	serial      uint64  // calls issued so far
	effects     uint32  // calls that took effect so far (Call.Effect)
	// drawable and earlier are random order of service's scratch
	// (drawWrite): the waiting writes it may draw, and the steps a
	// waiting write already locks.
	drawable []int
	earlier  map[stepKey]struct{}
	// writesIn is each run's writes in the World, from their arrival to
	// their answer, when the profile charges for them (countsContenders).
	writesIn []int32
}

// stepKey names one step of one run: what world-local's per-step lock is
// taken on.
type stepKey struct {
	run  world.RunID
	step world.StepID
}

// pool is the store's bounded set of concurrent calls of one kind.
type pool struct {
	limit   int
	busy    int
	waiting []int32 // call indices in arrival order
	head    int
}

// newCall takes a call slot and fills in what the caller knows.
func (e *engine) newCall(p int32, op Op, run world.RunID, step world.StepID, fan int32) int32 {
	e.serial++
	c := Call{Op: op, Caller: e.callerOf(p), Run: run, Step: step, Fanout: fan, Start: e.k.Now(), LogPos: -1, serial: e.serial}
	var idx int32
	if n := len(e.free); n > 0 {
		idx = e.free[n-1]
		e.free = e.free[:n-1]
		e.calls[idx] = c
	} else {
		idx = int32(len(e.calls))
		e.calls = append(grow(e.calls), c)
	}
	return idx
}

func (e *engine) callerOf(p int32) Caller {
	if p < 0 {
		return Caller{Kind: CallerClient, Delivery: -1}
	}
	d := &e.h.Deliveries[p]
	// An inline step acts for the orchestrator invocation it runs in.
	kind := CallerConsumer
	if d.Kind == MsgWorkflow || d.Msg < 0 && e.rootKind(p) == MsgWorkflow {
		kind = CallerOrchestrator
	}
	return Caller{Kind: kind, Delivery: p}
}

// rootKind returns the message kind of the delivery an inline step runs in.
func (e *engine) rootKind(p int32) MsgKind { return e.h.Deliveries[e.rootOf(p)].Kind }

// rootOf is the delivery whose message invocation p runs in: p itself, or
// the invocation an inline step runs in.
func (e *engine) rootOf(p int32) int32 {
	if inv := e.procs[p].root; inv >= 0 {
		return inv
	}
	return p
}

// issue sends a call to the store on behalf of proc p (or the client when
// p < 0): it waits for a slot in its pool, then takes a drawn latency.
func (e *engine) issue(p int32, idx int32) {
	if p >= 0 {
		pr := &e.procs[p]
		pr.outstanding++
		old := pr.lastCall
		pr.lastCall = idx
		e.recycleIfUnused(p, old)
	}
	e.counts.StoreCalls++
	if c := &e.calls[idx]; c.Op == OpEventsCreate && e.countsContenders() {
		for int(c.Run) >= len(e.writesIn) {
			e.writesIn = append(grow(e.writesIn), 0)
		}
		e.writesIn[c.Run]++
	}
	pl := &e.writes
	if e.calls[idx].Op != OpEventsCreate {
		pl = &e.reads
	} else if e.prof.SharedWrites {
		e.serve(idx) // no slot to wait for: the capacity is shared (shared.go)
		return
	}
	if pl.limit == 0 || pl.busy < pl.limit {
		pl.busy++
		e.serve(idx)
		return
	}
	pl.waiting = append(pl.waiting, idx)
}

func (e *engine) serve(idx int32) {
	c := &e.calls[idx]
	c.Served = e.k.Now()
	if c.Op != OpEventsCreate {
		e.tookEffect(c)
	}
	var d sim.Dist
	var extra time.Duration
	switch c.Op {
	case OpRunsGet:
		d = e.prof.RunsGet
		// A read executes when the store serves it; queueing delays what
		// it sees, the answer's latency does not.
		e.answerRunsGet(c)
	case OpEventsCreate:
		perWrite := e.perEvent(e.prof.WritePerEvent, c.Run)
		perWrite += e.perContender(e.prof.WritePerContender, c.Run)
		if e.prof.SharedWrites {
			// A shared write's work is fixed when it arrives, but it does
			// that work as the log grows under it: charge it for the
			// run's writes already in flight too, which land about when
			// it does (a FIFO write, served after them, sees them logged).
			perWrite += e.prof.WritePerEvent * time.Duration(e.shared.onRun(c.Run))
			e.shared.enter(c.Run)
		}
		if c.Event != world.EvRunCreated && e.store.Atomicity() != world.AtomicCall {
			// The write runs as its adapter's steps (flight.go).
			e.beginFlight(idx, e.prof.EventsWrite.Draw(e.c)+perWrite)
			return
		}
		d = e.prof.EventsWrite
		extra = perWrite
	default:
		d = e.prof.EventsList
		extra = e.perEvent(e.prof.ListPerEvent, c.Run) + e.perContender(e.prof.ListPerContender, c.Run)
		if c.Fanout >= 0 {
			c.PendingEmpty = e.completer.pendingEmpty(c.Fanout)
		}
		// Core judges a run's end from the events it listed, not from the
		// run row, which a racing run_started can move back to running.
		c.LogTerminal = e.store.LogEnded(c.Run)
	}
	if c.Op == OpEventsCreate && e.prof.SharedWrites {
		if e.prof.WriteSlices > 0 {
			e.rrJoin(idx, d.Draw(e.c)+extra)
		} else {
			e.sharedMark(idx, e.sharedJoin(), d.Draw(e.c)+extra, true)
		}
		return
	}
	// The hash sees the caller and the call's serial number, never the
	// slot, which depends on whether calls are recorded.
	e.k.AfterRef(d.Draw(e.c)+extra, evCallDone, uint32(c.Caller.Delivery), c.serial, uint32(idx))
}

// countsContenders: the profile charges calls for the writes of their run
// in the World, which are then counted from their arrival to their answer.
func (e *engine) countsContenders() bool {
	return e.prof.WritePerContender > 0 || e.prof.ListPerContender > 0
}

// perContender is a call's cost that grows with the writes of its run in
// the World: per times their number (0 unless the profile says so).
func (e *engine) perContender(per time.Duration, run world.RunID) time.Duration {
	if per <= 0 || int(run) >= len(e.writesIn) {
		return 0
	}
	return per * time.Duration(e.writesIn[run])
}

// perEvent is a call's cost that grows with the run's log: per times the
// events logged so far (0 unless the profile says so).
func (e *engine) perEvent(per time.Duration, run world.RunID) time.Duration {
	if per <= 0 {
		return 0
	}
	return per * time.Duration(len(e.store.Log(run)))
}

// release frees the call's slot and starts the longest-waiting call.
func (e *engine) release(op Op) {
	pl := &e.writes
	if op != OpEventsCreate {
		pl = &e.reads
	} else if e.prof.SharedWrites {
		return // it held no slot
	}
	if pl.head < len(pl.waiting) {
		if op == OpEventsCreate && e.prof.WriteOrder == WriteOrderRandom {
			e.drawWrite(pl)
		}
		e.serve(popFront(&pl.waiting, &pl.head))
		return
	}
	pl.busy--
}

// drawWrite puts a waiting write drawn at random at the pool's front
// (random order of service). Only a write no earlier waiting write of its
// step precedes can be drawn: world-local takes a step's lock when the call
// arrives (events-storage.js withInProcessLock, before any of its work), so
// a step's writes land in the order they reached the World, and only
// writes of different steps race each other for the log's next slot.
func (e *engine) drawWrite(pl *pool) {
	waiting := pl.waiting[pl.head:]
	if len(waiting) < 2 {
		return
	}
	if e.earlier == nil {
		e.earlier = map[stepKey]struct{}{}
	}
	clear(e.earlier)
	e.drawable = e.drawable[:0]
	for i, idx := range waiting {
		c := &e.calls[idx]
		if !c.Event.IsStepEvent() {
			e.drawable = append(e.drawable, i)
			continue
		}
		k := stepKey{c.Run, c.Step}
		if _, locked := e.earlier[k]; locked {
			continue
		}
		e.earlier[k] = struct{}{}
		e.drawable = append(e.drawable, i)
	}
	// The drawn write moves to the front and the others keep their arrival
	// order, which the next draw's locks are read from.
	i := e.drawable[e.c.Choose(len(e.drawable))]
	drawn := waiting[i]
	copy(waiting[1:i+1], waiting[:i])
	waiting[0] = drawn
}

// callDone answers a call: the store applies writes and takes reads at this
// instant, then the caller resumes.
func (e *engine) callDone(idx int32) {
	c := &e.calls[idx]
	if c.Op == OpEventsCreate && c.flight > 0 {
		// A write in flight answers once its last step is taken.
		if !e.landFlight(idx) {
			return
		}
	} else if c.Op == OpEventsCreate {
		// An atomic write commits at the end of its service.
		res, retry, pos := world.OK, sim.Time(0), int32(0)
		// An atomic lazy start that creates its step logs the step_created
		// just before its step_started, in the same call.
		creates := c.Lazy && !e.store.Step(c.Run, c.Step).Exists
		if c.Event != world.EvRunCreated {
			// (run_created is created at arrival, startRun; the call only
			// carries its latency.)
			res, retry, pos = e.store.Apply(e.k.Now(), world.Event{Type: c.Event, Run: c.Run, Step: c.Step, RetryAfter: c.RetryAfter, Lazy: c.Lazy})
		}
		created := int32(-1)
		if creates && res == world.OK {
			created = pos - 1
		}
		e.answerCreate(idx, c, res, retry, pos, created)
	}
	e.answer(idx)
}

// answer hands a call's answer to its caller.
func (e *engine) answer(idx int32) {
	c := &e.calls[idx]
	c.End = e.k.Now()
	if c.Op == OpEventsCreate && e.countsContenders() {
		e.writesIn[c.Run]--
	}
	e.endFlight(c)
	e.release(c.Op)
	c.done = true
	p := c.Caller.Delivery
	if c.Caller.Kind == CallerClient || c.Caller.Kind == CallerWorld {
		e.recycle(idx)
		return
	}
	if c.HasRow {
		r := c.Row
		e.procs[p].row, e.procs[p].hasRow = RunContext{DeploymentID: r.DeploymentID, SpecVersion: r.SpecVersion, StartedAt: r.StartedAt, RootRunID: r.RootRunID}, true
	}
	if c.Event == world.EvStepCreated && c.Op == OpEventsCreate && e.procs[p].state == psBatching {
		e.orch.batchCreated(p, c.Step) // (before resume: its publishes keep p waiting)
	}
	e.resume(p)
	e.recycleIfUnused(p, idx)
}

// recycle returns a call slot when the History does not keep calls.
func (e *engine) recycle(idx int32) {
	if !e.opts.Record {
		e.free = append(e.free, idx)
	}
}

// recycleIfUnused frees a proc's call slot once its answer has arrived and
// the proc no longer refers to it: a proc reads only its last call and its
// last runs.get, so every other answered call of it is dead.
func (e *engine) recycleIfUnused(p, idx int32) {
	if e.opts.Record || idx < 0 || !e.calls[idx].done {
		return
	}
	if pr := &e.procs[p]; idx == pr.lastCall || idx == pr.getCall {
		return
	}
	e.calls[idx].done = false
	e.free = append(e.free, idx)
}

// staleSteps is how finely a stale read's lag is drawn.
const staleSteps = 8

func (e *engine) answerRunsGet(c *Call) {
	e.counts.RunsGet++
	now := e.k.Now()
	fresh := e.store.Get(c.Run)
	view := fresh
	if e.prof.StaleLag > 0 && e.faults.Fire(e.siteStale) {
		// Choice 0 of the fault is the fresh read. Once it fires, the lag
		// is drawn in eighths of the bound: coarse on purpose, so that a
		// searcher favouring small draws still reaches back a long way.
		lag := sim.Time(int64(1+e.c.Choose(staleSteps)) * int64(e.prof.StaleLag) / staleSteps)
		view = e.store.GetAsOf(c.Run, now-lag)
		e.fault(FaultStaleRead, c.Run, c.Caller.Delivery)
	}
	c.StatusRead = view.Status
	c.Row, c.HasRow = view.Identity, true
	c.Stale = view.Status != fresh.Status
	if c.Stale {
		e.counts.StaleReads++
	} else if !e.store.Readable(c.Run) {
		// The row's fields do not fit its status (racing world-postgres
		// UPDATEs): runs.get fails the World's own schema and throws.
		c.Unreadable, c.HasRow = true, false
		e.counts.UnreadableReads++
	}
}

// answerCreate records what a write did, at the instant it took effect: its
// answer, the event it logged and what the actors learn of it.
func (e *engine) answerCreate(idx int32, c *Call, res world.Result, retry sim.Time, pos, created int32) {
	c.Result, c.LogPos = res, pos
	if c.Event != world.EvRunCreated {
		e.tookEffect(c)
	}
	if res == world.TooEarly {
		c.RetryAfter = retry
	}
	if c.Event == world.EvStepStarted {
		if res == world.OK {
			e.counts.StepStartedAccepted++
			c.Attempt = e.store.Step(c.Run, c.Step).Attempt
		} else {
			e.counts.StepStartedRejected++
		}
	}
	if res == world.OK && (c.Event == world.EvRunCreated || c.Event == world.EvRunStarted) {
		c.Row, c.HasRow = e.store.Get(c.Run).Identity, true
	}
	if refusedBecauseEnded(c.Event, res, e.store.Get(c.Run).Status) {
		e.counts.WritesRefusedEnded++
	}
	if res == world.EntityConflict && e.vs.atomicFanIn && c.Fanout >= 0 &&
		(c.Event == world.EvStepStarted || c.Event.EndsStep()) {
		e.completer.answerConflict(c)
	}
	if res != world.OK || c.Event == world.EvRunCreated {
		return
	}
	if c.Fanout >= 0 {
		e.completer.written(c)
	}
	if e.opts.Record {
		if created >= 0 {
			// The lazy claim's step_created, logged with its start.
			if i := e.store.LogIndex(c.Run, created); i >= 0 {
				e.h.Accepted = append(grow(e.h.Accepted), Accepted{LoggedEvent: e.store.Log(c.Run)[i], Caller: c.Caller, Call: idx})
			}
		}
		if i := e.store.LogIndex(c.Run, pos); i >= 0 {
			e.h.Accepted = append(grow(e.h.Accepted), Accepted{LoggedEvent: e.store.Log(c.Run)[i], Caller: c.Caller, Call: idx})
		}
	}
}

// refusedBecauseEnded says a write was refused because its run had ended:
// RunExpired always, EntityConflict for a run event or a step_created on a
// terminal run (a conflict on a finished step is about the step).
func refusedBecauseEnded(ev world.EventType, res world.Result, st world.RunStatus) bool {
	switch {
	case res == world.RunExpired:
		return true
	case res != world.EntityConflict || !st.Terminal():
		return false
	}
	return !ev.IsStepEvent() || ev == world.EvStepCreated
}

// tookEffect numbers c among the calls that took effect (Call.Effect).
func (e *engine) tookEffect(c *Call) {
	e.effects++
	c.Effect = e.effects
}
