package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/simlab/simlab/internal/testreal"
)

// docExample is the YAML block of docs/SCENARIOS.md that begins with
// first, written to a file of the test's own.
func docExample(t *testing.T, first string) string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/SCENARIOS.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i := strings.Index(s, "```yaml\n"+first)
	if i < 0 {
		t.Fatalf("docs/SCENARIOS.md has no yaml block beginning %q", first)
	}
	s = s[i+len("```yaml\n"):]
	s = s[:strings.Index(s, "```")]
	path := filepath.Join(t.TempDir(), "scenario.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// simlab check on a program's scenario, as a user runs the one in
// docs/SCENARIOS.md: a World without slot ids corrupts the storm's log;
// the report lists what spans cannot judge, and the shrunk counterexample's
// command replays a run whose trace check --trace finds violating too.
func TestCheckOfAProgramsScenario(t *testing.T) {
	scenario := docExample(t, "name: storm-without-slots")
	dir := t.TempDir()
	out, _, err := runCLI(t, "check", "--scenario", scenario, "--seeds", "30", "--schedules", dir)
	if exitCode(err) != 1 {
		t.Fatalf("exit %d (%v), want 1:\n%s", exitCode(err), err, out)
	}
	for _, want := range []string{
		"replayable-log                      VIOLATED in ",
		"attempt-count                       not judged (below)",
		"not judged there:\n  one-lazy-fetch-per-fanout: ",
		"a fresh replay of the log diverges at event",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	m := regexp.MustCompile(`\(shrunk: simlab run --scenario (\S+replayable-log-seed\d+\.yaml) --seed (\d+)[;)]`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no shrunk replay command for replayable-log:\n%s", out)
	}
	// A World without slot ids is no pinned core's: reproduce would refuse
	// the file, so check does not offer it.
	if strings.Contains(out, "on the real core: simlab reproduce") {
		t.Errorf("the report offers reproduce for an own-writes counterexample, which reproduce refuses:\n%s", out)
	}
	trace := filepath.Join(t.TempDir(), "run.jsonl")
	story, _, err := runCLI(t, "run", "--scenario", m[1], "--seed", m[2], "--trace-out", trace)
	if err != nil || !strings.Contains(story, "a fresh replay of the log") {
		t.Fatalf("the shrunk command: %v\n%s", err, story)
	}
	judged, _, err := runCLI(t, "check", "--trace", trace)
	if exitCode(err) != 1 || !regexp.MustCompile(`replayable-log +VIOLATED`).MatchString(judged) {
		t.Errorf("check --trace of the shrunk run: exit %d, want replayable-log violated:\n%s", exitCode(err), judged)
	}

	// JSON: the not-judged properties with their reasons, out of the
	// violation counts.
	js, _, _ := runCLI(t, "check", "--scenario", scenario, "--seeds", "10", "--schedules", dir, "--json")
	var rep struct {
		Violations map[string]int    `json:"violations"`
		NotJudged  map[string]string `json:"not_judged"`
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	if _, ok := rep.Violations["attempt-count"]; ok || rep.NotJudged["attempt-count"] == "" {
		t.Errorf("--json: violations %v, not_judged %v: want attempt-count not judged", rep.Violations, rep.NotJudged)
	}

	// A baseline takes a program's findings like any other's.
	base := filepath.Join(t.TempDir(), "known.json")
	if _, _, err := runCLI(t, "check", "--scenario", scenario, "--seeds", "30", "--write-baseline", base); err != nil {
		t.Fatalf("--write-baseline: %v", err)
	}
	junit := filepath.Join(t.TempDir(), "junit.xml")
	if out, _, err := runCLI(t, "check", "--scenario", scenario, "--seeds", "30", "--baseline", base, "--junit", junit); err != nil {
		t.Errorf("--baseline of its own findings: %v\n%s", err, out)
	}
	x, err := os.ReadFile(junit)
	if err != nil || !strings.Contains(string(x), `<skipped message="not judged on a program&#39;s spans: `) {
		t.Errorf("--junit: %v; want the properties not judged skipped, with the reason:\n%s", err, x)
	}
}

// The commands that drive the fan-out engine refuse a program's scenario,
// saying which commands run it; so do check's flags that need a fan-out
// run, and --reproduce on a program the real core cannot be held to (this
// one's World has no slot ids). (validate and tui run one:
// TestValidateOfAProgramsScenario, tui's TestSimulateRunsAProgramsScenario;
// check --reproduce forces one: TestCheckReproduceForcesAProgramsCounterexample.)
func TestFanoutCommandsRefuseAProgramsScenario(t *testing.T) {
	scenario := docExample(t, "name: storm-without-slots")
	for _, args := range [][]string{
		{"sweep", "--scenario", scenario},
		{"check", "--scenario", scenario, "--diff", "--set", "workflow.max_inline=2"},
		{"check", "--scenario", scenario, "--report", filepath.Join(t.TempDir(), "r.html")},
		{"check", "--scenario", scenario, "--reproduce"},
	} {
		_, _, err := runCLI(t, args...)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), "program") {
			t.Errorf("%v: exit %d (%v), want 2 naming the program", args, exitCode(err), err)
		}
	}
}

// simlab validate on a program's scenario refuses what the real side cannot
// run, before anything runs; on the real core (when it is installed) it
// runs the program on both sides and judges the shares.
func TestValidateOfAProgramsScenario(t *testing.T) {
	ownWrites := docExample(t, "name: storm-without-slots")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--scenario", "storm", "--branches", "4"}, "--branches: scenario storm is a program"},
		{[]string{"--scenario", "storm", "--cores", "5.0.0-beta.52,5.0.0-beta.55"}, "one core at a time"},
		{[]string{"--scenario", "storm", "--set", "workflow.sequential_replays=true"}, "sequential replays on"},
		{[]string{"--scenario", ownWrites}, "every pinned core runs on slot ids"},
		{[]string{"--scenario", "storm", "--set", "workflow.callsite_ids=true"}, "no pinned core mints call-site correlation ids"},
		{[]string{"--scenario", "inline-hang"}, "past --timeout"},
		{[]string{"--scenario", "storm", "--repetitions", "0"}, "at least one real run"},
	} {
		_, _, err := runCLI(t, append([]string{"validate"}, c.args...)...)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("validate %v: exit %d (%v), want 2 and %q", c.args, exitCode(err), err, c.want)
		}
	}

	testreal.Need(t, testreal.Engine)
	t.Setenv("TMPDIR", t.TempDir())
	out, stderr, err := runCLI(t, "validate", "--scenario", "control", "--repetitions", "2", "--seeds", "20", "--json",
		"--engine-dir", filepath.Join("..", "..", "realengine"))
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var doc programValidation
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if doc.Real == nil || doc.Real.Runs != 2 || len(doc.Rows) != 2 || doc.Rows[0].Seeds != 20 || len(doc.Agreements) != 2 {
		t.Fatalf("validate --scenario control: %+v", doc)
	}
	// The control has one waker at a time: no run corrupts or ends twice,
	// on either side.
	if doc.Real.Corrupted+doc.Real.EndedTwice+doc.Rows[0].Corrupted+doc.Rows[0].EndedTwice != 0 || doc.Real.Completed != 2 {
		t.Errorf("the control corrupted or ended twice: %+v", doc)
	}
}

