package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simlab/simlab/internal/testreal"
	"github.com/simlab/simlab/realengine"
)

// simlab validate refuses bad input before it installs or runs anything:
// exit 2, and the message names what was wrong.
func TestValidateRefusesBadInputUpFront(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--branches", "4,100000"}, "1..512"},
		{[]string{"--set", "faults.misdeliver=0.1"}, "faults.misdeliver"},
		{[]string{"--variant", "pre-fix-fence"}, "pre-fix-fence"},
		{[]string{"--cores", "4.0.0"}, "5.0.0-beta.52"},
		{[]string{"--cores", "5.0.0-beta.55,5.0.0-beta.55"}, "named twice"},
		{[]string{"--world-local", "5.0.0-beta.43"}, "5.0.0-beta.45, 5.0.0-beta.46"},
		{[]string{"--cores", "5.0.0-beta.50", "--legacy-producer"}, "nothing to strip"},
		{[]string{"--repetitions", "0"}, "--repetitions"},
		{[]string{"--time-scale", "1000"}, "--time-scale"},
		{[]string{"--time-scale", "NaN"}, "--time-scale NaN"},
		{[]string{"--time-scale", "+Inf"}, "--time-scale +Inf"},
		{[]string{"--sim-world", "world-postgres"}, "--sim-world"},
		{[]string{"--gate", "--cores="}, "nothing real to judge"},
		{[]string{"--gate-min-runs", "3", "--cores="}, "nothing real to judge"},
		{[]string{"--gate=false", "--gate-min-runs", "3"}, "--gate-min-runs with --gate=false"},
		{[]string{"--gate", "--gate-min-runs", "0"}, "--gate-min-runs 0"},
	} {
		_, _, err := runCLI(t, append([]string{"validate", "--engine-dir", t.TempDir()}, c.args...)...)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("validate %v: got %v, want exit 2 naming %q", c.args, err, c.want)
		}
	}
}

// Ctrl-C on validate stops the real engine, prints what was measured, says
// where it stopped (not "killed after 3m30s", the timeout's message) and
// exits 130, while preparing the engine (it exited 255: the child's exit
// code -1 became simlab's) as during a real run. It needs Node and the
// engine's pinned packages, as go test ./realengine/... does.
func TestValidateInterrupted(t *testing.T) {
	testreal.Need(t, testreal.Engine)
	args := []string{"validate", "--engine-dir", filepath.Join("..", "..", "realengine"),
		"--branches", "4", "--repetitions", "1", "--seeds", "1", "--cores", "5.0.0-beta.52,5.0.0-beta.55"}
	// The engine's temp dirs go to a directory of this test's own: other
	// tests and packages running at once (realengine) make theirs
	// in the shared one, and would count as left behind.
	t.Setenv("TMPDIR", t.TempDir())
	before := engineTempDirs(t)
	t.Run("while preparing", func(t *testing.T) {
		interruptAfter(t, 0)
		out, _, err := runCLI(t, args...)
		if exitCode(err) != 130 || !strings.Contains(err.Error(), "interrupted by SIGINT: stopped while preparing the real engine") {
			t.Fatalf("exit %d (%v), want 130 saying it stopped while preparing\n%s", exitCode(err), err, out)
		}
	})
	t.Run("during a real run", func(t *testing.T) {
		// After the first real run (core beta.52), the second begins.
		interruptAfter(t, 1)
		out, _, err := runCLI(t, args...)
		if exitCode(err) != 130 || !strings.Contains(err.Error(), "interrupted by SIGINT: 1 rows measured") ||
			!strings.Contains(err.Error(), "stopped after") || strings.Contains(err.Error(), "killed after") {
			t.Fatalf("exit %d (%v), want 130 saying the run was stopped, not killed by the timeout", exitCode(err), err)
		}
		if !strings.Contains(out, "5.0.0-beta.52") {
			t.Fatalf("the row measured before the interrupt is not printed:\n%s", out)
		}
	})
	if after := engineTempDirs(t); len(after) > len(before) {
		t.Errorf("temp dirs left behind: %v (before: %v)", after, before)
	}
	// A child killed by a signal is simlab's exit 2, never the child's -1
	// (255): only simlab's own *exitError chooses.
	killed := exec.Command("sh", "-c", "kill -KILL $$").Run()
	if got := exitStatus(fmt.Errorf("compiling: %w", killed)); got != 2 {
		t.Errorf("exit status of a wrapped signal-killed child's error: %d, want 2", got)
	}
}

