package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/simlab/simlab/check"
	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/sim"
)

// goInternals are fragments of Go's own error texts that mean nothing to a
// user of simlab.
var goInternals = []string{"strconv.", "invalid syntax", "2006-01-02", "first path segment", "retry-able",
	"context deadline", "Client.Timeout", "invalid character", "traces:", "Post \"", "open /"}

// expectMessage runs args and asserts exit 2 with an error that contains
// every fragment of want and none of Go's internals.
func expectMessage(t *testing.T, args []string, want ...string) {
	t.Helper()
	_, _, err := runCLI(t, args...)
	if exitCode(err) != 2 || err == nil {
		t.Fatalf("%v: exit %d (%v), want 2", args, exitCode(err), err)
	}
	msg := err.Error()
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("%v: %q lacks %q", args, msg, w)
		}
	}
	for _, bad := range goInternals {
		if strings.Contains(msg, bad) {
			t.Errorf("%v: %q shows Go's internals (%q)", args, msg, bad)
		}
	}
}

func TestMessagesSayWhatToTypeInstead(t *testing.T) {
	expectMessage(t, []string{"run", "--otlp", "127.0.0.1:4318"}, "--otlp http://127.0.0.1:4318")
	expectMessage(t, []string{"run", "--seed", "-1"}, `--seed "-1"`, "whole number from 0", "--seed 1")
	expectMessage(t, []string{"check", "--seeds", "many"}, `--seeds "many"`, "whole number", "--seeds 100")
	expectMessage(t, []string{"sweep", "--branches", "wide"}, "--branches", "16,64")
	expectMessage(t, []string{"run", "--otlp-timeout", "5"}, "--otlp-timeout", "5s")
	expectMessage(t, []string{"run", "--epoch", "yesterday"}, `--epoch "yesterday"`, "--epoch 2026-01-01T00:00:00Z", "--epoch now")
	// An epoch OTLP cannot stamp is refused, not written as 0 or ignored.
	expectMessage(t, []string{"run", "--epoch", "0001-01-01T00:00:00Z"}, `--epoch "0001-01-01T00:00:00Z"`, "before 1970")
	expectMessage(t, []string{"run", "--epoch", "2300-01-01T00:00:00Z"}, `--epoch "2300-01-01T00:00:00Z"`, "2262-04-11T23:47:16.854775807Z")
	expectMessage(t, []string{"run", "--epoch", "2262-04-11T23:47:16.83Z", "--trace-out", filepath.Join(t.TempDir(), "t.jsonl")},
		"span simlab.run", "after 2262-04-11T23:47:16.854775807Z", "choose another --epoch")
}

// An OTLP endpoint that accepts the connection and never answers: the
// command gives up after --otlp-timeout and says so in those words (simlab
// never retries, so nothing may call the failure retry-able), and the trace
// file is already written.
func TestOTLPTimeoutMessage(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	file := filepath.Join(t.TempDir(), "t2.jsonl")
	endpoint := "http://" + ln.Addr().String()
	expectMessage(t, []string{"run", "--scenario", "golden-t2", "--otlp", endpoint, "--otlp-timeout", "300ms", "--trace-out", file},
		endpoint+"/v1/traces", "no answer within 300ms", "none of its", "--otlp-timeout", "the trace file "+file+" was written")
	if st, err := os.Stat(file); err != nil || st.Size() == 0 {
		t.Fatalf("trace file not written: %v", err)
	}
}

func TestTraceFileMessages(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	missing := filepath.Join(dir, "missing.jsonl")
	expectMessage(t, []string{"tui", "--trace", missing}, missing, "no such file", "simlab run --trace-out")
	expectMessage(t, []string{"tui", "--trace", dir}, "is a directory", ".jsonl")
	expectMessage(t, []string{"tui", "--trace", write("text.jsonl", "hello\n")}, "line 1", "not JSON", `{"resourceSpans":[...]}`)
	expectMessage(t, []string{"tui", "--trace", write("empty.jsonl", "{}\n")}, "no spans", "simlab run --trace-out")
	expectMessage(t, []string{"tui", "--trace", write("cut.jsonl", `{"resourceSpans":[`)}, "line 1", "ends early")
	expectMessage(t, []string{"tui", "--seed", "x"}, `--seed "x"`, "--seed 1..8")
}

