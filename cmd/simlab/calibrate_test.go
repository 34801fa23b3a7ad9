package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/simlab/simlab/internal/testreal"
	"github.com/simlab/simlab/model"
)

// simlab calibrate and validate --sim-store refuse bad input before
// anything runs, naming what was wrong (exit 2).
func TestCalibrateAndSimStoreRefuseBadInput(t *testing.T) {
	engineDir := filepath.Join("..", "..", "realengine")
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("store:\n  events_write: 1ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"calibrate", "--branches", "0", "--engine-dir", engineDir}, "--branches 0"},
		{[]string{"calibrate", "--repetitions", "0", "--engine-dir", engineDir}, "--repetitions 0"},
		{[]string{"calibrate", "--core", "4.0.0", "--engine-dir", engineDir}, "--core"},
		{[]string{"calibrate", "--world", "world-vercel", "--engine-dir", engineDir}, "--world"},
		{[]string{"calibrate", "--world", "world-postgres", "--core", "5.0.0-beta.52", "--engine-dir", engineDir}, "--world world-postgres runs no runtime"},
		{[]string{"validate", "--sim-store", filepath.Join(t.TempDir(), "missing.yaml"), "--cores=", "--engine-dir", engineDir}, "--sim-store"},
		{[]string{"validate", "--sim-store", bad, "--cores=", "--engine-dir", engineDir}, "events_write"},
		{[]string{"validate", "--set", "store.write_per_event=1ms", "--cores=", "--engine-dir", engineDir}, "--sim-store"},
		{[]string{"validate", "--set", "store.write_per_contender=1ms", "--cores=", "--engine-dir", engineDir}, "--sim-store"},
		{[]string{"validate", "--set", "store.list_per_contender=1ms", "--cores=", "--engine-dir", engineDir}, "--sim-store"},
		{[]string{"validate", "--set", "store.write_order=random", "--cores=", "--engine-dir", engineDir}, "store.write_order"},
		{[]string{"validate", "--set", "store.write_order=lifo", "--cores=", "--engine-dir", engineDir}, `write_order = "lifo"`},
	} {
		_, _, err := runCLI(t, c.args...)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d (%v), want 2 naming %q", c.args, exitCode(err), err, c.want)
		}
	}
	good := filepath.Join(t.TempDir(), "cal.yaml")
	if err := os.WriteFile(good, []byte("world: world-local\nstore:\n  write_per_event: 1ms\n  max_concurrent_writes: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "validate", "--sim-store", good, "--time-scale", "5", "--cores=", "--engine-dir", engineDir); exitCode(err) != 2 || !strings.Contains(err.Error(), "--time-scale") {
		t.Errorf("--sim-store with --time-scale 5: exit %d (%v), want 2 naming --time-scale", exitCode(err), err)
	}
}