// A counterexample reproduce can force (the pinned release's view) comes
// with its command: clock-storm's, as check finds it in 200 seeds.
func TestCheckOffersReproduceForAForceableCounterexample(t *testing.T) {
	out, _, err := runCLI(t, "check", "--scenario", "clock-storm", "--seeds", "200", "--schedules", t.TempDir())
	if exitCode(err) != 1 {
		t.Fatalf("exit %d (%v), want 1:\n%s", exitCode(err), err, out)
	}
	m := regexp.MustCompile(`\(shrunk: simlab run --scenario (\S+replayable-log-seed\d+\.yaml) --seed (\d+)[;)]`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no shrunk replay command for replayable-log:\n%s", out)
	}
	if want := "; on the real core: simlab reproduce " + m[1] + " --seed " + m[2] + ")"; !strings.Contains(out, want) {
		t.Errorf("the report lacks %q:\n%s", want, out)
	}
}

// A search over shapes in check (workflow.search: the built-in
// program-search): each seed runs the program it draws, the coverage counts
// the features the seeds' cases had (their knobs too) and pairs of them on
// a line of their own, a violation's replay command runs the seed's own
// program, and its shrunk file is a plain program's scenario on which run
// and check find the same property violated at the shrunk seed. validate
// refuses a search; a search that also sets a program, or a knob the
// search draws, is refused.
func TestCheckOfAProgramSearch(t *testing.T) {
	out, _, err := runCLI(t, "check", "--scenario", "program-search", "--seeds", "300", "--schedules", t.TempDir())
	if c := exitCode(err); c != 0 && c != 1 {
		t.Fatalf("exit %d (%v):\n%s", c, err, out)
	}
	for _, want := range []string{"feature:hook=", "feature:carry=", "feature:clock=", "feature:resumes=", "feature:pool=", "feature:sequential=", "feature:max_inline.1=",
		"\npairs of features (", " hook+race=", " hook+sequential="} {
		if !strings.Contains(out, want) {
			t.Errorf("the coverage lacks %s:\n%s", want, out)
		}
	}
	if cov := regexp.MustCompile(`(?m)^coverage: .*$`).FindString(out); strings.Contains(cov, "pair:") || strings.Contains(cov, "+") {
		t.Errorf("the coverage line holds pairs: %s", cov)
	}
	shrunk := regexp.MustCompile(`\(shrunk: simlab run --scenario (\S+-seed\d+\.yaml) --seed (\d+)[;)]`).FindAllStringSubmatch(out, -1)
	if exitCode(err) == 1 && len(shrunk) == 0 {
		t.Errorf("a violation and no shrunk file:\n%s", out)
	}
	for _, m := range shrunk {
		prop := regexp.MustCompile(`program-search-(.+)-seed\d+\.yaml$`).FindStringSubmatch(m[1])[1]
		again, _, err := runCLI(t, "check", "--scenario", m[1], "--seed-range", m[2]+".."+m[2], "--schedules", t.TempDir())
		if exitCode(err) != 1 || !regexp.MustCompile(regexp.QuoteMeta(prop)+` +VIOLATED in 1 of 1 runs`).MatchString(again) {
			t.Errorf("check of the shrunk file %s at seed %s: exit %d, want %s violated:\n%s", m[1], m[2], exitCode(err), prop, again)
		}
		if run, _, err := runCLI(t, "run", "--scenario", m[1], "--seed", m[2]); err != nil || prop == "single-terminal-event" && strings.Contains(run, "ends accepted 1;") {
			t.Errorf("run of the shrunk file %s at seed %s: %v\n%s", m[1], m[2], err, run)
		}
	}
	story, _, err := runCLI(t, "run", "--scenario", "program-search", "--seed", "3")
	if err != nil || !strings.Contains(story, "program-search, case 3: ") || !strings.Contains(story, "program:\n  - ") || !strings.Contains(story, ", max_inline ") || !strings.Contains(story, ", sequential replays ") {
		t.Errorf("run of a search's seed: %v; want the case's knobs and program:\n%s", err, story)
	}
	knob := filepath.Join(t.TempDir(), "knob.yaml")
	if err := os.WriteFile(knob, []byte("name: s\nbase: program-search\nworkflow:\n  sequential_replays: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "check", "--scenario", knob, "--seeds", "1"); exitCode(err) != 2 || !strings.Contains(err.Error(), "draws each seed's max_inline and sequential replays") {
		t.Errorf("a search with sequential replays of its own: exit %d (%v), want 2 naming them", exitCode(err), err)
	}
	if _, _, err := runCLI(t, "validate", "--scenario", "program-search"); exitCode(err) != 2 {
		t.Errorf("validate of a search: exit %d, want 2", exitCode(err))
	}
	path := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(path, []byte("name: s\nbase: program-search\nworkflow:\n  program: [{step: a}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "check", "--scenario", path, "--seeds", "1"); exitCode(err) != 2 || !strings.Contains(err.Error(), "draws each seed's program") {
		t.Errorf("a search with a program: exit %d (%v), want 2 naming it", exitCode(err), err)
	}
}
