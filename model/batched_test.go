package model

import (
	"testing"

	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// On a World with events.createBatch and no resilient dispatch, core
// beta.52's suspension launches every chunk's creates at once, publishes
// each chunk's steps the moment its own creates are in, and starts the
// inline steps without waiting for the creates (only the pair chunk gates
// its return); the invocation acks after all of it. Before, simlab wrote
// the chunks one after another and ran the inline steps after the last,
// and its orchestrator ended runs the real core's queued last completers
// end (docs/VALIDATION.md, "Who ends the run").
func TestBatchedSuspensionLaunchesEveryChunkAndTheInlineStepsAtOnce(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		_, h := fanoutWith(t, seed, "store.batch_creates=true", "workflow.resilient_dispatch=false", "workflow.fanouts=80", "workflow.chunk_size=32")
		fo := h.Fanouts[0]
		// The first workflow delivery suspends on the fan-out.
		const orch = 0
		if h.Deliveries[orch].Kind != MsgWorkflow {
			t.Fatalf("seed %d: d0 is %v, want the workflow's first delivery", seed, h.Deliveries[orch].Kind)
		}
		var createStart sim.Time = -1
		chunkEnd := map[int32]sim.Time{}
		var lastCreate sim.Time
		for _, c := range h.Calls {
			if c.Caller.Delivery != orch || c.Op != OpEventsCreate || c.Event != world.EvStepCreated {
				continue
			}
			if createStart < 0 {
				createStart = c.Start
			}
			if c.Start != createStart {
				t.Fatalf("seed %d: step %d's create issued at %v, the first at %v: want every chunk at once", seed, c.Step, c.Start, createStart)
			}
			k := (int32(c.Step-fo.FirstStep) - fo.Inline) / 32
			chunkEnd[k] = max(chunkEnd[k], c.End)
			lastCreate = max(lastCreate, c.End)
		}
		if len(chunkEnd) != 3 {
			t.Fatalf("seed %d: creates in %d chunks, want 3 (77 queued steps by 32)", seed, len(chunkEnd))
		}
		// Each queued step is published by d0 as soon as its chunk is in.
		published := 0
		for _, p := range h.Publishes {
			if p.Caller.Delivery != orch {
				continue
			}
			published++
			k := (int32(p.Step-fo.FirstStep) - fo.Inline) / 32
			if p.At != chunkEnd[k] {
				t.Fatalf("seed %d: step %d published at %v, its chunk's creates in at %v: want at once", seed, p.Step, p.At, chunkEnd[k])
			}
		}
		if published != int(fo.Branches-fo.Inline) {
			t.Fatalf("seed %d: d0 published %d steps, want the %d queued", seed, published, fo.Branches-fo.Inline)
		}
		// The inline steps claim as the creates go out, not after them.
		claims := 0
		for _, c := range h.Calls {
			if c.Op == OpEventsCreate && c.Lazy && h.Invocation(c.Caller.Delivery) == orch && c.Caller.Delivery != orch {
				claims++
				if c.Start >= lastCreate {
					t.Fatalf("seed %d: inline step %d claimed at %v, after the last create answered (%v)", seed, c.Step, c.Start, lastCreate)
				}
			}
		}
		if claims != int(fo.Inline) {
			t.Fatalf("seed %d: %d inline claims, want %d", seed, claims, fo.Inline)
		}
		if end := h.Deliveries[orch].End; end < lastCreate {
			t.Fatalf("seed %d: d0 acked at %v before its creates were in (%v)", seed, end, lastCreate)
		}
	}
}

// The invocation goes on from its inline steps only once its batch's
// creates and publishes are in: core joins the deferred batch work before
// it reloads the log (runtime.js). With publishes slower than the inline
// steps, the last inline step waits, then lists.
func TestBatchedSuspensionListsAfterItsPublishes(t *testing.T) {
	parked := 0
	for seed := uint64(1); seed <= 10; seed++ {
		_, h := fanoutWith(t, seed, "store.batch_creates=true", "workflow.resilient_dispatch=false", "workflow.fanouts=40",
			"store.publish.min=2s", "store.publish.p50=2s", "store.publish.p90=2s", "store.publish.p99=2s", "store.publish.max=2s")
		const orch = 0
		var lastPublish, lastInlineEnd sim.Time
		for _, p := range h.Publishes {
			if p.Caller.Delivery == orch {
				lastPublish = max(lastPublish, p.Done)
			}
		}
		for _, c := range h.Calls {
			if c.Op == OpEventsCreate && c.Event == world.EvStepCompleted && c.Caller.Delivery != orch && h.Invocation(c.Caller.Delivery) == orch {
				lastInlineEnd = max(lastInlineEnd, c.End)
			}
		}
		for _, c := range h.Calls {
			if c.Op != OpEventsList || c.Caller.Delivery == orch || h.Invocation(c.Caller.Delivery) != orch {
				continue
			}
			if c.Start < lastPublish {
				t.Fatalf("seed %d: the invocation's inline continuation listed at %v, before its last publish was in (%v)", seed, c.Start, lastPublish)
			}
			if lastInlineEnd < lastPublish {
				parked++
			}
		}
	}
	if parked == 0 {
		t.Fatal("no inline step finished before its batch's publishes: the test shows nothing")
	}
}
