package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
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
	// A simulation's flag with --trace is refused, naming it, never
	// ignored (--diff was, and the verdict was not the one asked for).
	for _, flag := range [][]string{{"--diff"}, {"--base-set", "store.name=x"}, {"--baseline", "b.json"}, {"--write-baseline", "b.json"},
		{"--until-stable", "3"}, {"--reproduce"}, {"--junit", "j.xml"}, {"--report", "r.html"}} {
		_, _, err := runCLI(t, append([]string{"check", "--trace", bug}, flag...)...)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), flag[0]+" is for a simulation") {
			t.Errorf("check --trace %v: exit %d (%v), want 2 naming %s", flag, exitCode(err), err, flag[0])
		}
	}
}

// A file with every span twice (a collector's retry, a cat of two copies)
// is judged as the file once: identical duplicates are dropped, counted and
// said so; two different spans under one id are refused, naming the id.
func TestCheckTraceDeduplicatesSpans(t *testing.T) {
	dir := t.TempDir()
	once := filepath.Join(dir, "once.jsonl")
	if _, _, err := runCLI(t, "run", "--scenario", "golden-t2", "--trace-out", once); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(once)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if l != "" {
			lines = append(lines, l, l)
		}
	}
	twice := filepath.Join(dir, "twice.jsonl")
	if err := os.WriteFile(twice, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	want, _, err := runCLI(t, "check", "--trace", once, "--json")
	if err != nil {
		t.Fatalf("the file once: %v\n%s", err, want)
	}
	got, _, err := runCLI(t, "check", "--trace", twice, "--json")
	if err != nil {
		t.Fatalf("the file twice: exit %d (%v)\n%s", exitCode(err), err, got)
	}
	var a, b struct {
		Spans      int `json:"spans"`
		Duplicates int `json:"duplicate_spans"`
		Verdicts   any `json:"verdicts"`
	}
	if json.Unmarshal([]byte(want), &a) != nil || json.Unmarshal([]byte(got), &b) != nil {
		t.Fatalf("not JSON:\n%s\n%s", want, got)
	}
	if b.Spans != a.Spans || b.Duplicates != a.Spans || a.Duplicates != 0 || !reflect.DeepEqual(a.Verdicts, b.Verdicts) {
		t.Fatalf("twice: %d spans, %d duplicates, verdicts %v; once: %d spans, verdicts %v", b.Spans, b.Duplicates, b.Verdicts, a.Spans, a.Verdicts)
	}
	text, _, _ := runCLI(t, "check", "--trace", twice)
	if !strings.Contains(text, fmt.Sprintf("%d duplicated spans ignored", a.Spans)) {
		t.Fatalf("the text report does not say duplicates were ignored:\n%s", text)
	}
	// The same ids with another name is not a duplicate: refused.
	first := lines[0]
	i := strings.Index(first, `"spans":[`)
	i += strings.Index(first[i:], `"name":"`)
	changed := first[:i] + `"name":"x` + first[i+len(`"name":"`):]
	conflict := filepath.Join(dir, "conflict.jsonl")
	if err := os.WriteFile(conflict, []byte(first+changed), 0o644); err != nil {
		t.Fatal(err)
	}
	expectMessage(t, []string{"check", "--trace", conflict}, "span", "twice with different content")
}

// check --trace --json and check --json share their shape, so one CI script
// reads both: "violations" (per property, how many runs or seeds violate
// it) and "first" (its first violation: run, message, story), fields added
// beside the trace report's "verdicts".
func TestCheckTraceJSONHasCheckJSONsShape(t *testing.T) {
	dir := t.TempDir()
	bug := filepath.Join(dir, "t5.jsonl")
	if _, _, err := runCLI(t, "run", "--scenario", "golden-t5", "--variant", "pre-fix-fence", "--trace-out", bug); err != nil {
		t.Fatal(err)
	}
	type shape struct {
		Violations map[string]int `json:"violations"`
		First      map[string]struct {
			Run     string   `json:"run"`
			Message string   `json:"message"`
			Story   []string `json:"story"`
		} `json:"first"`
	}
	read := func(args ...string) shape {
		out, _, err := runCLI(t, args...)
		if exitCode(err) != 1 {
			t.Fatalf("%v: exit %d (%v), want 1", args, exitCode(err), err)
		}
		var s shape
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return s
	}
	for _, s := range []shape{
		read("check", "--json", "--scenario", "golden-t5", "--variant", "pre-fix-fence", "--seeds", "1", "--schedules", dir),
		read("check", "--json", "--trace", bug),
	} {
		f, ok := s.First["no-start-on-terminal"]
		if s.Violations["no-start-on-terminal"] < 1 || !ok || f.Run != "wrun_0000" || f.Message == "" || len(f.Story) == 0 {
			t.Errorf("violations %v, first %+v: want no-start-on-terminal counted with its first violation", s.Violations, s.First)
		}
	}
}

// check --trace - reads the spans from stdin, as from a pipe.
func TestCheckTraceReadsStdin(t *testing.T) {
	file := filepath.Join(t.TempDir(), "t5.jsonl")
	if _, _, err := runCLI(t, "run", "--scenario", "golden-t5", "--variant", "pre-fix-fence", "--trace-out", file); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	root := newRootCommand(&out, &errb)
	root.SetIn(bytes.NewReader(data))
	root.SetArgs([]string{"check", "--trace", "-"})
	err = root.Execute()
	if exitCode(err) != 1 || !strings.Contains(out.String(), "spans of stdin") || !strings.Contains(out.String(), "no-start-on-terminal violated in wrun_0000") {
		t.Fatalf("check --trace - : exit %d (%v)\n%s", exitCode(err), err, out.String())
	}
}
