package realengine

import (
	"context"
	"testing"
	"time"

	"github.com/simlab/simlab/model/flow"
	"github.com/simlab/simlab/model/program"
)

// Hooks run on the real core as simlab writes them: the program's hook
// compiles to createHook, the outside driver resumes it through core's own
// resumeHook at a cadence, and the runs' logs hold the hook's events with
// its id and token in the run's sequences (a token core drew that the
// harness's sequence does not find reads -1). simlab's replay consumes
// every real log whole, and the driver's resumes reached the runs.
func TestHooksRunOnTheRealCore(t *testing.T) {
	r := prepared(t)
	prog := flow.HookLoop(3, 300*time.Millisecond)
	compiled := program.MustCompile(prog)
	sim := flow.Defaults(compiled)
	resumes := flow.Resumes{Every: 150 * time.Millisecond, Count: 8, Burst: 2, Spread: 5 * time.Millisecond}
	cfg := HarnessConfig{Seed: 1, MaxInline: sim.MaxInline, Runs: 2, RunIntervalMS: 50, DefaultDispatch: true, Resumes: ResumesOf(resumes)}
	out, err := r.RunProgram(context.Background(), pinnedCore(t, Pinned.DefaultCore), cfg, "approvals", prog, sim.Body, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if out.Resumes == nil || out.Resumes.Sent == 0 {
		t.Fatalf("the driver resumed nothing: %+v", out.Resumes)
	}
	t.Logf("driver: %d ticks, %d resumes taken, refused %v", out.Resumes.Ticks, out.Resumes.Sent, out.Resumes.Refused)
	received := 0
	for _, b := range out.ReadBack {
		log, err := ProgramEvents(b.Log)
		if err != nil {
			t.Fatalf("run %s: %v", b.RunID, err)
		}
		created, disposed := 0, 0
		for _, e := range log {
			switch e.Type {
			case program.HookCreated:
				created++
				if e.Ordinal != 0 || e.Token != 0 {
					t.Errorf("run %s: hook_created as hook#%d token#%d; the program's first entity and first token are hook#0 token#0", b.RunID, e.Ordinal, e.Token)
				}
			case program.HookReceived:
				received++
			case program.HookDisposed:
				disposed++
			}
		}
		fresh := program.Replay(compiled, program.BeforeEnd(log))
		t.Logf("run %s: %s, %d events (%v), fresh replay %s", b.RunID, b.RunStatus, len(log), b.BeforeTerminal, fresh)
		if created != 1 || disposed != 1 {
			t.Errorf("run %s: %d hook_created, %d hook_disposed; want one each", b.RunID, created, disposed)
		}
		if b.RunStatus != "completed" || b.Corrupted() || fresh.Status != program.Completed {
			t.Errorf("run %s: status %s, error codes %v, simlab's fresh replay %s; want completed, consumed whole", b.RunID, b.RunStatus, b.ErrorCodes, fresh)
		}
	}
	if received == 0 {
		t.Error("no run's log holds a hook_received")
	}
}
