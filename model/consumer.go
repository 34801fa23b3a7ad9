package model

import (
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// This file is what a consumer does with a step message (DOMAIN.md §5, §7),
// in order: the prologue (a v1 consumer, or a v2 one whose message has no
// runContext, reads the run: runs.get; a redelivery re-ensures step_created),
// the deployment guard (a message on the wrong deployment is re-routed), the
// claim (step_started, with in-band recovery of a missing step), the body,
// and the terminal write (step_completed, step_failed or step_retrying and
// its delayed re-publish). A consumer whose write may have finished the
// fan-out then acts as the last completer (completer.go). Inline steps run
// the same claim, body and terminal write inside an orchestrator invocation.

// maxReroutes is how often the deployment guard re-routes one message
// before it fails the run.
const maxReroutes = 3

// consumer is a step message's handler.
type consumer struct{ *engine }

// legacy says delivery p reads the run before its claim: a v1 consumer, an
// inline step (no message), or a message without runContext.
func (con *consumer) legacy(p int32) bool {
	m := con.msgOf(p)
	return m == nil || !m.HasCtx || con.h.Deliveries[p].Version == V1
}

// prologue starts a step delivery: the legacy read, or nothing but the
// eager re-ensure of step_created on a redelivery.
func (con *consumer) prologue(p int32) {
	d := &con.h.Deliveries[p]
	m := con.msgOf(p)
	con.procs[p].state = psPrologueDone
	reensure := d.Attempt > 1 && m.HasInput
	if con.legacy(p) {
		d.Prologue = PrologueRunsGet
		con.completer.prologueRead(d.Fanout)
		con.counts.PrologueFetches++
		con.read(p, ReasonPrologue, d.Fanout)
	} else {
		d.Prologue = PrologueRunContext
	}
	if reensure {
		con.call(p, OpEventsCreate, world.EvStepCreated, d.Step, d.Fanout)
	}
	if con.procs[p].outstanding == 0 {
		con.prologueDone(p)
	}
}

// prologueDone is the prologue answered: a run that is not running ends the
// delivery; the deployment guard checks the run's deployment (from the read,
// or from runContext); then the claim.
func (con *consumer) prologueDone(p int32) {
	d := &con.h.Deliveries[p]
	pr := &con.procs[p]
	m := con.msgOf(p)
	var runDep int32
	if d.Prologue == PrologueRunsGet {
		if con.readThrew(p) {
			return
		}
		st := con.calls[pr.getCall].StatusRead
		if st != world.RunRunning {
			con.outcome(p, OutcomeGone)
			con.done(p, DispAck, 0)
			return
		}
		pr.held, pr.hasHeld = st, true
		runDep = con.store.Get(d.Run).DeploymentID // immutable: a stale read agrees
	} else {
		runDep = m.Ctx.DeploymentID
	}
	if runDep != d.Deployment {
		con.reroute(p, runDep)
		return
	}
	if con.sc.Faults.CrashFirstDelivery && d.Attempt == 1 && !con.faults.Stopped() {
		con.crash(p)
		return
	}
	con.claimStep(p)
}

// reroute is the deployment guard: the message goes back to the run's
// deployment with its retry counter raised, or the run fails after three.
func (con *consumer) reroute(p int32, runDep int32) {
	d := &con.h.Deliveries[p]
	pr := &con.procs[p]
	m := *con.msgOf(p)
	d.Rerouted = true
	con.counts.Reroutes++
	if m.Reroutes >= maxReroutes {
		pr.state = psEnding
		con.call(p, OpEventsCreate, world.EvRunFailed, world.NoStep, -1)
		return
	}
	m.Reroutes++
	m.Target = runDep
	m.Origin = m.ID
	m.Key = 0
	if con.vs.rerouteDropsInput && m.Kind == MsgStep {
		m.HasInput, m.HasCtx, m.Ctx = false, false, RunContext{}
	}
	pr.state = psAfterPublish
	con.publish(p, m, SiteReroute, con.deployments[d.Deployment].Producer)
}

// claimStep writes step_started: the claim.
func (con *consumer) claimStep(p int32) {
	d := &con.h.Deliveries[p]
	con.procs[p].state = psClaimed
	idx := con.newCall(p, OpEventsCreate, d.Run, d.Step, d.Fanout)
	con.calls[idx].Event = world.EvStepStarted
	// core writes no step_created for an inline step: its claim is a lazy
	// step_started that creates it (handleSuspension skips the
	// lazyInlineCorrelationIds). Which steps those are, core decides from
	// the log its replay loaded: a step that log shows created (a crashed
	// invocation's) is claimed as any existing step, one it does not is
	// claimed lazily even if another invocation has created it since, and
	// the World then refuses the claim ("already created").
	lazy := false
	if d.Msg < 0 {
		created, _ := con.completer.stepView(d.Fanout, d.Step, con.procs[con.procs[p].parent].loadAt)
		lazy = !created
	}
	con.calls[idx].Lazy = lazy
	con.issue(p, idx)
	if lazy && !con.sc.Workflow.AwaitInlineClaims && con.turbo(p) {
		// Optimistic inline start (core's optimisticStart, forced on in
		// turbo: forceOptimisticStart): the lazy step_started is fired
		// without awaiting it and the body runs at once against a
		// synthesized step (attempt 1); the claim's answer is reconciled
		// before the terminal write (claimed), which throws the result away
		// if the claim lost. So a lost claim's body has run all the same.
		pr := &con.procs[p]
		pr.optimistic = true
		con.beginBody(p, 1)
	}
}

// turbo reports whether inline step p runs in a turbo invocation.
func (con *consumer) turbo(p int32) bool {
	root := con.procs[p].root
	return root >= 0 && con.h.Deliveries[root].Kind == MsgWorkflow && con.turboDelivery(root)
}

// beginBody starts p's step body now, as the claim answered with attempt.
func (con *consumer) beginBody(p int32, attempt int32) {
	d := &con.h.Deliveries[p]
	pr := &con.procs[p]
	d.BodyRan = true
	d.BodyStart = con.k.Now()
	pr.claimAttempt = attempt
	if con.store.Get(d.Run).Status.Terminal() {
		con.counts.BodiesAfterEnd++
	}
	pr.outstanding++
	dur := con.sc.Workflow.Body.Draw(con.c)
	pr.bodyEnd = d.BodyStart.Add(dur)
	con.k.After(dur, evBodyDone, 0, uint64(p))
}

// claimed is the claim answered: run the body, or end the delivery as the
// World's answer says (gone, skipped, throttled, or recover a missing step).
func (con *consumer) claimed(p int32) {
	d := &con.h.Deliveries[p]
	pr := &con.procs[p]
	c := &con.calls[pr.lastCall]
	if pr.optimistic {
		// The optimistic body has finished as well: reconcile the claim
		// (reconcileOptimisticStart). Won, its result is written; lost,
		// the result is thrown away and the delivery goes on as a refused
		// claim does below.
		d.BodyEnd = pr.bodyEnd
		if c.Result == world.OK {
			pr.claimAttempt = c.Attempt
			con.bodyDone(p)
			return
		}
	}
	switch c.Result {
	case world.OK:
		pr.state = psBodyDone
		con.beginBody(p, c.Attempt)
	case world.RunExpired:
		con.outcome(p, OutcomeGone)
		con.done(p, DispAck, 0)
	case world.EntityConflict:
		con.outcome(p, OutcomeSkipped)
		if con.handOffReplay(p) {
			return
		}
		con.completer.checkPending(p)
	case world.TooEarly:
		con.outcome(p, OutcomeThrottled)
		if d.Msg < 0 {
			// An inline step a replay finds retrying has no message to be
			// redelivered: its retry's re-publish may have died with the
			// actor that wrote step_retrying. The replay dispatches it (the
			// retry's idempotency key absorbs it if the first got out).
			con.procs[p].state = psAfterPublish
			con.publishRetry(p, d.Step, d.Fanout, max(0, c.RetryAfter-con.k.Now()))
			return
		}
		con.done(p, DispRedeliver, c.RetryAfter-con.k.Now())
	case world.NotFound:
		m := con.msgOf(p)
		if m != nil && m.HasInput && !pr.recreated && !con.vs.attemptGatedRecovery {
			// In-band recovery: create the step from the message and claim
			// again within this delivery.
			pr.recreated = true
			pr.state = psRecreated
			con.call(p, OpEventsCreate, world.EvStepCreated, d.Step, d.Fanout)
			return
		}
		con.done(p, DispThrow, 0)
	}
}

// recreated is the in-band recovery's step_created answered: claim again.
func (con *consumer) recreated(p int32) {
	con.h.Deliveries[p].Recovered = true
	con.counts.Recoveries++
	con.claimStep(p)
}

// bodyDone decides the body's result and writes it.
func (con *consumer) bodyDone(p int32) {
	d := &con.h.Deliveries[p]
	pr := &con.procs[p]
	d.BodyEnd = pr.bodyEnd
	w := &con.sc.Workflow
	fo := &con.h.Fanouts[d.Fanout]
	idx := int32(d.Step - fo.FirstStep)
	attempt := pr.claimAttempt
	fatal := idx >= fo.Branches-int32(w.FatalSteps)
	failed := fatal || (idx >= fo.Branches-int32(w.FlakySteps) && attempt <= int32(w.FlakyTimes))
	if !failed && con.faults.Fire(con.siteBody) {
		failed = true
		con.fault(FaultBodyFailure, d.Run, p)
	}
	pr.state = psTerminalWritten
	switch {
	case !failed:
		con.call(p, OpEventsCreate, world.EvStepCompleted, d.Step, d.Fanout)
	case fatal || attempt > int32(w.MaxRetries):
		con.call(p, OpEventsCreate, world.EvStepFailed, d.Step, d.Fanout)
	default:
		idx := con.call(p, OpEventsCreate, world.EvStepRetrying, d.Step, d.Fanout)
		con.calls[idx].RetryAfter = con.k.Now().Add(w.RetryDelay)
	}
}

// handOffReplay is core beta.55 on an invoke World: a queued step that
// finished (or was skipped) publishes a workflow message for its run and
// returns; the World's runner lane replays the workflow, one delivery of
// the run at a time. Inline steps stay in their invocation's loop. It
// reports whether it handed off.
func (con *consumer) handOffReplay(p int32) bool {
	d := &con.h.Deliveries[p]
	if !con.prof.Invoke || d.Msg < 0 {
		return false
	}
	m := Message{Kind: MsgWorkflow, Run: d.Run, Step: world.NoStep, Fanout: -1, Target: con.h.Runs[d.Run].Deployment, Origin: -1}
	con.procs[p].state = psAfterPublish
	con.publish(p, m, SiteInvokeReplay, con.deployments[d.Deployment].Producer)
	return true
}

// terminalWritten is the terminal write answered: a retry comes back after
// its delay; a completion or failure goes on to the fan-in (completer.go).
func (con *consumer) terminalWritten(p int32) {
	c := &con.calls[con.procs[p].lastCall]
	switch c.Result {
	case world.OK:
		switch c.Event {
		case world.EvStepRetrying:
			con.outcome(p, OutcomeRetry)
			if con.h.Deliveries[p].Msg >= 0 {
				// A queued step's retry is its own message again: core
				// answers the queue with {timeoutSeconds} (runtime.js: the
				// step handler's stepResult.type === 'retry', every release
				// from beta.50 to beta.55), and the queue redelivers the
				// same message after that delay, as a next attempt. No new
				// message, so a crash after step_retrying leaves one message
				// of the step, not two.
				con.done(p, DispRedeliver, sim.Time(con.sc.Workflow.RetryDelay))
				return
			}
			// An inline step's retry is queued as a background step
			// (dispatch site 2: the invocation's toRetry).
			con.procs[p].state = psAfterPublish
			con.publishRetry(p, c.Step, c.Fanout, sim.Time(con.sc.Workflow.RetryDelay))
			return
		case world.EvStepFailed:
			con.outcome(p, OutcomeFailed)
		default:
			con.outcome(p, OutcomeCompleted)
		}
		if con.handOffReplay(p) {
			return
		}
		if con.vs.atomicFanIn {
			if c.WasLast {
				con.completer.become(p)
				return
			}
			con.done(p, DispAck, 0)
			return
		}
		con.completer.checkPending(p)
	case world.EntityConflict:
		con.outcome(p, OutcomeSkipped)
		if con.handOffReplay(p) {
			return
		}
		con.completer.checkPending(p)
	default:
		con.outcome(p, OutcomeGone)
		if c.Event != world.EvStepCompleted {
			// core catches only an entity conflict around step_retrying
			// and step_failed (and a run-expired answer only around
			// step_completed): any other refusal is rethrown, and the
			// queue delivers the message again (runtime/step-executor.js).
			con.done(p, DispThrow, 0)
			return
		}
		con.done(p, DispAck, 0)
	}
}
