package model

import (
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// This file is how any actor publishes a step message: the orchestrator's
// dispatch, a consumer's delayed retry, a replay re-dispatching an inline
// step. It decides the message's target, idempotency key and, for a v2
// producer, the runContext it stamps.

// publishStep publishes a step message produced by p's deployment.
func (e *engine) publishStep(p int32, step world.StepID, fan int32, site Site) {
	e.publishStepAfter(p, step, fan, site, 0)
}

// publishRetry re-publishes a retrying step (dispatch site 2), due after
// delay; its key names the attempt, so one retry is published once.
func (e *engine) publishRetry(p int32, step world.StepID, fan int32, delay sim.Time) {
	e.publishStepAfter(p, step, fan, SiteDelayedRetry, delay)
}

// republishStep is a re-dispatch of a step that already exists: core
// publishes it under the one key every message of the step carries, so
// the queue absorbs it while that key is held.
func (e *engine) republishStep(p int32, step world.StepID, fan int32, site Site) {
	e.publishStepKeyed(p, step, fan, site, 0, e.q.stepMessageKey(e.h.Deliveries[p].Run, step))
}

func (e *engine) publishStepAfter(p int32, step world.StepID, fan int32, site Site, delay sim.Time) {
	e.publishStepKeyed(p, step, fan, site, delay, 0)
}

// publishStepKeyed publishes with key, or the site's own key when 0.
func (e *engine) publishStepKeyed(p int32, step world.StepID, fan int32, site Site, delay sim.Time, key uint64) {
	d := &e.h.Deliveries[p]
	dep := d.Deployment
	ver := e.deployments[dep].Producer
	m := Message{Kind: MsgStep, Run: d.Run, Step: step, Fanout: fan, HasInput: true,
		Target: e.h.Runs[d.Run].Deployment, Origin: -1, Key: msgKey(d.Run, step, 0), Delay: delay}
	switch {
	case key != 0:
		m.Key = key
	case site == SiteDelayedRetry:
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
// retry of it, is published at most once per key TTL. It hashes the whole
// (run, step, attempt): a key that kept 8 bits of the attempt let the retry
// after attempt 256 reuse the dispatch's key and be absorbed (issue 20). The
// top bit is set so that no key is 0 (no key).
func msgKey(run world.RunID, step world.StepID, attempt int32) uint64 {
	h := uint64(14695981039346656037) // FNV-1a, 64 bits
	for _, v := range [3]uint32{uint32(run), uint32(step), uint32(attempt)} {
		for i := 0; i < 4; i++ {
			h ^= uint64(byte(v >> (8 * i)))
			h *= 1099511628211
		}
	}
	return 1<<63 | h
}
