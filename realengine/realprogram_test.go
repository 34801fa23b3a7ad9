package realengine

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/model/flow"
	"github.com/simlab/simlab/model/program"
	"github.com/simlab/simlab/sim"
)

// The storm on the real core, as model/flow runs it in the pinned
// release's view: real runs of flow.Storm (16 branches, 3 rounds of a step
// racing a 300 ms sleep) on core beta.52 over world-local beta.45, with
// simlab's step bodies. simlab predicts every run completes and no log is
// corrupted (TestPrefixViewsNeverCorruptTheStorm); the real runs must
// complete, fail nothing CORRUPTED_EVENT_LOG, and leave logs that simlab's
// replay consumes whole. How many races each side's step won and how many
// runs ended more than once (concurrent last completers: 0 of 4 on an idle
// machine, 2 of 4 with both cores busy; simlab, whose replay costs the
// same whatever the load, 1 of 100) move with the machine's load, so they
// are logged beside simlab's for the reader, not judged.
func TestRealStormRunsCleanOnThePinnedCore(t *testing.T) {
	r := prepared(t)
	prog := flow.Storm(16, 3, 300*time.Millisecond)
	compiled := program.MustCompile(prog)
	sim := flow.Defaults(compiled)
	cfg := HarnessConfig{Seed: 1, MaxInline: sim.MaxInline, Runs: 4, RunIntervalMS: 50, DefaultDispatch: true}
	out, err := r.RunProgram(context.Background(), pinnedCore(t, Pinned.DefaultCore), cfg, "flowstorm", prog, sim.Body, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.ReadBack) != cfg.Runs {
		t.Fatalf("%d runs read back, want %d", len(out.ReadBack), cfg.Runs)
	}
	lo, hi := int32(1<<30), int32(0)
	for seed := range uint64(40) {
		res, err := flow.Run(sim, seed+1)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi = min(lo, res.Fresh.Minted), max(hi, res.Fresh.Minted)
	}
	t.Logf("simlab, seeds 1..40: %d..%d entities a run", lo, hi)
	for _, b := range out.ReadBack {
		log, err := ProgramEvents(b.Log)
		if err != nil {
			t.Fatalf("run %s: %v", b.RunID, err)
		}
		fresh := program.Replay(compiled, program.BeforeEnd(log))
		t.Logf("run %s: %s, %d events, terminal %v, errors %v, fresh replay %s (%d entities)", b.RunID, b.RunStatus, len(log), b.TerminalByType, b.ErrorCodes, fresh, fresh.Minted)
		if b.RunStatus != "completed" || b.FirstTerminal != "run_completed" || b.Corrupted() || fresh.Status != program.Completed {
			t.Errorf("run %s: status %s, first end %q, error codes %v, simlab's fresh replay %s; want completed, clean, consumed whole", b.RunID, b.RunStatus, b.FirstTerminal, b.ErrorCodes, fresh)
		}
	}
}

// A program's run has no fan-out widths: an error of one names the program
// (it indexed the first width, and panicked, when a program's run timed out).
func TestRunErrorNamesTheProgram(t *testing.T) {
	e := &RunError{Core: "5.0.0-beta.52", Branches: firstWidth(nil), Program: WorkflowFunction("flowstorm"), Seed: 1, Msg: "killed after 50s"}
	if got := e.Error(); !strings.Contains(got, "program prog_flowstorm") || strings.Contains(got, "branches") {
		t.Errorf("%q: want it to name the program, not branches", got)
	}
}

// killedLastCompleter is a fan-out whose one queued step (q, the slowest)
// finishes last, so its delivery replays the run inline and runs the next
// step (h) itself; h hangs on its first attempt, so the time limit kills
// that delivery mid-body, and world-local redelivers the message.
func killedLastCompleter() []program.Node {
	fixed := func(d time.Duration) sim.Dist { return sim.Dist{Min: d, P50: d, P90: d, P99: d, Max: d} }
	a := program.Node{Step: "a", Body: fixed(50 * time.Millisecond)}
	return []program.Node{
		{All: []program.Node{a, a, a, {Step: "q", Body: fixed(1500 * time.Millisecond)}}},
		{Step: "h", Hangs: 1, Body: fixed(50 * time.Millisecond)},
		{Step: "final", Body: fixed(50 * time.Millisecond)},
	}
}

// hOrdinal is h's correlation ordinal in killedLastCompleter: the fan-out's
// four steps mint 0..3.
const hOrdinal = 4

func startsOf(log []program.Event, ord int32) int {
	n := 0
	for _, e := range log {
		if e.Kind == program.EntityStep && e.Ordinal == ord && e.Type == program.StepStarted {
			n++
		}
	}
	return n
}

