package model

import (
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// This file is a delivery's life, whichever actor handles it: its proc (the
// runtime side of a Delivery), the store calls it issues, the join on its
// outstanding calls, publishes, inline children and body, the crash fault
// between two steps, and the end that settles it with the queue. advance is
// the one place that maps a proc's state to the actor step that goes on:
// orchestrator.go, consumer.go or completer.go.

// procState is where an actor is in its state machine.
type procState uint8

const (
	psStart procState = iota
	psOrchLoaded
	psOrchStarted
	psPrologueDone
	psClaim
	psClaimed
	psBodyDone
	psTerminalWritten
	psListed
	psLazyRead
	psReplayListed
	psReplaying // the replay's cost is passing (orchestrator.startReplay)
	psRecreated
	psSuspending
	psDispatched
	psBatching // a batched suspension's creates, publishes and inline steps (suspendBatched)
	psParked   // an inline step waiting for its batched suspension's creates and publishes (parkFanIn)
	psInlineWait
	psAfterPublish
	psEnding
	psDone
)

// proc is the runtime side of a Delivery: a consumer handling one message,
// an orchestrator invocation, or an inline step inside one.
type proc struct {
	state       procState
	outstanding int32
	parent      int32 // proc waiting for this one, or -1
	// root is the message-backed delivery this proc runs in (itself for
	// one), History.Invocation kept as the procs are made: an inline step
	// whose completion continued the workflow starts the next fan-out's
	// inline steps as its children, so a workflow of many fan-outs that
	// all run inline makes one chain as long as the workflow, and walking
	// it on every call made such a run cost O(n²).
	root      int32
	lastCall  int32
	held      world.RunStatus // the run's status as this actor knows it
	hasHeld   bool
	crashed   bool
	recreated bool // the consumer recreated the step in-band once
	// claimAttempt is the attempt its accepted step_started answered
	// with: what its body's retries are judged by, as core judges them by
	// the claim's answer (not by the row, which a concurrent claim may
	// have moved since).
	claimAttempt int32
	// optimistic: an inline step of a turbo invocation whose body began as
	// its lazy claim was issued, not once it was answered (core's
	// optimisticStart); bodyEnd is when that body finished, the claim's
	// answer deciding afterwards whether its result is kept.
	optimistic bool
	bodyEnd    sim.Time
	// loadAt is when the log this proc's replay goes on from was loaded
	// (-1: none, or turbo's empty one): its inline steps' claims are lazy
	// for the steps that log did not show created, as core decides them
	// from the log (the lazyInlineCorrelationIds of its suspension).
	loadAt     sim.Time
	suspension       // the orchestrator's, while it suspends on a fan-out
	getCall    int32 // the prologue's or lazy runs.get, read after a join
	// row is the run's identity as this actor last read it (a runs.get or
	// run_started answer), what a v2 producer stamps as runContext.
	row    RunContext
	hasRow bool
}

// newProc records delivery d and starts the proc that steps it; an inline
// step's proc waits on (resumes) its d.Parent.
func (e *engine) newProc(d Delivery) int32 {
	d.Start = e.k.Now()
	p := int32(len(e.h.Deliveries))
	root := int32(-1)
	switch {
	case d.Msg >= 0:
		root = p
	case d.Parent >= 0:
		root = e.procs[d.Parent].root
	}
	e.h.Deliveries = append(grow(e.h.Deliveries), d)
	e.procs = append(grow(e.procs), proc{parent: d.Parent, root: root, lastCall: -1, getCall: -1, loadAt: -1, suspension: suspension{suspendFan: -1}})
	return p
}

// call issues one store call for proc p and returns its index.
func (e *engine) call(p int32, op Op, ev world.EventType, step world.StepID, fan int32) int32 {
	d := &e.h.Deliveries[p]
	idx := e.newCall(p, op, d.Run, step, fan)
	e.calls[idx].Event = ev
	e.issue(p, idx)
	return idx
}

// read issues p's runs.get; p reads its answer after the join (getCall).
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

// advance runs p until it next waits: the state p waits in names the
// actor's step that goes on.
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
	// Past the runtime's delivery cap (only on a RuntimeCapsDeliveries World
	// delivers a message that far), the handler's first line writes
	// run_failed and acks, whatever the answer. No crash is drawn in it:
	// the check is the handler's first line and returns after the one
	// write, and a consumer that died there every time would deliver the
	// message for ever.
	capped := d.Msg >= 0 && e.prof.MaxDeliveries > 0 && int(d.Attempt) > e.prof.MaxDeliveries
	if (d.Msg >= 0 || pr.parent >= 0) && !capped {
		if e.faults.Fire(e.siteCrash) {
			e.crash(p)
			return
		}
	}
	switch pr.state {
	case psStart:
		switch {
		case capped: // (psStart)
			pr.state = psEnding
			e.call(p, OpEventsCreate, world.EvRunFailed, world.NoStep, -1)
		case d.Kind == MsgWorkflow:
			e.orch.begin(p)
		case d.Msg < 0:
			e.cons.claimStep(p) // an inline step: the invocation holds the run
		default:
			e.cons.prologue(p)
		}
	case psOrchLoaded:
		e.orch.loaded(p)
	case psOrchStarted:
		e.orch.started(p)
	case psReplayListed:
		// The list took its log when the store served it (serve): a step
		// created while it was answering is not in it.
		e.procs[p].loadAt = e.calls[pr.lastCall].Served
		e.orch.startReplay(p)
	case psReplaying:
		e.orch.replay(p)
	case psSuspending:
		e.orch.suspendChunk(p)
	case psDispatched:
		e.orch.startInline(p)
	case psBatching:
		e.orch.batchDone(p)
	case psParked:
		e.completer.fanIn(p)
	case psPrologueDone:
		e.cons.prologueDone(p)
	case psClaimed:
		e.cons.claimed(p)
	case psRecreated:
		e.cons.recreated(p)
	case psBodyDone:
		e.cons.bodyDone(p)
	case psTerminalWritten:
		e.cons.terminalWritten(p)
	case psListed:
		e.completer.listed(p)
	case psLazyRead:
		e.completer.lazyRead(p)
	case psInlineWait, psAfterPublish, psEnding:
		e.done(p, DispAck, 0)
	}
}

