package model

import (
	"fmt"
	"testing"
	"time"

	"github.com/simlab/simlab/sim"
)

// scaleDims are the dimensions BenchmarkScale grows one at a time. Each
// builds the scenario of x times its base amount of work and says how many
// units of work that is.
var scaleDims = []struct {
	name, unit string
	build      func(x int) (Scenario, int)
}{
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
	{"time", "virtual-s", func(x int) (Scenario, int) {
		// faults with its runs arriving 10 a second for 2·x virtual
		// seconds and its faults on all along: the unit is a second of
		// arrivals (the run's end adds a tail of visibility timeouts).
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
// inline, branches per fan-out, virtual time with faults on) and reports the wall time per unit of work at 1×, 10× and 100×
// its base, recording on (what run and check pay): flat when the cost is
// linear in the work. One op runs each scale for the same amount of work
// (100 runs of 1×, 10 of 10×, one of 100×), in turn, the order reversed
// every other op, so that the three see the same load on a shared machine
// and their ratio (spread: the largest time per unit over the smallest) is
// fair, as BenchmarkCheckJobs/alternating does for --jobs.
func BenchmarkScale(b *testing.B) {
	for _, d := range scaleDims {
		b.Run("dim="+d.name, func(b *testing.B) {
			var scs [len(scaleFactors)]Scenario
			var units [len(scaleFactors)]int
			for i, x := range scaleFactors {
				scs[i], units[i] = d.build(x)
			}
			var spent [len(scaleFactors)]time.Duration
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
						r, err := Run(&scs[i], sim.NewPCG(seed), Options{Record: true})
						if err != nil {
							b.Fatal(err)
						}
						if !r.History.Drained {
							b.Fatalf("%s×%d seed %d did not drain", d.name, scaleFactors[i], seed)
						}
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
				if i == 0 || per < lo {
					lo = per
				}
				hi = max(hi, per)
			}
			b.ReportMetric(hi/lo, "spread")
		})
	}
}