// A queued step's delivery that, as the fan-out's last completer, runs the
// next step inline and is killed at the time limit mid-body: its message
// comes back, finds its own step finished and the inline one pending, and
// recovers the step it owns (core beta.52's runtime.js, "falling through to
// recover an inline step owned by this message") instead of acking and
// leaving the run to hang. The real core on world-local and simlab's flow
// model, run on the same program with the same 3 s limit, must both
// complete every run, start h twice (the killed attempt and the owned
// recovery) and kill one delivery. Before the model learnt the recovery,
// flow left such runs stuck (STUCK in simlab replays --search).
func TestRealKilledLastCompleterRecoversItsInlineStep(t *testing.T) {
	prog := killedLastCompleter()
	compiled := program.MustCompile(prog)
	sim := flow.Defaults(compiled)
	sim.MaxDuration = 3 * time.Second
	for seed := uint64(1); seed <= 20; seed++ {
		res, err := flow.Run(sim, seed)
		if err != nil {
			t.Fatal(err)
		}
		log := make([]program.Event, len(res.Log))
		for i := range res.Log {
			log[i] = res.Log[i].Event
		}
		if res.End != flow.Completed || startsOf(log, hOrdinal) != 2 || res.Killed != 1 {
			t.Errorf("simlab seed %d: %s, h started %d times, %d killed; want completed, 2, 1", seed, res.End, startsOf(log, hOrdinal), res.Killed)
		}
	}

	out := runKilled(t, "killedlast", prog, sim, 1)
	for _, b := range out.ReadBack {
		log, err := ProgramEvents(b.Log)
		if err != nil {
			t.Fatalf("run %s: %v", b.RunID, err)
		}
		t.Logf("run %s: %s, %d events, h started %d times, errors %v", b.RunID, b.RunStatus, len(log), startsOf(log, hOrdinal), b.ErrorCodes)
		if b.RunStatus != "completed" || startsOf(log, hOrdinal) != 2 {
			t.Errorf("real run %s: %s, h started %d times; want completed, 2", b.RunID, b.RunStatus, startsOf(log, hOrdinal))
		}
	}
}

// A workflow message killed at the time limit on every delivery: past the
// runtime's delivery cap (WORKFLOW_MAX_QUEUE_DELIVERIES, here 2) its next
// delivery fails the run MAX_DELIVERIES_EXCEEDED, loading nothing. simlab's
// flow model dropped the message at the cap and left the run stuck; both
// sides must now fail the run, after two kills.
func TestRealDeliveryCapFailsTheRun(t *testing.T) {
	prog := []program.Node{{Step: "h", Hangs: 3}}
	compiled := program.MustCompile(prog)
	sim := flow.Defaults(compiled)
	sim.MaxDuration, sim.MaxDeliveries = time.Second, 2
	for seed := uint64(1); seed <= 20; seed++ {
		res, err := flow.Run(sim, seed)
		if err != nil {
			t.Fatal(err)
		}
		if res.End != flow.Failed || res.Killed != 2 {
			t.Errorf("simlab seed %d: %s, %d killed; want failed after 2 kills", seed, res.End, res.Killed)
		}
	}

	out := runKilled(t, "capped", prog, sim, 2)
	for _, b := range out.ReadBack {
		t.Logf("run %s: %s, first end %s, errors %v", b.RunID, b.RunStatus, b.FirstTerminal, b.ErrorCodes)
		if b.RunStatus != "failed" || !slices.Contains(b.ErrorCodes, "MAX_DELIVERIES_EXCEEDED") {
			t.Errorf("real run %s: %s, error codes %v; want failed MAX_DELIVERIES_EXCEEDED", b.RunID, b.RunStatus, b.ErrorCodes)
		}
	}
}

// runKilled runs prog once on the pinned core with sim's time limit, and
// its delivery cap when sim lowers it, and wants kills deliveries killed.
func runKilled(t *testing.T, name string, prog []program.Node, sim flow.Config, kills int) *RealRun {
	t.Helper()
	cfg := HarnessConfig{Seed: 1, MaxInline: sim.MaxInline, Runs: 1, DefaultDispatch: true, MaxDurationMS: msOf(sim.MaxDuration)}
	if sim.MaxDeliveries < flow.Defaults(nil).MaxDeliveries {
		cfg.MaxQueueDeliveries = sim.MaxDeliveries
	}
	out, err := prepared(t).RunProgram(context.Background(), pinnedCore(t, Pinned.DefaultCore), cfg, name, prog, sim.Body, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if out.Counts.Kills != kills {
		t.Errorf("the real run killed %d deliveries, want %d", out.Counts.Kills, kills)
	}
	return out
}
