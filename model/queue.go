package model

import (
	"fmt"
	"math"

	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// This file is the queue of DOMAIN.md §4: publish (with idempotency keys),
// visibility, delivery to a bounded set of consumer slots per deployment,
// ack, redelivery, the visibility timeout and exhaustion. It owns every
// message's runtime state and knows nothing of what a consumer does with a
// delivery; it tells the rest of the simulation through queueHost, the way
// raft keeps its log and progress tracker apart from the state machine.

// queueHost is what the queue needs from the rest of the simulation. The
// engine implements it; the queue never reaches into the engine's fields.
type queueHost interface {
	// newDelivery records the attempt-th delivery of message m to a
	// consumer of deployment dep and returns its index in History.Deliveries.
	newDelivery(m, dep, attempt int32) int32
	// startDelivery runs the consumer of delivery p, once the queue holds it.
	startDelivery(p int32)
	// published tells producer p its publish call answered.
	published(p int32)
	// exhausted tells the World a message went past its delivery cap.
	exhausted(msg *Message)
	// fault records a fault that fired in the queue.
	fault(kind FaultKind, run world.RunID, proc int32)
	// active notes that the current event changed something.
	active()
}

// msgState is a message's place in the queue.
type msgState uint8

const (
	msgPublishing msgState = iota // publish call in flight
	msgQueued                     // waiting to become visible or for a consumer
	msgWaiting                    // visible, waiting for a free consumer
	msgInFlight                   // delivered, not yet acked
	msgDone                       // acked, deduplicated, exhausted or copied
)

type msgRT struct {
	state      msgState
	holding    bool   // the newest delivery (last) holds a consumer slot
	epoch      uint32 // bumped whenever pending deliver events become stale
	deliveries int32  // claims so far: the delivery attempt counter
	last       int32  // the newest delivery
}

type pendingPublish struct {
	msg  int32 // message index
	proc int32 // the producer waiting for it, or -1
	rec  int32 // its History.Publishes record, or -1 when not recording
}

// queue is the simulated queue. Messages themselves are History.Messages;
// the queue keeps their runtime state beside them.
type queue struct {
	host       queueHost
	k          *sim.Kernel
	c          sim.Chooser
	prof       *Profile
	faults     *sim.Faults
	misdeliver sim.Site
	h          *History
	counts     *Counts
	record     bool
	// runtimeCaps: the cap is the runtime's (RuntimeCapsDeliveries of the
	// run's World), so the delivery past it is made.
	runtimeCaps bool
	deps        []Deployment // read only: a fresh copy's producer version

	msgs []msgRT
	// keyHeld is when each step's idempotency key stops being claimed (0:
	// not claimed): a message carries either no key or its step's one key
	// (msgKey), so the claims are a table by run and step rather than a
	// map by key, whose entries, one per step of every run, left the
	// caches as a long run grew (BenchmarkScale dim=overlap, then called time). keyRow[run] is
	// 1 + the offset of the run's row of stepsPerRun claims, 0 until the
	// run's first keyed publish.
	keyHeld     []sim.Time
	keyRow      []int32
	stepsPerRun int32
	// runner and runnerWait are an invoke World's workflow lane: the run
	// whose workflow delivery is active, and its workflow messages waiting
	// (with the deployment each was delivered to).
	runner     map[world.RunID]bool
	runnerWait map[world.RunID][][2]int32
	pubs       []pendingPublish
	busy       []int32   // per deployment: deliveries holding a consumer slot
	waitQ      [][]int32 // per deployment: visible messages waiting for a slot
}

// setDeployments sizes the per-deployment state; the queue is usable after.
func (q *queue) setDeployments(deps []Deployment) {
	q.deps = deps
	q.busy = zeroed(q.busy, len(deps))
	if cap(q.waitQ) < len(deps) {
		q.waitQ = make([][]int32, len(deps))
	}
	q.waitQ = q.waitQ[:len(deps)]
	for i := range q.waitQ {
		q.waitQ[i] = q.waitQ[i][:0] // a reused queue keeps each lane's room
	}
	if q.prof.Invoke && q.runner == nil {
		q.runner, q.runnerWait = map[world.RunID]bool{}, map[world.RunID][][2]int32{}
	}
}

// reset empties the queue for the next run, keeping its tables' room: the
// fields a run sets (initQueue) start from zero, as in a new engine's.
func (q *queue) reset() {
	clear(q.runner)
	clear(q.runnerWait)
	*q = queue{msgs: q.msgs[:0], keyHeld: q.keyHeld[:0], keyRow: q.keyRow[:0], runner: q.runner, runnerWait: q.runnerWait,
		pubs: q.pubs[:0], busy: q.busy[:0], waitQ: q.waitQ[:0]}
}

// sizeKeys sets how many steps each run has (every run runs the one
// workflow), for the key claims' rows.
func (q *queue) sizeKeys(stepsPerRun int32) { q.stepsPerRun = stepsPerRun }

// keyClaim is where the claim of step's key in run is kept, its run's row
// made on first use.
func (q *queue) keyClaim(run world.RunID, step world.StepID) *sim.Time {
	if step < 0 || int32(step) >= q.stepsPerRun {
		panic(fmt.Sprintf("queue: a keyed message for step %d of run %d, which has %d steps", step, run, q.stepsPerRun))
	}
	for int(run) >= len(q.keyRow) {
		q.keyRow = append(grow(q.keyRow), 0)
	}
	row := q.keyRow[run]
	if row == 0 {
		n := len(q.keyHeld)
		for cap(q.keyHeld) < n+int(q.stepsPerRun) {
			q.keyHeld = grow(q.keyHeld[:cap(q.keyHeld)])[:n]
		}
		q.keyHeld = q.keyHeld[:n+int(q.stepsPerRun)]
		clear(q.keyHeld[n:])
		row = int32(n) + 1
		q.keyRow[run] = row
	}
	return &q.keyHeld[row-1+int32(step)]
}

// publish sends a message for producer p (or -1); p waits for the answer,
// told through host.published. caller is recorded only when recording.
func (q *queue) publish(p int32, m Message, site Site, caller Caller, producer Version) {
	now := q.k.Now()
	q.counts.Publishes++
	m.Requested = now
	if m.Key != 0 {
		// The key is its step's (TestEveryKeyIsItsStepsKey): the claim is
		// kept by run and step.
		held := q.keyClaim(m.Run, m.Step)
		if *held > now {
			q.counts.Deduped++
			if q.record {
				q.h.Publishes = append(grow(q.h.Publishes), Publish{Msg: -1, Run: m.Run, Step: m.Step, Site: site, Caller: caller, Producer: producer, At: now, Deduped: true})
			}
			if p >= 0 {
				// The producer still waits for the publish call's answer.
				q.pubs = append(grow(q.pubs), pendingPublish{msg: -1, proc: p, rec: q.lastPublishRecord()})
				q.k.After(q.prof.Publish.Draw(q.c), evPublishDone, 0, uint64(len(q.pubs)-1))
			}
			return
		}
		if q.prof.IdempotencyInFlight {
			*held = sim.Time(math.MaxInt64) // until done (finish)
		} else {
			*held = now.Add(q.prof.IdempotencyTTL)
		}
	}
	m.ID = int32(len(q.h.Messages))
	q.h.Messages = append(grow(q.h.Messages), m)
	q.msgs = append(grow(q.msgs), msgRT{state: msgPublishing, last: -1})
	if q.record {
		q.h.Publishes = append(grow(q.h.Publishes), Publish{Msg: m.ID, Run: m.Run, Step: m.Step, Site: site, Caller: caller, Producer: producer, At: now})
	}
	q.pubs = append(grow(q.pubs), pendingPublish{msg: m.ID, proc: p, rec: q.lastPublishRecord()})
	q.k.After(q.prof.Publish.Draw(q.c), evPublishDone, 1, uint64(len(q.pubs)-1))
}

// lastPublishRecord is the index of the publish just recorded, or -1.
func (q *queue) lastPublishRecord() int32 {
	if !q.record {
		return -1
	}
	return int32(len(q.h.Publishes) - 1)
}

// publishDone is a publish call's answer (evPublishDone).
func (q *queue) publishDone(i int32) {
	pp := q.pubs[i]
	if pp.rec >= 0 {
		q.h.Publishes[pp.rec].Done = q.k.Now()
	}
	if pp.msg >= 0 {
		m := &q.h.Messages[pp.msg]
		q.msgs[pp.msg].state = msgQueued
		q.makeVisible(pp.msg, q.k.Now()+m.Delay)
	}
	if pp.proc >= 0 {
		q.host.published(pp.proc)
	}
}

// makeVisible schedules the message's next delivery for when it becomes
// visible, plus the queue's delivery latency.
func (q *queue) makeVisible(m int32, at sim.Time) {
	rt := &q.msgs[m]
	rt.state = msgQueued
	rt.epoch++
	if at < q.k.Now() {
		at = q.k.Now()
	}
	q.k.Schedule(at.Add(q.prof.Deliver.Draw(q.c)), evDeliver, 0, uint64(m)|uint64(rt.epoch)<<32)
}

// deliver hands a visible message to a consumer of its deployment, or of
// another one when the misdelivery fault fires (evDeliver). A stale event
// (an older epoch) changes nothing.
func (q *queue) deliver(m int32, epoch uint32) {
	rt := &q.msgs[m]
	if rt.state != msgQueued || rt.epoch != epoch {
		return
	}
	q.host.active()
	msg := &q.h.Messages[m]
	dep := msg.Target
	if n := len(q.busy); n > 1 && q.faults.Fire(q.misdeliver) {
		other := int32(q.c.Choose(n - 1))
		if other >= dep {
			other++
		}
		dep = other
		q.host.fault(FaultMisdeliver, msg.Run, -1)
	}
	q.admit(m, dep)
}

// admit claims message m for deployment dep, or queues it for one of dep's
// consumer slots when they are all busy.
func (q *queue) admit(m, dep int32) {
	rt := &q.msgs[m]
	if lim := int32(q.prof.Consumers); lim > 0 && q.busy[dep] >= lim {
		rt.state = msgWaiting
		rt.epoch++
		q.waitQ[dep] = append(q.waitQ[dep], m)
		return
	}
	q.claim(m, dep)
}

// claim counts the delivery attempt, takes a consumer slot and starts the
// consumer, or retires the message past its delivery cap.
func (q *queue) claim(m int32, dep int32) {
	rt := &q.msgs[m]
	if msg := &q.h.Messages[m]; q.prof.Invoke && msg.Kind == MsgWorkflow {
		// An invoke World runs one workflow delivery of a run at a time.
		if q.runner[msg.Run] {
			rt.state = msgWaiting
			rt.epoch++
			q.runnerWait[msg.Run] = append(q.runnerWait[msg.Run], [2]int32{m, dep})
			return
		}
		q.runner[msg.Run] = true
	}
	rt.deliveries++
	if q.prof.MaxDeliveries > 0 && int(rt.deliveries) > q.prof.MaxDeliveries {
		q.counts.Exhausted++
		if q.record {
			q.h.Retired = append(q.h.Retired, m)
		}
		if !q.runtimeCaps {
			q.finish(m)
			q.host.exhausted(&q.h.Messages[m])
			return
		}
		// The runtime's cap: this delivery writes run_failed and acks
		// (engine.advance, psStart).
	}
	rt.state = msgInFlight
	rt.epoch++
	q.counts.Deliveries++
	if rt.deliveries > 1 {
		q.counts.Redeliveries++
	}
	q.busy[dep]++
	p := q.host.newDelivery(m, dep, rt.deliveries)
	rt = &q.msgs[m]
	rt.last, rt.holding = p, true
	if q.prof.RedeliverInFlight {
		q.k.After(q.prof.VisibilityTimeout, evVisExpire, 0, uint64(p))
	}
	q.host.startDelivery(p)
}

// holds says delivery p of message m still holds its consumer slot and the
// message. Every earlier delivery of m gave both back before m could be
// claimed again, so only the newest can hold them.
func (q *queue) holds(m, p int32) bool {
	rt := &q.msgs[m]
	return rt.last == p && rt.holding
}

// settle ends delivery p's hold on message m with its disposition.
func (q *queue) settle(p, m int32, disp Disposition, delay sim.Time) {
	rt := &q.msgs[m]
	if q.holds(m, p) {
		q.releaseConsumer(m, p)
		rt = &q.msgs[m]
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
		q.finish(m)
	case DispRedeliver:
		q.makeVisible(m, q.k.Now()+delay)
	case DispThrow:
		msg := q.h.Messages[m]
		if q.prof.FreshCopyOnThrow > 0 && sim.Chance(q.c, q.prof.FreshCopyOnThrow) {
			// world-vercel's failure path: a fresh copy, attempt 1.
			q.finish(m)
			msg.Origin = msg.ID
			msg.Key = 0
			msg.Delay = sim.Time(q.prof.ThrowBackoff)
			q.publish(-1, msg, SiteFreshCopy, Caller{Kind: CallerClient, Delivery: -1}, q.deps[msg.Target].Producer)
			return
		}
		q.makeVisible(m, q.k.Now().Add(q.prof.ThrowBackoff))
	case DispCrash:
		if q.prof.RedeliverInFlight {
			return // the visibility timeout set at delivery brings it back
		}
		q.makeVisible(m, q.k.Now().Add(q.prof.VisibilityTimeout))
	}
}

// finish ends message m for good (acked, retired, or replaced by a fresh
// copy); on a queue whose keys live while their message does, its key is
// free again.
func (q *queue) finish(m int32) {
	rt := &q.msgs[m]
	rt.state = msgDone
	rt.epoch++
	if msg := &q.h.Messages[m]; msg.Key != 0 && q.prof.IdempotencyInFlight {
		*q.keyClaim(msg.Run, msg.Step) = 0
	}
}

// releaseConsumer gives delivery p's consumer slot back and hands it to
// the longest-waiting message of that deployment.
func (q *queue) releaseConsumer(m, p int32) {
	q.msgs[m].holding = false
	dep := q.h.Deliveries[p].Deployment
	q.busy[dep]--
	if msg := &q.h.Messages[m]; q.prof.Invoke && msg.Kind == MsgWorkflow {
		defer q.releaseRunner(msg.Run) // after a consumer slot's waiter took the slot
	}
	for w := q.waitQ[dep]; len(w) > 0; w = q.waitQ[dep] {
		next := w[0]
		q.waitQ[dep] = w[1:]
		// A waiting message may have been acked by an older delivery since:
		// only one still waiting is claimed.
		if q.msgs[next].state == msgWaiting {
			q.claim(next, dep)
			return
		}
	}
}

// releaseRunner ends run's active workflow delivery on an invoke World and
// claims its longest-waiting workflow message still waiting.
func (q *queue) releaseRunner(run world.RunID) {
	q.runner[run] = false
	for w := q.runnerWait[run]; len(w) > 0; w = q.runnerWait[run] {
		next := w[0]
		q.runnerWait[run] = w[1:]
		if q.msgs[next[0]].state == msgWaiting {
			q.admit(next[0], next[1])
			return
		}
	}
}

// visibilityExpired redelivers a message whose newest delivery p has held
// it for the whole visibility timeout; p may still be running (evVisExpire).
func (q *queue) visibilityExpired(p int32) {
	m := q.h.Deliveries[p].Msg
	rt := &q.msgs[m]
	if rt.state != msgInFlight || rt.last != p {
		return
	}
	if rt.holding {
		q.releaseConsumer(m, p)
	}
	q.host.active()
	q.makeVisible(m, q.k.Now())
}
