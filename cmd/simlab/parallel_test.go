package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/simlab/simlab/check"
	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/seeds"
	"github.com/simlab/simlab/model/sweep"
	"github.com/simlab/simlab/properties"
)

func durabench(tb testing.TB) model.Scenario {
	tb.Helper()
	sc, ok := model.Builtin("durabench-256")
	if !ok {
		tb.Fatal("no durabench-256 scenario")
	}
	return sc
}

// The sweep's result does not depend on how many goroutines run its cells.
func TestSweepIsDeterministicWhateverTheWorkers(t *testing.T) {
	sc := durabench(t)
	var outs []string
	for _, w := range []int{1, 3, 8} {
		res, err := sweep.Run(sc, sweep.Options{Branches: []int{32, 8}, Prologues: []string{sweep.RunContext, sweep.Legacy},
			Seeds: 5, Each: parallel(w)})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, string(b))
	}
	for i := 1; i < len(outs); i++ {
		if outs[i] != outs[0] {
			t.Fatalf("the result depends on the number of workers:\n%s\n---\n%s", outs[0], outs[i])
		}
	}
}

// BenchmarkSweepJobs is BenchmarkSweep's grid run by `simlab sweep`'s
// parallel runner with one and with two workers, in the same run.
func BenchmarkSweepJobs(b *testing.B) {
	sc := durabench(b)
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("jobs=%d", workers), func(b *testing.B) {
			opts := sweep.Options{Branches: []int{16, 64, 128, 256}, Prologues: sweep.Prologues(), Seeds: 2, Each: parallel(workers)}
			cells := 0
			b.ReportAllocs()
			for b.Loop() {
				res, err := sweep.Run(sc, opts)
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range res.Rows {
					cells += r.Seeds
				}
			}
			if s := b.Elapsed().Seconds(); s > 0 {
				b.ReportMetric(float64(cells)/s, "cells/s")
			}
		})
	}
}

// check and sweep run on every core unless told otherwise, and print the
// same bytes whatever --jobs says: text and JSON, counterexamples, their
// stories and schedule files included.
func TestCheckAndSweepOutputDoesNotDependOnJobs(t *testing.T) {
	for _, name := range []string{"check", "sweep"} {
		cmd, _, err := newRootCommand(nil, nil).Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		// The value is this machine's core count; help says "every core".
		if f := cmd.Flags().Lookup("jobs"); f == nil || f.Value.String() != strconv.Itoa(runtime.GOMAXPROCS(0)) || f.DefValue != "every core" {
			t.Fatalf("%s --jobs: %v, want a default of every core (%d)", name, f, runtime.GOMAXPROCS(0))
		}
	}
	schedules := t.TempDir()
	for _, args := range [][]string{
		{"check", "--scenario", "golden-t5", "--variant", "pre-fix-fence", "--seeds", "40", "--schedules", schedules},
		{"check", "--scenario", "golden-t5", "--variant", "pre-fix-fence", "--seeds", "40", "--schedules", schedules, "--json"},
		{"check", "--seeds", "300", "--schedules", schedules}, // more than one merge chunk
		{"sweep", "--branches", "8,32", "--seeds", "4"},
	} {
		one, _, err1 := runCLI(t, append(args, "--jobs", "1")...)
		for _, jobs := range [][]string{nil, {"--jobs", "3"}, {"--jobs", "8"}} {
			got, _, err := runCLI(t, append(args, jobs...)...)
			if exitCode(err) != exitCode(err1) || got != one {
				t.Fatalf("%v %v: exit %d and\n%s\nwant exit %d and, byte for byte,\n%s", args, jobs, exitCode(err), got, exitCode(err1), one)
			}
		}
	}
	if _, _, err := runCLI(t, "check", "--jobs", "0"); exitCode(err) != 2 {
		t.Fatalf("--jobs 0: %v, want exit 2", err)
	}
}