func TestScheduleAndMergeFileMessages(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(garbage, []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.json")
	expectMessage(t, []string{"replay", garbage}, garbage, "not JSON", "schedule file saved by simlab check")
	expectMessage(t, []string{"replay", missing}, missing, "no such file", "simlab check prints the path")
	expectMessage(t, []string{"merge", garbage}, garbage, "not JSON", "simlab check --json")
	expectMessage(t, []string{"merge", missing}, missing)
}

// A schedule whose content simlab never writes (a property it does not
// have, a choice outside its range, a field it does not know) is refused,
// exit 2, naming what is wrong: replaying it would judge something other
// than what the file says.
func TestReplayRefusesACorruptedSchedule(t *testing.T) {
	dir := t.TempDir()
	sc, ok := model.Builtin("golden-t2")
	if !ok {
		t.Fatal("no golden-t2")
	}
	res, choices, err := check.Record(&sc, sim.NewPCG(1), 1)
	if err != nil {
		t.Fatal(err)
	}
	good := check.Schedule{Property: "liveness", Seed: 1, HistoryHash: fmt.Sprintf("%016x", res.History.Hash), Scenario: sc, Choices: choices}
	save := func(name string, s check.Schedule, edit func(string) string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := check.SaveSchedule(p, s); err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			b, _ := os.ReadFile(p)
			if err := os.WriteFile(p, []byte(edit(string(b))), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	// The good one replays, and the property holds: exit 0.
	if _, _, err := runCLI(t, "replay", save("good.json", good, nil)); err != nil {
		t.Fatalf("replay of an intact schedule: %v", err)
	}
	s := good
	s.Property = "now holds"
	expectMessage(t, []string{"replay", save("prop.json", s, nil)}, `property = "now holds"`, "unknown property", "liveness")
	s = good
	s.Choices = slices.Clone(good.Choices)
	s.Choices[2] = sim.Choice{N: s.Choices[2].N, V: s.Choices[2].N + 5}
	expectMessage(t, []string{"replay", save("range.json", s, nil)}, "choices[2]", fmt.Sprintf("v = %d", s.Choices[2].V), "outside [0, ")
	s.Choices[2] = sim.Choice{N: 0, V: 0}
	expectMessage(t, []string{"replay", save("zero.json", s, nil)}, "choices[2]", "n = 0")
	s.Choices[2] = sim.Choice{N: 4, V: -1}
	expectMessage(t, []string{"replay", save("neg.json", s, nil)}, "choices[2]", "v = -1")
	expectMessage(t, []string{"replay", save("field.json", good, func(b string) string {
		return strings.Replace(b, `"choices"`, `"choicez"`, 1)
	})}, "choicez")
	s = good
	s.HistoryHash = "not a hash"
	expectMessage(t, []string{"replay", save("hash.json", s, nil)}, "history_hash", "not a hash", "16 hex digits")
}

// Flags that contradict each other or cannot mean anything are refused,
// naming them, rather than one silently winning or being ignored.
func TestContradictoryFlagsAreRefused(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t2.jsonl")
	if _, _, err := runCLI(t, "run", "--scenario", "golden-t2", "--trace-out", trace); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"check", "--seeds", "5", "--seed-range", "1..3"}, []string{"--seeds 5", "--seed-range 1..3", "give one"}},
		{[]string{"check", "--trace", trace, "--seeds", "5"}, []string{"--trace", "--seeds", "simulat"}},
		{[]string{"check", "--trace", trace, "--scenario", "faults"}, []string{"--trace", "--scenario"}},
		{[]string{"check", "--trace", trace, "--set", "runs=2"}, []string{"--trace", "--set"}},
		{[]string{"check", "--trace", trace, "--service", "x"}, []string{"--service", "--jaeger"}},
		{[]string{"check", "--service", "x"}, []string{"--service", "--jaeger"}},
		{[]string{"check", "--jaeger", "http://127.0.0.1:1", "--service", "s", "--max-traces", "0"}, []string{"--max-traces 0", "at least 1"}},
		{[]string{"check", "--jaeger", "http://127.0.0.1:1", "--service", "s", "--jaeger-timeout", "0s"}, []string{"--jaeger-timeout", "positive"}},
		{[]string{"run", "--trace-out", ""}, []string{"--trace-out", "name a file"}},
		{[]string{"run", "--otlp", "http://127.0.0.1:1", "--otlp-timeout", "0s"}, []string{"--otlp-timeout 0s", "positive"}},
		{[]string{"run", "--otlp", "http://127.0.0.1:1", "--otlp-timeout", "-1s"}, []string{"--otlp-timeout -1s", "positive"}},
		{[]string{"run", "--epoch", "now"}, []string{"--epoch", "--trace-out or --otlp"}},
		{[]string{"run", "--max-spans", "10"}, []string{"--max-spans", "--trace-out or --otlp"}},
	} {
		expectMessage(t, c.args, c.want...)
	}
}
