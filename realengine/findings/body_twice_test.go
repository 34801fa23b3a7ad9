package findings

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/realengine"
)

// TestForcedEarlyQueuedCompletionAgainstTheInlineStep settles docs/MODEL.md
// finding 21's first interleaving on the real core. simlab predicts: when a
// fan-out's queued step completes before the orchestrator's lazy claim of
// its inline step lands, the queued step's consumer lists no pending step
// (core counts a step pending from its step_created, and the inline step
// has none until its claim), becomes the last completer, replays, and
// claims and runs the inline step while the orchestrator runs it too.
//
// Forced on core beta.52 and beta.50 (earlyQueuedCompletion), every run
// goes the same way: the consumer's replay makes its own lazy claim of the
// inline step, which creates the step and is accepted; the orchestrator's
// held claim then meets EntityConflictError ("already created") and is
// skipped. But the orchestrator's body has already begun, before its claim
// reached the World: its first delivery runs in turbo, which forces an
// optimistic inline start (the body runs while the claim is in flight, and
// a lost claim only discards the result). So one step has one accepted
// claim and two bodies in two deliveries, in flight at once. The inline
// ownership stamp plays no part: the consumer's replay decided on a log
// that held no start of the step. The test fails if any run goes otherwise,
// if the gate had to escape, or if the consumer was not that last
// completer.
func TestForcedEarlyQueuedCompletionAgainstTheInlineStep(t *testing.T) {
	r := prepared(t)
	const runs = 20
	const want = "claims of the inline step [consumer ok, orchestrator EntityConflictError]; its bodies [consumer, orchestrator], overlapping true"
	for _, core := range realengine.Cores {
		t.Run(core.Version, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			out, err := r.Run(context.Background(), core, earlyQueuedCompletion(runs), 2*time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if out.Gate == nil {
				t.Fatal("the harness reports no gate: it did not run gated")
			}
			for _, e := range out.Gate.Escapes {
				t.Errorf("hold %s of run %s escaped (%s): nothing more could arrive; the interleaving was not forced", e.Gate, e.Run, e.What)
			}
			if len(out.Runs) != runs || len(out.ReadBack) != runs {
				t.Fatalf("%d runs, %d read back, want %d", len(out.Runs), len(out.ReadBack), runs)
			}
			outcomes := map[string]int{}
			optimistic, backstops, ends := 0, 0, map[string]int{}
			for i, run := range out.Runs {
				res, bad := judgeInlineRace(out, i, !core.FetchFree())
				b := out.ReadBack[i]
				if b.RunID != run.RunID {
					t.Fatalf("read back %s in place of %s", b.RunID, run.RunID)
				}
				// Whatever the bodies did, the log keeps one end per step and
				// the run completes with the workflow's value.
				if b.Steps != 2 || b.StepTerminalMax != 1 || b.RunStatus != "completed" || len(b.Unreadable) != 0 {
					bad = append(bad, fmt.Sprintf("read back: %d steps, at most %d terminal events per step, row %q, unreadable %+v; want 2 steps with one each, completed",
						b.Steps, b.StepTerminalMax, b.RunStatus, b.Unreadable))
				}
				if run.Status != "completed" || strings.TrimSpace(string(run.Output)) != "2" {
					bad = append(bad, fmt.Sprintf("the client's returnValue: %s %s, want completed with 2", run.Status, run.Output))
				}
				if len(bad) != 0 {
					t.Errorf("run %s: %s", run.RunID, strings.Join(bad, "; "))
					continue
				}
				outcomes[res.outcome()]++
				if res.optimist {
					optimistic++
				}
				if res.backstop {
					backstops++
				}
				ends[fmt.Sprintf("run_completed %d", res.completed)]++
				if res.outcome() != want {
					t.Errorf("run %s: %s, want %s", run.RunID, res.outcome(), want)
				}
				if !res.optimist {
					t.Errorf("run %s: no body of the orchestrator began before its claim reached the World, want one (turbo's optimistic start)", run.RunID)
				}
			}
			// Node warns once that world-local's queue holds more than ten
			// delayed messages on one abort signal: the orchestrators'
			// backstop wakes, one a run. Anything else the runtime logs as an
			// error fails the test.
			for _, l := range out.RuntimeLog.Lines {
				if l.Level == "error" && !strings.Contains(l.Text, "MaxListenersExceededWarning") {
					t.Errorf("core %s: the runtime logged an error: %s", core.Version, l.Text)
				}
			}
			var lines []string
			for o, n := range outcomes {
				lines = append(lines, fmt.Sprintf("%d× %s", n, o))
			}
			sort.Strings(lines)
			t.Logf("core %s, %d runs: %s; the orchestrator's body began before its claim reached the World in %d; it then armed a delayed backstop wake in %d; %s; %s",
				core.Version, runs, strings.Join(lines, " | "), optimistic, backstops, countsString(ends), time.Since(start).Round(100*time.Millisecond))
		})
	}
}
