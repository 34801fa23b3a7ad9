package model

import (
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// clone returns a copy of r that shares no memory with the Runner that
// made it: what Run hands its caller. Every table is nil when empty and
// exactly as long as it is otherwise, as a History appended to from nil
// has it; the tables finish always makes (each run's final steps, the
// fault sites' report) are never nil. TestRunKeepsNoRunnerMemory checks
// that no table is left shared, a field added to History later included.
func (r *Result) clone() *Result {
	c := *r
	c.History = r.History.clone()
	c.Stream = kept(r.Stream)
	return &c
}

func (h *History) clone() *History {
	c := *h
	c.Variants = kept(h.Variants)
	c.Deployments = kept(h.Deployments)
	c.Runs = kept(h.Runs)
	for i := range c.Runs {
		c.Runs[i].Fanouts = kept(h.Runs[i].Fanouts)
	}
	c.Fanouts = kept(h.Fanouts)
	c.Messages = kept(h.Messages)
	c.Publishes = kept(h.Publishes)
	c.Deliveries = kept(h.Deliveries)
	c.Calls = kept(h.Calls)
	c.Accepted = kept(h.Accepted)
	c.Faults = kept(h.Faults)
	c.FinalRuns = kept(h.FinalRuns)
	c.ReadBack = kept(h.ReadBack)
	c.FinalSteps = kept(h.FinalSteps)
	for i := range c.FinalSteps {
		c.FinalSteps[i] = append(make([]world.Step, 0, len(h.FinalSteps[i])), h.FinalSteps[i]...)
	}
	c.Retired = kept(h.Retired)
	c.FaultSites = append(make([]sim.SiteReport, 0, len(h.FaultSites)), h.FaultSites...)
	return &c
}

// kept is a copy of s for a caller to keep: nil when s is empty, a long
// one copied a chunk at a time (copyChunked).
func kept[S ~[]E, E any](s S) S {
	switch {
	case len(s) == 0:
		return nil
	case len(s) < copyChunk:
		return append(S(nil), s...)
	}
	t := make(S, len(s))
	copyChunked(t, s)
	return t
}
