package conformance

import (
	"github.com/simlab/simlab/realworld"
	"pgregory.net/rapid"
)

// concKinds are the calls a batch draws from; rapid shrinks toward the
// first, so the plainest come first. Writes that race most (run lifecycle,
// claims, lazy starts, cancels) repeat to weigh more.
var concKinds = []string{
	"run_completed", "step_started", "run_cancelled", "step_created", "run_started",
	"step_completed", "run_failed", "step_failed", "step_retrying",
	realworld.OpGetRun, realworld.OpListEvents, realworld.OpGetStep,
	"run_completed", "step_started", "run_cancelled", "step_created", "step_completed",
}

// genConcCall draws one call of a batch on one of runs runs, steps 0..2.
func genConcCall(t *rapid.T, runs int) realworld.ConcCall {
	kind := rapid.SampledFrom(concKinds).Draw(t, "kind")
	run := rapid.IntRange(0, runs-1).Draw(t, "run")
	step := rapid.IntRange(0, 2).Draw(t, "step")
	c := realworld.ConcCall{Call: realworld.Call{Op: "event", Run: run, Type: kind}}
	switch kind {
	case realworld.OpGetRun, realworld.OpListEvents:
		c.Call = realworld.Call{Op: kind, Run: run}
	case realworld.OpGetStep:
		c.Call = realworld.Call{Op: kind, Run: run, Step: step}
	case "step_started":
		c.Step, c.Lazy = step, rapid.Bool().Draw(t, "lazy")
	case "step_retrying":
		c.Step, c.RetryAfterHours = step, rapid.SampledFrom([]int{-2, 2}).Draw(t, "retryAfter")
	case "step_created", "step_completed", "step_failed":
		c.Step = step
	}
	return c
}

// genHistory draws a concurrent history: 1–2 runs, 1–4 batches of 1–8 calls
// (a batch of one is a sequential step that sets up the next).
func genHistory(t *rapid.T) realworld.History {
	h := realworld.History{Runs: rapid.IntRange(1, 2).Draw(t, "runs")}
	batches := rapid.IntRange(1, 4).Draw(t, "batches")
	for i := 0; i < batches; i++ {
		n := rapid.IntRange(1, 8).Draw(t, "calls")
		var b realworld.Batch
		for j := 0; j < n; j++ {
			b.Calls = append(b.Calls, genConcCall(t, h.Runs))
		}
		h.Batches = append(h.Batches, b)
	}
	return h
}
