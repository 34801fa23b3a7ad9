package main

import (
	"context"
	"encoding/json"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/simlab/simlab/check"
	"github.com/simlab/simlab/internal/testreal"
)

// interruptAfter makes the running command receive a real SIGINT once it has
// done n seeds or cells (from its own progress, so the moment does not
// depend on the machine's speed), once, and waits until the command has
// seen it (its context ends), so that no more than the work already begun
// can follow.
func interruptAfter(t *testing.T, n int) {
	t.Helper()
	var sent atomic.Bool
	progressHook = func(ctx context.Context, done int) {
		if done >= n && sent.CompareAndSwap(false, true) {
			if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
				t.Error(err)
				return
			}
			<-ctx.Done()
		}
	}
	t.Cleanup(func() { progressHook = nil })
}

// Ctrl-C stops a long check soon, prints the report of the seeds checked so
// far marked partial, and exits 130, as a shell reports an interrupt.
func TestCheckInterruptedPrintsAPartialReport(t *testing.T) {
	const total = 200_000
	for _, ignored := range []bool{false, true} {
		name := "SIGINT caught"
		if ignored {
			// Started with SIGINT ignored, as a shell starts a background
			// job: an interrupt sent to it still stops it.
			name = "SIGINT ignored at start"
		}
		t.Run(name, func(t *testing.T) {
			if ignored {
				signal.Ignore(os.Interrupt)
				t.Cleanup(func() { signal.Reset(os.Interrupt) })
			}
			interruptAfter(t, 300)
			out, _, err := runCLI(t, "check", "--json", "--seeds", "200000", "--schedules", t.TempDir())
			if exitCode(err) != 130 || !strings.Contains(err.Error(), "interrupted") {
				t.Fatalf("exit %d (%v), want 130 and the word interrupted", exitCode(err), err)
			}
			var rep check.Report
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("no JSON report printed: %v\n%s", err, out)
			}
			if !rep.Partial || rep.Seeds < 300 || rep.Seeds >= total {
				t.Fatalf("report: partial %v, %d seeds; want partial with at least 300 and fewer than %d", rep.Partial, rep.Seeds, total)
			}
		})
	}
	// The text report says so at its top.
	interruptAfter(t, 10)
	out, _, err := runCLI(t, "check", "--seeds", "200000", "--schedules", t.TempDir())
	if exitCode(err) != 130 || !strings.Contains(out, "PARTIAL: interrupted after") || !strings.Contains(out, "of 200000 seeds") {
		t.Fatalf("exit %d (%v):\n%s", exitCode(err), err, out)
	}
}

// Ctrl-C stops a sweep too: the rows of the cells that ran, marked partial,
// exit 130; a shard stopped early does not merge.
func TestSweepInterruptedPrintsPartialRows(t *testing.T) {
	interruptAfter(t, 5)
	args := []string{"sweep", "--json", "--branches", "8,16", "--seeds", "2000", "--jobs", "1"}
	out, _, err := runCLI(t, args...)
	if exitCode(err) != 130 {
		t.Fatalf("exit %d (%v), want 130", exitCode(err), err)
	}
	var res struct {
		Partial bool `json:"partial"`
		Rows    []struct {
			Seeds int `json:"seeds"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("no JSON printed: %v\n%s", err, out)
	}
	seeds := 0
	for _, r := range res.Rows {
		seeds += r.Seeds
	}
	if !res.Partial || seeds < 5 || seeds >= 2*2*2000 {
		t.Fatalf("partial %v over %d cells; want partial with 5 or more cells and fewer than all", res.Partial, seeds)
	}
	interruptAfter(t, 3)
	small := []string{"sweep", "--json", "--branches", "8,16", "--seeds", "20", "--jobs", "1"}
	dir := t.TempDir()
	stopped, whole := filepath.Join(dir, "stopped.json"), filepath.Join(dir, "whole.json")
	out, _, _ = runCLI(t, append(small, "--shard", "0/2")...)
	progressHook = nil
	rest, _, err := runCLI(t, append(small, "--shard", "1/2")...)
	if err != nil {
		t.Fatal(err)
	}
	if os.WriteFile(stopped, []byte(out), 0o644) != nil || os.WriteFile(whole, []byte(rest), 0o644) != nil {
		t.Fatal("cannot write the shards")
	}
	if _, _, err := runCLI(t, "merge", stopped, whole); exitCode(err) != 2 || !strings.Contains(err.Error(), "stopped") {
		t.Fatalf("merge of a stopped shard: exit %d (%v), want 2", exitCode(err), err)
	}
}

// Ctrl-C stops reproduce of a program between its real runs: the runs that
// ran are printed, marked partial, exit 130, and the real engine's
// processes are stopped with it.
func TestReproduceProgramInterruptedPrintsTheRunsThatRan(t *testing.T) {
	testreal.Need(t, testreal.Engine)
	interruptAfter(t, 1)
	file := filepath.Join("..", "..", "realengine", "testdata", "force", "clock-storm-shrunk.yaml")
	out, _, err := runCLI(t, "reproduce", file, "--seed", "34", "--runs", "3", "--engine-dir", filepath.Join("..", "..", "realengine"))
	if exitCode(err) != 130 || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("exit %d (%v), want 130 and the word interrupted\n%s", exitCode(err), err, out)
	}
	if !strings.Contains(out, "PARTIAL: the forcing stopped after 1 of 3 real runs") || !strings.Contains(out, "run 1: completed") || strings.Contains(out, "run 2:") {
		t.Errorf("want run 1 printed, marked partial, and no run 2:\n%s", out)
	}
}
