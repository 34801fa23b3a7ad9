package realengine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/model/program"
	"github.com/simlab/simlab/sim"
)

// The Date.now() finding forced on a real run of core beta.52 over
// world-local, by the gate's hold rule, not by timing: three steps at once,
// a inline in the run's own invocation (max_inline 1; 200 ms), b and c
// queued (2 s, 5 s); after a, the program picks x once Date.now() is 1 s
// past its start, else y. The invocation replays its log ending at a's end,
// reads a's time, and claims y; the rule holds that claim at the World until
// b's result is answered, so y's create lands after b's end. The next
// replay's pass takes a's end and b's end before the program runs on, reads
// b's time, expects x where the log has y, and the run fails
// CORRUPTED_EVENT_LOG, every time.
func TestDateNowCorruptsARealRunForced(t *testing.T) {
	r := prepared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ms := time.Millisecond
	fixed := func(d time.Duration) sim.Dist { return sim.Dist{Min: d, P50: d, P90: d, P99: d, Max: d} }
	prog := []program.Node{{All: []program.Node{
		{Seq: []program.Node{
			{Step: "a", Body: fixed(200 * ms)},
			{Clock: time.Second, As: "late"},
			{If: "late", Then: []program.Node{{Step: "x", Body: fixed(100 * ms)}}, Else: []program.Node{{Step: "y", Body: fixed(100 * ms)}}},
		}},
		{Step: "b", Body: fixed(2 * time.Second)},
		{Step: "c", Body: fixed(5 * time.Second)},
	}}}
	lazy := true
	const runs = 3
	cfg := HarnessConfig{Seed: 1, MaxInline: 1, Runs: runs, DefaultDispatch: true, LeaseSeconds: 860, ProgramTimeoutIsOutcome: true, DumpCalls: true,
		Gate: &GateConfig{Holds: []HoldRule{{
			Name:  "late_claim",
			What:  HoldPattern{Kind: "call", Op: "events.create", Event: "step_started", Lazy: &lazy, From: "run", Nth: 2},
			Until: HoldPattern{Kind: "answer", Op: "events.create", Event: "step_completed", Result: "ok", From: "step"},
		}}}}
	run := func(core string, cfg HarnessConfig) []ReadBack {
		t.Helper()
		out, err := r.RunProgram(ctx, pinnedCore(t, core), cfg, "datenowforced", prog, fixed(100*ms), 2*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.ReadBack) != cfg.Runs {
			t.Fatalf("core %s: %d runs read back, want %d", core, len(out.ReadBack), cfg.Runs)
		}
		return out.ReadBack
	}
	corrupted := func(b ReadBack) bool {
		return b.Corrupted() && strings.Contains(strings.Join(b.ErrorCodes, ","), "CORRUPTED_EVENT_LOG")
	}
	for i, b := range run(Pinned.DefaultCore, cfg) {
		if !corrupted(b) {
			t.Errorf("run %d: first end %q, error codes %v: want CORRUPTED_EVENT_LOG", i, b.FirstTerminal, b.ErrorCodes)
		}
	}
	// The hold is what forces it: without it y's claim lands before b's
	// end and every replay reads a's time there.
	free := cfg
	free.Gate, free.Runs = nil, 1
	if b := run(Pinned.DefaultCore, free)[0]; corrupted(b) || b.FirstTerminal != "run_completed" {
		t.Errorf("without the hold: first end %q, error codes %v; want completed", b.FirstTerminal, b.ErrorCodes)
	}
	// Beta.55 reads a's time in every replay: the same hold, no corruption.
	fixed55 := cfg
	fixed55.Runs = 1
	if b := run("5.0.0-beta.55", fixed55)[0]; corrupted(b) || b.FirstTerminal != "run_completed" {
		t.Errorf("core beta.55, the same hold: first end %q, error codes %v; want completed", b.FirstTerminal, b.ErrorCodes)
	}
}
