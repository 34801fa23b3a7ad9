package conformance

import (
	"testing"

	"github.com/simlab/simlab/realworld"
)

// The two real Worlds, driven alone, serve a burst of one run's writes in
// different orders: world-local answers them one at a time as each wins the
// log's next slot, far out of arrival order (0.26-0.49 of the overlapping
// pairs reversed at 48 writes), world-postgres nearly in arrival order
// (0.00-0.03). simlab calibrate's store models rest on that difference
// (write_order random for world-local, arrival order for world-postgres).
func TestBurstOrderOfTheRealWorlds(t *testing.T) {
	_, st := realWorlds(t)
	share := map[string]float64{}
	for _, name := range []string{"wl-fixed", "wpg-b29"} {
		w, err := realworld.WorldByName(name)
		if err != nil {
			t.Fatal(err)
		}
		h := startWorld(t, w, st)
		row, err := realworld.Burst(h.driver(), 48, 1)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var all realworld.WriteOrder
		for _, k := range row.Kinds {
			if !realworld.IsWriteKind(k.Kind) {
				if k.Calls != realworld.MaxReadBurst || k.OK != realworld.MaxReadBurst {
					t.Errorf("%s %s: %d calls, %d ok: want %d answered ok", name, k.Kind, k.Calls, k.OK, realworld.MaxReadBurst)
				}
				continue
			}
			if k.Bursts != 1 || k.Calls != 48 || k.OK != 48 || len(k.Own) != 48 || len(k.Gaps) != 47 || k.MeanSpan() <= 0 {
				t.Errorf("%s %s: %d calls, %d ok, %d times, %d gaps, span %v ms: want 48 answered ok", name, k.Kind, k.Calls, k.OK, len(k.Own), len(k.Gaps), k.Span)
			}
			all = all.Add(k.Order)
		}
		if all.Pairs < 500 {
			t.Fatalf("%s: %d overlapping pairs: the burst did not contend", name, all.Pairs)
		}
		share[name] = all.Share()
	}
	if !(share["wl-fixed"] > 0.15) || !(share["wpg-b29"] < 0.1) {
		t.Errorf("writes answered out of arrival order: world-local %.2f, world-postgres %.2f; want world-local's above 0.15 and world-postgres's under 0.1", share["wl-fixed"], share["wpg-b29"])
	}
}
