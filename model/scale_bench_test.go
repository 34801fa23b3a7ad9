package model

import (
	"fmt"
	"testing"
	"time"

	"github.com/simlab/simlab/sim"
)

// scaleDim is a dimension BenchmarkScale grows: build makes the scenario
// of x times its base amount of work and says how many units of work that
// is.
type scaleDim struct {
	name, unit string
	build      func(x int) (Scenario, int)
}

// scaleDims are the dimensions BenchmarkScale grows one at a time.
var scaleDims = []scaleDim{
	{"runs", "run", func(x int) (Scenario, int) {
		// fanout's one 16-branch run, 10·x of them started at once.
		sc := DefaultScenario()
		sc.Runs = 10 * x
		return sc, sc.Runs
	}},
	{"fanouts", "fanout", func(x int) (Scenario, int) {
		// One run of 10·x sequential 16-branch fan-outs.
		sc := DefaultScenario()
		sc.Workflow.Fanouts = make([]int, 10*x)
		for i := range sc.Workflow.Fanouts {
			sc.Workflow.Fanouts[i] = 16
		}
		sc.Limits.MaxTime = 0
		return sc, len(sc.Workflow.Fanouts)
	}},
	{"inline-fanouts", "fanout", func(x int) (Scenario, int) {
		// One run of 100·x sequential one-branch fan-outs: each runs
		// inline, and its step, the last completer, starts the next.
		sc := DefaultScenario()
		sc.Workflow.Fanouts = make([]int, 100*x)
		for i := range sc.Workflow.Fanouts {
			sc.Workflow.Fanouts[i] = 1
		}
		sc.Limits.MaxTime = 0
		return sc, len(sc.Workflow.Fanouts)
	}},
	{"branches", "branch", func(x int) (Scenario, int) {
		// One run of one fan-out of 64·x branches.
		sc := DefaultScenario()
		sc.Workflow.Fanouts = []int{64 * x}
		return sc, 64 * x
	}},
	{"time", "virtual-min", func(x int) (Scenario, int) {
		// faults with a run arriving every second for x virtual minutes
		// and its faults on all along. A run lives 14 s on average (31 s
		// at the 90th percentile, a redelivery after the visibility
		// timeout), so a minute of arrivals already holds about half the
		// runs at once that any longer window reaches (at most 30 at 1×,
		// 56 at 10×, 61 at 100×): virtual time grows 100×, concurrency
		// 2×.
		sc, _ := Builtin("faults")
		sc.Runs = 60 * x
		sc.RunInterval = time.Second
		sc.Faults.Until = time.Duration(sc.Runs) * sc.RunInterval
		sc.Limits.MaxTime = 0
		return sc, x
	}},
	{"overlap", "virtual-s", func(x int) (Scenario, int) {
		// faults with its runs arriving 10 a second for 2·x virtual
		// seconds, faults on all along: at 1× the window is shorter than
		// a run's life, so a longer window also holds more runs at once
		// (at most 18 at 1×, 124 at 10×, 379 at 100×) and more of their
		// timers pending: virtual time and concurrency grow together.
		sc, _ := Builtin("faults")
		sc.Runs = 20 * x
		sc.RunInterval = 100 * time.Millisecond
		sc.Faults.Until = time.Duration(sc.Runs) * sc.RunInterval
		sc.Limits.MaxTime = 0
		return sc, 2 * x
	}},
}

var scaleFactors = [...]int{1, 10, 100}

// BenchmarkScale grows one dimension of the work at a time (runs per
// scenario, fan-outs per workflow, 16 branches wide or one branch run
// inline, branches per fan-out, virtual time with faults on, and virtual
// time with concurrency) and reports the wall time per unit of work at 1×,
// 10× and 100× its base, recording on (what run and check pay): flat when
// the cost is linear in the work. One op runs each scale for the same
// amount of work (100 runs of 1×, 10 of 10×, one of 100×), in turn, the
// order reversed every other op, so that the three see the same load on a
// shared machine and their ratio (spread: the largest time per unit over
// the smallest) is fair, as BenchmarkCheckJobs/alternating does for --jobs.
//
// via=runner runs each scale on a Runner of its own, grown once before the
// timer starts: the simulation's cost, what a check's or a sweep's worker
// pays seed after seed. via=run calls Run, which also copies the Result
// out for the caller to keep: linear in the Result's bytes, but a large
// run's copy lands in memory fresh from the system, and past
// maxPooledRoom its Runner is a new one that grows every table again.
func BenchmarkScale(b *testing.B) {
	for _, d := range scaleDims {
		for _, via := range []string{"runner", "run"} {
			b.Run("dim="+d.name+"/via="+via, func(b *testing.B) { benchScale(b, d, via == "runner") })
		}
	}
}

func benchScale(b *testing.B, d scaleDim, onRunner bool) {
	var scs [len(scaleFactors)]Scenario
	var units [len(scaleFactors)]int
	for i, x := range scaleFactors {
		scs[i], units[i] = d.build(x)
	}
	var runners [len(scaleFactors)]*Runner
	run := func(i int, seed uint64) (*Result, error) {
		if runners[i] == nil {
			return Run(&scs[i], sim.NewPCG(seed), Options{Record: true})
		}
		return runners[i].Run(&scs[i], sim.NewPCG(seed), Options{Record: true})
	}
	if onRunner {
		for i := range runners {
			// Grown once, untimed: the ops then measure the simulation,
			// not a worker's first growth.
			runners[i] = NewRunner()
			if _, err := run(i, 1<<40); err != nil {
				b.Fatal(err)
			}
		}
	}
	var spent [len(scaleFactors)]time.Duration
	var pending [len(scaleFactors)]int // the kernel's high-water mark
	b.ReportAllocs()
	seed, op := uint64(0), 0
	for b.Loop() {
		for j := range scaleFactors {
			i := j
			if op%2 == 1 {
				i = len(scaleFactors) - 1 - j
			}
			start := time.Now()
			for range 100 / scaleFactors[i] {
				r, err := run(i, seed)
				if err != nil {
					b.Fatal(err)
				}
				if !r.History.Drained {
					b.Fatalf("%s×%d seed %d did not drain", d.name, scaleFactors[i], seed)
				}
				pending[i] = max(pending[i], r.Stats.MaxPending)
				seed++
			}
			spent[i] += time.Since(start)
		}
		op++
	}
	lo, hi := 0.0, 0.0
	for i, x := range scaleFactors {
		per := float64(spent[i].Nanoseconds()) / float64(b.N) / float64(units[i]*100/x)
		b.ReportMetric(per, fmt.Sprintf("ns/%s@%dx", d.unit, x))
		b.ReportMetric(float64(pending[i]), fmt.Sprintf("pending@%dx", x))
		if i == 0 || per < lo {
			lo = per
		}
		hi = max(hi, per)
	}
	b.ReportMetric(hi/lo, "spread")
}
