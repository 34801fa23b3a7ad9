package conformance

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/simlab/simlab/realworld"
)

// TestRaceCensus (SIMLAB_RACE_TRIALS=N) runs every known race's batch N
// times on each real World without forcing it, its calls issued at once, and
// prints how often the real World raced (porcupine: not linearizable) and how
// often it ended exactly as the race says: the per-trial figures of
// docs/CONFORMANCE.md. Not part of the default suite: the figures depend on
// the machine's timing, and nothing is asserted of them.
func TestRaceCensus(t *testing.T) {
	trials, _ := strconv.Atoi(os.Getenv("SIMLAB_RACE_TRIALS"))
	if trials <= 0 {
		t.Skip("SIMLAB_RACE_TRIALS=N: a census of the known races, N unforced trials each")
	}
	worlds, st := realWorlds(t)
	races, err := realworld.ReadRaces(realworld.RacesFile())
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range worlds {
		t.Run(w.Name, func(t *testing.T) {
			h := startWorld(t, w, st)
			for _, r := range races {
				if !r.On(w) {
					continue
				}
				hist := r.History()
				raced, exact := 0, 0
				other := map[string]int{} // the other outcomes no order explains
				for i := 0; i < trials; i++ {
					res, err := h.driver().RunHistory(hist)
					if err != nil {
						t.Fatal(err)
					}
					last := res[len(res)-1]
					o := OutcomeKey(r.Batch, last.Replies, last.Readbacks)
					if CheckLinearizable(w, hist, res, 20*time.Second).Result == porcupine.Illegal {
						raced++
						if o != r.Outcome {
							other[o]++
						}
					}
					if o == r.Outcome {
						exact++
					}
				}
				fmt.Printf("census %s %-30s not linearizable %3d/%d, exactly the race's outcome %3d/%d\n", w.Name, r.Name, raced, trials, exact, trials)
				for o, n := range other {
					fmt.Printf("census %s %-30s   also not linearizable %3d/%d: %s\n", w.Name, r.Name, n, trials, o)
				}
			}
		})
	}
}
