package model

import (
	"testing"
	"time"

	"github.com/simlab/simlab/model/world"
)

// Replays on shared processors: two replays of 100 ms on one processor,
// started together, both finish at 200 ms; on two processors at 100 ms.
func TestReplayCPUSharesItsProcessors(t *testing.T) {
	// Processors: the time a 100 ms replay beside another takes.
	want := map[int64]int64{1: 200, 2: 100, 4: 100}
	for cpus := int64(1); cpus <= 4; cpus *= 2 {
		cpu := replayCPU{cpus: cpus, active: []cpuWork{{p: 1, left: 100}, {p: 2, left: 100}}}
		num, den := cpu.rate()
		if got := 100 * den / num; got != want[cpus] {
			t.Errorf("%d processors: a 100 ms replay beside another takes %d ms, want %d", cpus, got, want[cpus])
		}
		cpu.advance(50)
		if left := cpu.active[0].left; left != 100-50*num/den {
			t.Errorf("%d processors: %d left after 50 ms, want %d", cpus, left, 100-50*num/den)
		}
	}
}

// With one processor for every replay, a fan-out's concurrent last
// completers (durabench-256's contended reads make dozens) share it: the run takes longer to
// end, and more of them have listed the log before the first end lands,
// than with a processor each. (The real harness's one Node process:
// docs/VALIDATION.md, "Who ends the run, and what a replay costs".)
func TestOneReplayProcessorSlowsConcurrentReplays(t *testing.T) {
	ends := func(cpus string) (attempts int, last time.Duration) {
		for seed := uint64(1); seed <= 10; seed++ {
			_, h := builtinWith(t, "durabench-256", seed, "workflow.fanouts=64", "workflow.replay_cpus="+cpus)
			for _, c := range h.Calls {
				if c.Op == OpEventsCreate && c.Event == world.EvRunCompleted {
					attempts++
				}
			}
			last += time.Duration(h.End)
		}
		return attempts, last
	}
	aOwn, tOwn := ends("0")
	aShared, tShared := ends("1")
	if !(tShared > tOwn) || aShared < aOwn {
		t.Fatalf("one processor: %d end writes over 10 runs lasting %v in all; a processor each: %d, %v; want longer runs and no fewer end writes", aShared, tShared, aOwn, tOwn)
	}
	t.Logf("end writes %d -> %d, time %v -> %v", aOwn, aShared, tOwn, tShared)
}
