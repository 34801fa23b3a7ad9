package realengine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/model/flow"
	"github.com/simlab/simlab/model/program"
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
