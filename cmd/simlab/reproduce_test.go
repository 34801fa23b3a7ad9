package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simlab/simlab/check"
	"github.com/simlab/simlab/internal/testreal"
)

// The saved schedule of docs/MODEL.md finding 15 (realengine's
// testdata), which reproduce forces on the real core.
var f15Schedule = filepath.Join("..", "..", "realengine", "testdata", "reproduce", "f15-two-run-completed.json")

// simlab reproduce refuses, before it installs or runs anything, a schedule
// the real side cannot honour or that no longer replays: exit 2 and the
// reason.
func TestReproduceRefusesUpFront(t *testing.T) {
	s, err := check.LoadSchedule(f15Schedule)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		edit func(s *check.Schedule)
		want string
	}{
		{"vercel.json", func(s *check.Schedule) { s.Scenario.World = "world-vercel" }, "world = world-vercel"},
		{"inline0.json", func(s *check.Schedule) { s.Scenario.Workflow.MaxInline = 0 }, "workflow.max_inline = 0"},
		{"moved.json", func(s *check.Schedule) { s.HistoryHash = "0123456789abcdef" }, "no longer replays to its history"},
	} {
		e := s
		c.edit(&e)
		file := filepath.Join(dir, c.name)
		if err := check.SaveSchedule(file, e); err != nil {
			t.Fatal(err)
		}
		_, _, err := runCLI(t, "reproduce", file, "--engine-dir", t.TempDir())
		if exitCode(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: exit %d (%v), want 2 naming %q", c.name, exitCode(err), err, c.want)
		}
	}
	if _, _, err := runCLI(t, "reproduce", filepath.Join(dir, "missing.json")); exitCode(err) != 2 {
		t.Errorf("a missing file: exit %d, want 2", exitCode(err))
	}
	if _, _, err := runCLI(t, "reproduce", f15Schedule, "--cores", "4.0.0", "--engine-dir", t.TempDir()); exitCode(err) != 2 || !strings.Contains(err.Error(), "5.0.0-beta.52") {
		t.Errorf("an unknown core: %v, want exit 2 naming the pinned ones", err)
	}
	if _, _, err := runCLI(t, "reproduce", f15Schedule, "--world-local", "5.0.0-beta.99", "--engine-dir", t.TempDir()); exitCode(err) != 2 || !strings.Contains(err.Error(), "5.0.0-beta.46") {
		t.Errorf("an unknown world-local: %v, want exit 2 naming the pinned ones", err)
	}
}

// simlab reproduce on finding 15's saved schedule: reproduced on core
// beta.52 (exit 0), the real run's spans and call record written to --out,
// and the spans judged by check --trace show the violation too. It needs
// Node and the engine's pinned packages, as go test ./realengine/...
// does.
func TestReproduceCommandReproducesFinding15(t *testing.T) {
	testreal.Need(t, testreal.Engine)
	out := t.TempDir()
	stdout, _, err := runCLI(t, "reproduce", f15Schedule, "--out", out, "--engine-dir", filepath.Join("..", "..", "realengine"))
	if err != nil {
		t.Fatalf("exit %d: %v\n%s", exitCode(err), err, stdout)
	}
	for _, want := range []string{"core 5.0.0-beta.52: REPRODUCED", "2 terminal events accepted for the run", "translation rules: none"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the output lacks %q:\n%s", want, stdout)
		}
	}
	spans := filepath.Join(out, "f15-two-run-completed.5.0.0-beta.52.spans.jsonl")
	var rec struct {
		Plan  struct{ Entries, Released int } `json:"plan"`
		Calls []json.RawMessage               `json:"calls"`
	}
	b, err := os.ReadFile(filepath.Join(out, "f15-two-run-completed.5.0.0-beta.52.calls.json"))
	if err == nil {
		err = json.Unmarshal(b, &rec)
	}
	if err != nil || rec.Plan.Entries == 0 || rec.Plan.Released != rec.Plan.Entries || len(rec.Calls) == 0 {
		t.Errorf("call record: %v, plan %+v, %d calls; want every entry released", err, rec.Plan, len(rec.Calls))
	}
	judged, _, err := runCLI(t, "check", "--trace", spans)
	if exitCode(err) != 1 || !strings.Contains(judged, "single-terminal-event violated") {
		t.Errorf("check --trace on the written spans: exit %d, want 1 with single-terminal-event violated:\n%s", exitCode(err), judged)
	}
}

