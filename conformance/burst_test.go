package conformance

import (
	"strings"
	"testing"
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
		w, err := WorldByName(name)
		if err != nil {
			t.Fatal(err)
		}
		h := startWorld(t, w, st)
		row, err := Burst(h.driver(), 48, 1)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var all WriteOrder
		for _, k := range row.Kinds {
			if !isWrite(k.Kind) {
				if k.Calls != maxReadBurst || k.OK != maxReadBurst {
					t.Errorf("%s %s: %d calls, %d ok: want %d answered ok", name, k.Kind, k.Calls, k.OK, maxReadBurst)
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

func TestBurstRefusesAnEmptyBurst(t *testing.T) {
	if _, err := Burst(nil, 0, 1); err == nil {
		t.Error("a burst of width 0 was accepted")
	}
	if _, err := Burst(nil, 4, 0); err == nil {
		t.Error("a burst of 0 repetitions was accepted")
	}
	if m := Median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median of 3 1 2: %v", m)
	}
}

// A calibration's write pool is a burst's throughput times a lone write's
// time: a World that answered 48 writes of 10 ms in 480 ms served one at a
// time, one that answered them in 10 ms all 48; its file says so and loads.
func TestBurstCalibrationServedConcurrency(t *testing.T) {
	kinds := func(k BurstKind) []BurstKind {
		var out []BurstKind
		for _, name := range BurstKinds {
			k.Kind = name
			out = append(out, k)
		}
		return out
	}
	alone := BurstRow{Width: 1, Kinds: kinds(BurstKind{Calls: 1, Own: []float64{10}})}
	serial := BurstKind{Calls: 48, Span: 480, Order: WriteOrder{Pairs: 100, Reversed: 1}}
	c := &BurstCalibration{Alone: alone, Rows: []BurstRow{{Width: 48, Kinds: kinds(serial)}}}
	if got := c.Served(c.Rows[0], 0); got != 1 {
		t.Errorf("48 writes of 10 ms over 480 ms: served %v at once, want 1", got)
	}
	if c.WriteLimit() != 1 {
		t.Errorf("write limit %d, want 1", c.WriteLimit())
	}
	all := serial
	all.Span = 10
	c.Rows = []BurstRow{{Width: 48, Kinds: kinds(all)}}
	if c.WriteLimit() != 48 {
		t.Errorf("48 writes of 10 ms in 10 ms: write limit %d, want 48", c.WriteLimit())
	}
	yaml := c.ScenarioYAML("world-postgres", "simlab calibrate --world world-postgres")
	for _, want := range []string{"world: world-postgres", "max_concurrent_writes: 48", "max_concurrent_reads: 48", "write_order: fifo", "events_create: {min: 10.000ms, p50: 10.000ms", "events_list: {min: 10.000ms", "runs_get: {min: 10.000ms"} {
		if !strings.Contains(yaml, want) {
			t.Errorf("the scenario lacks %q:\n%s", want, yaml)
		}
	}
}
