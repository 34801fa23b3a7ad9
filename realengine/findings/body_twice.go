package findings

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/simlab/simlab/realengine"
)

// Finding 21 (docs/MODEL.md) forced on the real core by the gate's hold
// rules: TestForcedEarlyQueuedCompletionAgainstTheInlineStep, and the release
// matrix's body-twice check.

// earlyQueuedCompletion is docs/MODEL.md finding 21's first interleaving,
// forced by the gate's hold rules (gate.mjs), not by timing: a fan-out of
// two steps, one inline (max_inline 1) and one queued, no drawn latency, no
// pool bound, step bodies recorded.
//
//   - inline_claim: the orchestrator's lazy step_started of its inline step
//     (the call that creates that step: the runtime writes no step_created
//     for it) is held as it reaches the World until another delivery's
//     step_started of the same step has answered. So the queued step's
//     consumer completes its step and lists the log while the inline step is
//     not in it, as simlab predicts.
//   - inline_body: the orchestrator's body of that step, if it begins, is
//     held until another delivery's body of the same step begins, so two
//     bodies, if there are two, are in flight at once.
//
// Each hold has the gate's escape: when nothing more can arrive, it lets go
// and reports it, which the test counts as the interleaving not forced.
func earlyQueuedCompletion(runs int) realengine.HarnessConfig {
	lazy := true
	return realengine.HarnessConfig{
		Seed: 1, Fanouts: []int{2}, MaxInline: 1, Runs: runs,
		Gate: &realengine.GateConfig{Holds: []realengine.HoldRule{
			{
				Name:  "inline_claim",
				What:  realengine.HoldPattern{Kind: "call", Op: "events.create", Event: "step_started", Lazy: &lazy, From: "run", Nth: 1},
				Until: realengine.HoldPattern{Kind: "answer", Op: "events.create", Event: "step_started", Step: "same", Delivery: "other"},
			},
			{
				Name:  "inline_body",
				What:  realengine.HoldPattern{Kind: "body", From: "run", Nth: 1},
				Until: realengine.HoldPattern{Kind: "body_begin", Step: "same", Delivery: "other"},
			},
		}},
		RecordBodies: true, DumpCalls: true,
	}
}

// inlineRace is what one run of earlyQueuedCompletion did, read from the
// store wrapper's calls, the deliveries and the recorded bodies.
type inlineRace struct {
	inline, queued string // step ids
	orch, cons     int    // delivery indexes: the run's own message, the queued step's
	// claims of the inline step: "orchestrator ok", "consumer EntityConflictError", ...
	claims []string
	// bodies of the inline step, by whom, and whether two overlapped
	bodies    []string
	overlap   bool
	optimist  bool // the orchestrator's body began before its claim reached the World
	backstop  bool // the orchestrator published a delayed run message afterwards
	completed int  // accepted run_completed in the log
}

// outcome is the run's result in one line, the key the test counts.
func (r inlineRace) outcome() string {
	return fmt.Sprintf("claims of the inline step [%s]; its bodies [%s], overlapping %v", strings.Join(r.claims, ", "), strings.Join(r.bodies, ", "), r.overlap)
}