// check --reproduce forces each violated property's first counterexample on
// the real engine after printing the check's report: golden-t3's
// stale-pending failure is reproduced on core beta.52; the other violated
// properties' verdicts follow; the exit code stays the check's (1).
func TestCheckReproduce(t *testing.T) {
	testreal.Need(t, testreal.Engine)
	dir := t.TempDir()
	stdout, _, err := runCLI(t, "check", "--scenario", "golden-t3", "--seeds", "5", "--schedules", dir, "--reproduce",
		"--engine-dir", filepath.Join("..", "..", "realengine"))
	if exitCode(err) != 1 {
		t.Fatalf("exit %d (%v), want 1 (the check's own):\n%s", exitCode(err), err, stdout)
	}
	report := strings.Index(stdout, "first counterexample")
	repro := strings.Index(stdout, "reproduce run-fails-for-a-reason:")
	if report < 0 || repro < report || !strings.Contains(stdout[repro:], "core 5.0.0-beta.52: REPRODUCED") {
		t.Errorf("want the report, then run-fails-for-a-reason reproduced on core beta.52:\n%s", stdout)
	}
}

// check --reproduce without an engine directory still prints the check's
// report (nothing computed is lost), then fails naming what is missing
// (exit 2); a counterexample the real side cannot honour is reported as
// such, with the reason, without running anything.
func TestCheckReproduceBadInput(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(t.TempDir())
	stdout, _, err := runCLI(t, "check", "--scenario", "golden-t3", "--seeds", "2", "--schedules", dir, "--reproduce")
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "harness.mjs not found") || !strings.Contains(stdout, "first counterexample") {
		t.Errorf("no engine dir: exit %d (%v), want 2 naming harness.mjs, after the report:\n%s", exitCode(err), err, stdout)
	}
	stdout, _, err = runCLI(t, "check", "--scenario", "faults", "--seeds", "60", "--schedules", dir, "--reproduce", "--engine-dir", t.TempDir())
	if exitCode(err) != 1 || !strings.Contains(stdout, "not reproducible on the real side: world = world-vercel") {
		t.Errorf("faults (world-vercel): exit %d (%v), want 1 with each first counterexample refused, naming the World:\n%s", exitCode(err), err, stdout)
	}
	if _, _, err := runCLI(t, "check", "--scenario", "golden-t3", "--reproduce", "--diff", "--set", "store.invoke=true"); exitCode(err) != 2 || !strings.Contains(err.Error(), "--reproduce") {
		t.Errorf("--reproduce --diff: exit %d (%v), want 2 naming --reproduce", exitCode(err), err)
	}
}

