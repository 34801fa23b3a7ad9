package model

import (
	"time"

	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// This file is the orchestrator of DOMAIN.md §5–§6: a workflow message's
// delivery starts the run (run_started, which starts a pending run and
// answers with its log) and replays the workflow; the replay suspends on the first
// unfinished fan-out, creating its steps in chunks (the suspension handler),
// dispatching the queued ones and running the first max_inline steps inline
// (each an inline delivery driven by consumer.go's claim and body). A last
// completer's continuation (completer.go) enters here at the replay.

// orchestrator is the workflow's replay and suspension handler.
type orchestrator struct{ *engine }

// suspension is the state an orchestrator invocation keeps while it
// suspends on a fan-out; it lives in the invocation's proc.
type suspension struct {
	suspendFan  int32 // the fan-out being suspended on or run inline, or -1
	suspendNext int32 // next step to create in the fan-out being suspended
	// The prior steps are the queued steps a resilient suspension found
	// already created and unfinished: core's dispatch loop publishes them
	// after the suspension handler (which publishes only what it creates).
	// They are engine.priors[priorAt:priorAt+priorN] (addPrior), not a
	// slice of the proc's own: a slice field would make every proc hold a
	// pointer, and the garbage collector scan the whole procs table of a
	// large run over and over while it grows (docs/PERFORMANCE.md, point 4,
	// third pass).
	priorAt, priorN int32
	// batchAt is where a batched suspension's chunks start in the engine's
	// batchLeft (suspendBatched); batchWork counts its creates and
	// publishes still in flight (the deferred batch work core joins before
	// its inline continuation), and parked is 1 + the inline step that
	// finished last and waits for that work before it lists (0: none).
	batchAt, batchWork, parked int32
}

// addPrior appends step to p's prior steps. A proc's steps are contiguous
// in the engine's pool; when another proc's were appended after them, they
// move to the pool's end first.
func (o *orchestrator) addPrior(p int32, step world.StepID) {
	pr := &o.procs[p]
	switch end := pr.priorAt + pr.priorN; {
	case pr.priorN == 0:
		pr.priorAt = int32(len(o.priors))
	case int(end) != len(o.priors):
		at := int32(len(o.priors))
		o.priors = append(o.priors, o.priors[pr.priorAt:end]...)
		pr.priorAt = at
	}
	o.priors = append(o.priors, step)
	pr.priorN++
}

// begin starts the workflow message's delivery. core reads nothing first:
// it writes run_started, which starts a pending run, is answered ok on a
// running one (idempotent) and refused on an ended one, and world-local
// answers it with the run's log (its preload), so there is no runs.get and
// no list either. A delivery to a deployment other than the message's own
// (a misdelivery) loads the run to re-route it, as the deployment guard
// does.
func (o *orchestrator) begin(p int32) {
	d := &o.h.Deliveries[p]
	if d.Deployment == d.Target {
		o.procs[p].state = psOrchStarted
		o.call(p, OpEventsCreate, world.EvRunStarted, world.NoStep, -1)
		return
	}
	o.procs[p].state = psOrchLoaded
	o.read(p, ReasonOrchestrator, -1)
}

// loaded is the run read: a run that ended is gone, a run pinned to another
// deployment is re-routed, a pending run is started, else its log is listed.
func (o *orchestrator) loaded(p int32) {
	d := &o.h.Deliveries[p]
	pr := &o.procs[p]
	if o.readThrew(p) {
		return
	}
	st := o.calls[pr.getCall].StatusRead
	if st.Terminal() {
		o.outcome(p, OutcomeGone)
		o.done(p, DispAck, 0)
		return
	}
	if runDep := o.h.Runs[d.Run].Deployment; runDep != d.Deployment {
		o.cons.reroute(p, runDep)
		return
	}
	if st == world.RunPending {
		pr.state = psOrchStarted
		o.call(p, OpEventsCreate, world.EvRunStarted, world.NoStep, -1)
		return
	}
	pr.held, pr.hasHeld = st, true
	pr.state = psReplayListed
	o.call(p, OpEventsList, 0, world.NoStep, -1)
}

// started is run_started's answer: a refusal means the run is gone.
func (o *orchestrator) started(p int32) {
	d := &o.h.Deliveries[p]
	pr := &o.procs[p]
	if o.calls[pr.lastCall].Result != world.OK {
		o.outcome(p, OutcomeGone)
		o.done(p, DispAck, 0)
		return
	}
	pr.held, pr.hasHeld = world.RunRunning, true
	pr.state = psReplayListed
	if o.turboDelivery(p) {
		// The run's first message (it carries the run's input) runs in
		// turbo on its first delivery (core's default, WORKFLOW_TURBO,
		// beta.50 on): run_started skips its preload and the first replay
		// reads an empty log, so a run_cancelled that landed while
		// run_started was in flight is not seen until the next listing
		// (the continuation's), after the fan-out's steps were created and
		// started (realengine
		// TestForcedCancelRacingStartReopensTheRealRun). run_started's call
		// carries no LogTerminal: an empty log holds no end.
		pr.loadAt = -1
		o.startReplay(p)
		return
	}
	// Any other delivery replays the log run_started preloaded after its
	// write.
	o.calls[pr.lastCall].LogTerminal = o.store.LogEnded(d.Run)
	pr.loadAt = o.calls[pr.lastCall].End
	o.startReplay(p)
}

// turboDelivery reports whether workflow delivery p runs in turbo: the
// run's first message (it carries the run's input) on its first delivery
// (runtime.js: isTurboEnabled() && runInput !== undefined &&
// metadata.attempt === 1).
func (e *engine) turboDelivery(p int32) bool {
	m := e.msgOf(p)
	return m != nil && m.HasInput && e.h.Deliveries[p].Attempt == 1
}

// replay is the workflow replayed from its log (just listed): it finds the
// first fan-out that is not finished and either suspends on it (creating
// and dispatching what is missing) or, if all its steps exist, has nothing
// to do; after the last fan-out it ends the run.
func (o *orchestrator) replay(p int32) {
	d := &o.h.Deliveries[p]
	pr := &o.procs[p]
	if o.calls[pr.lastCall].LogTerminal {
		// The log holds the run's end: core's replay loop exits here
		// (hasRecordedTerminalRunEvent, runtime.js), doing no replay work.
		if !o.vs.replayIgnoresTerminalLog {
			o.counts.EndSeen++
			o.done(p, DispAck, 0)
			return
		}
		o.counts.ReplaysAfterEnd++
	}
	if pr.hasHeld && pr.held == world.RunPending && !o.vs.replayOnStalePending {
		// The replay starts from the run row its actor holds. A stale
		// pending row (a last completer's lazy read) has no startedAt, and
		// the published runtime cannot start a replay without one:
		// createWorkflowSessionInner throws RUNTIME_ERROR ("has no
		// startedAt timestamp", core 5.0.0-beta.52 dist/workflow.js) after
		// the terminal-log check above, and the run is failed. Observed
		// with simlab validate's stale reads (docs/VALIDATION.md); DOMAIN
		// §7's "replay anyway" is the replay-on-stale-pending variant.
		pr.state = psEnding
		o.call(p, OpEventsCreate, world.EvRunFailed, world.NoStep, -1)
		return
	}
	fans := o.h.Runs[d.Run].Fanouts
	settled := &o.completer.settled[d.Run]
	for i := o.replayFrom(p); i < len(fans); i++ {
		fan := fans[i]
		fo := &o.h.Fanouts[fan]
		created, finished, failed := o.completer.logView(fan, pr.loadAt)
		// A finished fan-out is judged first: core's replay resolves a step
		// from its step_completed (or rejects it from its step_failed)
		// whether or not the log shows its step_created yet (the step
		// consumer, core dist/step.js), and on world-postgres a step can
		// start and end while its step_created's event insert is still in
		// flight (the row is inserted first).
		switch {
		case finished >= fo.Branches && failed > 0:
			pr.state = psEnding
			o.call(p, OpEventsCreate, world.EvRunFailed, world.NoStep, -1)
			return
		case finished >= fo.Branches:
			// The loop starts at the settled fan-outs' end and passes
			// over finished ones in order: this one is settled too.
			*settled = max(*settled, int32(i+1))
			continue
		case created < fo.Branches:
			pr.suspendFan, pr.suspendNext = fan, 0
			pr.state = psSuspending
			o.suspendChunk(p)
			return
		default:
			// Every step exists. core's dispatch loop publishes every
			// pending queued step again under its step-scoped idempotency
			// key (runtime.js, stepDispatchIdempotencyKey): a step whose
			// message an invocation that crashed never published gets one
			// now, and the queue absorbs the rest while their key is held.
			// Then the inline steps run.
			pr.suspendFan = fan
			pr.state = psDispatched
			if o.redispatch(p, fan, false, nil); pr.outstanding > 0 {
				return
			}
			o.startInline(p)
			return
		}
	}
	pr.state = psEnding
	o.call(p, OpEventsCreate, world.EvRunCompleted, world.NoStep, -1)
}

// replayFrom is the first of p's run's fan-outs p's replay must judge: the
// settled fan-outs are finished in the World; a log loaded before the last
// of them finished does not show it so, and the replay goes on from there.
// (Each fan-out's steps are created only once a replay saw the one before
// finished, so the fan-outs' last marks grow in order.)
func (o *orchestrator) replayFrom(p int32) int {
	run := o.h.Deliveries[p].Run
	fans := o.h.Runs[run].Fanouts
	from := int(o.completer.settled[run])
	for from > 0 && o.procs[p].loadAt < o.completer.fans[fans[from-1]].lastMark {
		from--
	}
	return from
}

// startReplay replays the workflow from the log p just loaded, once the
// replay's cost (replayCost) has passed.
func (o *orchestrator) startReplay(p int32) {
	if cost := o.replayCost(p); cost > 0 {
		pr := &o.procs[p]
		pr.state = psReplaying
		pr.outstanding++
		if o.sc.Workflow.ReplayCPUs > 0 {
			o.replayShared(p, int64(cost))
			return
		}
		o.k.After(cost, evBodyDone, 0, uint64(p))
		return
	}
	o.replay(p)
}

// replayCost is what p's replay costs the runtime before it acts
// (Workflow.ReplayBase, ReplayPerEntity, ReplayPerEvent): the entities it
// mints are the steps of every fan-out up to the first its log does not
// show finished, that one included (all of them when the run ends); the
// events are the run's log as the list answered (none for turbo's empty
// one). A replay that runs no workflow code costs nothing: one whose log
// holds the run's end, or that a stale pending row fails first (replay).
func (o *orchestrator) replayCost(p int32) time.Duration {
	w := &o.sc.Workflow
	if w.ReplayBase == 0 && w.ReplayPerEntity == 0 && w.ReplayPerEvent == 0 {
		return 0
	}
	pr := &o.procs[p]
	if o.calls[pr.lastCall].LogTerminal && !o.vs.replayIgnoresTerminalLog {
		return 0
	}
	if pr.hasHeld && pr.held == world.RunPending && !o.vs.replayOnStalePending {
		return 0
	}
	run := o.h.Deliveries[p].Run
	fans := o.h.Runs[run].Fanouts
	from := o.replayFrom(p)
	entities := 0
	if from < len(fans) {
		entities = int(o.h.Fanouts[fans[from]].FirstStep)
	}
	for i := from; i < len(fans); i++ {
		fo := &o.h.Fanouts[fans[i]]
		entities += int(fo.Branches)
		if _, finished, failed := o.completer.logView(fans[i], pr.loadAt); finished < fo.Branches || failed > 0 {
			break
		}
	}
	events := 0
	if pr.loadAt >= 0 {
		events = len(o.store.Log(run))
	}
	return w.ReplayBase + w.ReplayPerEntity*time.Duration(entities) + w.ReplayPerEvent*time.Duration(events)
}

// suspendChunk writes the next chunk of step_created events (the whole
// fan-out at once on a World without createBatch); with resilient dispatch
// each queued step's message is published alongside its create.
func (o *orchestrator) suspendChunk(p int32) {
	d := &o.h.Deliveries[p]
	pr := &o.procs[p]
	fo := &o.h.Fanouts[pr.suspendFan]
	w := &o.sc.Workflow
	if pr.suspendNext >= fo.Branches {
		pr.state = psDispatched
		if w.ResilientDispatch {
			// The handler published what it created; the dispatch loop
			// publishes the pending steps it found created.
			o.redispatch(p, pr.suspendFan, true, o.takePriors(p))
		} else {
			o.redispatch(p, pr.suspendFan, false, nil)
		}
		if pr.outstanding > 0 {
			return
		}
		o.startInline(p)
		return
	}
	if o.prof.BatchCreates && !w.ResilientDispatch {
		o.suspendBatched(p)
		return
	}
	chunk := int32(w.ChunkSize)
	if !o.prof.BatchCreates || w.ResilientDispatch {
		// The runtime's single-event path: every create at once. It
		// batches only on a World with createBatch and never together
		// with resilient dispatch (isBatchTransitionsEnabled, core
		// 5.0.0-beta.52 dist/runtime/constants.js).
		chunk = fo.Branches
	}
	end := min(fo.Branches, pr.suspendNext+chunk)
	for i := pr.suspendNext; i < end; i++ {
		step := fo.FirstStep + world.StepID(i)
		queued := i >= fo.Inline
		if created, finished := o.completer.stepView(pr.suspendFan, step, pr.loadAt); created {
			// The replay sees it in the log; if it is pending, the
			// dispatch loop publishes it after the handler.
			if queued && w.ResilientDispatch && !finished {
				o.addPrior(p, step)
			}
			continue
		}
		if !queued {
			// An inline step is created by its own lazy claim (startInline).
			continue
		}
		if w.ResilientDispatch {
			o.publishStep(p, step, pr.suspendFan, o.dispatchSite(d.Run, true))
			if o.faults.Fire(o.siteLost) {
				o.fault(FaultDropCreate, d.Run, p)
				continue
			}
		}
		o.call(p, OpEventsCreate, world.EvStepCreated, step, pr.suspendFan)
	}
	pr.suspendNext = end
	if pr.outstanding == 0 {
		o.suspendChunk(p)
	}
}

// suspendBatched is core's batched fan-out (a World with
// events.createBatch, no resilient dispatch; core 5.0.0-beta.52
// runtime/suspension-handler.js, batchFanoutEligible): every chunk's
// creates go out at once, each chunk's steps are published as soon as its
// own creates are in (publish-after-create per chunk), and the inline steps
// start at once, their lazy claims standing for the pair chunk that alone
// gates the handler's return; the invocation acks once the trailing chunks,
// their publishes and the inline steps are done (deferredBatchWork, joined
// before ack). The queued steps its log showed created and unfinished are
// published last, as the dispatch loop does (batchDone).
func (o *orchestrator) suspendBatched(p int32) {
	pr := &o.procs[p]
	fan := pr.suspendFan
	fo := &o.h.Fanouts[fan]
	cs := int32(o.sc.Workflow.ChunkSize)
	pr.state = psBatching
	pr.batchAt = int32(len(o.batchLeft))
	for range (fo.Branches - fo.Inline + cs - 1) / cs {
		o.batchLeft = append(o.batchLeft, 0)
	}
	// The pairs' chunk leads: the inline claims go out first.
	pr.batchWork, pr.parked = int32(o.backstops(p, fan)), 0
	o.spawnInline(p)
	for i := fo.Inline; i < fo.Branches; i++ {
		step := fo.FirstStep + world.StepID(i)
		if created, finished := o.completer.stepView(fan, step, pr.loadAt); created {
			if !finished {
				o.addPrior(p, step)
			}
			continue
		}
		o.batchLeft[pr.batchAt+(i-fo.Inline)/cs]++
		pr.batchWork++
		o.call(p, OpEventsCreate, world.EvStepCreated, step, fan)
	}
	if pr.outstanding == 0 {
		o.batchDone(p)
	}
}

// batchCreated is one of batched suspension p's creates answered: once
// its chunk's are all in, the chunk's steps are published.
func (o *orchestrator) batchCreated(p int32, step world.StepID) {
	pr := &o.procs[p]
	fan := pr.suspendFan
	fo := &o.h.Fanouts[fan]
	cs := int32(o.sc.Workflow.ChunkSize)
	k := (int32(step-fo.FirstStep) - fo.Inline) / cs
	if o.batchLeft[pr.batchAt+k]--; o.batchLeft[pr.batchAt+k] == 0 {
		site := o.dispatchSite(o.h.Deliveries[p].Run, false)
		for i := fo.Inline + k*cs; i < min(fo.Branches, fo.Inline+(k+1)*cs); i++ {
			s := fo.FirstStep + world.StepID(i)
			if created, _ := o.completer.stepView(fan, s, pr.loadAt); !created {
				pr.batchWork++
				o.republishStep(p, s, fan, site)
			}
		}
	}
	o.batchWorkDone(p)
}

// batchWorkDone counts one of p's creates or publishes in, and once none
// is left lets the inline step parked on them go on to its fan-in.
func (o *orchestrator) batchWorkDone(p int32) {
	pr := &o.procs[p]
	if pr.batchWork--; pr.batchWork > 0 || pr.parked == 0 {
		return
	}
	c := pr.parked - 1
	pr.parked = 0
	o.advance(c)
}

// parkFanIn reports whether inline step c, the last of its invocation's
// inline steps to finish, must wait for its batched suspension's creates
// and publishes before it lists: core joins that deferred batch work, then
// reloads the log once (runtime.js, "Join the dispatch publishes launched
// above and the fold's deferred batch work"). It parks c if so.
func (o *orchestrator) parkFanIn(c int32) bool {
	p := o.procs[c].parent
	if p < 0 || o.procs[p].state != psBatching || o.procs[p].batchWork == 0 {
		return false
	}
	o.procs[c].state = psParked
	o.procs[p].parked = c + 1
	return true
}

// batchDone is batched suspension p with its chunks, their publishes and
// its inline steps done: the prior steps go out, then p acks.
func (o *orchestrator) batchDone(p int32) {
	pr := &o.procs[p]
	if pr.priorN > 0 {
		o.publishPending(p, pr.suspendFan, o.takePriors(p))
		if pr.outstanding > 0 {
			pr.state = psAfterPublish
			return
		}
	}
	o.done(p, DispAck, 0)
}

// redispatch is core's dispatch loop over the pending queued steps of
// fan-out fan (not finished in the log p's replay loaded): each is
// published under its step's idempotency key. With limited, only the steps
// in only (a resilient suspension's prior ones). The model's invocation
// replays a fan-out it suspends on once, so core beta.52's skip of a step
// it already published in the same invocation (publishedStepCorrelationIds)
// never applies; beta.50's orchestrator replays again after its inline
// steps and re-publishes, which the model does not (docs/MODEL.md).
func (o *orchestrator) redispatch(p int32, fan int32, limited bool, only []world.StepID) {
	d := &o.h.Deliveries[p]
	fo := &o.h.Fanouts[fan]
	site := o.dispatchSite(d.Run, false)
	pending := func(step world.StepID) bool {
		// Core publishes every step its replay awaits (the suspension's
		// pendingSteps): what the log it loaded does not show finished,
		// found created there or created by this invocation's suspension.
		_, finished := o.completer.stepView(fan, step, o.procs[p].loadAt)
		return !finished
	}
	// An inline step the loaded log shows created by another message's
	// invocation (its lazy claim) is not run inline again: while that
	// claim's inline-ownership lease runs, core arms a delayed backstop
	// (publishBackstop); past it, it publishes the step under its key like
	// any pending step (docs/MODEL.md, "A replay leaves an inline step
	// another invocation owns to a backstop").
	o.backstops(p, fan)
	if limited {
		o.publishPending(p, fan, only)
		return
	}
	for i := fo.Inline; i < fo.Branches; i++ {
		if step := fo.FirstStep + world.StepID(i); pending(step) {
			o.republishStep(p, step, fan, site)
		}
	}
}

// publishPending is the dispatch loop over steps alone: each that the log
// p loaded does not show finished is published under its key.
func (o *orchestrator) publishPending(p, fan int32, steps []world.StepID) {
	site := o.dispatchSite(o.h.Deliveries[p].Run, false)
	for _, step := range steps {
		if _, finished := o.completer.stepView(fan, step, o.procs[p].loadAt); !finished {
			o.republishStep(p, step, fan, site)
		}
	}
}

// takePriors empties p's prior steps and returns them; the engine's pool
// gives back their room when they were its last (it keeps only what
// waits). The slice stays valid until the next addPrior.
func (o *orchestrator) takePriors(p int32) []world.StepID {
	pr := &o.procs[p]
	at, n := pr.priorAt, pr.priorN
	pr.priorN = 0
	steps := o.priors[at : at+n]
	if int(at+n) == len(o.priors) {
		o.priors = o.priors[:at]
	}
	return steps
}

// defaultInlineOwnershipLease is core's inline-ownership lease
// (INLINE_OWNERSHIP_LEASE_SECONDS, on by default, WORKFLOW_INLINE_OWNERSHIP):
// for this long after an inline step's latest step_started, a replay that
// is not its owner assumes the owner alive and arms a backstop instead of
// dispatching the step; past it, the step's message goes out at once.
const defaultInlineOwnershipLease = 860 * time.Second

// leaseLeft is what is left of inline step's ownership lease, in whole
// seconds rounded up as core has it (stepLeaseRemainingSeconds), when its
// owner is not p's message and has not handed the step to the queue (a
// step_retrying lapses ownership): 0 when the step's message may go now.
func (o *orchestrator) leaseLeft(p, fan int32, step world.StepID) time.Duration {
	d := &o.h.Deliveries[p]
	owner := o.completer.ownerOf(fan, step)
	if owner < 0 {
		return 0
	}
	var started sim.Time
	log := o.store.Log(d.Run)
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].Step != step {
			continue
		}
		if log[i].Type == world.EvStepRetrying {
			return 0
		}
		if log[i].Type == world.EvStepStarted && started == 0 {
			started = log[i].At
		}
	}
	lease := o.sc.Workflow.Lease()
	left := started.Add(lease) - o.k.Now()
	if left <= 0 {
		return 0
	}
	secs := (time.Duration(left) + time.Second - 1) / time.Second * time.Second
	return min(secs, lease)
}