// validate (its --gate is on by default), as a CI job runs it: the exit says whether a verdict
// the real runs could judge disagreed (1) or none did (0), the JSON carries
// the same decision, and a verdict with fewer real runs than the gate wants
// is printed as not judged.
func TestValidateGateExitsOnAJudgedDisagreement(t *testing.T) {
	testreal.Need(t, testreal.Engine)
	t.Setenv("TMPDIR", t.TempDir())
	args := []string{"validate", "--engine-dir", filepath.Join("..", "..", "realengine"),
		"--branches", "4", "--repetitions", "2", "--seeds", "4", "--cores", "5.0.0-beta.52", "--gate", "--gate-min-runs", "2", "--json"}
	out, _, err := runCLI(t, args...)
	var res realengine.Result
	if jerr := json.Unmarshal([]byte(out), &res); jerr != nil || res.Gate == nil {
		t.Fatalf("--gate --json: %v, gate %v (exit %d)\n%s", jerr, res.Gate, exitCode(err), out)
	}
	want := 0
	if res.Gate.Disagrees > 0 {
		want = 1
	}
	if exitCode(err) != want || len(res.Gate.Verdicts) != 5 || res.Gate.NotJudged != 0 {
		t.Fatalf("exit %d (%v) with %d judged disagreements, %d verdicts, %d not judged; want exit %d, 5 verdicts all judged", exitCode(err), err, res.Gate.Disagrees, len(res.Gate.Verdicts), res.Gate.NotJudged, want)
	}
	// The same two real runs are too few for a gate that wants three (the
	// gate is on without --gate).
	args = []string{"validate", "--engine-dir", filepath.Join("..", "..", "realengine"),
		"--branches", "4", "--repetitions", "2", "--seeds", "4", "--cores", "5.0.0-beta.52", "--gate-min-runs", "3"}
	out, _, err = runCLI(t, args...)
	if exitCode(err) != 0 || !strings.Contains(out, "0 of 0 judged verdicts agree; 5 not judged (not judged: too few runs (2 real fan-outs, the gate wants 3))") {
		t.Fatalf("exit %d (%v), want 0 with every verdict not judged:\n%s", exitCode(err), err, out)
	}
}

// engineTempDirs lists the real engine runner's temp dirs in os.TempDir.
func engineTempDirs(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(os.TempDir(), "simlab-engine-*"))
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// validate's table fits a 132-column terminal, and nothing prints a Go map
// (map[run_context:1]).
func TestValidateTableIsReadable(t *testing.T) {
	row := realengine.Row{Branches: 128, Engine: "real", Core: "5.0.0-beta.52", WorldLocal: "5.0.0-beta.46", Prologue: "run_context", Repetitions: 3,
		RunsGetPrologue: 0, LazyPerFanout: 71.33, LazyPerFanoutMin: 59, LazyPerFanoutMax: 92, ConcurrentLastCompleters: 1,
		StepStartedAccepted: 128, StepStartedRejected: 12.3, Deliveries: 131.7, Redeliveries: 3.7,
		TTFSP50MS: 1234, TTFSP90MS: 2345, TTLSP50MS: 10234, TTLSP90MS: 12345,
		DispatchPrologue: map[string]int{"run_context": 381, "runs_get": 3}, RealStoreP50MS: 43.3, RealStoreP90MS: 80.8}
	sim := row
	sim.Engine, sim.Core, sim.WorldLocal, sim.DispatchPrologue = "simlab", "simlab", "", nil
	row.Fanouts, row.ConcurrentFanouts = 3, 3
	sim.LazyPerFanout = 99
	order := realengine.WriteOrder{Pairs: 200, Reversed: 86}
	row.WritesOutOfOrder, sim.WritesOutOfOrder = &order, &order
	rows := []realengine.Row{row, sim}
	var b strings.Builder
	printValidate(&b, &realengine.Result{Scenario: "durabench-256", TimeScale: 5, Rows: rows, Agreement: realengine.Agreements(rows)})
	out := b.String()
	for _, l := range strings.Split(out, "\n") {
		if n := len([]rune(l)); n > 132 {
			t.Errorf("a line of %d columns:\n%s", n, l)
		}
	}
	if strings.Contains(out, "map[") || !strings.Contains(out, "run_context 381, runs_get 3") {
		t.Errorf("the dispatch prologues are not listed as words:\n%s", out)
	}
	for _, want := range []string{"71.33 (59..92)", "128.0/12.3", "0.43 (86 of 200 pairs)",
		"lazy 99 in 59..92: DISAGREES  concurrent 100% in 29-100% (3 of 3): agrees", "131.7 (3.7)", "1234/2345", "10234/12345", "beta.52/beta.46", "core 5.0.0-beta.52 on world-local beta.46"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}

// simlab validate's simlab side (--cores= runs it alone, no Node) says which
// World it applied and sets the corruption counts beside each other; its
// JSON carries the World and the atomicity per row.
func TestValidateSimlabSideNamesItsWorld(t *testing.T) {
	args := []string{"validate", "--engine-dir", t.TempDir(), "--cores=", "--scenario", "durabench-256", "--branches", "16", "--seeds", "3", "--time-scale", "5"}
	out, _, err := runCLI(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"simlab: world-local's rules, world-local atomicity, the store model of world-vercel",
		"corruption, real beside simlab", "simlab (world-local) run_context", "simlab (world-local) runs_get"} {
		if !strings.Contains(out, want) {
			t.Errorf("validate printed no %q:\n%s", want, out)
		}
	}
	out, _, err = runCLI(t, append(args, "--json", "--sim-world", "scenario")...)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		SimWorld     string `json:"sim_world"`
		SimAtomicity string `json:"sim_atomicity"`
		Rows         []struct {
			World     string `json:"world"`
			Atomicity string `json:"atomicity"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("validate --json: %v\n%s", err, out)
	}
	if res.SimWorld != "world-vercel" || res.SimAtomicity != "call" || len(res.Rows) != 2 || res.Rows[0].World != "world-vercel" || res.Rows[0].Atomicity != "call" {
		t.Errorf("--sim-world scenario --json: %+v, want world-vercel's atomic World on both rows", res)
	}
}