// judgeInlineRace reads run i of out and returns what it did, or what in it
// was not the forced interleaving (the gate did not do what it was asked,
// or the consumer was not the last completer the finding needs). legacy:
// core beta.50, whose consumer reads the run before its claim.
func judgeInlineRace(out *realengine.RealRun, i int, legacy bool) (inlineRace, []string) {
	var r inlineRace
	var bad []string
	run := out.Runs[i].RunID
	who := map[int]string{}
	r.orch, r.cons = -1, -1
	for _, d := range out.Deliveries {
		if d.Run != run {
			continue
		}
		switch {
		case d.Step == "" && r.orch < 0:
			r.orch, who[d.Index] = d.Index, "orchestrator"
		case d.Step != "" && r.cons < 0:
			r.cons, r.queued, who[d.Index] = d.Index, d.Step, "consumer"
		default:
			bad = append(bad, fmt.Sprintf("a third delivery %d (step %q, attempt %d)", d.Index, d.Step, d.Attempt))
		}
	}
	if r.orch < 0 || r.cons < 0 {
		return r, append(bad, fmt.Sprintf("deliveries: orchestrator %d, consumer %d, want one of each", r.orch, r.cons))
	}
	var calls []realengine.Call
	for _, c := range out.Calls {
		// A publish names no run: it is the run's when its delivery is.
		if c.Run == run || (c.Op == "queue" && (c.Delivery == r.orch || c.Delivery == r.cons)) {
			calls = append(calls, c)
		}
	}
	var orchClaim *realengine.Call
	for j, c := range calls {
		if c.Delivery == r.orch && c.Op == "events.create" && c.Event == "step_started" && c.Lazy {
			r.inline, orchClaim = c.Correlation, &calls[j]
			break
		}
	}
	if orchClaim == nil {
		return r, append(bad, "the orchestrator made no lazy step_started")
	}
	// The consumer's story up to its claim of the inline step: its own
	// step's claim and end, the pending check (the list after its end),
	// which held no event of the inline step, and the run's one read: the
	// lazy runs.get of a last completer after that check (beta.52), or the
	// legacy prologue's runs.get before its claim, which the last completer
	// reuses (beta.50).
	want := []string{"events.create step_started ok", "events.create step_completed ok", "events.list ok", "runs.get ok"}
	if legacy {
		want = []string{"runs.get ok", "events.create step_started ok", "events.create step_completed ok", "events.list ok"}
	}
	var consClaim *realengine.Call
	story := []string{}
	ended := false
	for j, c := range calls {
		if c.Delivery != r.cons {
			continue
		}
		if c.Op == "events.create" && c.Event == "step_started" && c.Correlation == r.inline {
			consClaim = &calls[j]
			break
		}
		s := c.Op
		if c.Event != "" {
			s += " " + c.Event
		}
		if c.Op == "events.list" && ended {
			ended = false
			for _, e := range c.Listed {
				if strings.HasSuffix(e, " "+r.inline) {
					bad = append(bad, fmt.Sprintf("the consumer's pending check listed %q of the inline step", e))
				}
			}
		}
		if c.Op == "events.create" && c.Event == "step_completed" && c.Correlation == r.queued {
			ended = true
		}
		story = append(story, s+" "+c.Result)
	}
	if len(story) < len(want) || strings.Join(story[:len(want)], ", ") != strings.Join(want, ", ") {
		bad = append(bad, fmt.Sprintf("the consumer's calls before it claimed the inline step: %v, want them to begin %v", story, want))
	}
	if consClaim == nil {
		bad = append(bad, "the consumer never claimed the inline step")
	}
	// The gate: the orchestrator's claim let go by the consumer's answered
	// claim, not by an escape.
	if orchClaim.Released <= 0 {
		bad = append(bad, "the orchestrator's claim was not held")
	} else if consClaim != nil && orchClaim.Released < consClaim.End {
		bad = append(bad, fmt.Sprintf("the orchestrator's claim was let go at %.1f ms, before the consumer's answered (%.1f ms)", orchClaim.Released, consClaim.End))
	}
	for _, c := range calls {
		if c.Op == "events.create" && c.Event == "step_started" && c.Correlation == r.inline {
			r.claims = append(r.claims, who[c.Delivery]+" "+c.Result)
		}
		if c.Op == "events.create" && c.Event == "run_completed" && c.Result == "ok" {
			r.completed++
		}
		if c.Op == "queue" && c.Delivery == r.orch && c.Step == "" && c.Delay > 0 {
			r.backstop = true
		}
	}
	sort.Strings(r.claims)
	var inl []realengine.Body
	queued := 0
	for _, b := range out.Bodies {
		switch {
		case b.Run == run && b.Step == r.inline:
			inl = append(inl, b)
			r.bodies = append(r.bodies, who[b.Delivery])
			if b.Delivery == r.orch && b.Begin < orchClaim.Released {
				r.optimist = true
			}
			if b.End < 0 {
				bad = append(bad, fmt.Sprintf("the %s's body of the inline step never returned", who[b.Delivery]))
			}
		case b.Run == run && b.Step == r.queued:
			queued++
		case b.Run == run:
			bad = append(bad, fmt.Sprintf("a body of step %q, neither the inline nor the queued one", b.Step))
		}
	}
	sort.Strings(r.bodies)
	if queued != 1 {
		bad = append(bad, fmt.Sprintf("%d bodies of the queued step, want 1", queued))
	}
	if len(inl) == 2 {
		r.overlap = inl[0].Begin < inl[1].End && inl[1].Begin < inl[0].End
	}
	return r, bad
}

// judgeBodyTwice forces finding 21's interleaving (earlyQueuedCompletion)
// in 10 runs: holds when in every run the inline step's body ran in both
// deliveries at once, fixed when in every run it ran once.
func judgeBodyTwice(ctx context.Context, r *realengine.Runner, rel realengine.Release, o MatrixOptions) (Judgement, error) {
	const runs = 10
	out, err := r.Run(ctx, rel.Core, rel.On(earlyQueuedCompletion(runs)), o.Timeout)
	if err != nil {
		return Judgement{}, err
	}
	if out.Gate == nil || len(out.Gate.Escapes) > 0 {
		return Judgement{Undecided, "the gate escaped: the queued step's completion was not forced before the inline claim"}, nil
	}
	twice, once := 0, 0
	outcomes := map[string]int{}
	for i := range out.Runs {
		res, bad := judgeInlineRace(out, i, !rel.Core.FetchFree())
		if len(bad) > 0 {
			return Judgement{Undecided, fmt.Sprintf("run %d was not the forced interleaving: %s", i, strings.Join(bad, "; "))}, nil
		}
		outcomes[res.outcome()]++
		switch {
		case len(res.bodies) == 2 && res.overlap:
			twice++
		case len(res.bodies) == 1:
			once++
		}
	}
	ev := fmt.Sprintf("%d of %d runs: two bodies of the inline step at once (%s)", twice, len(out.Runs), countsString(outcomes))
	switch {
	case twice == len(out.Runs):
		return Judgement{Holds, ev}, nil
	case once == len(out.Runs):
		return Judgement{Fixed, ev}, nil
	}
	return Judgement{Undecided, ev}, nil
}