// publishBackstop arms core's backstop for an inline step another
// invocation owns: a plain continuation of the run (a workflow message)
// delayed by what is left of the lease, whose replay decides again (the
// step finished, or its owner dead and the step's message due). Core keys
// it by the step's ownership epoch, never by the step's own key; the model
// keys it by nothing, so two replays of one epoch arm two.
func (o *orchestrator) publishBackstop(p int32, step world.StepID, delay time.Duration) {
	d := &o.h.Deliveries[p]
	m := Message{Kind: MsgWorkflow, Run: d.Run, Step: world.NoStep, Fanout: -1, Target: o.h.Runs[d.Run].Deployment, Origin: -1, Delay: sim.Time(delay)}
	o.publish(p, m, SiteBackstop, o.deployments[d.Deployment].Producer)
}

// ownsInline reports whether inline step is owned by p's own message: a
// redelivery of the message whose invocation claimed it re-runs it (core's
// owned recovery).
func (o *orchestrator) ownsInline(p, fan int32, step world.StepID) bool {
	owner := o.completer.ownerOf(fan, step)
	return owner >= 0 && owner == o.h.Deliveries[o.rootOf(p)].Msg
}

// backstops is the dispatch pass over fan-out fan's inline steps that
// another message's invocation owns: a backstop for each while its lease
// runs, the step's message once it has run out. It returns how many
// messages it published (p waits for their answers).
func (o *orchestrator) backstops(p, fan int32) int {
	d := &o.h.Deliveries[p]
	fo := &o.h.Fanouts[fan]
	n := 0
	for i := int32(0); i < fo.Inline; i++ {
		step := fo.FirstStep + world.StepID(i)
		if _, finished := o.completer.stepView(fan, step, o.procs[p].loadAt); finished || !o.inlineClaimedElsewhere(p, fan, step) {
			continue
		}
		if delay := o.leaseLeft(p, fan, step); delay > 0 {
			o.publishBackstop(p, step, delay)
		} else {
			o.republishStep(p, step, fan, o.dispatchSite(d.Run, false))
		}
		n++
	}
	return n
}

