package model

import (
	"slices"
	"testing"
	"time"

	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// The queue is its own part: these tests drive it with a fake host and a
// bare kernel, no engine, no store, so that what it asks of the rest of the
// simulation is exactly queueHost.

// fakeHost records what the queue told it; onStart, if set, runs when a
// delivery starts (a consumer acting at once, e.g. re-routing).
type fakeHost struct {
	h       *History
	started []int32
	told    []int32
	retired []int32
	onStart func(p int32)
}

func (f *fakeHost) newDelivery(m, dep, attempt int32) int32 {
	p := int32(len(f.h.Deliveries))
	f.h.Deliveries = append(f.h.Deliveries, Delivery{Msg: m, Parent: -1, Deployment: dep, Attempt: attempt})
	return p
}
func (f *fakeHost) startDelivery(p int32) {
	f.started = append(f.started, p)
	if f.onStart != nil {
		f.onStart(p)
	}
}
func (f *fakeHost) published(p int32)                   { f.told = append(f.told, p) }
func (f *fakeHost) exhausted(msg *Message)              { f.retired = append(f.retired, msg.ID) }
func (f *fakeHost) fault(FaultKind, world.RunID, int32) {}
func (f *fakeHost) active()                             {}

// newBareQueue wires a queue to a kernel that hands it its own events.
func newBareQueue(t *testing.T, prof Profile) (*queue, *fakeHost, *sim.Kernel) {
	t.Helper()
	h := &History{}
	host := &fakeHost{h: h}
	q := &queue{host: host, prof: &prof, h: h, counts: &Counts{}, record: true}
	q.k = sim.New(sim.Config{Handler: func(ev *sim.Event) {
		switch ev.Kind {
		case evPublishDone:
			q.publishDone(int32(ev.Payload))
		case evDeliver:
			q.deliver(int32(ev.Payload&0xffffffff), uint32(ev.Payload>>32))
		case evVisExpire:
			q.visibilityExpired(int32(ev.Payload))
		default:
			t.Fatalf("the queue scheduled event kind %d, not its own", ev.Kind)
		}
	}})
	q.c = sim.NewPCG(1)
	q.faults = sim.NewFaults(q.c, sim.SiteConfig{})
	q.setDeployments([]Deployment{{Name: "a", Producer: V2, Consumer: V2}})
	return q, host, q.k
}

func bareProfile(t *testing.T) Profile {
	p := queueProfile(t, "world-local")
	p.Consumers = 1
	p.MaxDeliveries = 0
	p.RedeliverInFlight = false
	return p
}

func step(run world.RunID) Message {
	return Message{Kind: MsgStep, Run: run, Step: 0, Fanout: -1, Target: 0, Origin: -1}
}

func drain(t *testing.T, k *sim.Kernel) {
	t.Helper()
	if _, err := k.Run(sim.Limits{MaxTime: sim.Time(time.Hour)}); err != nil {
		t.Fatal(err)
	}
}

// One consumer slot: the second message waits until the first delivery
// acks, then is claimed; the producer hears each publish's answer.
func TestQueueHandsAFreedSlotToTheWaitingMessage(t *testing.T) {
	q, host, k := newBareQueue(t, bareProfile(t))
	q.publish(7, step(0), SiteNodeDispatchLoop, Caller{}, V2)
	q.publish(8, step(1), SiteNodeDispatchLoop, Caller{}, V2)
	drain(t, k)
	if !slices.Equal(host.told, []int32{7, 8}) {
		t.Fatalf("producers told %v, want [7 8]", host.told)
	}
	if !slices.Equal(host.started, []int32{0}) || q.msgs[1].state != msgWaiting {
		t.Fatalf("started %v, second message %v: want one delivery and one waiting", host.started, q.msgs[1].state)
	}
	q.settle(0, 0, DispAck, 0)
	if !slices.Equal(host.started, []int32{0, 1}) || q.msgs[0].state != msgDone || q.msgs[1].state != msgInFlight {
		t.Fatalf("after the ack: started %v, states %v %v", host.started, q.msgs[0].state, q.msgs[1].state)
	}
	if q.busy[0] != 1 || q.holds(0, 0) || !q.holds(1, 1) {
		t.Fatalf("busy %d, holds(0,0) %v, holds(1,1) %v", q.busy[0], q.holds(0, 0), q.holds(1, 1))
	}
}

// An ack that frees the slot for a waiting message whose consumer publishes
// at once (a re-route) still deletes the acked message, even when that
// publish grows the message table: the ack must not write to a stale copy.
func TestQueueAckSurvivesAPublishDuringTheSlotHandOver(t *testing.T) {
	q, host, k := newBareQueue(t, bareProfile(t))
	q.publish(-1, step(0), SiteNodeDispatchLoop, Caller{}, V2)
	q.publish(-1, step(1), SiteNodeDispatchLoop, Caller{}, V2)
	drain(t, k)
	q.msgs = slices.Clip(q.msgs) // the next publish reallocates
	host.onStart = func(p int32) {
		if p == 1 {
			q.publish(-1, step(2), SiteReroute, Caller{}, V2)
		}
	}
	q.settle(0, 0, DispAck, 0)
	if q.msgs[0].state != msgDone {
		t.Fatalf("acked message is %v, want done", q.msgs[0].state)
	}
	drain(t, k)
	if len(host.started) != 2 {
		t.Fatalf("%d deliveries, want 2 (the acked message came back?)", len(host.started))
	}
}

// Past the delivery cap the queue retires the message and tells the host,
// on a World whose queue caps deliveries (world-local's cap is the
// runtime's: TestTheRuntimeCapsWorldLocalDeliveries).
func TestQueueTellsTheHostOfAnExhaustedMessage(t *testing.T) {
	p := bareProfile(t)
	p.Name = "world-postgres"
	p.MaxDeliveries = 2
	q, host, k := newBareQueue(t, p)
	q.publish(-1, step(0), SiteNodeDispatchLoop, Caller{}, V2)
	for i := 0; i < 3; i++ {
		drain(t, k)
		if n := len(host.started); n > i {
			q.settle(host.started[n-1], 0, DispRedeliver, 0)
		}
	}
	drain(t, k)
	if len(host.started) != 2 || !slices.Equal(host.retired, []int32{0}) || q.counts.Exhausted != 1 {
		t.Fatalf("started %v, exhausted %v: want two deliveries, then message 0 retired", host.started, host.retired)
	}
	if q.busy[0] != 0 {
		t.Fatalf("%d slots still busy", q.busy[0])
	}
}

// With in-flight redelivery the visibility timeout frees the slot and
// redelivers while the first delivery still runs; its late ack still
// deletes the message, its late redeliver does not.
func TestQueueVisibilityTimeoutRedeliversAndALateAckStillCounts(t *testing.T) {
	p := bareProfile(t)
	p.RedeliverInFlight = true
	p.VisibilityTimeout = time.Second
	q, host, k := newBareQueue(t, p)
	q.publish(-1, step(0), SiteNodeDispatchLoop, Caller{}, V2)
	if _, err := k.Run(sim.Limits{MaxTime: sim.Time(1500 * time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(host.started, []int32{0, 1}) || host.h.Deliveries[1].Attempt != 2 {
		t.Fatalf("started %v: want the first delivery and its redelivery (attempt 2)", host.started)
	}
	q.settle(0, 0, DispRedeliver, 0) // late, and not an ack: ignored
	if q.msgs[0].state != msgInFlight || !q.holds(0, 1) {
		t.Fatalf("a stale redeliver moved the message: %v", q.msgs[0].state)
	}
	q.settle(0, 0, DispAck, 0) // late ack: deletes it
	if q.msgs[0].state != msgDone {
		t.Fatalf("a late ack left the message %v", q.msgs[0].state)
	}
}