// readThrew is p's runs.get answered with a row the World could not read
// back: the runtime's read throws, and so does the delivery (the queue
// delivers it again). It reports whether it was.
func (e *engine) readThrew(p int32) bool {
	if c := &e.calls[e.procs[p].getCall]; c.Unreadable {
		e.done(p, DispThrow, 0)
		return true
	}
	return false
}

// crashedTree reports whether p or the invocation it runs inside crashed.
// A crash marks the delivery that crashed and its invocation (crash), so
// one of p's chain crashed exactly when p or its root did.
func (e *engine) crashedTree(p int32) bool {
	if pr := &e.procs[p]; pr.root >= 0 {
		return pr.crashed || e.procs[pr.root].crashed
	}
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
	root := e.rootOf(p)
	e.counts.Crashes++
	e.fault(FaultCrash, e.h.Deliveries[p].Run, p)
	for _, q := range []int32{p, root} {
		e.procs[q].crashed = true
		e.procs[q].state = psDone
		e.h.Deliveries[q].End = e.k.Now()
		e.h.Deliveries[q].Disposition = DispCrash
	}
	e.settle(root, DispCrash, 0)
	if c := e.procs[root].parked - 1; c >= 0 {
		// An inline step parked on the dead invocation's batch work dies
		// with it.
		e.procs[root].parked = 0
		e.advance(c)
	}
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

// settle ends delivery p: its disposition is recorded and, when a message
// backs it, the queue acts on it.
func (e *engine) settle(p int32, disp Disposition, delay sim.Time) {
	d := &e.h.Deliveries[p]
	d.Disposition = disp
	d.End = e.k.Now()
	if d.Msg >= 0 {
		e.q.settle(p, d.Msg, disp, delay)
	}
}

// outcome records what p's step came to and counts it.
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

// msgOf is the message p handles, nil for an inline step.
func (e *engine) msgOf(p int32) *Message {
	if m := e.h.Deliveries[p].Msg; m >= 0 {
		return &e.h.Messages[m]
	}
	return nil
}
