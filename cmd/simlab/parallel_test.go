package main

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/sweep"
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

// BenchmarkSweepWorkers is BenchmarkSweep's grid run by `simlab sweep`'s
// parallel runner with one and with two workers, in the same run.
func BenchmarkSweepWorkers(b *testing.B) {
	sc := durabench(b)
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
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
