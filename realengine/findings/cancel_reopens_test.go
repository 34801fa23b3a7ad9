package findings

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/realengine"
	"github.com/simlab/simlab/realworld"
)

// startCancelSchedule is StartCancelSchedule of this repository's races
// file: the model's interleaving of start-overwrites-cancel, checked on the
// model first.
func startCancelSchedule(t *testing.T) [][2]int {
	t.Helper()
	schedule, err := StartCancelSchedule(realworld.RacesFile())
	if err != nil {
		t.Fatal(err)
	}
	return schedule
}

// TestForcedCancelRacingStartReopensTheRealRun: simlab's prediction of a
// cancel racing the run's start on world-local (the race
// start-overwrites-cancel), reproduced on the real runtime by forcing the
// model's interleaving, not by timing. The runtime's first run_started reads
// the run pending; the harness's cancel (the runtime's own Run#cancel) reads,
// writes the run file cancelled and publishes run_cancelled; then run_started
// writes the whole run file from its pending read and publishes run_started.
// In every run, on core beta.52 and beta.50: the log holds run_cancelled
// before the accepted run_started; the run row reads running again; every
// step of the workflow is created and started after the run's terminal
// event. It also pins down what the runtime does then: no run_completed is
// written (the continuation's replay loads a log holding run_cancelled and
// exits), so the run never reaches a terminal status, and the client's
// returnValue is either rejected as cancelled or never settles. So on every
// pinned core over every pinned world-local.
func TestForcedCancelRacingStartReopensTheRealRun(t *testing.T) {
	r := prepared(t)
	schedule := startCancelSchedule(t)
	const branches, runs = 4, 10
	for _, rel := range realengine.PinnedReleases() {
		core := rel.Core
		t.Run(rel.String(), func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			out, err := r.Run(context.Background(), core, rel.On(forcedStartCancel(schedule, branches, runs)), 2*time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Runs) != runs || len(out.ReadBack) != runs || len(out.Race) != runs {
				t.Fatalf("%d runs, %d read back, %d raced, want %d each", len(out.Runs), len(out.ReadBack), len(out.Race), runs)
			}
			race := map[string]realengine.RaceReport{}
			for _, rr := range out.Race {
				race[rr.RunID] = rr
			}
			reopened, client := 0, map[string]int{}
			for i, run := range out.Runs {
				rr, ok := race[run.RunID]
				if !ok {
					t.Fatalf("run %s was not raced", run.RunID)
				}
				// The race was forced as the model gave it.
				if len(rr.Broken) != 0 || rr.CancelMissed {
					t.Errorf("run %s: the schedule was not honoured: steps let go out of order %v, cancel reached the World %v", run.RunID, rr.Broken, !rr.CancelMissed)
				}
				if rr.RunCreated != "ok" || rr.StartAnswer != "ok" || rr.CancelAnswer != "ok" || rr.Cancel != "ok" {
					t.Errorf("run %s: run_created %q, run_started %q, run_cancelled %q (Run#cancel %q), want all accepted", run.RunID, rr.RunCreated, rr.StartAnswer, rr.CancelAnswer, rr.Cancel)
				}
				if rr.StartRunStatus != "running" {
					t.Errorf("run %s: run_started answered with a %q run, want running", run.RunID, rr.StartRunStatus)
				}
				b := out.ReadBack[i]
				if b.RunID != run.RunID {
					t.Fatalf("read back %s in place of %s", b.RunID, run.RunID)
				}
				// The log: run_created, run_cancelled, then the accepted
				// run_started and every step, created and started after the
				// run's terminal event; no second terminal event.
				bad := reopenedProblems(b, branches)
				if len(bad) == 0 {
					reopened++
				} else {
					t.Errorf("run %s: %s", run.RunID, strings.Join(bad, "; "))
				}
				// The client awaited returnValue from start() on: told the run
				// was cancelled, or left waiting on a run that never ends;
				// never given a value.
				rv := "missing"
				if run.ReturnValue != nil {
					rv = run.ReturnValue.State
					if rv == "rejected" {
						rv += " " + run.ReturnValue.Error
					}
				}
				client[rv]++
				if rv != "rejected WorkflowRunCancelledError" && rv != "pending" {
					t.Errorf("run %s: the client's returnValue: %s %+v, want rejected as cancelled or pending", run.RunID, rv, run.ReturnValue)
				}
			}
			// Nothing in the runtime tries to end the run: no terminal run
			// event is written, not even refused (the continuation's replay
			// loads the log, finds run_cancelled and exits).
			ends := map[string]int{}
			for _, c := range out.Calls {
				if c.Op == "events.create" && (c.Event == "run_completed" || c.Event == "run_failed" || (c.Event == "run_cancelled" && c.Delivery >= 0)) {
					ends[c.Event+" "+c.Result]++
				}
			}
			if len(ends) != 0 {
				t.Errorf("core %s: the runtime wrote terminal run events after the race: %v, want none", core.Version, ends)
			}
			if reopened != runs {
				t.Errorf("core %s: %d of %d runs reopened by the forced race, want all", core.Version, reopened, runs)
			}
			if out.RuntimeLog.Error != 0 {
				t.Errorf("core %s: the runtime logged %d errors: %+v", core.Version, out.RuntimeLog.Error, out.RuntimeLog.Lines)
			}
			t.Logf("core %s: %d/%d runs reopened (run_cancelled, then run_started accepted, %d steps started after it, no run_completed, row running); client's returnValue: %s; runtime log: %d errors, %d warnings; %s",
				rel, reopened, runs, branches, countsString(client), out.RuntimeLog.Error, out.RuntimeLog.Warn, time.Since(start).Round(100*time.Millisecond))
		})
	}
}