// inlineClaimedElsewhere reports whether inline step of fan-out fan was
// created in the log invocation p's replay loaded, by another message's
// invocation's lazy claim, so p does not run it itself.
func (o *orchestrator) inlineClaimedElsewhere(p, fan int32, step world.StepID) bool {
	created, _ := o.completer.stepView(fan, step, o.procs[p].loadAt)
	return created && !o.ownsInline(p, fan, step)
}

// dispatchSite names where in the runtime a step message is published.
func (o *orchestrator) dispatchSite(run world.RunID, resilient bool) Site {
	switch {
	case o.h.Runs[run].Engine == EngineQuickJS:
		return SiteQuickJS
	case resilient:
		return SiteSuspensionPublish
	}
	return SiteNodeDispatchLoop
}

// startInline runs the fan-out's first maxInline steps inside p, in parallel.
func (o *orchestrator) startInline(p int32) {
	o.procs[p].state = psInlineWait
	if o.spawnInline(p) == 0 {
		o.done(p, DispAck, 0)
	}
}

// spawnInline starts the fan-out's inline steps inside p, in parallel, and
// says how many it started.
func (o *orchestrator) spawnInline(p int32) int {
	d := &o.h.Deliveries[p]
	pr := &o.procs[p]
	fo := &o.h.Fanouts[pr.suspendFan]
	var children []int32
	for i := int32(0); i < fo.Inline; i++ {
		step := fo.FirstStep + world.StepID(i)
		// Every unfinished inline step the loaded log has not created runs
		// here, with a lazy claim; one the log shows created was claimed
		// by another invocation and is re-dispatched (redispatch). Two
		// replays that loaded the log before either claim both run it: one
		// claim wins (at-least-once bodies under turbo's optimistic start).
		if _, finished := o.completer.stepView(pr.suspendFan, step, pr.loadAt); finished || o.inlineClaimedElsewhere(p, pr.suspendFan, step) {
			continue
		}
		c := o.newProc(Delivery{Msg: -1, Parent: p, Kind: MsgStep, Run: d.Run, Step: step, Fanout: pr.suspendFan,
			Target: d.Target, Deployment: d.Deployment, Version: d.Version})
		o.procs[c].held, o.procs[c].hasHeld = o.procs[p].held, true
		o.procs[p].outstanding++
		children = append(children, c)
	}
	for _, c := range children {
		o.advance(c)
	}
	return len(children)
}
