package realengine

import (
	"strings"
	"testing"
)

// A disagreement counts once the real side has the runs to judge it; on
// fewer it is reported as not judged, whichever way it went.
func TestDecideJudgesOnlyWhatTheRealRunsCanTell(t *testing.T) {
	a := Agreement{Branches: 96, Core: "5.0.0-beta.52", Prologue: RunContext, RealFanouts: 8, RealRuns: 8,
		LazyAgrees: true, ConcurrentAgrees: true, EndedAgrees: false, CorruptedAgree: true, EndedByStepAgrees: true}
	g := Decide([]Agreement{a}, 5)
	if g.Disagrees != 1 || g.NotJudged != 0 || len(g.Verdicts) != 5 {
		t.Fatalf("%+v: want one judged disagreement (runs ended twice) of five verdicts", g)
	}
	for _, v := range g.Verdicts {
		if v.What == "runs ended twice" && (v.Agrees || !v.Judged) {
			t.Fatalf("%+v: want it judged and disagreeing", v)
		}
	}
	a.RealFanouts, a.RealRuns = 3, 3
	g = Decide([]Agreement{a}, 5)
	if g.Disagrees != 0 || g.NotJudged != 5 {
		t.Fatalf("%+v: three real runs: want nothing judged", g)
	}
	if v := g.Verdicts[2]; v.Judged || !strings.Contains(v.Why, "too few runs (3 real runs, the gate wants 5)") {
		t.Fatalf("%+v: want a reason naming the count", v)
	}
}