// validate --sim-store runs the simlab side on the file's store model and
// says so: with --cores= (simlab only) nothing real runs.
func TestValidateSimStoreSaysWhatItRan(t *testing.T) {
	good := filepath.Join(t.TempDir(), "cal.yaml")
	if err := os.WriteFile(good, []byte("world: world-local\nstore:\n  write_per_event: 1ms\n  max_concurrent_writes: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, "validate", "--sim-store", good, "--cores=", "--branches", "4", "--seeds", "2", "--engine-dir", filepath.Join("..", "..", "realengine"))
	if err != nil || !strings.Contains(out, "the calibrated store model of --sim-store") {
		t.Fatalf("exit %d (%v), want 0 and the header naming the calibrated store:\n%s", exitCode(err), err, out)
	}
	// On the World's own costs it says in which order the simlab side's
	// World answered its writes, as it does for the real side.
	if !strings.Contains(out, "writes answered out of arrival order") || !strings.Contains(out, "simlab run_context") {
		t.Errorf("no write order for the simlab rows:\n%s", out)
	}
	// The per-event cost is the simlab side's: the same run without it is faster.
	plain, _, _ := runCLI(t, "validate", "--cores=", "--branches", "4", "--seeds", "2", "--engine-dir", filepath.Join("..", "..", "realengine"))
	if out == plain {
		t.Error("--sim-store changed nothing in the simlab rows")
	}
}

// calibrate --world world-postgres bursts the real world-postgres on a real
// PostgreSQL (started on 127.0.0.1 and stopped by the command) and saves a
// store model simlab runs: one write at a time is not what it measured,
// and it keeps arrival order, where world-local does not.
func TestCalibrateWorldPostgresDrivesTheWorldAlone(t *testing.T) {
	testreal.Need(t, testreal.Worlds)
	file := filepath.Join(t.TempDir(), "pg.yaml")
	out, stderr, err := runCLI(t, "calibrate", "--world", "world-postgres", "--branches", "32", "--repetitions", "1", "--write", file)
	if err != nil {
		t.Fatalf("exit %d (%v):\n%s\n%s", exitCode(err), err, out, stderr)
	}
	for _, want := range []string{"world-postgres@5.0.0-beta.29 driven alone on PostgreSQL", "step_completed", "OUT OF ORDER", "events.list", "runs.get", "store model: each kind a lone call's time"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	sc, err := model.Spec{Scenario: file}.Load()
	if err != nil {
		t.Fatalf("the written scenario does not load: %v", err)
	}
	if sc.World != "world-postgres" || sc.Store.WriteOrder != model.WriteOrderFIFO || sc.Store.MaxConcurrentWrites < 1 || sc.Store.EventsWrite.P50 <= 0 || sc.Store.EventsList.P50 <= 0 || sc.Store.MaxConcurrentReads < 1 {
		t.Errorf("world %s, write_order %q, max_concurrent_writes %d, events_create p50 %v: want world-postgres's writes in arrival order, measured", sc.World, sc.Store.WriteOrder, sc.Store.MaxConcurrentWrites, sc.Store.EventsWrite.P50)
	}
	if _, _, err := runCLI(t, "run", "--scenario", file); err != nil {
		t.Errorf("simlab run on the written scenario: %v", err)
	}
}

// A preparation that fails with no signal sent is that failure, exit 2,
// never "interrupted" (exit 130): calibrate and reproduce on an engine
// directory without packages, told not to install.
func TestAFailedPreparationIsNotAnInterrupt(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"calibrate", "--no-install", "--engine-dir", dir},
		{"reproduce", "--no-install", "--engine-dir", dir, filepath.Join("..", "..", "realengine", "testdata", "reproduce", "many-lazy-reads.json")},
	} {
		_, _, err := runCLI(t, args...)
		if exitCode(err) != 2 || err == nil || strings.Contains(err.Error(), "interrupted") || !strings.Contains(err.Error(), "package.json") {
			t.Errorf("%v: exit %d, %v; want exit 2 naming what was missing", args, exitCode(err), err)
		}
	}
}

// Ctrl-C while calibrate --world world-postgres starts PostgreSQL: simlab
// says so and exits 130, and the PostgreSQL it started is stopped and its
// temp dir removed (it was left running, listening, with its cluster).
func TestCalibratePostgresInterruptedWhileStartingLeavesNothing(t *testing.T) {
	testreal.Need(t, testreal.Worlds)
	// (PostgreSQL's own temp dir must stay where initdb may write: the
	// shared temp dir, compared before and after.)
	ours := func() []string {
		var dirs []string
		for _, p := range []string{"simlab-pg-*", "simlab-calibrate-*"} {
			m, _ := filepath.Glob(filepath.Join(os.TempDir(), p))
			dirs = append(dirs, m...)
		}
		return dirs
	}
	beforeDirs := ours()
	before := postgresPids(t)
	interruptAfter(t, 0)
	_, _, err := runCLI(t, "calibrate", "--world", "world-postgres", "--branches", "4", "--repetitions", "1")
	if exitCode(err) != 130 || !strings.Contains(err.Error(), "stopped while starting PostgreSQL") {
		t.Fatalf("exit %d (%v), want 130 saying it stopped while PostgreSQL started", exitCode(err), err)
	}
	for _, pid := range postgresPids(t) {
		if !slices.Contains(before, pid) {
			t.Errorf("a PostgreSQL server started by the command is still running: pid %s", pid)
		}
	}
	for _, d := range ours() {
		if !slices.Contains(beforeDirs, d) {
			t.Errorf("left in the temp dir: %s", d)
		}
	}
}

// postgresPids lists the running PostgreSQL servers (postgres -D ...).
func postgresPids(t *testing.T) []string {
	t.Helper()
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var out []string
	for _, c := range cmdlines {
		b, err := os.ReadFile(c)
		if err != nil {
			continue
		}
		if args := strings.Split(string(b), "\x00"); len(args) > 1 && strings.HasSuffix(args[0], "postgres") && args[1] == "-D" {
			out = append(out, filepath.Base(filepath.Dir(c)))
		}
	}
	return out
}

// Ctrl-C during calibrate's second real run prints what the first
// measured, marked partial, and exits 130; no model is written.
func TestCalibrateInterruptedPrintsWhatItMeasured(t *testing.T) {
	testreal.Need(t, testreal.Engine)
	write := filepath.Join(t.TempDir(), "cal.yaml")
	interruptAfter(t, 1)
	out, _, err := runCLI(t, "calibrate", "--engine-dir", filepath.Join("..", "..", "realengine"), "--branches", "4", "--repetitions", "2", "--write", write)
	if exitCode(err) != 130 || !strings.Contains(err.Error(), "stopped while calibrating") {
		t.Fatalf("exit %d (%v), want 130", exitCode(err), err)
	}
	if !strings.Contains(out, "PARTIAL") || !strings.Contains(out, "step_completed") {
		t.Errorf("the first run's measurement is not printed, marked partial:\n%s", out)
	}
	if _, err := os.Stat(write); err == nil {
		t.Error("a partial calibration wrote a store model")
	}
}
