package model

import (
	"testing"

	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

func runBuiltin(t *testing.T, name string, seed uint64, variants ...string) *Result {
	t.Helper()
	sc, ok := Builtin(name)
	if !ok {
		t.Fatalf("no built-in scenario %q", name)
	}
	sc.Variants = append(sc.Variants, variants...)
	r, err := Run(&sc, sim.NewPCG(seed), Options{Record: true, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	if !r.History.Drained {
		t.Fatalf("%s seed %d did not drain", name, seed)
	}
	return r
}

// callsOf returns the calls a delivery made, in order.
func callsOf(h *History, d int32) []Call {
	var out []Call
	for _, c := range h.Calls {
		if c.Caller.Delivery == d && c.Caller.Kind != CallerClient {
			out = append(out, c)
		}
	}
	return out
}

func stepDeliveries(h *History) []int32 {
	var out []int32
	for i, d := range h.Deliveries {
		if d.Msg >= 0 && d.Kind == MsgStep {
			out = append(out, int32(i))
		}
	}
	return out
}

// readsBeforeClaim counts the runs.get a delivery made before its first
// step_started.
func readsBeforeClaim(h *History, d int32) int {
	n := 0
	for _, c := range callsOf(h, d) {
		if c.Op == OpEventsCreate && c.Event == world.EvStepStarted {
			break
		}
		if c.Op == OpRunsGet {
			n++
		}
	}
	return n
}

func TestGoldenT1NoReadOnTheStartPath(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		h := runBuiltin(t, "golden-t1", seed).History
		checked := 0
		for _, d := range stepDeliveries(h) {
			dl := h.Deliveries[d]
			if !h.Messages[dl.Msg].HasCtx || dl.Prologue != PrologueRunContext {
				t.Fatalf("seed %d: delivery %d did not take the fetch-free prologue", seed, d)
			}
			if n := readsBeforeClaim(h, d); n != 0 {
				t.Fatalf("seed %d: delivery %d made %d reads before its claim", seed, d, n)
			}
			if dl.Outcome == OutcomeCompleted && !dl.LastComplete {
				checked++ // completed while the other step was pending
			}
		}
		if checked != 1 {
			t.Fatalf("seed %d: %d deliveries completed with the other step pending, want 1", seed, checked)
		}
		if h.FinalRuns[0].Status != world.RunCompleted {
			t.Fatalf("seed %d: run %v", seed, h.FinalRuns[0].Status)
		}
		// The twin without runContext reads once before its claim.
		h = runBuiltin(t, "golden-t1", seed, "legacy-producers").History
		for _, d := range stepDeliveries(h) {
			if h.Messages[h.Deliveries[d].Msg].HasCtx {
				t.Fatalf("seed %d: legacy producer stamped runContext", seed)
			}
			if n := readsBeforeClaim(h, d); n != 1 {
				t.Fatalf("seed %d: legacy delivery %d made %d reads before its claim, want 1", seed, d, n)
			}
		}
	}
}

func TestGoldenT2RedeliveryIsTheLastCompleterWithOneLazyRead(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		h := runBuiltin(t, "golden-t2", seed).History
		inline := 0
		for _, d := range h.Deliveries {
			if d.Msg < 0 {
				inline++
			}
		}
		steps := stepDeliveries(h)
		if inline != 1 || len(steps) != 2 {
			t.Fatalf("seed %d: %d inline steps and %d step deliveries, want 1 and 2 (a crash and its redelivery)", seed, inline, len(steps))
		}
		msg := h.Messages[h.Deliveries[steps[0]].Msg]
		id := h.FinalRuns[msg.Run]
		want := RunContext{DeploymentID: id.DeploymentID, SpecVersion: id.SpecVersion, StartedAt: id.StartedAt, RootRunID: id.RootRunID}
		if !msg.HasCtx || msg.Ctx != want || id.StartedAt == 0 {
			t.Fatalf("seed %d: published runContext %+v, want the run's identity %+v", seed, msg.Ctx, want)
		}
		first, redelivery := h.Deliveries[steps[0]], h.Deliveries[steps[1]]
		if first.Disposition != DispCrash || redelivery.Attempt != 2 {
			t.Fatalf("seed %d: first delivery %v, second attempt %d", seed, first.Disposition, redelivery.Attempt)
		}
		if readsBeforeClaim(h, steps[1]) != 0 || !redelivery.LastComplete || !redelivery.Continued {
			t.Fatalf("seed %d: redelivery read %d times before its claim, last=%v continued=%v", seed, readsBeforeClaim(h, steps[1]), redelivery.LastComplete, redelivery.Continued)
		}
		lazy := 0
		for _, c := range h.Calls {
			if c.Op == OpRunsGet && c.Reason == ReasonLastCompleter {
				lazy++
			}
		}
		if lazy != 1 || h.Fanouts[0].LazyFetches != 1 {
			t.Fatalf("seed %d: %d lazy reads, want exactly 1", seed, lazy)
		}
		if h.FinalRuns[0].Status != world.RunCompleted {
			t.Fatalf("seed %d: run ended %v", seed, h.FinalRuns[0].Status)
		}
	}
}

// golden-t3: the last completer's lazy read answers a stale pending row.
// As published (core 5.0.0-beta.52, seen by simlab validate), the replay
// needs the run's startedAt, which that row lacks, and the run fails;
// DOMAIN §7's claim that the replay still completes the run is the
// replay-on-stale-pending variant; the strict gate (before the review fix)
// abandons the run.
func TestGoldenT3StalePendingFailsTheRun(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		h := runBuiltin(t, "golden-t3", seed).History
		var lazy []Call
		for _, c := range h.Calls {
			if c.Op == OpRunsGet && c.Reason == ReasonLastCompleter {
				lazy = append(lazy, c)
			}
		}
		if len(lazy) != 1 || lazy[0].StatusRead != world.RunPending || !lazy[0].Stale {
			t.Fatalf("seed %d: lazy reads %+v, want one stale pending", seed, lazy)
		}
		// The continuer lists the log (no terminal event in it), then its
		// replay cannot start: run_failed is its next write.
		var after []Call
		for _, c := range h.Calls {
			if c.Caller == lazy[0].Caller && c.Start >= lazy[0].End {
				after = append(after, c)
			}
		}
		if h.FinalRuns[0].Status != world.RunFailed || len(after) != 2 || after[0].Op != OpEventsList ||
			after[1].Event != world.EvRunFailed || after[1].Result != world.OK {
			t.Fatalf("seed %d: run %v, continuer's calls after its lazy read %+v; want events.list then an accepted run_failed, as published", seed, h.FinalRuns[0].Status, after)
		}
		h = runBuiltin(t, "golden-t3", seed, "replay-on-stale-pending").History
		if h.FinalRuns[0].Status != world.RunCompleted || !h.Fanouts[0].Continued {
			t.Fatalf("seed %d: replay-on-stale-pending: run %v, continued %v; want completed by the replay", seed, h.FinalRuns[0].Status, h.Fanouts[0].Continued)
		}
		h = runBuiltin(t, "golden-t3", seed, "strict-running-gate").History
		if h.FinalRuns[0].Status != world.RunRunning || h.Fanouts[0].Continued {
			t.Fatalf("seed %d: strict gate: run %v, continued %v; want abandoned while running", seed, h.FinalRuns[0].Status, h.Fanouts[0].Continued)
		}
	}
}

