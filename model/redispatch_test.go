package model

import (
	"testing"

	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// core's dispatch loop publishes every pending queued step again on each
// replay that suspends on its fan-out (runtime.js, the loop over
// pendingSteps): an orchestrator that crashed after its step_created and
// before its publishes leaves steps with no message, and the redelivered
// orchestrator's replay, finding every step created, publishes them. The
// model's replay did nothing there, and the run never ended (issue 20: 34
// of 200 faults seeds with resilient_dispatch=false).
func TestReplayPublishesCreatedStepsThatHaveNoMessage(t *testing.T) {
	sc, _ := Builtin("faults")
	if err := sc.Set("workflow.resilient_dispatch=false"); err != nil {
		t.Fatal(err)
	}
	// The first seed in which a step got its only message from a
	// redelivered workflow message's dispatch loop: its run completed.
	for seed := uint64(1); seed <= 300; seed++ {
		r, err := Run(&sc, sim.NewPCG(seed), Options{Record: true, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		h := r.History
		for run := range h.Runs {
			if redispatchedByRedelivery(h, world.RunID(run)) == 0 {
				continue
			}
			if st := h.ReadBack[run].Status; st != world.RunCompleted {
				t.Fatalf("seed %d: %s got a step's message from a redelivered orchestrator and ended %v, want completed", seed, RunName(world.RunID(run)), st)
			}
			return
		}
	}
	t.Fatal("no step in faults seeds 1..300 was published by a redelivered orchestrator")
}

// redispatchedByRedelivery counts run's step messages published (not
// absorbed) by the dispatch loop of a redelivered workflow message.
func redispatchedByRedelivery(h *History, run world.RunID) int {
	n := 0
	for _, p := range h.Publishes {
		if p.Run != run || p.Deduped || p.Site != SiteNodeDispatchLoop || p.Caller.Delivery < 0 {
			continue
		}
		inv := p.Caller.Delivery
		if i := h.Invocation(inv); i >= 0 {
			inv = i
		}
		if d := &h.Deliveries[inv]; d.Kind == MsgWorkflow && d.Attempt > 1 {
			n++
		}
	}
	return n
}

// A step message's key is one per (run, step), never 0 and never another
// step's: the dispatch, a re-dispatch and an inline retry share it.
func TestMessageKeysNameTheStep(t *testing.T) {
	seen := map[uint64][2]int32{}
	for run := int32(0); run < 64; run++ {
		for step := int32(0); step < 512; step++ {
			k := msgKey(world.RunID(run), world.StepID(step))
			if k == 0 || k>>63 != 1 {
				t.Fatalf("key %x of (%d, %d) lacks its top bit", k, run, step)
			}
			if prev, ok := seen[k]; ok {
				t.Fatalf("(%d, %d) and %v share key %x", run, step, prev, k)
			}
			seen[k] = [2]int32{run, step}
		}
	}
}

// core catches only an entity conflict around step_retrying (and
// step_failed): a run-expired answer is rethrown and the message delivered
// again (runtime/step-executor.js), where the model's consumer acked.
// world-local and world-postgres accept a step_retrying of a running step
// on an ended run (world-local's "only allow completing/failing in-progress
// steps"); world-vercel's rules (DOMAIN §2) refuse it: the first faults
// seed on world-vercel with such a refusal is held to it.
func TestRefusedStepRetryingThrows(t *testing.T) {
	sc, _ := Builtin("faults")
	if err := sc.Set("world=world-vercel"); err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed <= 500; seed++ {
		r, err := Run(&sc, sim.NewPCG(seed), Options{Record: true, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if refusedRetryingThrew(t, r.History) {
			return
		}
	}
	t.Fatal("no step_retrying was refused run_expired in faults seeds 1..500 on world-vercel")
}

// refusedRetryingThrew checks every step_retrying refused run_expired in h:
// its delivery threw and its message was delivered again. It reports
// whether there was one.
func refusedRetryingThrew(t *testing.T, h *History) bool {
	t.Helper()
	found := false
	for _, c := range h.Calls {
		if c.Event != world.EvStepRetrying || c.Result != world.RunExpired {
			continue
		}
		found = true
		d := &h.Deliveries[c.Caller.Delivery]
		if d.Disposition != DispThrow {
			t.Fatalf("delivery d%d's step_retrying was refused run_expired and it ended %v, want throw", c.Caller.Delivery, d.Disposition)
		}
		// Delivered again: the same message, or world-vercel's fresh copy
		// of it (its failure path).
		again := false
		for i := range h.Deliveries {
			o := &h.Deliveries[i]
			if o.Msg == d.Msg && o.Attempt > d.Attempt || o.Msg >= 0 && h.Messages[o.Msg].Origin == d.Msg {
				again = true
			}
		}
		if !again {
			t.Fatalf("message %d was not delivered again after its delivery threw", d.Msg)
		}
	}
	return found
}
