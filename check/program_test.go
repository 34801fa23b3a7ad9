package check

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/flow"
	"github.com/simlab/simlab/model/program"
	"github.com/simlab/simlab/model/seeds"
	"github.com/simlab/simlab/properties"
)

// stormScenario is the engine team's storm as a program's scenario (the
// bodies of simlab replays' storm), on a
// World without slot ids (own-writes: concurrent replays corrupt its log)
// or the pinned release's (prefix).
func stormScenario(t *testing.T, branches int, view string) model.Scenario {
	t.Helper()
	sc := model.DefaultScenario()
	sc.Name, sc.Description = "storm-"+view, ""
	sc.Workflow.Fanouts, sc.Workflow.Program = nil, flow.Storm(branches, 3, 300*time.Millisecond)
	sc.Workflow.LogView = view
	// Bodies as long as the watchdog's sleep, so races are close.
	sc.Workflow.Body = flow.Defaults(nil).Body
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	return sc
}

// A program's scenario checked over seeds: the runs its spans judge
// violating replayable-log are exactly those that failed CORRUPTED_EVENT_LOG
// or left a log no fresh replay consumes, counted from the runs themselves;
// the properties spans cannot judge are listed, not reported as holding.
func TestSweepJudgesAProgramsRunsOnTheirSpans(t *testing.T) {
	sc := stormScenario(t, 8, model.LogViewOwnWrites)
	rep, err := Sweep(SweepConfig{Scenario: sc, Seeds: seeds.Count(30), Props: properties.All(), Spec: model.Spec{Scenario: "storm.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := FlowConfig(&sc)
	if err != nil {
		t.Fatal(err)
	}
	want, first, ended := 0, uint64(0), 0
	for s := uint64(1); s <= 30; s++ {
		res, err := flow.Run(cfg, s)
		if err != nil {
			t.Fatal(err)
		}
		if res.Unconsumable() {
			if want++; first == 0 {
				first = s
			}
		}
		if res.RunEnds > 1 {
			ended++
		}
	}
	if want == 0 {
		t.Fatal("no run of the storm on a World without slot ids corrupted: the test needs one")
	}
	if got := rep.Violations["replayable-log"]; got != want {
		t.Errorf("replayable-log violated in %d runs, %d runs corrupted or left an unconsumable log", got, want)
	}
	if got := rep.Violations["single-terminal-event"]; got != ended {
		t.Errorf("single-terminal-event violated in %d runs, %d runs ended more than once", got, ended)
	}
	f := rep.First["replayable-log"]
	if f == nil || f.Seed != first || !strings.Contains(strings.Join(f.Story, "\n"), "a fresh replay of the log diverges at event") {
		t.Errorf("first replayable-log counterexample %+v, want seed %d with the log's story", f, first)
	}
	if f != nil && !strings.HasPrefix(f.Replay, "simlab run --scenario storm.yaml --seed ") {
		t.Errorf("replay %q: want the run command", f.Replay)
	}
	if _, judged := rep.Violations["attempt-count"]; judged || rep.NotJudged["attempt-count"] == "" {
		t.Errorf("attempt-count: violations %v, not judged %q; want it listed as not judged, with the reason", rep.Violations, rep.NotJudged["attempt-count"])
	}
	if rep.Coverage["run_failed:CORRUPTED_EVENT_LOG"] == 0 || rep.Coverage["concurrent_replays"] == 0 {
		t.Errorf("coverage %v: want the corrupted runs and the concurrent replays counted", rep.Coverage)
	}
}

// The pinned release's view of the same storm holds replayable-log: the
// same judge, the other answer.
func TestSweepOfAProgramInThePrefixViewHoldsReplayableLog(t *testing.T) {
	sc := stormScenario(t, 8, "")
	rep, err := Sweep(SweepConfig{Scenario: sc, Seeds: seeds.Count(30), Props: properties.All()})
	if err != nil {
		t.Fatal(err)
	}
	if n, judged := rep.Violations["replayable-log"]; !judged || n != 0 {
		t.Errorf("prefix view: replayable-log %d (judged %v), want judged and held", n, judged)
	}
}

// A shrunk counterexample still violates the property, is smaller than the
// program it came from, and its scenario file, read back, runs the same.
func TestMinimizeProgramShrinksAndItsFileReplays(t *testing.T) {
	sc := stormScenario(t, 8, model.LogViewOwnWrites)
	seed := firstCorrupted(t, sc, 30)
	ce, ok := MinimizeProgram(sc, seed, "replayable-log", nil)
	if !ok {
		t.Fatalf("seed %d does not violate replayable-log", seed)
	}
	if before, after := program.MaxMinted(sc.Workflow.Program), program.MaxMinted(ce.Scenario.Workflow.Program); after >= before {
		t.Errorf("shrunk program mints up to %d entities, the original %d: want fewer", after, before)
	}
	if ce.Tries > programShrinkRuns+programShrinkSeeds+1 {
		t.Errorf("the shrink made %d runs, bound %d", ce.Tries, programShrinkRuns)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "ce.yaml")
	if err := os.WriteFile(path, []byte(ProgramScenarioFile(ce.Scenario, "a header")), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := model.Spec{Scenario: path}.Load()
	if err != nil {
		t.Fatalf("the shrunk scenario file does not load: %v\n%s", err, ProgramScenarioFile(ce.Scenario))
	}
	a, _ := FlowConfig(&ce.Scenario)
	b, err := FlowConfig(&back)
	if err != nil {
		t.Fatal(err)
	}
	ra, _ := flow.Run(a, ce.Seed)
	rb, _ := flow.Run(b, ce.Seed)
	if !reflect.DeepEqual(ra, rb) {
		t.Errorf("the file's run at seed %d differs from the shrunk scenario's", ce.Seed)
	}
	if rb.End != flow.Corrupted && rb.Fresh.Status != program.Diverged {
		t.Errorf("the file's run ended %v with a fresh replay %v: want the violation kept", rb.End, rb.Fresh)
	}
}

// The clock storm's counterexample (Date.now() read ahead by the pass)
// shrinks to fewer branches, and its file, which drops an if's emptied
// branch, loads and replays a run whose log no replay consumes.
func TestMinimizeProgramShrinksTheClockStorm(t *testing.T) {
	sc, ok := model.Builtin("clock-storm")
	if !ok {
		t.Fatal("no clock-storm")
	}
	seed := firstCorrupted(t, sc, 100)
	ce, ok := MinimizeProgram(sc, seed, "replayable-log", nil)
	if !ok {
		t.Fatalf("seed %d does not violate replayable-log", seed)
	}
	if n := len(ce.Scenario.Workflow.Program[0].All); n >= 16 {
		t.Errorf("shrunk to %d branches, want fewer than the 16 it began with:\n%s", n, ProgramScenarioFile(ce.Scenario))
	}
	if !strings.Contains(strings.Join(ce.Story, "\n"), "Date.now() at statement") {
		t.Errorf("the shrunk story does not name the clock reads:\n%s", strings.Join(ce.Story, "\n"))
	}
	path := filepath.Join(t.TempDir(), "ce.yaml")
	if err := os.WriteFile(path, []byte(ProgramScenarioFile(ce.Scenario)), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := model.Spec{Scenario: path}.Load()
	if err != nil {
		t.Fatalf("the shrunk file does not load: %v\n%s", err, ProgramScenarioFile(ce.Scenario))
	}
	b, _ := FlowConfig(&back)
	if res, _ := flow.Run(b, ce.Seed); !res.Unconsumable() {
		t.Errorf("the file's run at seed %d ended %s with a log a fresh replay consumes", ce.Seed, res.End)
	}
}

// A shrink that is told to stop returns at once what it has: still a
// counterexample.
func TestMinimizeProgramStopsWithACounterexample(t *testing.T) {
	sc := stormScenario(t, 8, model.LogViewOwnWrites)
	s := firstCorrupted(t, sc, 30)
	ce, ok := MinimizeProgram(sc, s, "replayable-log", func() bool { return true })
	if !ok || ce.Seed != s || !reflect.DeepEqual(ce.Scenario, sc) || len(ce.Story) == 0 {
		t.Errorf("stopped at once: %v, seed %d (want %d), same scenario %v, story %d lines", ok, ce.Seed, s, reflect.DeepEqual(ce.Scenario, sc), len(ce.Story))
	}
}

// firstCorrupted is the first of seeds 1..n whose run of sc failed
// CORRUPTED_EVENT_LOG.
func firstCorrupted(t *testing.T, sc model.Scenario, n uint64) uint64 {
	t.Helper()
	cfg, err := FlowConfig(&sc)
	if err != nil {
		t.Fatal(err)
	}
	for s := uint64(1); s <= n; s++ {
		if res, _ := flow.Run(cfg, s); res.End == flow.Corrupted {
			return s
		}
	}
	t.Fatalf("no corrupted run of %s in %d seeds", sc.Name, n)
	return 0
}

// The retained VM (core's WORKFLOW_RETAINED_VM, workflow.cold_replays
// false): an invocation that ran steps inline goes on in its parked VM, so
// its own next pass keeps the Date.now() read that wrote the log and does
// not diverge on it. Some clock-storm runs that fail CORRUPTED_EVENT_LOG
// with cold replays then complete, their logs still ones a fresh replay
// cannot consume; none the other way round.
func TestRetainedVMKeepsItsClockReads(t *testing.T) {
	sc, ok := model.Builtin("clock-storm")
	if !ok {
		t.Fatal("no clock-storm")
	}
	retained, err := FlowConfig(&sc)
	if err != nil {
		t.Fatal(err)
	}
	cold := sc
	cold.Workflow.ColdReplays = true
	coldCfg, err := FlowConfig(&cold)
	if err != nil {
		t.Fatal(err)
	}
	if !retained.RetainedVM || coldCfg.RetainedVM {
		t.Fatalf("RetainedVM %v by default, %v with cold_replays", retained.RetainedVM, coldCfg.RetainedVM)
	}
	saved := 0
	for s := uint64(1); s <= 200; s++ {
		r, _ := flow.Run(retained, s)
		c, _ := flow.Run(coldCfg, s)
		if r.End == flow.Corrupted && c.End != flow.Corrupted {
			t.Errorf("seed %d: corrupted with the retained VM, %s with cold replays", s, c.End)
		}
		if c.End == flow.Corrupted && r.End == flow.Completed {
			saved++
			if !r.Unconsumable() {
				t.Errorf("seed %d: corrupted cold, completed retained with a log a fresh replay consumes", s)
			}
		}
	}
	if saved == 0 {
		t.Error("no run that cold replays corrupt completes in its retained VM")
	}
}