func TestGoldenT4TerminalAtTheLazyRead(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		h := runBuiltin(t, "golden-t4", seed).History
		steps := stepDeliveries(h)
		last := steps[len(steps)-1]
		calls := callsOf(h, last)
		var lazyAt int = -1
		for i, c := range calls {
			if c.Op == OpRunsGet && c.Reason == ReasonLastCompleter {
				lazyAt = i
			}
		}
		if lazyAt < 0 || calls[lazyAt].StatusRead != world.RunCancelled {
			t.Fatalf("seed %d: no lazy read seeing the cancelled run: %+v", seed, calls)
		}
		if lazyAt != len(calls)-1 {
			t.Fatalf("seed %d: calls after the lazy read: %+v", seed, calls[lazyAt+1:])
		}
		d := h.Deliveries[last]
		if d.Disposition != DispAck || d.Continued || h.Fanouts[0].Continued {
			t.Fatalf("seed %d: delivery %v continued=%v", seed, d.Disposition, d.Continued)
		}
		if h.FinalRuns[0].Status != world.RunCancelled {
			t.Fatalf("seed %d: run %v", seed, h.FinalRuns[0].Status)
		}
	}
}

func TestGoldenT5FenceOnARedeliveredStart(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		for _, preFix := range []bool{false, true} {
			var variants []string
			if preFix {
				variants = []string{"pre-fix-fence"}
			}
			h := runBuiltin(t, "golden-t5", seed, variants...).History
			steps := stepDeliveries(h)
			if len(steps) < 2 {
				t.Fatalf("seed %d: %d step deliveries, want a redelivery", seed, len(steps))
			}
			first, second := steps[0], steps[1]
			var completed *Call
			for i, c := range h.Calls {
				if c.Caller.Delivery == first && c.Event == world.EvStepCompleted {
					completed = &h.Calls[i]
				}
			}
			cancelAt := h.Runs[0].CancelAt
			if completed == nil || completed.Result != world.OK || completed.End < cancelAt {
				t.Fatalf("seed %d: in-flight step_completed %+v not accepted after the cancel", seed, completed)
			}
			var claim *Call
			for _, c := range callsOf(h, second) {
				if c.Event == world.EvStepStarted {
					c := c
					claim = &c
				}
			}
			if claim == nil || claim.End < cancelAt {
				t.Fatalf("seed %d: redelivered claim %+v not after the cancel at %v", seed, claim, cancelAt)
			}
			d := h.Deliveries[second]
			if preFix {
				if claim.Result != world.OK || !d.BodyRan {
					t.Fatalf("seed %d pre-fix: redelivered start %v, body ran %v; want accepted and run", seed, claim.Result, d.BodyRan)
				}
			} else if claim.Result != world.RunExpired || d.BodyRan || d.Outcome != OutcomeGone {
				t.Fatalf("seed %d fixed: redelivered start %v, body ran %v, outcome %v; want RunExpired, not run, gone", seed, claim.Result, d.BodyRan, d.Outcome)
			}
		}
	}
}
