package model

import (
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// This file is the protocol of DOMAIN.md §5–§7: the client, the orchestrator
// (workflow replay and the suspension handler), the consumers' prologues,
// the deployment guard, the claim, the body, the terminal write and the last
// completer. Every actor is a state machine in advance(); a step that waits
// on the store or the queue returns and is resumed when all its calls answer.

const maxReroutes = 3

// startRun is the client starting run i: run_created, then the workflow
// message to the run's deployment.
func (e *engine) startRun(i int32) {
	info := &e.h.Runs[i]
	id := e.store.CreateRun(e.k.Now(), info.Deployment, 1, -1)
	idx := e.newCall(-1, OpEventsCreate, id, world.NoStep, -1)
	e.calls[idx].Event = world.EvRunCreated
	if e.opts.Record {
		e.h.Accepted = append(e.h.Accepted, Accepted{LoggedEvent: e.store.Log(id)[0], Caller: Caller{Kind: CallerClient, Delivery: -1}, Call: idx})
	}
	e.issue(-1, idx)
	e.publish(-1, Message{Kind: MsgWorkflow, Run: id, Step: world.NoStep, Fanout: -1, Target: info.Deployment, Origin: -1},
		SiteStart, e.deployments[info.Deployment].Producer)
}

// cancelRun is the client cancelling run i from outside.
func (e *engine) cancelRun(i int32) {
	if e.h.Runs[i].CancelledByFault {
		e.fault(FaultCancel, world.RunID(i), -1)
	}
	idx := e.newCall(-1, OpEventsCreate, world.RunID(i), world.NoStep, -1)
	e.calls[idx].Event = world.EvRunCancelled
	e.issue(-1, idx)
}

// call issues one store call for proc p and returns its index.
func (e *engine) call(p int32, op Op, ev world.EventType, step world.StepID, fan int32) int32 {
	d := &e.h.Deliveries[p]
	idx := e.newCall(p, op, d.Run, step, fan)
	e.calls[idx].Event = ev
	e.issue(p, idx)
	return idx
}

func (e *engine) read(p int32, reason ReadReason, fan int32) {
	idx := e.call(p, OpRunsGet, 0, world.NoStep, fan)
	e.calls[idx].Reason = reason
	old := e.procs[p].getCall
	e.procs[p].getCall = idx
	e.recycleIfUnused(p, old)
}

// resume is called when one of p's calls, publishes, children or its body
// finishes; p moves on once nothing it waits for is left.
func (e *engine) resume(p int32) {
	pr := &e.procs[p]
	pr.outstanding--
	if pr.outstanding > 0 || pr.state == psDone {
		return
	}
	if pr.crashed {
		return
	}
	e.advance(p)
}

// crashedTree reports whether p or the invocation it runs inside crashed.
func (e *engine) crashedTree(p int32) bool {
	for p >= 0 {
		if e.procs[p].crashed {
			return true
		}
		p = e.procs[p].parent
	}
	return false
}

// crash kills the delivery p runs in, between two calls.
func (e *engine) crash(p int32) {
	root := e.h.Invocation(p)
	if root < 0 {
		root = p
	}
	e.counts.Crashes++
	e.fault(FaultCrash, e.h.Deliveries[p].Run, p)
	for _, q := range []int32{p, root} {
		e.procs[q].crashed = true
		e.procs[q].state = psDone
		e.h.Deliveries[q].End = e.k.Now()
		e.h.Deliveries[q].Disposition = DispCrash
	}
	e.settle(root, DispCrash, 0)
}

// done ends p's work; a message-backed delivery settles with the queue, an
// inline step hands control back to its invocation.
func (e *engine) done(p int32, disp Disposition, delay sim.Time) {
	pr := &e.procs[p]
	pr.state = psDone
	e.settle(p, disp, delay)
	if pr.parent >= 0 {
		e.resume(pr.parent)
	}
}

func (e *engine) outcome(p int32, o StepOutcome) {
	e.h.Deliveries[p].Outcome = o
	switch o {
	case OutcomeGone:
		e.counts.Gone++
		e.counts.EndSeen++
	case OutcomeSkipped:
		e.counts.Skipped++
	case OutcomeThrottled:
		e.counts.Throttled++
	}
}

func (e *engine) msgOf(p int32) *Message {
	if m := e.h.Deliveries[p].Msg; m >= 0 {
		return &e.h.Messages[m]
	}
	return nil
}

// advance runs p until it next waits.
func (e *engine) advance(p int32) {
	if e.crashedTree(p) {
		// The invocation this inline step ran in died: so did the step.
		e.procs[p].state = psDone
		d := &e.h.Deliveries[p]
		d.End, d.Disposition = e.k.Now(), DispCrash
		return
	}
	d := &e.h.Deliveries[p]
	pr := &e.procs[p]
	if d.Msg >= 0 || pr.parent >= 0 {
		if e.faults.Fire(e.siteCrash) {
			e.crash(p)
			return
		}
	}
	switch pr.state {
	case psStart:
		switch {
		case d.Kind == MsgWorkflow:
			pr.state = psOrchLoaded
			e.read(p, ReasonOrchestrator, -1)
		case d.Msg < 0:
			e.claimStep(p) // an inline step: the invocation holds the run
		default:
			e.prologue(p)
		}
	case psOrchLoaded:
		e.orchestratorLoaded(p)
	case psOrchStarted:
		if e.calls[pr.lastCall].Result != world.OK {
			e.outcome(p, OutcomeGone)
			e.done(p, DispAck, 0)
			return
		}
		pr.held, pr.hasHeld = world.RunRunning, true
		pr.state = psReplayListed
		e.call(p, OpEventsList, 0, world.NoStep, -1)
	case psPrologueDone:
		e.prologueDone(p)
	case psClaimed:
		e.claimed(p)
	case psRecreated:
		d.Recovered = true
		e.counts.Recoveries++
		e.claimStep(p)
	case psBodyDone:
		e.bodyDone(p)
	case psTerminalWritten:
		e.terminalWritten(p)
	case psListed:
		e.listed(p)
	case psLazyRead:
		c := &e.calls[pr.getCall]
		st := c.StatusRead
		if st.Terminal() || (e.vs.strictGate && st != world.RunRunning) {
			if st.Terminal() {
				e.counts.EndSeen++
			}
			e.done(p, DispAck, 0)
			return
		}
		pr.held, pr.hasHeld = st, true
		e.continueFanout(p)
	case psReplayListed:
		e.replay(p)
	case psSuspending:
		e.suspendChunk(p)
	case psDispatched:
		e.startInline(p)
	case psInlineWait, psAfterPublish, psEnding:
		e.done(p, DispAck, 0)
	}
}

// ---- orchestrator ----

func (e *engine) orchestratorLoaded(p int32) {
	d := &e.h.Deliveries[p]
	pr := &e.procs[p]
	st := e.calls[pr.getCall].StatusRead
	if st.Terminal() {
		e.outcome(p, OutcomeGone)
		e.done(p, DispAck, 0)
		return
	}
	if runDep := e.h.Runs[d.Run].Deployment; runDep != d.Deployment {
		e.reroute(p, runDep)
		return
	}
	if st == world.RunPending {
		pr.state = psOrchStarted
		e.call(p, OpEventsCreate, world.EvRunStarted, world.NoStep, -1)
		return
	}
	pr.held, pr.hasHeld = st, true
	pr.state = psReplayListed
	e.call(p, OpEventsList, 0, world.NoStep, -1)
}

// replay is the workflow replayed from its log (just listed): it finds the
// first fan-out that is not finished and either suspends on it (creating
// and dispatching what is missing) or, if all its steps exist, has nothing
// to do; after the last fan-out it ends the run.
func (e *engine) replay(p int32) {
	d := &e.h.Deliveries[p]
	pr := &e.procs[p]
	if e.calls[pr.lastCall].LogTerminal {
		// The log holds the run's end: core's replay loop exits here
		// (hasRecordedTerminalRunEvent, runtime.js), doing no replay work.
		if !e.vs.replayIgnoresTerminalLog {
			e.counts.EndSeen++
			e.done(p, DispAck, 0)
			return
		}
		e.counts.ReplaysAfterEnd++
	}
	if pr.hasHeld && pr.held == world.RunPending && !e.vs.replayOnStalePending {
		// The replay starts from the run row its actor holds. A stale
		// pending row (a last completer's lazy read) has no startedAt, and
		// the published runtime cannot start a replay without one:
		// createWorkflowSessionInner throws RUNTIME_ERROR ("has no
		// startedAt timestamp", core 5.0.0-beta.52 dist/workflow.js) after
		// the terminal-log check above, and the run is failed. Observed
		// with simlab validate's stale reads (docs/VALIDATION.md); DOMAIN
		// §7's "replay anyway" is the replay-on-stale-pending variant.
		pr.state = psEnding
		e.call(p, OpEventsCreate, world.EvRunFailed, world.NoStep, -1)
		return
	}
	for _, fan := range e.h.Runs[d.Run].Fanouts {
		f := &e.fans[fan]
		fo := &e.h.Fanouts[fan]
		switch {
		case f.created < fo.Branches:
			pr.suspendFan, pr.suspendNext = fan, 0
			pr.state = psSuspending
			e.suspendChunk(p)
			return
		case f.finished < fo.Branches:
			// Every step exists; the queued ones have messages. Only the
			// inline ones may need this replay to run them.
			pr.suspendFan = fan
			e.startInline(p)
			return
		case f.failed > 0:
			pr.state = psEnding
			e.call(p, OpEventsCreate, world.EvRunFailed, world.NoStep, -1)
			return
		}
	}
	pr.state = psEnding
	e.call(p, OpEventsCreate, world.EvRunCompleted, world.NoStep, -1)
}

// suspendChunk writes the next chunk of step_created events (the whole
// fan-out at once on a World without createBatch); with resilient dispatch
// each queued step's message is published alongside its create.
func (e *engine) suspendChunk(p int32) {
	d := &e.h.Deliveries[p]
	pr := &e.procs[p]
	fo := &e.h.Fanouts[pr.suspendFan]
	w := &e.sc.Workflow
	if pr.suspendNext >= fo.Branches {
		pr.state = psDispatched
		if !w.ResilientDispatch {
			for i := fo.Inline; i < fo.Branches; i++ {
				e.publishStep(p, fo.FirstStep+world.StepID(i), pr.suspendFan, e.dispatchSite(d.Run, false))
			}
			if pr.outstanding > 0 {
				return
			}
		}
		e.startInline(p)
		return
	}
	chunk := int32(w.ChunkSize)
	if !e.prof.BatchCreates || w.ResilientDispatch {
		// The runtime's single-event path: every create at once. It
		// batches only on a World with createBatch and never together
		// with resilient dispatch (isBatchTransitionsEnabled, core
		// 5.0.0-beta.52 dist/runtime/constants.js).
		chunk = fo.Branches
	}
	end := min(fo.Branches, pr.suspendNext+chunk)
	for i := pr.suspendNext; i < end; i++ {
		step := fo.FirstStep + world.StepID(i)
		if e.store.Step(d.Run, step).Exists {
			continue // the replay sees it in the log
		}
		queued := i >= fo.Inline
		if queued && w.ResilientDispatch {
			e.publishStep(p, step, pr.suspendFan, e.dispatchSite(d.Run, true))
			if e.faults.Fire(e.siteLost) {
				e.fault(FaultDropCreate, d.Run, p)
				continue
			}
		}
		e.call(p, OpEventsCreate, world.EvStepCreated, step, pr.suspendFan)
	}
	pr.suspendNext = end
	if pr.outstanding == 0 {
		e.suspendChunk(p)
	}
}

func (e *engine) dispatchSite(run world.RunID, resilient bool) Site {
	switch {
	case e.h.Runs[run].Engine == EngineQuickJS:
		return SiteQuickJS
	case resilient:
		return SiteSuspensionPublish
	}
	return SiteNodeDispatchLoop
}

// publishStep publishes a step message produced by p's deployment.
func (e *engine) publishStep(p int32, step world.StepID, fan int32, site Site) {
	e.publishStepAfter(p, step, fan, site, 0)
}

// publishRetry re-publishes a retrying step (dispatch site 2), due after
// delay; its key names the attempt, so one retry is published once.
func (e *engine) publishRetry(p int32, step world.StepID, fan int32, delay sim.Time) {
	e.publishStepAfter(p, step, fan, SiteDelayedRetry, delay)
}

func (e *engine) publishStepAfter(p int32, step world.StepID, fan int32, site Site, delay sim.Time) {
	d := &e.h.Deliveries[p]
	dep := d.Deployment
	ver := e.deployments[dep].Producer
	m := Message{Kind: MsgStep, Run: d.Run, Step: step, Fanout: fan, HasInput: true,
		Target: e.h.Runs[d.Run].Deployment, Origin: -1, Key: msgKey(d.Run, step, 0), Delay: delay}
	if site == SiteDelayedRetry {
		m.Key = msgKey(d.Run, step, e.store.Step(d.Run, step).Attempt)
	}
	if ver == V2 && !(e.vs.retryDropsCtx && site == SiteDelayedRetry) {
		m.HasCtx = true
		m.Ctx = e.heldContext(p)
	}
	e.publish(p, m, site, ver)
}

// heldContext is the runContext producer p stamps: the run row as p (or
// the invocation an inline step runs in) last read it, else the runContext
// of the message it handles. Core stamps runDispatchContext(workflowRun),
// and a last completer's workflowRun is its lazy read's row: a stale
// pending row has no startedAt, and neither has the runContext then.
func (e *engine) heldContext(p int32) RunContext {
	for q := p; q >= 0; q = e.procs[q].parent {
		if e.procs[q].hasRow {
			return e.procs[q].row
		}
		if m := e.msgOf(q); m != nil {
			if m.HasCtx {
				return m.Ctx
			}
			break
		}
	}
	// Unreachable in the protocol (every producer has read the run or
	// holds a message with its identity); the store's row is the fallback.
	v := e.store.Get(e.h.Deliveries[p].Run)
	return RunContext{DeploymentID: v.DeploymentID, SpecVersion: v.SpecVersion, StartedAt: v.StartedAt, RootRunID: v.RootRunID}
}

// msgKey is a step message's idempotency key: the dispatch of a step, or one
// retry of it, is published at most once per key TTL.
func msgKey(run world.RunID, step world.StepID, attempt int32) uint64 {
	return 1<<63 | uint64(uint32(run))<<32 | uint64(uint32(step))<<8 | uint64(uint8(attempt))
}

// startInline runs the fan-out's first maxInline steps inside p, in parallel.
func (e *engine) startInline(p int32) {
	d := &e.h.Deliveries[p]
	pr := &e.procs[p]
	fo := &e.h.Fanouts[pr.suspendFan]
	pr.state = psInlineWait
	var children []int32
	for i := int32(0); i < fo.Inline; i++ {
		step := fo.FirstStep + world.StepID(i)
		// Every unfinished inline step runs again: no message exists for
		// it, so if the invocation that ran it crashed, only a replay can
		// finish it (its step_started is accepted as crash recovery). Two
		// replays at once both run it: at-least-once, as in the real system.
		if st := e.store.Step(d.Run, step); !st.Exists || st.Status.Terminal() {
			continue
		}
		c := e.newProc(Delivery{Msg: -1, Parent: p, Kind: MsgStep, Run: d.Run, Step: step, Fanout: pr.suspendFan,
			Target: d.Target, Deployment: d.Deployment, Version: d.Version})
		e.procs[c].held, e.procs[c].hasHeld = e.procs[p].held, true
		e.procs[p].outstanding++
		children = append(children, c)
	}
	if len(children) == 0 {
		e.done(p, DispAck, 0)
		return
	}
	for _, c := range children {
		e.advance(c)
	}
}

// ---- consumer ----

func (e *engine) legacy(p int32) bool {
	m := e.msgOf(p)
	return m == nil || !m.HasCtx || e.h.Deliveries[p].Version == V1
}

// prologue starts a step delivery: the legacy read, or nothing but the
// eager re-ensure of step_created on a redelivery.
func (e *engine) prologue(p int32) {
	d := &e.h.Deliveries[p]
	m := e.msgOf(p)
	e.procs[p].state = psPrologueDone
	reensure := d.Attempt > 1 && m.HasInput
	if e.legacy(p) {
		d.Prologue = PrologueRunsGet
		e.fans[d.Fanout].prologue++
		e.counts.PrologueFetches++
		e.read(p, ReasonPrologue, d.Fanout)
	} else {
		d.Prologue = PrologueRunContext
	}
	if reensure {
		e.call(p, OpEventsCreate, world.EvStepCreated, d.Step, d.Fanout)
	}
	if e.procs[p].outstanding == 0 {
		e.prologueDone(p)
	}
}

func (e *engine) prologueDone(p int32) {
	d := &e.h.Deliveries[p]
	pr := &e.procs[p]
	m := e.msgOf(p)
	var runDep int32
	if d.Prologue == PrologueRunsGet {
		st := e.calls[pr.getCall].StatusRead
		if st != world.RunRunning {
			e.outcome(p, OutcomeGone)
			e.done(p, DispAck, 0)
			return
		}
		pr.held, pr.hasHeld = st, true
		runDep = e.store.Get(d.Run).DeploymentID // immutable: a stale read agrees
	} else {
		runDep = m.Ctx.DeploymentID
	}
	if runDep != d.Deployment {
		e.reroute(p, runDep)
		return
	}
	if e.sc.Faults.CrashFirstDelivery && d.Attempt == 1 && !e.faults.Stopped() {
		e.crash(p)
		return
	}
	e.claimStep(p)
}

// reroute is the deployment guard: the message goes back to the run's
// deployment with its retry counter raised, or the run fails after three.
func (e *engine) reroute(p int32, runDep int32) {
	d := &e.h.Deliveries[p]
	pr := &e.procs[p]
	m := *e.msgOf(p)
	d.Rerouted = true
	e.counts.Reroutes++
	if m.Reroutes >= maxReroutes {
		pr.state = psEnding
		e.call(p, OpEventsCreate, world.EvRunFailed, world.NoStep, -1)
		return
	}
	m.Reroutes++
	m.Target = runDep
	m.Origin = m.ID
	m.Key = 0
	if e.vs.rerouteDropsInput && m.Kind == MsgStep {
		m.HasInput, m.HasCtx, m.Ctx = false, false, RunContext{}
	}
	pr.state = psAfterPublish
	e.publish(p, m, SiteReroute, e.deployments[d.Deployment].Producer)
}

func (e *engine) claimStep(p int32) {
	d := &e.h.Deliveries[p]
	e.procs[p].state = psClaimed
	e.call(p, OpEventsCreate, world.EvStepStarted, d.Step, d.Fanout)
}

func (e *engine) claimed(p int32) {
	d := &e.h.Deliveries[p]
	pr := &e.procs[p]
	c := &e.calls[pr.lastCall]
	switch c.Result {
	case world.OK:
		d.BodyRan = true
		d.BodyStart = e.k.Now()
		if e.store.Get(d.Run).Status.Terminal() {
			e.counts.BodiesAfterEnd++
		}
		pr.state = psBodyDone
		pr.outstanding++
		e.k.After(e.sc.Workflow.Body.Draw(e.c), evBodyDone, 0, uint64(p))
	case world.RunExpired:
		e.outcome(p, OutcomeGone)
		e.done(p, DispAck, 0)
	case world.EntityConflict:
		e.outcome(p, OutcomeSkipped)
		e.checkPending(p)
	case world.TooEarly:
		e.outcome(p, OutcomeThrottled)
		if d.Msg < 0 {
			// An inline step a replay finds retrying has no message to be
			// redelivered: its retry's re-publish may have died with the
			// actor that wrote step_retrying. The replay dispatches it (the
			// retry's idempotency key absorbs it if the first got out).
			e.procs[p].state = psAfterPublish
			e.publishRetry(p, d.Step, d.Fanout, max(0, c.RetryAfter-e.k.Now()))
			return
		}
		e.done(p, DispRedeliver, c.RetryAfter-e.k.Now())
	case world.NotFound:
		m := e.msgOf(p)
		if m != nil && m.HasInput && !pr.recreated && !e.vs.attemptGatedRecovery {
			// In-band recovery: create the step from the message and claim
			// again within this delivery.
			pr.recreated = true
			pr.state = psRecreated
			e.call(p, OpEventsCreate, world.EvStepCreated, d.Step, d.Fanout)
			return
		}
		e.done(p, DispThrow, 0)
	}
}

// bodyDone decides the body's result and writes it.
func (e *engine) bodyDone(p int32) {
	d := &e.h.Deliveries[p]
	d.BodyEnd = e.k.Now()
	pr := &e.procs[p]
	w := &e.sc.Workflow
	fo := &e.h.Fanouts[d.Fanout]
	idx := int32(d.Step - fo.FirstStep)
	attempt := e.store.Step(d.Run, d.Step).Attempt
	fatal := idx >= fo.Branches-int32(w.FatalSteps)
	failed := fatal || (idx >= fo.Branches-int32(w.FlakySteps) && attempt <= int32(w.FlakyTimes))
	if !failed && e.faults.Fire(e.siteBody) {
		failed = true
		e.fault(FaultBodyFailure, d.Run, p)
	}
	pr.state = psTerminalWritten
	switch {
	case !failed:
		e.call(p, OpEventsCreate, world.EvStepCompleted, d.Step, d.Fanout)
	case fatal || attempt > int32(w.MaxRetries):
		e.call(p, OpEventsCreate, world.EvStepFailed, d.Step, d.Fanout)
	default:
		idx := e.call(p, OpEventsCreate, world.EvStepRetrying, d.Step, d.Fanout)
		e.calls[idx].RetryAfter = e.k.Now().Add(w.RetryDelay)
	}
}

func (e *engine) terminalWritten(p int32) {
	c := &e.calls[e.procs[p].lastCall]
	switch c.Result {
	case world.OK:
		switch c.Event {
		case world.EvStepRetrying:
			e.outcome(p, OutcomeRetry)
			e.procs[p].state = psAfterPublish
			e.publishRetry(p, c.Step, c.Fanout, sim.Time(e.sc.Workflow.RetryDelay))
			return
		case world.EvStepFailed:
			e.outcome(p, OutcomeFailed)
		default:
			e.outcome(p, OutcomeCompleted)
		}
		if e.vs.atomicFanIn {
			if c.WasLast {
				e.lastCompleter(p)
				return
			}
			e.done(p, DispAck, 0)
			return
		}
		e.checkPending(p)
	case world.EntityConflict:
		e.outcome(p, OutcomeSkipped)
		e.checkPending(p)
	default:
		e.outcome(p, OutcomeGone)
		e.done(p, DispAck, 0)
	}
}

// checkPending lists the log to learn whether the fan-out is finished.
func (e *engine) checkPending(p int32) {
	d := &e.h.Deliveries[p]
	if e.vs.atomicFanIn {
		// The atomic World answered with the write (or the refused claim).
		if c := &e.calls[e.procs[p].lastCall]; c.WasLast {
			e.lastCompleter(p)
			return
		}
		e.done(p, DispAck, 0)
		return
	}
	e.procs[p].state = psListed
	e.call(p, OpEventsList, 0, world.NoStep, d.Fanout)
}

func (e *engine) listed(p int32) {
	if !e.calls[e.procs[p].lastCall].PendingEmpty {
		e.done(p, DispAck, 0)
		return
	}
	e.lastCompleter(p)
}

// lastCompleter: this delivery saw the fan-out finished. The fetch-free path
// makes the fan-out's one lazy runs.get; an actor that already holds the run
// (the orchestrator's inline step, or a legacy consumer) continues with it.
func (e *engine) lastCompleter(p int32) {
	d := &e.h.Deliveries[p]
	pr := &e.procs[p]
	d.LastComplete = true
	f := &e.fans[d.Fanout]
	f.lastSeen++
	if d.Msg >= 0 && d.Prologue == PrologueRunContext {
		f.lazy++
		e.counts.LazyFetches++
		pr.state = psLazyRead
		e.read(p, ReasonLastCompleter, d.Fanout)
		return
	}
	if pr.hasHeld && (pr.held.Terminal() || (e.vs.strictGate && pr.held != world.RunRunning)) {
		if pr.held.Terminal() {
			e.counts.EndSeen++
		}
		e.done(p, DispAck, 0)
		return
	}
	e.continueFanout(p)
}

// continueFanout replays the workflow inline after a finished fan-out.
func (e *engine) continueFanout(p int32) {
	d := &e.h.Deliveries[p]
	fo := &e.h.Fanouts[d.Fanout]
	if !fo.Continued {
		fo.Continued = true
		fo.ContinuedBy = e.callerOf(p).Kind
	}
	d.Continued = true
	e.procs[p].state = psReplayListed
	e.call(p, OpEventsList, 0, world.NoStep, -1)
}
