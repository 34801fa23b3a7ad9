package check

import (
	"testing"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/seeds"
	"github.com/simlab/simlab/properties"
)

// BenchmarkCheckFanout is `simlab check` on the fanout scenario: each
// iteration runs one seed with recording on and checks every property.
func BenchmarkCheckFanout(b *testing.B) { benchCheck(b, model.DefaultScenario()) }

// BenchmarkCheckSwarm is `simlab check --scenario swarm`: each seed draws
// its own world (up to 3 runs, 3 fan-outs of up to 16 branches, long fault
// windows), so it is compared with BenchmarkCheckFanout in the same run.
func BenchmarkCheckSwarm(b *testing.B) {
	sc, err := model.Spec{Scenario: "swarm"}.Load()
	if err != nil {
		b.Fatal(err)
	}
	benchCheck(b, sc)
}

func benchCheck(b *testing.B, sc model.Scenario) {
	b.ReportAllocs()
	b.ResetTimer()
	rep, err := Sweep(SweepConfig{Scenario: sc, Seeds: seeds.Count(uint64(b.N)), Props: properties.All()})
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if rep.Seeds != b.N {
		b.Fatalf("checked %d seeds, want %d", rep.Seeds, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "seeds/s")
}

// BenchmarkCheckFaults and BenchmarkDiffCheckFaults measure what a
// differential check costs per seed against a plain one: `simlab check
// --scenario faults --variant pre-fix-fence` with and without --diff
// (go test ./check -run '^$' -bench 'CheckFaults' -benchtime 200x).
// Neither saves schedules, so both time the seeds alone.
func BenchmarkCheckFaults(b *testing.B) {
	sc, err := model.Spec{Scenario: "faults", Variants: []string{"pre-fix-fence"}}.Load()
	if err != nil {
		b.Fatal(err)
	}
	benchCheck(b, sc)
}

func BenchmarkDiffCheckFaults(b *testing.B) {
	change, err := model.Spec{Scenario: "faults", Variants: []string{"pre-fix-fence"}}.Load()
	if err != nil {
		b.Fatal(err)
	}
	base, err := model.Spec{Scenario: "faults"}.Load()
	if err != nil {
		b.Fatal(err)
	}
	seeds := make([]uint64, b.N)
	for i := range seeds {
		seeds[i] = uint64(i + 1)
	}
	b.ReportAllocs()
	b.ResetTimer()
	rep, err := DiffSweep(DiffConfig{Change: change, Base: base, Seeds: seeds, Props: properties.All()})
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if rep.Seeds != b.N {
		b.Fatalf("checked %d seeds, want %d", rep.Seeds, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "seeds/s")
}

// BenchmarkCheckFaultsShrink is `simlab check --scenario faults --variant
// pre-fix-fence --seeds 200` with a schedules directory: each op checks 200
// seeds and minimizes and saves the first counterexample of each violated
// property, the shrink part of a check's profile (docs/PERFORMANCE.md).
func BenchmarkCheckFaultsShrink(b *testing.B) {
	sc, err := model.Spec{Scenario: "faults", Variants: []string{"pre-fix-fence"}}.Load()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		rep, err := Sweep(SweepConfig{Scenario: sc, Seeds: seeds.Count(200), Props: properties.All(), ScheduleDir: dir})
		if err != nil || len(rep.First) == 0 {
			b.Fatal(rep, err)
		}
	}
	b.ReportMetric(float64(b.N*200)/b.Elapsed().Seconds(), "seeds/s")
}
