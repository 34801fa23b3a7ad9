package model

import (
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// This file is how any actor publishes a step message: the orchestrator's
// dispatch, a consumer's delayed retry, a replay re-dispatching an inline
// step. It decides the message's target, idempotency key and, for a v2
// producer, the runContext it stamps.

// publishStep publishes a step message produced by p's deployment alongside
// the step's create: resilient dispatch, whose message carries the step's
// input (stepInput), so a consumer that finds the step missing can create
// it in band.
func (e *engine) publishStep(p int32, step world.StepID, fan int32, site Site) {
	e.publishStepAfter(p, step, fan, site, 0, true)
}

// publishRetry queues a retrying inline step as a background step (dispatch
// site 2), due after delay, under the step's dispatch key, as core does
// (runtime.js, the invocation's toRetry: "Key the delayed retry on the
// step's dispatch key so it dedupes against the keyed re-dispatch the
// suspension handler performs on replay"). A queued step's retry publishes
// nothing: its message comes back (consumer.terminalWritten).
func (e *engine) publishRetry(p int32, step world.StepID, fan int32, delay sim.Time) {
	e.publishStepAfter(p, step, fan, SiteDelayedRetry, delay, false)
}

// republishStep is a re-dispatch of a step that already exists: core
// publishes it under the one key every message of the step carries, so
// the queue absorbs it while that key is held.
func (e *engine) republishStep(p int32, step world.StepID, fan int32, site Site) {
	e.publishStepAfter(p, step, fan, site, 0, false)
}

// publishStepAfter publishes a message for step, visible after delay, under
// the step's one idempotency key (msgKey). withInput: the message carries
// the step's input. Only the suspension handler's resilient publish does
// (core's suspension-handler.js, stepInput); the dispatch loop, the delayed
// retry of an inline step and the eager publish send a payload-less message
// (runtime.js: runId, stepId, stepName, runContext), whose consumer cannot
// recover a missing step in band and throws.
func (e *engine) publishStepAfter(p int32, step world.StepID, fan int32, site Site, delay sim.Time, withInput bool) {
	d := &e.h.Deliveries[p]
	dep := d.Deployment
	ver := e.deployments[dep].Producer
	m := Message{Kind: MsgStep, Run: d.Run, Step: step, Fanout: fan, HasInput: withInput,
		Target: e.h.Runs[d.Run].Deployment, Origin: -1, Key: msgKey(d.Run, step), Delay: delay}
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

// msgKey is a step message's idempotency key, core's
// stepDispatchIdempotencyKey: one per (run, step), which the dispatch, a
// replay's re-dispatch and an inline step's retry all carry, so the queue
// absorbs a second while the first holds the key. The top bit is set so
// that no key is 0 (no key).
func msgKey(run world.RunID, step world.StepID) uint64 {
	h := uint64(14695981039346656037) // FNV-1a, 64 bits
	// The third word, 0, is where keys once held an attempt: kept so that
	// every key, and so every pinned History hash, stays what it was.
	for _, v := range [3]uint32{uint32(run), uint32(step), 0} {
		for i := 0; i < 4; i++ {
			h ^= uint64(byte(v >> (8 * i)))
			h *= 1099511628211
		}
	}
	return 1<<63 | h
}