// simlab reproduce --what-if on finding 15's saved schedule: its race
// groups (every set of writes of the run the History had in flight at
// once: the fan-out's creates, claims and completions, and the two last
// completers' run_completed) are released together on the real core,
// twice, with no schedule inside the calls; the output sets the History's
// answers, the model's (for the run_completed: both accepted, or either
// one refused) and the real answers side by side, with a count for each,
// and the exit code says whether the real World gave one the model cannot.
// Refused with exit 2: a count below 1.
func TestReproduceWhatIf(t *testing.T) {
	if _, _, err := runCLI(t, "reproduce", f15Schedule, "--what-if", "-1", "--engine-dir", t.TempDir()); exitCode(err) != 2 || !strings.Contains(err.Error(), "--what-if -1") {
		t.Errorf("--what-if -1: %v, want exit 2 naming it", err)
	}
	testreal.Need(t, testreal.Engine)
	out := t.TempDir()
	stdout, _, err := runCLI(t, "reproduce", f15Schedule, "--what-if", "2", "--json", "--out", out, "--engine-dir", filepath.Join("..", "..", "realengine"))
	if exitCode(err) > 1 {
		t.Fatalf("exit %d: %v\n%s", exitCode(err), err, stdout)
	}
	var wi struct {
		Runs   int `json:"runs"`
		Groups []struct {
			History string `json:"history"`
			Model   []struct {
				Answers string `json:"answers"`
			} `json:"model"`
			Real []struct {
				Answers string `json:"answers"`
				Runs    int    `json:"runs"`
				InModel bool   `json:"in_model"`
			} `json:"real"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(stdout), &wi); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout)
	}
	if wi.Runs != 2 || len(wi.Groups) < 2 {
		t.Fatalf("%d runs, %d groups; want 2 and the run's races:\n%s", wi.Runs, len(wi.Groups), stdout)
	}
	if last := wi.Groups[len(wi.Groups)-1]; last.History != "ok, ok" || len(last.Model) != 3 {
		t.Errorf("the last group: history %q, model %q; want the two run_completed: ok, ok and three outcomes", last.History, last.Model)
	}
	onlyReal := false
	for _, g := range wi.Groups {
		runs := 0
		for _, r := range g.Real {
			runs += r.Runs
			if strings.HasPrefix(r.Answers, "never released") {
				t.Errorf("a run never released a group: %q", r.Answers)
			}
			inModel := false
			for _, m := range g.Model {
				if m.Answers == r.Answers {
					inModel = true
				}
			}
			if inModel != r.InModel {
				t.Errorf("real answers %q marked in_model %v, but the model's outcomes %q say %v", r.Answers, r.InModel, g.Model, inModel)
			}
			onlyReal = onlyReal || !r.InModel
		}
		if runs != 2 {
			t.Errorf("a group's real outcomes count %d runs, want 2", runs)
		}
	}
	if onlyReal != (exitCode(err) == 1) {
		t.Errorf("exit %d with an answer only the real World gave: %v", exitCode(err), onlyReal)
	}
	spans, _ := filepath.Glob(filepath.Join(out, "f15-two-run-completed.what-if.*.spans.jsonl"))
	if len(spans) != 2 {
		t.Errorf("%d span files written, want one per run: %v", len(spans), spans)
	}
}

// reproduce of a program's shrunk counterexample (the file check writes,
// with the seed its replay line names) forces the story on the real core
// as a user runs it: reproduced on core beta.52, whose own replay of the
// real log stops at simlab's stale write, and clean on beta.55, as simlab
// predicts for beta.55's clock; exit 0.
func TestReproduceForcesAProgramsShrunkCounterexample(t *testing.T) {
	testreal.Need(t, testreal.Engine)
	file := filepath.Join("..", "..", "realengine", "testdata", "force", "clock-storm-shrunk.yaml")
	stdout, _, err := runCLI(t, "reproduce", file, "--seed", "34", "--runs", "1", "--cores", "5.0.0-beta.52,5.0.0-beta.55",
		"--engine-dir", filepath.Join("..", "..", "realengine"))
	if err != nil {
		t.Fatalf("exit %d: %v\n%s", exitCode(err), err, stdout)
	}
	for _, want := range []string{
		"Date.now() at statement",
		"hold stale_write: events.create step_started of entity #11 from statement 8 until the answer to events.create step_started of entity #9",
		"core 5.0.0-beta.52 (simlab on its replay: its log diverges at that write, the run ends completed): REPRODUCED 1 of 1",
		"step_created step#11 extra: Replay could not consume event",
		"core 5.0.0-beta.55 (simlab on its replay: its log replays, the run ends completed): clean, as simlab says, 1 of 1",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the output lacks %q:\n%s", want, stdout)
		}
	}
}

// What a program's reproduce cannot honour is refused before anything
// runs, naming what was wrong.
func TestReproduceProgramRefusesUpFront(t *testing.T) {
	file := filepath.Join("..", "..", "realengine", "testdata", "force", "clock-storm-shrunk.yaml")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{file}, "give --seed N"},
		{[]string{file, "--seed", "34", "--what-if", "2"}, "--what-if: "},
		{[]string{file, "--seed", "34", "--out", t.TempDir()}, "--out: "},
		{[]string{file, "--seed", "3"}, "consumes it: nothing to force"},
		{[]string{file, "--seed", "34", "--runs", "0"}, "--runs 0"},
		{[]string{file, "--seed", "34", "--dilate", "99"}, "--dilate 99"},
		{[]string{file, "--seed", "34", "--cores", "4.0.0"}, "--cores"},
		{[]string{"storm", "--seed", "1"}, "consumes it"},
		{[]string{f15Schedule, "--runs", "2"}, "--runs is for a program's scenario"},
	} {
		_, _, err := runCLI(t, append(append([]string{"reproduce"}, c.args...), "--engine-dir", t.TempDir())...)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("reproduce %v: exit %d, %v; want 2 naming %q", c.args, exitCode(err), err, c.want)
		}
	}
}

// check --reproduce on a program's scenario forces its first
// replayable-log counterexample's shrunk file once, after the report, as
// simlab reproduce FILE --seed N does; the exit code stays the check's.
func TestCheckReproduceForcesAProgramsCounterexample(t *testing.T) {
	testreal.Need(t, testreal.Engine)
	stdout, _, err := runCLI(t, "check", "--scenario", "clock-storm", "--seeds", "200", "--schedules", t.TempDir(), "--reproduce",
		"--engine-dir", filepath.Join("..", "..", "realengine"))
	if exitCode(err) != 1 {
		t.Fatalf("exit %d, want the check's 1: %v\n%s", exitCode(err), err, stdout)
	}
	for _, want := range []string{"replayable-log                      VIOLATED", "reproduce replayable-log:", "REPRODUCED 1 of 1", "hold stale_write: "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the output lacks %q:\n%s", want, stdout)
		}
	}
}

// A program's counterexample of another property has no stale write to
// hold: check --reproduce says so and runs nothing.
func TestCheckReproduceRefusesAProgramsOtherProperties(t *testing.T) {
	stdout, _, err := runCLI(t, "check", "--scenario", "storm", "--seed-range", "109..109", "--schedules", t.TempDir(), "--reproduce", "--engine-dir", t.TempDir())
	if exitCode(err) != 1 || !strings.Contains(stdout, "reproduce single-terminal-event: not reproducible on the real side: a program's counterexample is forced by holding the write its log cannot be replayed past") {
		t.Errorf("exit %d: %v; want 1 and the refusal:\n%s", exitCode(err), err, stdout)
	}
}

// A forced run that has not ended at --timeout is stopped, read back as it
// was, and reported so: it disagrees with simlab (exit 1), and says why.
func TestReproduceProgramReportsARunPastItsTimeout(t *testing.T) {
	testreal.Need(t, testreal.Engine)
	file := filepath.Join("..", "..", "realengine", "testdata", "force", "clock-storm-shrunk.yaml")
	stdout, _, err := runCLI(t, "reproduce", file, "--seed", "34", "--runs", "1", "--timeout", "5s", "--engine-dir", filepath.Join("..", "..", "realengine"))
	if exitCode(err) != 1 || !strings.Contains(stdout, "it had not ended at --timeout: stopped and read back as it was") || !strings.Contains(stdout, "DISAGREES") {
		t.Errorf("exit %d: %v; want 1 and the run reported past its timeout:\n%s", exitCode(err), err, stdout)
	}
}
