package model

import (
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// This file is the World as a simulated service: store calls that wait for a
// free slot, take a drawn latency, and apply at their answer's instant; and
// the queue's publish, delivery, ack, redelivery and crash rules.

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
		e.calls = append(e.calls, c)
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
func (e *engine) rootKind(p int32) MsgKind {
	if inv := e.h.Invocation(p); inv >= 0 {
		p = inv
	}
	return e.h.Deliveries[p].Kind
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
	pl := &e.writes
	if e.calls[idx].Op != OpEventsCreate {
		pl = &e.reads
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
	var d sim.Dist
	switch c.Op {
	case OpRunsGet:
		d = e.prof.RunsGet
		// A read executes when the store serves it; queueing delays what
		// it sees, the answer's latency does not.
		e.answerRunsGet(c)
	case OpEventsCreate:
		d = e.prof.EventsWrite
	default:
		d = e.prof.EventsList
		if c.Fanout >= 0 {
			c.PendingEmpty = e.pendingEmpty(c.Fanout)
		}
		c.LogTerminal = e.store.Get(c.Run).Status.Terminal()
	}
	// The hash sees the caller and the call's serial number, never the
	// slot, which depends on whether calls are recorded.
	e.k.AfterRef(d.Draw(e.c), evCallDone, uint32(c.Caller.Delivery), c.serial, uint32(idx))
}

// release frees the call's slot and starts the longest-waiting call.
func (e *engine) release(op Op) {
	pl := &e.writes
	if op != OpEventsCreate {
		pl = &e.reads
	}
	if pl.head < len(pl.waiting) {
		next := pl.waiting[pl.head]
		pl.head++
		if pl.head == len(pl.waiting) {
			pl.waiting, pl.head = pl.waiting[:0], 0
		} else if pl.head >= 1024 && pl.head*2 >= len(pl.waiting) {
			// Under steady load the queue may never empty: drop the served
			// front so it does not grow for the whole run.
			n := copy(pl.waiting, pl.waiting[pl.head:])
			pl.waiting, pl.head = pl.waiting[:n], 0
		}
		e.serve(next)
		return
	}
	pl.busy--
}

// callDone answers a call: the store applies writes and takes reads at this
// instant, then the caller resumes.
func (e *engine) callDone(idx int32) {
	c := &e.calls[idx]
	c.End = e.k.Now()
	e.release(c.Op)
	if c.Op == OpEventsCreate {
		// A write commits at the end of its service.
		e.answerCreate(idx, c)
	}
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
	}
}

func (e *engine) answerCreate(idx int32, c *Call) {
	now := e.k.Now()
	var res world.Result
	var pos int32
	var retry sim.Time
	if c.Event == world.EvRunCreated {
		// Created at arrival (startRun); the call only carries its latency.
		res, pos = world.OK, 0
	} else {
		res, retry, pos = e.store.Apply(now, world.Event{Type: c.Event, Run: c.Run, Step: c.Step, RetryAfter: c.RetryAfter})
	}
	c.Result, c.LogPos = res, pos
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
		// The atomic World answers a completer whose write found the step
		// already finished (a redelivery after a crash) too: if the fan-out
		// is finished and the delivery it told was last died, this one is.
		// It hands the continuation out like a lease: again only once the
		// delivery that held it is known dead (its message came back).
		f := &e.fans[c.Fanout]
		holderDead := f.holder < 0 || e.procs[f.holder].crashed || f.holder == c.Caller.Delivery
		c.WasLast = f.finished == e.h.Fanouts[c.Fanout].Branches && holderDead
		if c.WasLast && c.Caller.Delivery >= 0 {
			f.holder = c.Caller.Delivery
		}
	}
	if res != world.OK || c.Event == world.EvRunCreated {
		return
	}
	if c.Fanout >= 0 {
		f := &e.fans[c.Fanout]
		switch c.Event {
		case world.EvStepCreated:
			f.created++
		case world.EvStepCompleted, world.EvStepFailed:
			f.finished++
			if c.Event == world.EvStepFailed {
				f.failed++
			}
			// The atomic-fan-in World knows, in the same write, whether it
			// finished the fan-out.
			c.WasLast = f.finished == e.h.Fanouts[c.Fanout].Branches
		}
	}
	if c.WasLast && c.Caller.Delivery >= 0 {
		e.fans[c.Fanout].holder = c.Caller.Delivery
	}
	if e.opts.Record {
		log := e.store.Log(c.Run)
		if int(pos) < len(log) && log[pos].Pos == pos {
			e.h.Accepted = append(e.h.Accepted, Accepted{LoggedEvent: log[pos], Caller: c.Caller, Call: idx})
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

// pendingEmpty is the last-completer test as the real consumer computes it
// from events.list: created − (completed ∪ failed). Steps whose step_created
// has not landed are invisible to it.
func (e *engine) pendingEmpty(fan int32) bool {
	f := &e.fans[fan]
	return f.created == f.finished
}

// ---- queue ----

// publish sends a message; the producer p (or -1) waits for the answer.
func (e *engine) publish(p int32, m Message, site Site, producer Version) {
	now := e.k.Now()
	e.counts.Publishes++
	m.Requested = now
	if m.Key != 0 {
		if exp, ok := e.keys[m.Key]; ok && exp > now {
			e.counts.Deduped++
			if e.opts.Record {
				e.h.Publishes = append(e.h.Publishes, Publish{Msg: -1, Run: m.Run, Step: m.Step, Site: site, Caller: e.callerOf(p), Producer: producer, At: now, Deduped: true})
			}
			if p >= 0 {
				// The producer still waits for the publish call's answer.
				e.procs[p].outstanding++
				e.pubs = append(e.pubs, pendingPublish{msg: -1, proc: p, rec: e.lastPublishRecord()})
				e.k.After(e.prof.Publish.Draw(e.c), evPublishDone, 0, uint64(len(e.pubs)-1))
			}
			return
		}
		e.keys[m.Key] = now.Add(e.prof.IdempotencyTTL)
	}
	m.ID = int32(len(e.h.Messages))
	e.h.Messages = append(e.h.Messages, m)
	e.msgs = append(e.msgs, msgRT{state: msgPublishing, last: -1})
	if e.opts.Record {
		e.h.Publishes = append(e.h.Publishes, Publish{Msg: m.ID, Run: m.Run, Step: m.Step, Site: site, Caller: e.callerOf(p), Producer: producer, At: now})
	}
	if p >= 0 {
		e.procs[p].outstanding++
	}
	e.pubs = append(e.pubs, pendingPublish{msg: m.ID, proc: p, rec: e.lastPublishRecord()})
	e.k.After(e.prof.Publish.Draw(e.c), evPublishDone, 1, uint64(len(e.pubs)-1))
}

// lastPublishRecord is the index of the publish just recorded, or -1.
func (e *engine) lastPublishRecord() int32 {
	if !e.opts.Record {
		return -1
	}
	return int32(len(e.h.Publishes) - 1)
}

func (e *engine) publishDone(i int32) {
	pp := e.pubs[i]
	if pp.rec >= 0 {
		e.h.Publishes[pp.rec].Done = e.k.Now()
	}
	if pp.msg >= 0 {
		m := &e.h.Messages[pp.msg]
		e.msgs[pp.msg].state = msgQueued
		e.makeVisible(pp.msg, e.k.Now()+m.Delay)
	}
	if pp.proc >= 0 {
		e.resume(pp.proc)
	}
}

// makeVisible schedules the message's next delivery for when it becomes
// visible, plus the queue's delivery latency.
func (e *engine) makeVisible(m int32, at sim.Time) {
	rt := &e.msgs[m]
	rt.state = msgQueued
	rt.epoch++
	if at < e.k.Now() {
		at = e.k.Now()
	}
	e.k.Schedule(at.Add(e.prof.Deliver.Draw(e.c)), evDeliver, 0, uint64(m)|uint64(rt.epoch)<<32)
}

// deliver hands a visible message to a consumer of its deployment, or of
// another one when the misdelivery fault fires.
func (e *engine) deliver(m int32, epoch uint32) {
	rt := &e.msgs[m]
	if rt.state != msgQueued || rt.epoch != epoch {
		return
	}
	e.active()
	msg := &e.h.Messages[m]
	dep := msg.Target
	if len(e.deployments) > 1 && e.faults.Fire(e.siteMisdeliver) {
		other := int32(e.c.Choose(len(e.deployments) - 1))
		if other >= dep {
			other++
		}
		dep = other
		e.fault(FaultMisdeliver, msg.Run, -1)
	}
	if lim := int32(e.prof.Consumers); lim > 0 && e.busy[dep] >= lim {
		rt.state = msgWaiting
		rt.epoch++
		e.waitQ[dep] = append(e.waitQ[dep], m)
		return
	}
	e.claim(m, dep)
}

// claim counts the delivery attempt and starts the consumer.
func (e *engine) claim(m int32, dep int32) {
	rt := &e.msgs[m]
	msg := &e.h.Messages[m]
	rt.deliveries++
	if e.prof.MaxDeliveries > 0 && int(rt.deliveries) > e.prof.MaxDeliveries {
		rt.state = msgDone
		rt.epoch++
		e.counts.Exhausted++
		if e.opts.Record {
			e.h.Retired = append(e.h.Retired, m)
		}
		e.exhausted(msg)
		return
	}
	rt.state = msgInFlight
	rt.epoch++
	e.counts.Deliveries++
	if rt.deliveries > 1 {
		e.counts.Redeliveries++
	}
	e.busy[dep]++
	p := e.newProc(Delivery{
		Msg: m, Parent: -1, Kind: msg.Kind, Run: msg.Run, Step: msg.Step, Fanout: msg.Fanout,
		Attempt: rt.deliveries, Target: msg.Target, Deployment: dep, Version: e.deployments[dep].Consumer,
	})
	rt.last = p
	e.procs[p].released = false
	if e.prof.RedeliverInFlight {
		e.k.After(e.prof.VisibilityTimeout, evVisExpire, 0, uint64(p))
	}
	e.advance(p)
}

// exhausted is the World's rule for a message past its delivery cap: the
// run cannot make progress through that message, so the World fails it.
func (e *engine) exhausted(msg *Message) {
	idx := e.newCall(-1, OpEventsCreate, msg.Run, world.NoStep, -1)
	e.calls[idx].Caller = Caller{Kind: CallerWorld, Delivery: -1}
	e.calls[idx].Event = world.EvRunFailed
	e.issue(-1, idx)
}

// newProc records delivery d and starts the proc that steps it; an inline
// step's proc waits on (resumes) its d.Parent.
func (e *engine) newProc(d Delivery) int32 {
	d.Start = e.k.Now()
	p := int32(len(e.h.Deliveries))
	e.h.Deliveries = append(e.h.Deliveries, d)
	e.procs = append(e.procs, proc{parent: d.Parent, lastCall: -1, getCall: -1, suspendFan: -1})
	return p
}

// settle ends a message-backed delivery's hold on the queue.
func (e *engine) settle(p int32, disp Disposition, delay sim.Time) {
	d := &e.h.Deliveries[p]
	d.Disposition = disp
	d.End = e.k.Now()
	if d.Msg < 0 {
		return
	}
	rt := &e.msgs[d.Msg]
	if !e.procs[p].released {
		e.releaseConsumer(p)
	} else if disp != DispAck {
		// The visibility timeout already handed the message to a newer
		// delivery; only an ack still counts (it deletes the message).
		return
	}
	if rt.state == msgDone {
		return
	}
	switch disp {
	case DispAck:
		rt.state = msgDone
		rt.epoch++
	case DispRedeliver:
		e.makeVisible(d.Msg, e.k.Now()+delay)
	case DispThrow:
		msg := e.h.Messages[d.Msg]
		if e.prof.FreshCopyOnThrow > 0 && sim.Chance(e.c, e.prof.FreshCopyOnThrow) {
			// world-vercel's failure path: a fresh copy, attempt 1.
			rt.state = msgDone
			rt.epoch++
			msg.Origin = msg.ID
			msg.Key = 0
			msg.Delay = sim.Time(e.prof.ThrowBackoff)
			e.publish(-1, msg, SiteFreshCopy, e.deployments[msg.Target].Producer)
			return
		}
		e.makeVisible(d.Msg, e.k.Now().Add(e.prof.ThrowBackoff))
	case DispCrash:
		if e.prof.RedeliverInFlight {
			return // the visibility timeout set at delivery brings it back
		}
		e.makeVisible(d.Msg, e.k.Now().Add(e.prof.VisibilityTimeout))
	}
}

// releaseConsumer gives the delivery's consumer slot back and hands it to
// the longest-waiting message of that deployment.
func (e *engine) releaseConsumer(p int32) {
	e.procs[p].released = true
	dep := e.h.Deliveries[p].Deployment
	e.busy[dep]--
	for q := e.waitQ[dep]; len(q) > 0; q = e.waitQ[dep] {
		next := q[0]
		e.waitQ[dep] = q[1:]
		// A waiting message may have been acked by an older delivery since:
		// only one still waiting is claimed.
		if e.msgs[next].state == msgWaiting {
			e.claim(next, dep)
			return
		}
	}
}

// visibilityExpired redelivers a message whose newest delivery has held it
// for the whole visibility timeout; that delivery may still be running.
func (e *engine) visibilityExpired(p int32) {
	d := &e.h.Deliveries[p]
	rt := &e.msgs[d.Msg]
	if rt.state != msgInFlight || rt.last != p {
		return
	}
	if !e.procs[p].released {
		e.releaseConsumer(p)
	}
	e.active()
	e.makeVisible(d.Msg, e.k.Now())
}
