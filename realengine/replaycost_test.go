package realengine

import (
	"math"
	"testing"
)

// The fit recovers the costs that made the solo replays' times, ignores
// the replays that shared the process, and reports how much slower those
// were; a cost that would come out negative is held at 0.
func TestFitReplayCostRecoversTheCosts(t *testing.T) {
	var samples []ReplaySample
	for _, b := range []int{16, 48, 96, 128} {
		for _, ev := range []int{0, 3*b + 2} {
			samples = append(samples, ReplaySample{MS: 0.5 + 0.1*float64(b) + 0.05*float64(ev), Entities: b, Events: ev})
			samples = append(samples, ReplaySample{MS: 3 * (0.5 + 0.1*float64(b) + 0.05*float64(ev)), Entities: b, Events: ev, Overlap: 4})
		}
	}
	rc := FitReplayCost(samples)
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"base", rc.BaseMS, 0.5}, {"per entity", rc.PerEntityMS, 0.1}, {"per event", rc.PerEventMS, 0.05}, {"overlapped ratio", rc.OverlappedRatio, 3}, {"R²", rc.R2, 1}} {
		if math.Abs(c.got-c.want) > 1e-6 {
			t.Errorf("%s %v, want %v", c.name, c.got, c.want)
		}
	}
	if rc.Solo != len(samples)/2 || rc.Samples != len(samples) {
		t.Errorf("%d solo of %d, want %d of %d", rc.Solo, rc.Samples, len(samples)/2, len(samples))
	}
	// Times that fall as the log grows: no replay is cheaper for reading
	// more, so the per-event cost is held at 0 and the rest refitted.
	var falling []ReplaySample
	for _, b := range []int{16, 64} {
		falling = append(falling, ReplaySample{MS: 0.2 * float64(b), Entities: b}, ReplaySample{MS: 0.2*float64(b) - 1, Entities: b, Events: 3 * b})
	}
	rc = FitReplayCost(falling)
	if rc.PerEventMS != 0 || rc.PerEntityMS <= 0 || rc.BaseMS < 0 {
		t.Errorf("falling times: %+v, want no per-event cost and a positive per-entity one", rc)
	}
	// Replays that all loaded empty logs (turbo's) tell the per-event part
	// nothing: it is held at 0 and named, and the rest still fits.
	turbo := []ReplaySample{{MS: 2.5, Entities: 16}, {MS: 7.3, Entities: 64}}
	rc = FitReplayCost(turbo)
	if rc.PerEventMS != 0 || len(rc.Unfitted) != 1 || rc.Unfitted[0] != "per_event" || math.Abs(rc.PerEntityMS-0.1) > 1e-9 || math.Abs(rc.BaseMS-0.9) > 1e-9 {
		t.Errorf("turbo replays only: %+v, want 0.9 ms + 0.1 ms per entity, per_event unfitted", rc)
	}
	if got := FitReplayCost(nil); got.Solo != 0 || got.At(10, 10) != 0 {
		t.Errorf("no samples: %+v, want no cost", got)
	}
}
