package program

import (
	"fmt"
	"testing"

	"github.com/simlab/simlab/sim"
)

// Random draws valid programs (it panics otherwise), the same one for the
// same seed, of every kind of statement across seeds, and choice 0 is one
// step.
func TestRandomProgramsAreValidAndVaried(t *testing.T) {
	kinds := map[Kind]int{}
	var walk func(ns []Node)
	walk = func(ns []Node) {
		for i := range ns {
			n := &ns[i]
			kinds[n.Kind()]++
			for _, kids := range [][]Node{n.All, n.Race, n.Seq, n.Then, n.Else, n.Do} {
				walk(kids)
			}
		}
	}
	for seed := range uint64(500) {
		p := Random(sim.NewPCG(seed), 3)
		if q := Random(sim.NewPCG(seed), 3); fmt.Sprint(p) != fmt.Sprint(q) {
			t.Fatalf("seed %d drew two programs", seed)
		}
		MustCompile(p)
		walk(p)
	}
	for k := KindStep; k <= KindLoop; k++ {
		if kinds[k] == 0 {
			t.Errorf("no %s in 500 programs: %v", k, kinds)
		}
	}
	if p := Random(zeroChooser{}, 3); len(p) != 1 || p[0].Kind() != KindStep {
		t.Errorf("choice 0 drew %+v, want one step", p)
	}
}

type zeroChooser struct{}

func (zeroChooser) Choose(int) int { return 0 }
