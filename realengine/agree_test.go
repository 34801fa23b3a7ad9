package realengine

import (
	"math"
	"testing"
)

// The interval is Clopper-Pearson's: the published values for 0, 1 and 5
// of 10 at 95 %, and n = 0 knows nothing.
func TestShareIntervalIsClopperPearson(t *testing.T) {
	for _, tc := range []struct {
		k, n   int
		lo, hi float64
	}{
		{0, 10, 0, 0.3085},
		{1, 10, 0.0025, 0.4450},
		{5, 10, 0.1871, 0.8129},
		{10, 10, 0.6915, 1},
		{0, 30, 0, 0.1157},
		{0, 0, 0, 1},
	} {
		lo, hi := ShareInterval(tc.k, tc.n, 0.05)
		if math.Abs(lo-tc.lo) > 5e-4 || math.Abs(hi-tc.hi) > 5e-4 {
			t.Errorf("%d of %d: [%.4f, %.4f], want [%.4f, %.4f]", tc.k, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
}

// Each simlab row is judged against the real row of its width and
// prologue: inside the real runs' range of lazy reads and the real share's
// interval it agrees, outside it does not; rows of another prologue or
// width are not compared.
func TestAgreementsJudgeSimlabAgainstTheRealRows(t *testing.T) {
	real := Row{Branches: 16, Engine: "real", Core: "5.0.0-beta.52", Prologue: RunContext, LazyPerFanoutMin: 0, LazyPerFanoutMax: 1, Fanouts: 10}
	rows := []Row{
		real,
		{Branches: 16, Engine: "simlab", Prologue: RunContext, LazyPerFanout: 0.6, ConcurrentLastCompleters: 0.05},
		{Branches: 16, Engine: "simlab", Prologue: RunsGet, LazyPerFanout: 0},
		{Branches: 48, Engine: "simlab", Prologue: RunContext, LazyPerFanout: 9},
	}
	got := Agreements(rows)
	if len(got) != 1 || !got[0].LazyAgrees || !got[0].ConcurrentAgrees {
		t.Fatalf("%+v: want one agreeing row", got)
	}
	rows[1].LazyPerFanout, rows[1].ConcurrentLastCompleters = 1.4, 0.45
	got = Agreements(rows)
	if got[0].LazyAgrees || got[0].ConcurrentAgrees {
		t.Errorf("lazy 1.4 against 0..1 and 45 %% against 0 of 10: %+v, want neither to agree", got[0])
	}
}
