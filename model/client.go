package model

import (
	"time"

	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// This file is the client of DOMAIN.md §5: it plans every run up front
// (start instant, deployment, engine, cancellation), then starts each run
// (run_created and the workflow message) and cancels it from outside. It
// holds no state of its own: what it planned is History.Runs.

// client is the outside world starting and cancelling runs.
type client struct{ *engine }

// plan decides each run's start, deployment, engine and cancellation
// up front, in run order, so that adding a fault elsewhere does not move a
// run to another deployment.
func (cl *client) plan() {
	w := &cl.sc.Workflow
	for i := 0; i < cl.sc.Runs; i++ {
		start := sim.Time(time.Duration(i) * cl.sc.RunInterval)
		dep := cl.pickDeployment(start)
		eng := EngineNode
		if sim.Chance(cl.c, w.QuickJSShare) {
			eng = EngineQuickJS
		}
		info := RunInfo{ID: world.RunID(i), Deployment: dep, Engine: eng, StartAt: start}
		if cl.sc.Faults.CancelAt > 0 {
			info.CancelAt = start.Add(cl.sc.Faults.CancelAt)
		} else if cl.faults.Fire(cl.siteCancel) {
			info.CancelAt = start.Add(time.Duration(1+cl.c.Choose(1000)) * cl.sc.Faults.CancelWithin / 1000)
			info.CancelledByFault = true // recorded as a fault when it happens
		}
		if i < cap(cl.h.Runs) {
			// A reused History: this run's fan-out list takes the room of
			// the previous seed's.
			info.Fanouts = cl.h.Runs[:i+1][i].Fanouts[:0]
		}
		step := world.StepID(0)
		for fi, n := range w.Fanouts {
			info.Fanouts = append(info.Fanouts, int32(len(cl.h.Fanouts)))
			inline := min(w.MaxInline, n)
			cl.h.Fanouts = append(cl.h.Fanouts, Fanout{Run: world.RunID(i), Index: int32(fi), FirstStep: step, Branches: int32(n), Inline: int32(inline)})
			cl.completer.addFan()
			step += world.StepID(n)
		}
		cl.h.Runs = append(cl.h.Runs, info)
		cl.completer.settled = append(cl.completer.settled, 0)
		cl.k.Schedule(start, evRunStart, 0, uint64(i))
		if info.CancelAt > 0 {
			cl.k.Schedule(info.CancelAt, evCancel, 0, uint64(i))
		}
	}
}

func (cl *client) pickDeployment(start sim.Time) int32 {
	if cl.rolloutTo >= 0 && start >= sim.Time(cl.sc.Rollout.At) {
		return cl.rolloutTo
	}
	if len(cl.deployments) == 1 {
		return 0
	}
	u := float64(cl.c.Choose(10000)) / 10000
	for i, c := range cl.shareCum {
		if u < c {
			return int32(i)
		}
	}
	return int32(len(cl.shareCum) - 1)
}

// start is the client starting run i: run_created, then the workflow
// message to the run's deployment.
func (cl *client) start(i int32) {
	info := &cl.h.Runs[i]
	id := cl.store.CreateRun(cl.k.Now(), info.Deployment, 1, -1)
	idx := cl.newCall(-1, OpEventsCreate, id, world.NoStep, -1)
	cl.calls[idx].Event = world.EvRunCreated
	cl.tookEffect(&cl.calls[idx]) // the store created the run as it arrived
	if cl.opts.Record {
		cl.h.Accepted = append(cl.h.Accepted, Accepted{LoggedEvent: cl.store.Log(id)[0], Caller: Caller{Kind: CallerClient, Delivery: -1}, Call: idx})
	}
	cl.issue(-1, idx)
	// HasInput: the start message carries the run's input (runInput),
	// which makes its first delivery core's turbo path.
	cl.publish(-1, Message{Kind: MsgWorkflow, Run: id, Step: world.NoStep, Fanout: -1, Target: info.Deployment, Origin: -1, HasInput: true},
		SiteStart, cl.deployments[info.Deployment].Producer)
}

// cancel is the client cancelling run i from outside.
func (cl *client) cancel(i int32) {
	if cl.h.Runs[i].CancelledByFault {
		cl.fault(FaultCancel, world.RunID(i), -1)
	}
	idx := cl.newCall(-1, OpEventsCreate, world.RunID(i), world.NoStep, -1)
	cl.calls[idx].Event = world.EvRunCancelled
	cl.issue(-1, idx)
}
