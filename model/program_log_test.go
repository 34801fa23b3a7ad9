package model

import (
	"testing"

	"github.com/simlab/simlab/model/program"
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// Every log the simulator writes is one the real core's replay consumes: a
// fresh replay of each run's log (up to its end) never diverges, and one
// whose first end is run_completed returns. A fan-out list cannot diverge
// (it mints the same steps whatever a replay saw), so what this holds is
// the simulator's logs: no step written before a replay could have minted
// it, none under another id, none after the program returned.
func TestSimulatedLogsReplay(t *testing.T) {
	checked := 0
	defer func() { t.Logf("%d runs replayed", checked) }()
	for _, name := range BuiltinNames() {
		sc, _ := Builtin(name)
		for seed := uint64(1); seed <= 20; seed++ {
			res, err := Run(&sc, sim.NewPCG(seed), Options{Record: true, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			h := res.History
			for _, info := range h.Runs {
				var widths []int
				for _, f := range info.Fanouts {
					widths = append(widths, int(h.Fanouts[f].Branches))
				}
				p := program.MustCompile(program.FromFanouts(widths, FanoutStep))
				log := h.ProgramLog(info.ID)
				checked++
				before := program.BeforeEnd(log)
				o := program.Replay(p, before)
				if o.Status == program.Diverged {
					t.Fatalf("%s seed %d run %d: %s at %v", name, seed, info.ID, o, before[o.At])
				}
				if len(before) < len(log) && log[len(before)].Type == program.RunCompleted && o.Status != program.Completed {
					t.Fatalf("%s seed %d run %d: the log before run_completed replays %s", name, seed, info.ID, o)
				}
				if h.FinalRuns[info.ID].Status == world.RunCompleted && len(before) == len(log) {
					t.Fatalf("%s seed %d run %d: completed, but its log holds no end", name, seed, info.ID)
				}
			}
		}
	}
}
