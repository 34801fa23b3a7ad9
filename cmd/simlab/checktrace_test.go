package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// check --trace judges a trace file: simlab's own export of a bug (exit 1,
// the violation and its spans printed), the same scenario fixed (exit 0),
// a core-shaped trace (what it could not judge is listed with the reason),
// and bad input (exit 2, naming what was wrong).
func TestCheckTrace(t *testing.T) {
	dir := t.TempDir()
	bug := filepath.Join(dir, "t5-prefix.jsonl")
	if _, _, err := runCLI(t, "run", "--scenario", "golden-t5", "--variant", "pre-fix-fence", "--trace-out", bug); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, "check", "--trace", bug)
	if exitCode(err) != 1 || !strings.Contains(out, "no-start-on-terminal violated in wrun_0000") ||
		!strings.Contains(out, "world.events.create step_started") || !strings.Contains(out, "not judged") {
		t.Fatalf("check --trace of the fence bug: exit %d (%v)\n%s", exitCode(err), err, out)
	}
	fixed := filepath.Join(dir, "t5.jsonl")
	if _, _, err := runCLI(t, "run", "--scenario", "golden-t5", "--trace-out", fixed); err != nil {
		t.Fatal(err)
	}
	if out, _, err := runCLI(t, "check", "--trace", fixed); exitCode(err) != 0 {
		t.Fatalf("check --trace of the fixed protocol: exit %d (%v)\n%s", exitCode(err), err, out)
	}
	core := filepath.Join("..", "..", "properties", "spancheck", "testdata", "core-shape.jsonl")
	out, _, err = runCLI(t, "check", "--trace", core)
	if exitCode(err) != 1 || !strings.Contains(out, "no-prologue-fetch-with-run-context violated in wrun_01TEST") ||
		!strings.Contains(out, "not judged    spans name no fan-out") {
		t.Fatalf("check --trace of a core-shaped trace: exit %d\n%s", exitCode(err), out)
	}
	for _, args := range [][]string{
		{"check", "--trace", filepath.Join(dir, "missing.jsonl")},
		{"check", "--trace", "check.go"},
		{"check", "--jaeger", "127.0.0.1:16686", "--service", "s"},
		{"check", "--jaeger", "http://127.0.0.1:1", "--start", "yesterday"},
		{"check", "--trace", bug, "--jaeger", "http://127.0.0.1:1"},
	} {
		if _, _, err := runCLI(t, args...); exitCode(err) != 2 {
			t.Errorf("%v: exit %d (%v), want 2", args, exitCode(err), err)
		}
	}
}