// BenchmarkCheckJobs is `simlab check` on the default scenario with one job
// and with every core, in the same run: seeds/s and the speed-up.
func BenchmarkCheckJobs(b *testing.B) {
	sc, ok := model.Builtin("fanout")
	if !ok {
		b.Fatal("no fanout scenario")
	}
	const n = 200
	check := func(b *testing.B, jobs int) {
		rep, err := check.Sweep(check.SweepConfig{Scenario: sc, Seeds: seeds.Count(n), Props: properties.All(), Each: parallel(jobs)})
		if err != nil || rep.Seeds != n {
			b.Fatal(rep, err)
		}
	}
	all := runtime.GOMAXPROCS(0)
	for _, jobs := range []int{1, all} {
		b.Run(fmt.Sprintf("jobs=%d", jobs), func(b *testing.B) {
			for b.Loop() {
				check(b, jobs)
			}
			if s := b.Elapsed().Seconds(); s > 0 {
				b.ReportMetric(float64(b.N*n)/s, "seeds/s")
			}
		})
	}
	// On a machine shared with other work the load changes between the two
	// sub-benchmarks above; here every op runs both, one after the other,
	// so both see the same load and their ratio is fair.
	b.Run("alternating", func(b *testing.B) {
		var one, many time.Duration
		for b.Loop() {
			t0 := time.Now()
			check(b, 1)
			t1 := time.Now()
			check(b, all)
			one, many = one+t1.Sub(t0), many+time.Since(t1)
		}
		total := float64(b.N * n)
		b.ReportMetric(total/one.Seconds(), "seeds/s@1")
		b.ReportMetric(total/many.Seconds(), fmt.Sprintf("seeds/s@%d", all))
		b.ReportMetric(one.Seconds()/many.Seconds(), "speedup")
	})
}

// alternating runs work at each of the given parallelisms once per op, one
// after the other, so that every parallelism sees the same load on a
// machine shared with other work, and reports each one's units/s and its
// speed-up over the first. With setProcs it also sets GOMAXPROCS to the
// parallelism for its turn (restored after), so that the figures say how
// far the speed-up grows with the cores Go may use: on a machine with fewer
// cores than a parallelism, the goroutines past the cores only share them.
func alternating(b *testing.B, ps []int, units int, unit string, setProcs bool, work func(p int)) {
	b.Helper()
	spent := make([]time.Duration, len(ps))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	b.ReportAllocs()
	for b.Loop() {
		for i, p := range ps {
			if setProcs {
				runtime.GOMAXPROCS(p)
			}
			t0 := time.Now()
			work(p)
			spent[i] += time.Since(t0)
		}
	}
	total := float64(b.N * units)
	for i, p := range ps {
		b.ReportMetric(total/spent[i].Seconds(), fmt.Sprintf("%s/s@%d", unit, p))
		if i > 0 {
			b.ReportMetric(spent[0].Seconds()/spent[i].Seconds(), fmt.Sprintf("speedup@%d", p))
		}
	}
}

// BenchmarkJobsAlternating is `simlab check` (the fanout scenario, every
// property) and `simlab sweep` (BenchmarkSweepJobs's grid) at --jobs 1 and
// --jobs 2 in the same op: the fair ratio on a shared 2-core machine
// (go test ./cmd/simlab -run '^$' -bench JobsAlternating -benchtime 20x).
func BenchmarkJobsAlternating(b *testing.B) {
	sc, ok := model.Builtin("fanout")
	if !ok {
		b.Fatal("no fanout scenario")
	}
	const n = 2000
	b.Run("check", func(b *testing.B) {
		alternating(b, []int{1, 2}, n, "seeds", false, func(jobs int) {
			rep, err := check.Sweep(check.SweepConfig{Scenario: sc, Seeds: seeds.Count(n), Props: properties.All(), Each: parallel(jobs)})
			if err != nil || rep.Seeds != n {
				b.Fatal(rep, err)
			}
		})
	})
	db := durabench(b)
	opts := sweep.Options{Branches: []int{16, 64, 128, 256}, Prologues: sweep.Prologues(), Seeds: 16}
	cells := len(opts.Branches) * len(opts.Prologues) * opts.Seeds
	b.Run("sweep", func(b *testing.B) {
		alternating(b, []int{1, 2}, cells, "cells", false, func(jobs int) {
			o := opts
			o.Each = parallel(jobs)
			if _, err := sweep.Run(db, o); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// BenchmarkCheckProcs is `simlab check` (fanout, every property) with
// GOMAXPROCS and --jobs at 1, 2, 4 and 8, alternating within each op: how
// the speed-up grows with the cores. A machine shows it up to its own core
// count; past that, the figures say only what oversubscription costs
// (go test ./cmd/simlab -run '^$' -bench CheckProcs -benchtime 10x).
func BenchmarkCheckProcs(b *testing.B) {
	sc, ok := model.Builtin("fanout")
	if !ok {
		b.Fatal("no fanout scenario")
	}
	const n = 2000
	alternating(b, []int{1, 2, 4, 8}, n, "seeds", true, func(p int) {
		rep, err := check.Sweep(check.SweepConfig{Scenario: sc, Seeds: seeds.Count(n), Props: properties.All(), Each: parallel(p)})
		if err != nil || rep.Seeds != n {
			b.Fatal(rep, err)
		}
	})
}
