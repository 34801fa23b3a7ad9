package model

import (
	"testing"

	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// On a World that declares capabilities.invoke (core beta.55), a finished
// queued step hands the replay to the World's runner lane: its consumer
// publishes a workflow message and returns, with no pending check and no
// lazy read; the lane runs one workflow delivery of a run at a time, and
// the last of them ends the run.
func TestInvokeWorldHandsEveryReplayToItsRunnerLane(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		sc, _ := Builtin("fanout")
		if err := sc.Set("store.invoke=true"); err != nil {
			t.Fatal(err)
		}
		r, err := Run(&sc, sim.NewPCG(seed), Options{Record: true, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		h := r.History
		if !h.Drained || h.ReadBack[0].Status != world.RunCompleted {
			t.Fatalf("seed %d: drained %v, run %v; want a completed run", seed, h.Drained, h.ReadBack[0].Status)
		}
		handOffs, queued := 0, 0
		for _, p := range h.Publishes {
			if p.Site == SiteInvokeReplay {
				handOffs++
			}
		}
		for i := range h.Deliveries {
			d := &h.Deliveries[i]
			if d.Kind == MsgStep && d.Msg >= 0 {
				queued++
				if d.LastComplete {
					t.Fatalf("seed %d: consumer d%d ran the pending check on an invoke World", seed, i)
				}
			}
		}
		for _, c := range h.Calls {
			if c.Reason == ReasonLastCompleter {
				t.Fatalf("seed %d: a lazy runs.get on an invoke World", seed)
			}
		}
		if handOffs == 0 || handOffs > queued {
			t.Fatalf("seed %d: %d hand-offs for %d queued step deliveries, want one per finished one", seed, handOffs, queued)
		}
		// One workflow delivery of the run at a time.
		var wf []*Delivery
		for i := range h.Deliveries {
			if d := &h.Deliveries[i]; d.Kind == MsgWorkflow && d.Msg >= 0 {
				wf = append(wf, d)
			}
		}
		for i := range wf {
			for j := i + 1; j < len(wf); j++ {
				if wf[i].Start < wf[j].End && wf[j].Start < wf[i].End {
					t.Fatalf("seed %d: workflow deliveries [%v, %v] and [%v, %v] of one run overlap", seed, wf[i].Start, wf[i].End, wf[j].Start, wf[j].End)
				}
			}
		}
		if len(wf) < 2 {
			t.Fatalf("seed %d: %d workflow deliveries, want the start and the hand-offs", seed, len(wf))
		}
	}
}
