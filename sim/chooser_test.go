package sim

import (
	"testing"
	"time"
)

// zeros answers the plain outcome to every draw.
type zeros struct{ draws int }

func (z *zeros) Choose(int) int { z.draws++; return 0 }

func TestChoiceZeroIsThePlainOutcome(t *testing.T) {
	z := &zeros{}
	if Chance(z, 0.999) {
		t.Error("Chance with choice 0 fired")
	}
	d := Dist{Min: time.Millisecond, P50: 5 * time.Millisecond, P90: 9 * time.Millisecond, P99: 20 * time.Millisecond, Max: time.Second}
	if got := d.Draw(z); got != time.Millisecond {
		t.Errorf("Draw with choice 0 = %v, want the base latency 1ms", got)
	}
	if PickTie(z, 5) != 0 {
		t.Error("PickTie with choice 0 is not the first candidate")
	}
	f := NewFaults(z, SiteConfig{Enable: 1, Fire: 0.5})
	if f.Fire(f.Register("x")) {
		t.Error("a fault fired on choice 0")
	}
}

func TestChanceEdgesDrawNothing(t *testing.T) {
	z := &zeros{}
	if Chance(z, 0) || !Chance(z, 1) || z.draws != 0 {
		t.Fatalf("Chance(0)/Chance(1) drew %d choices", z.draws)
	}
	if PickTie(z, 1); z.draws != 0 {
		t.Fatal("PickTie over one candidate drew a choice")
	}
}

func TestChanceFrequency(t *testing.T) {
	c := NewPCG(1)
	hits := 0
	for i := 0; i < 100000; i++ {
		if Chance(c, 0.25) {
			hits++
		}
	}
	if hits < 24000 || hits > 26000 {
		t.Fatalf("Chance(0.25) fired %d times in 100000", hits)
	}
}

func TestPCGStaysInRangeAndCoversIt(t *testing.T) {
	c := NewPCG(2)
	seen := make([]bool, 7)
	for i := 0; i < 1000; i++ {
		v := c.Choose(7)
		if v < 0 || v >= 7 {
			t.Fatalf("Choose(7) = %d", v)
		}
		seen[v] = true
	}
	for v, ok := range seen {
		if !ok {
			t.Fatalf("Choose(7) never returned %d", v)
		}
	}
}

func TestDistQuantilesAndValidation(t *testing.T) {
	d := Dist{Min: 10, P50: 20, P90: 60, P99: 100, Max: 200}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0, 10}, {0.25, 15}, {0.5, 20}, {0.7, 40}, {0.9, 60}, {0.99, 100}, {1, 200}} {
		if got := d.Quantile(tc.q); got != tc.want {
			t.Errorf("Quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := Dist{Min: 10, P50: 20, P90: 15, P99: 100, Max: 200}
	if err := bad.Validate(); err == nil || err.Error() != "p90 = 15ns: must be at least p50 (20ns)" {
		t.Fatalf("Validate() = %v", err)
	}
	if err := (Dist{Min: -1}).Validate(); err == nil {
		t.Fatal("a negative min was accepted")
	}
	z := &zeros{}
	if Fixed(time.Second).Draw(z) != time.Second || z.draws != 0 {
		t.Fatal("a fixed distribution drew a choice")
	}
}

func TestReplayerPastTheEndAndMismatch(t *testing.T) {
	r := NewReplayer([]Choice{{N: 4, V: 3}, {N: 10, V: 9}})
	if r.Choose(4) != 3 {
		t.Fatal("first replayed choice wrong")
	}
	if got := r.Choose(5); got != 0 || r.Mismatches != 1 {
		t.Fatalf("out-of-range replay = %d, mismatches %d", got, r.Mismatches)
	}
	if r.Choose(3) != 0 || r.Exhausted != 1 {
		t.Fatal("past the end did not answer the plain outcome")
	}
}

func TestFaultSitesDecideOnceAndReport(t *testing.T) {
	f := NewFaults(NewPCG(5), SiteConfig{Enable: 1, Fire: 1})
	always := f.Register("b.always")
	if _, err := f.Configure("a.never", SiteConfig{Enable: 0, Fire: 1}); err != nil {
		t.Fatal(err)
	}
	never := f.Register("a.never")
	for i := 0; i < 10; i++ {
		if !f.Fire(always) || f.Fire(never) {
			t.Fatal("site configuration not honoured")
		}
	}
	f.Stop()
	if f.Fire(always) {
		t.Fatal("a site fired after Stop")
	}
	rep := f.Report()
	if len(rep) != 2 || rep[0].Name != "a.never" || rep[0].On || rep[0].Fired != 0 ||
		rep[1].Name != "b.always" || !rep[1].On || rep[1].Fired != 10 || rep[1].Checks != 10 {
		t.Fatalf("report = %+v", rep)
	}
	if _, err := f.Configure("c", SiteConfig{Enable: 1.5}); err == nil {
		t.Fatal("a probability of 1.5 was accepted")
	}
}

func TestSwarmSitesAreOnInAboutTheRightShareOfRuns(t *testing.T) {
	on := 0
	for seed := uint64(0); seed < 2000; seed++ {
		f := NewFaults(NewPCG(seed), SiteConfig{Enable: 0.25, Fire: 0.25})
		f.Fire(f.Register("s"))
		if f.Report()[0].On {
			on++
		}
	}
	if on < 420 || on > 580 {
		t.Fatalf("site on in %d of 2000 runs, want about 500", on)
	}
}
