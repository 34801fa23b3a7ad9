package main

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/simlab/simlab/model/sweep"
)

// registerJobs adds --jobs, how many simulations run at once: every core by
// default. Each simulation is single-threaded and deterministic and results
// are merged in a fixed order, so the output never depends on it.
func registerJobs(cmd *cobra.Command, jobs *int, what string) {
	cmd.Flags().IntVarP(jobs, "jobs", "j", runtime.GOMAXPROCS(0), what+" (the output does not depend on it)")
	// Help says the default in words: the count is this machine's, and
	// docs/CLI.md is the same wherever it is generated.
	cmd.Flags().Lookup("jobs").DefValue = "every core"
}

func checkJobs(jobs int) error {
	if jobs < 1 {
		return badInput(fmt.Errorf("--jobs %d: want 1 or more (1 runs one simulation at a time)", jobs))
	}
	return nil
}

// parallel returns an Each (sweep.Options, check.SweepConfig) that
// runs do on up to jobs goroutines. Each call is a simulation of its own;
// only their scheduling is parallel. The goroutines take the next index
// from a shared counter rather than being handed each one on a channel: a
// hand-off per seed parks and wakes a goroutine, which on a busy machine
// can cost as much as a seed's simulation.
func parallel(jobs int) func(n int, do func(i int)) {
	return func(n int, do func(i int)) {
		w := max(1, min(jobs, n))
		if w == 1 {
			sweep.InOrder(n, do)
			return
		}
		var next atomic.Int64
		var wg sync.WaitGroup
		work := func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				do(i)
			}
		}
		for range w - 1 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				work()
			}()
		}
		work() // the calling goroutine is one of the w
		wg.Wait()
	}
}
