package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/properties"
)

func runCLI(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRootCommand(&out, &errb)
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), errb.String(), err
}

func TestVersion(t *testing.T) {
	out, _, err := runCLI(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "simlab ") || !strings.Contains(out, "go1.") {
		t.Fatalf("version printed %q", out)
	}
}

func TestHelpListsCommands(t *testing.T) {
	out, _, err := runCLI(t, "--help")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "version") {
		t.Fatalf("--help does not list the version command:\n%s", out)
	}
}

func TestUnknownCommandIsAnError(t *testing.T) {
	if _, _, err := runCLI(t, "frobnicate"); err == nil || !strings.Contains(err.Error(), "frobnicate") {
		t.Fatalf("unknown command error = %v", err)
	}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ec, ok := err.(exitCoder); ok {
		return ec.ExitCode()
	}
	return 2
}

func TestRunJSONIsDeterministicAndCarriesTheContract(t *testing.T) {
	a, _, err := runCLI(t, "run", "--scenario", "golden-t2", "--seed", "3", "--json")
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := runCLI(t, "run", "--scenario", "golden-t2", "--seed", "3", "--json")
	if a != b {
		t.Fatal("the same seed printed two different results")
	}
	for _, key := range []string{`"seed": 3`, `"history_hash"`, `"virtual_ns"`, `"runs"`, `"prologue": "run_context"`,
		`"fanouts"`, `"lazy_fetches": 1`, `"continued_by": "consumer"`, `"step_started_accepted"`} {
		if !strings.Contains(a, key) {
			t.Errorf("run --json lacks %s:\n%s", key, a)
		}
	}
}

func TestCheckExitCodes(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := runCLI(t, "check", "--seeds", "20", "--schedules", dir); exitCode(err) != 0 {
		t.Fatalf("check on the default scenario: %v", err)
	}
	out, _, err := runCLI(t, "check", "--scenario", "golden-t5", "--variant", "pre-fix-fence", "--seeds", "3", "--schedules", dir)
	if exitCode(err) != 1 || !strings.Contains(out, "no-start-on-terminal") || !strings.Contains(out, "simlab replay ") {
		t.Fatalf("check of a buggy variant: exit %d\n%s", exitCode(err), out)
	}
	// The minimized schedule replays to its saved hash.
	var file string
	for _, line := range strings.Split(out, "\n") {
		if i := strings.Index(line, "simlab replay "); i >= 0 && strings.Contains(line, "no-start-on-terminal") {
			file = strings.TrimSuffix(strings.TrimSpace(line[i+len("simlab replay "):]), ")")
		}
	}
	if file == "" {
		t.Fatalf("no schedule file printed:\n%s", out)
	}
	// Replaying it: the saved property is violated again, exit 1, said so.
	rout, _, err := runCLI(t, "replay", file)
	if exitCode(err) != 1 || !strings.Contains(rout, "no-start-on-terminal violated") ||
		!strings.Contains(err.Error(), "no-start-on-terminal is violated again") {
		t.Fatalf("replay %s: exit %d (%v)\n%s", file, exitCode(err), err, rout)
	}
	// The same schedule on the fixed protocol (the variant dropped): the
	// property now holds, exit 0, said so; the history differs, said too.
	s, err := properties.LoadSchedule(file)
	if err != nil {
		t.Fatal(err)
	}
	s.Scenario.Variants = nil
	fixed := dir + "/fixed.json"
	if err := properties.SaveSchedule(fixed, s); err != nil {
		t.Fatal(err)
	}
	rout, rerr, err := runCLI(t, "replay", fixed)
	if exitCode(err) != 0 || !strings.Contains(rerr, "no-start-on-terminal now holds") || !strings.Contains(rout, "differs from the saved one") {
		t.Fatalf("replay of the fixed schedule: exit %d (%v)\n%s%s", exitCode(err), err, rout, rerr)
	}
	for _, args := range [][]string{
		{"check", "--seed-range", "9..1"}, {"check", "--shard", "4/4"}, {"run", "--variant", "nope"},
		{"run", "--scenario", "missing.yaml"}, {"replay", dir + "/none.json"},
	} {
		if _, _, err := runCLI(t, args...); exitCode(err) != 2 {
			t.Errorf("%v: exit %d (%v), want 2", args, exitCode(err), err)
		}
	}
}

func TestShardsCoverEverySeedOnce(t *testing.T) {
	all, _ := parseSeeds(0, "1..100", "")
	seen := map[uint64]int{}
	for i := 0; i < 3; i++ {
		part, err := parseSeeds(0, "1..100", fmt.Sprintf("%d/3", i))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range part {
			seen[s]++
		}
	}
	if len(seen) != len(all) {
		t.Fatalf("shards cover %d seeds, want %d", len(seen), len(all))
	}
	for s, n := range seen {
		if n != 1 {
			t.Fatalf("seed %d checked %d times", s, n)
		}
	}
}

// The README lists every variant and property with its line; a new one
// must be documented there too.
func TestREADMEListsEveryVariantAndProperty(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range model.Variants() {
		if !strings.Contains(string(readme), "| `"+v.Name+"` | "+v.Desc+" |") {
			t.Errorf("README.md lacks the variant %s with its description", v.Name)
		}
	}
	for _, p := range properties.All() {
		if !strings.Contains(string(readme), "| `"+p.Name+"` | "+p.Desc+" |") {
			t.Errorf("README.md lacks the property %s with its description", p.Name)
		}
	}
}
