package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simlab/simlab/check"
	"github.com/simlab/simlab/model"
)

// knownFindings is the committed baseline of the shipped protocol: every
// built-in scenario's known findings. .ci/run checks every built-in
// scenario against it (this file's test, through the README's test
// command). After a model change that moves histories, regenerate it with
// go test ./cmd/simlab -run KnownFindings -update-baseline, in a commit of
// its own: a flag of its own, so that -update (the docs' generated blocks)
// never rewrites it on the way.
const knownFindings = "../../.ci/known-findings.json"

var updateBaseline = flag.Bool("update-baseline", false, "rewrite .ci/known-findings.json from every built-in scenario's check")

// builtinScenarios are every built-in scenario, the fan-outs' and the
// programs'.
func builtinScenarios() []string { return append(model.BuiltinNames(), model.BuiltinProgramNames()...) }

// baselineSeeds are the seeds each built-in scenario's entry is checked on.
const baselineSeeds = "1..200"

// The shipped protocol is green against its baseline: every violation of
// every built-in scenario is a known finding with a documented reason.
func TestKnownFindingsBaseline(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	if *updateBaseline {
		os.Remove(knownFindings)
		for _, name := range builtinScenarios() {
			if _, _, err := runCLI(t, "check", "--scenario", name, "--seed-range", baselineSeeds, "--write-baseline", knownFindings); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
	b, err := check.LoadBaseline(knownFindings)
	if err != nil {
		t.Fatalf("%v (regenerate it with %s)", err, check.BaselineRegenerate)
	}
	entries := map[string]check.BaselineEntry{}
	for _, e := range b.Entries {
		entries[e.Scenario] = e
		for _, f := range e.Findings {
			if strings.HasPrefix(f.Reason, check.Unexplained) {
				t.Errorf("%s: %s is a known finding without a reason: %s", e.Scenario, f.Property, f.Reason)
			}
		}
	}
	for _, name := range builtinScenarios() {
		e, ok := entries[name]
		if !ok {
			t.Errorf("%s has no entry in %s (regenerate it with %s)", name, knownFindings, check.BaselineRegenerate)
			continue
		}
		out, _, err := runCLI(t, "check", "--scenario", name, "--seed-range", e.Seeds, "--baseline", knownFindings)
		if err != nil {
			t.Errorf("%s is not green against its known findings (exit %d): a regression, or a model change that needs %s in its own commit:\n%s",
				name, exitCode(err), check.BaselineRegenerate, out)
			continue
		}
		if !strings.Contains(out, "every violation is a known finding") || strings.Contains(out, "no longer happens") {
			t.Errorf("%s: the baseline does not match the check exactly (regenerate with %s):\n%s", name, check.BaselineRegenerate, out)
		}
	}
}

// A broken protocol goes red against the same baseline, with the broken
// variant's own story: the fence bug on golden-t5 is no known finding.
func TestKnownFindingsBaselineGoesRedOnABrokenVariant(t *testing.T) {
	dir := t.TempDir()
	out, _, err := runCLI(t, "check", "--scenario", "golden-t5", "--variant", "pre-fix-fence", "--seeds", "5",
		"--baseline", knownFindings, "--schedules", dir)
	if exitCode(err) != 1 {
		t.Fatalf("exit %d, want 1:\n%s", exitCode(err), out)
	}
	for _, want := range []string{"NEW    golden-t5  no-start-on-terminal  seeds 1..5",
		"first new counterexample (seed 1):", "no-start-on-terminal violated in wrun_0000: step_started of fanout0.branch0 accepted at log position",
		"simlab replay " + filepath.Join(dir, "golden-t5+pre-fix-fence-no-start-on-terminal-seed1.json")} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// A regression that hides behind a known finding's property is still
	// new: strict-running-gate on golden-t3 (liveness), beside the known
	// run-fails-for-a-reason the shipped golden-t3 has on every seed.
	out, _, err = runCLI(t, "check", "--scenario", "golden-t3", "--variant", "strict-running-gate", "--seeds", "3",
		"--baseline", knownFindings, "--schedules", dir, "--json")
	if exitCode(err) != 1 || !strings.Contains(out, `"new": {
      "liveness": "1..3"`) {
		t.Fatalf("exit %d, want 1 with liveness new on 1..3:\n%s", exitCode(err), out)
	}
}

// A baseline file names its known findings and their seeds, and a check
// with a finding the file lists is green while one it misses is red.
func TestWriteBaselineThenCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "known.json")
	if _, _, err := runCLI(t, "check", "--scenario", "golden-t3", "--seeds", "4", "--write-baseline", file); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(file)
	for _, want := range []string{`"scenario": "golden-t3"`, `"property": "run-fails-for-a-reason"`, `"seeds": "1..4"`, `"count": 4`, "finding 4"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("baseline lacks %s:\n%s", want, raw)
		}
	}
	if out, _, err := runCLI(t, "check", "--scenario", "golden-t3", "--seeds", "4", "--baseline", file, "--schedules", dir); err != nil {
		t.Fatalf("known findings only, exit %d:\n%s", exitCode(err), out)
	}
	// Seeds the baseline never checked are not known.
	out, _, err := runCLI(t, "check", "--scenario", "golden-t3", "--seeds", "6", "--baseline", file, "--schedules", dir)
	if exitCode(err) != 1 || !strings.Contains(out, "NEW    golden-t3  run-fails-for-a-reason  seeds 5,6") ||
		!strings.Contains(out, "outside the seeds the baseline entry was checked on (1..4)") {
		t.Fatalf("exit %d:\n%s", exitCode(err), out)
	}
	// A known finding that stops happening is a note, not a failure.
	out, _, err = runCLI(t, "check", "--scenario", "golden-t3", "--variant", "replay-on-stale-pending", "--seeds", "4", "--baseline", file, "--schedules", dir)
	if err != nil || !strings.Contains(out, "known finding run-fails-for-a-reason no longer happens (1..4): with this change") {
		t.Fatalf("exit %d:\n%s", exitCode(err), out)
	}
}
