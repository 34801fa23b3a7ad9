package tui

import (
	"testing"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/sim"
)

// The AFTER-END column, read from spans alone, agrees with the model's own
// counters of work after the end (run --json counts): writes refused because
// the run had ended plus step bodies begun after its terminal event.
func TestAfterEndMatchesTheModelsCounters(t *testing.T) {
	seen := 0
	for _, cfg := range []Config{
		{Scenario: "golden-t5", Seeds: []uint64{1, 2, 3}},
		{Scenario: "golden-t5", Variants: []string{"pre-fix-fence"}, Seeds: []uint64{1, 2, 3}},
		{Scenario: "faults", Seeds: []uint64{1, 2, 3, 4, 5, 6}},
	} {
		runs, err := Simulate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		sc, _ := cfg.scenario()
		for _, seed := range cfg.Seeds {
			res, err := model.Run(&sc, sim.NewPCG(seed), model.Options{Record: true, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			want := res.Counts.WritesRefusedEnded + res.Counts.BodiesAfterEnd
			got := 0
			for _, r := range runs {
				if r.Seed == seed {
					got += r.AfterEnd
				}
			}
			if got != want {
				t.Errorf("%s %v seed %d: AFTER-END sums to %d over the runs, the model counted %d", cfg.Scenario, cfg.Variants, seed, got, want)
			}
			seen += want
		}
	}
	if seen == 0 {
		t.Fatal("no case had any work after the end: the comparison proves nothing")
	}
}
