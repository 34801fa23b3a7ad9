package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Inputs far larger than anything simlab can hold are refused up front,
// exit 2, each with a message naming the documented limit; nothing is read
// or listed without a bound.
func TestHugeInputsAreRefusedWithTheirLimit(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big := write("big.yaml", []byte("description: "+strings.Repeat("x", 2<<20)+"\n"))
	runs := write("runs.yaml", []byte("runs: 1000000000\n"))
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"sweep", "--seeds", "1000000000000"}, []string{"seeds = 1000000000000", "want 1 to 10000"}},
		{[]string{"sweep", "--branches", "1,2,3,4,5,6,7,8,9,10", "--seeds", "10000"}, []string{"200000 cells", "at most 100000"}},
		{[]string{"run", "--scenario", runs}, []string{"runs = 1000000000", "want 1 to 100000"}},
		{[]string{"run", "--set", "runs=100000", "--set", "workflow.fanouts=1,1,1,1,1,1,1,1,1,1,1"}, []string{"1100000 fan-outs", "at most 1000000"}},
		{[]string{"run", "--scenario", "/dev/zero"}, []string{"/dev/zero", "larger than 1 MiB"}},
		{[]string{"run", "--scenario", big}, []string{big, "larger than 1 MiB"}},
		{[]string{"check", "--trace", "/dev/zero"}, []string{"/dev/zero", "not JSON"}},
		{[]string{"run", "--set", "limits.max_events=0", "--set", "limits.max_time=876000h", "--set", "faults.crash=1"},
			[]string{"limits.max_events = 0", "want 1 to 10000000"}},
		{[]string{"tui", "--seed", "1..10000", "--seed", "1..5"}, []string{"at most 10000 seeds"}},
		{[]string{"tui", "--seed", "1..10000", "--seed", "1..100000000000"}, []string{"at most 10000 seeds"}},
	} {
		start := time.Now()
		expectMessage(t, c.args, c.want...)
		// Refusing is immediate; this bound only catches a read of
		// /dev/zero or a list of 10^11 seeds (minutes, or the machine's
		// memory), never a slow machine.
		if d := time.Since(start); d > 2*time.Minute {
			t.Errorf("%v took %v to refuse", c.args, d)
		}
	}
}

// A check of 10^12 seeds (or of every seed there is) starts at once and
// holds no list of them: interrupted after a few hundred seeds, the heap is
// as small as for a check of a hundred.
func TestCheckStreamsItsSeeds(t *testing.T) {
	for _, args := range [][]string{
		{"check", "--json", "--seeds", "1000000000000"},
		{"check", "--json", "--seed-range", "1..18446744073709551615"},
	} {
		var heap uint64
		interruptAfter(t, 300)
		hook := progressHook
		progressHook = func(ctx context.Context, done int) {
			if done == 300 {
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				heap = ms.HeapAlloc
			}
			hook(ctx, done)
		}
		_, _, err := runCLI(t, append(args, "--schedules", t.TempDir())...)
		if exitCode(err) != 130 {
			t.Fatalf("%v: exit %d (%v), want the interrupt's 130", args, exitCode(err), err)
		}
		if heap == 0 || heap > 256<<20 {
			t.Fatalf("%v: heap %d MiB after 300 seeds", args, heap>>20)
		}
	}
}
