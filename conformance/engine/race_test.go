package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/conformance"
	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/world"
)

// startCancelSchedule is the race "start-overwrites-cancel" of
// conformance/testdata/races.json (a race of world-local beta.45, the World
// this harness runs) in the interleaving the brief of this test names, as
// gate.mjs's schedule: run_started's read of the run file; the cancel's read,
// write and publish; run_started's write and publish. It is checked on the
// model first: model/world's world-local Txns, stepped in that order, end as
// the race file says the real World ends (both accepted, the run running,
// its log run_created, run_cancelled, run_started), one Txn step being one
// step of the schedule (a world-local run event's read, file write and
// publish: worlds/gate.mjs's classifier).
func startCancelSchedule(t *testing.T) [][2]int {
	t.Helper()
	races, err := conformance.ReadRaces(filepath.Join("..", "testdata", "races.json"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := conformance.WorldByName("wl-fixed")
	if err != nil {
		t.Fatal(err)
	}
	const outcome = "ok ok | r0 running log=[run_created,run_cancelled,run_started]"
	found := false
	for _, r := range races {
		if r.Name == "start-overwrites-cancel" {
			found = true
			if !r.On(w) || len(r.Setup) != 0 || len(r.Batch) != 2 || r.Batch[0].Type != "run_started" || r.Batch[1].Type != "run_cancelled" || r.Outcome != outcome {
				t.Fatalf("race %s: want run_started and run_cancelled on a fresh run of %s ending %q, got %+v on %v ending %q", r.Name, w.Name, outcome, r.Batch, r.Worlds, r.Outcome)
			}
		}
	}
	if !found {
		t.Fatal("conformance/testdata/races.json has no race start-overwrites-cancel")
	}
	s := world.NewFor(model.StoreRules(w.Profile), w.Fence)
	id := s.CreateRun(0, 0, 7, -1)
	txns := []world.Txn{s.Begin(world.Event{Type: world.EvRunStarted, Run: id}, 0), s.Begin(world.Event{Type: world.EvRunCancelled, Run: id}, 1)}
	var schedule [][2]int
	next := []int{0, 0}
	for _, c := range []int{0, 1, 1, 1, 0, 0} {
		if !s.Advance(&txns[c], 0) {
			t.Fatalf("model: call %d cannot take its step %d", c, next[c])
		}
		schedule = append(schedule, [2]int{c, next[c]})
		next[c]++
	}
	var log []string
	for _, e := range s.Log(id) {
		log = append(log, e.Type.String())
	}
	for i, tx := range txns {
		if res, _, _ := tx.Result(); !tx.Done() || res != world.OK {
			t.Fatalf("model: call %d done %v answering %v after its three steps, want done and ok", i, tx.Done(), res)
		}
	}
	if got := fmt.Sprintf("r0 %s log=[%s]", s.Get(id).Status, strings.Join(log, ",")); !strings.HasSuffix(outcome, got) {
		t.Fatalf("model: the interleaving ends %q, want %q", got, outcome)
	}
	return schedule
}

// forcedStartCancel is a run's start raced by its cancel, forced: one
// fan-out of `branches` steps (one inline), no drawn latency, no pool
// bound; each run's first run_started and the harness's Run#cancel of the
// run take their real World steps in the model's order. `runs` runs in one
// harness process, raced one after another.
func forcedStartCancel(schedule [][2]int, branches, runs int) harnessConfig {
	return harnessConfig{
		Seed: 1, Fanouts: []int{branches}, MaxInline: 1, Runs: runs,
		Race:      &raceConfig{Kind: "start_cancel", Schedule: schedule},
		DumpCalls: true,
	}
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
// returnValue is either rejected as cancelled or never settles.
func TestForcedCancelRacingStartReopensTheRealRun(t *testing.T) {
	r := prepared(t)
	schedule := startCancelSchedule(t)
	const branches, runs = 4, 10
	for _, core := range Cores {
		t.Run(core.Version, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			out, err := r.Run(context.Background(), core, forcedStartCancel(schedule, branches, runs), 2*time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Runs) != runs || len(out.ReadBack) != runs || len(out.Race) != runs {
				t.Fatalf("%d runs, %d read back, %d raced, want %d each", len(out.Runs), len(out.ReadBack), len(out.Race), runs)
			}
			race := map[string]RaceReport{}
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
				bad := []string{}
				if b.FirstTerminal != "run_cancelled" || b.TerminalEvents != 1 || b.TerminalByType["run_cancelled"] != 1 {
					bad = append(bad, fmt.Sprintf("terminal events %v (first %q), want one run_cancelled", b.TerminalByType, b.FirstTerminal))
				}
				if !sameCounts(b.BeforeTerminal, map[string]int{"run_created": 1}) {
					bad = append(bad, fmt.Sprintf("before it %v, want run_created alone", b.BeforeTerminal))
				}
				want := map[string]int{"run_started": 1, "step_created": branches, "step_started": branches, "step_completed": branches}
				if !sameCounts(b.AfterTerminal, want) {
					bad = append(bad, fmt.Sprintf("after it %v, want %v", b.AfterTerminal, want))
				}
				if b.RunStatus != "running" {
					bad = append(bad, fmt.Sprintf("the run row reads %q, want running", b.RunStatus))
				}
				if len(b.Unreadable) != 0 {
					bad = append(bad, fmt.Sprintf("rows that do not read back: %+v", b.Unreadable))
				}
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
				core.Version, reopened, runs, branches, countsString(client), out.RuntimeLog.Error, out.RuntimeLog.Warn, time.Since(start).Round(100*time.Millisecond))
		})
	}
}

func sameCounts(got, want map[string]int) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

func countsString(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
