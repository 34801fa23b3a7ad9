package conformance

import (
	"fmt"
	"sort"

	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/realworld"
)

// This file is direction 2 of the concurrent differential test: every
// outcome the model's split calls can produce for a batch is forced on the
// real World, by replaying an interleaving that produces it there
// (worlds/gate.mjs holds each call at the start of its steps), and the real
// World must then answer and end as the model said.

// Step is one step of an interleaving: call Call took its next step from
// the adapter's phase Phase (world.Txn.Phase; 0 for a read).
type Step struct {
	Call  int
	Phase uint8
}

// Witness is an outcome the model can produce and one interleaving that
// produces it.
type Witness struct {
	Outcome string
	Steps   []Step
}

// Witnesses lists every outcome the model can produce for one run's calls of
// a batch (all on run) from the store s, each with an interleaving that
// produces it, sorted by outcome.
func Witnesses(w realworld.World, s *world.Store, calls []realworld.ConcCall, steps [][]int, run int) []Witness {
	seen := map[uint64]bool{}
	found := map[string][]Step{}
	var path []Step
	var walk func(n *node)
	walk = func(n *node) {
		k := n.key(run)
		if seen[k] {
			return
		}
		seen[k] = true
		all := true
		for i := range calls {
			if n.done[i] {
				continue
			}
			all = false
			if !n.ready(calls, i) {
				continue
			}
			c := n.clone()
			phase := uint8(0)
			if calls[i].Op == "event" {
				phase = c.txns[i].Phase()
			}
			c.advance(calls, i)
			path = append(path, Step{Call: i, Phase: phase})
			walk(c)
			path = path[:len(path)-1]
		}
		if all {
			o := OutcomeKey(calls, n.replies, readbacks(n.s, steps)[run:run+1])
			if _, ok := found[o]; !ok {
				found[o] = append([]Step(nil), path...)
			}
		}
	}
	walk(start(s, calls))
	out := make([]Witness, 0, len(found))
	for o, p := range found {
		out = append(out, Witness{Outcome: o, Steps: p})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Outcome < out[b].Outcome })
	return out
}

// Schedule turns an interleaving into the driver's schedule: the steps that
// are real operations of the adapter, numbered per call as the driver counts
// them (gate.mjs). The model has steps the adapters take without any I/O of
// their own (a step_completed or step_retrying takes no run read, though its
// Txn passes that phase): those drop out.
func Schedule(w realworld.World, calls []realworld.ConcCall, steps []Step) [][2]int {
	next := make([]int, len(calls))
	var out [][2]int
	for _, st := range steps {
		c := calls[st.Call]
		if c.Op == "event" && st.Phase == 0 && (c.Type == "step_completed" || c.Type == "step_retrying") {
			continue
		}
		out = append(out, [2]int{st.Call, next[st.Call]})
		next[st.Call]++
	}
	return out
}

// forced is the race's history with the racing batch's schedule: the model
// interleaving that produces its outcome on w, replayed on the real World.
func forced(r realworld.Race, w realworld.World) (realworld.History, error) {
	h := r.History()
	s := newModelStore(w, 1)
	for _, c := range r.Setup {
		if res, _, _ := s.Apply(modelNow, eventOn(c.Call, 0)); res != world.OK {
			return h, fmt.Errorf("race %s: set-up call %s answers %v on the model, not ok", r.Name, c, res)
		}
	}
	for _, wit := range Witnesses(w, s, r.Batch, h.Steps(), 0) {
		if wit.Outcome == r.Outcome {
			h.Batches[len(h.Batches)-1].Schedule = Schedule(w, r.Batch, wit.Steps)
			return h, nil
		}
	}
	return h, fmt.Errorf("race %s: the model of %s cannot end the batch as %q", r.Name, w.Name, r.Outcome)
}
