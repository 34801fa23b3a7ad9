package realworld

import (
	"strings"
	"testing"
)

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
