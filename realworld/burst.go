package realworld

import (
	"fmt"
	"math"
	"slices"

	"github.com/simlab/simlab/model/sweep"
)

// This file measures a real World's own costs under a burst with no runtime
// in front of it: driver.mjs issues a fan-out's writes of one run at once
// (each kind in turn: its creates, its claims, its completions) and times
// every call. It is how simlab calibrate measures world-postgres, which no
// published core runs on (docs/VALIDATION.md), and measures world-local the
// same way for comparison.

// BurstStaggerUS spaces a burst's calls on the driver's clock, so that they
// have an arrival order to be answered in or out of (the runtime issues a
// fan-out's writes from one loop, a fraction of a millisecond apart).
const BurstStaggerUS = 300

// BurstKinds are what a burst issues, one batch each, in order: a fan-out's
// writes, then as many reads of the run as there were writes, up to
// MaxReadBurst (a fan-out's completers listing its log, and reading the
// run).
var BurstKinds = []string{"step_created", "step_started", "step_completed", "events.list", "runs.get"}

// burstCall is call i of a batch of kind.
func burstCall(kind string, i int) ConcCall {
	c := ConcCall{Call: Call{Op: "event", Type: kind, Step: i}, DelayUS: i * BurstStaggerUS}
	switch kind {
	case "events.list":
		c.Call = Call{Op: OpListEvents}
	case "runs.get":
		c.Call = Call{Op: OpGetRun}
	}
	return c
}

// MaxReadBurst caps a burst's reads: an events.list answers the run's whole
// log, and 128 of them at once overflow the driver's answer line (1 MiB).
const MaxReadBurst = 32

// IsWriteKind says a burst kind is an events.create.
func IsWriteKind(kind string) bool { return kind != "events.list" && kind != "runs.get" }

// BurstKind is what the World did with its bursts of width concurrent
// writes of one kind: each call's own time (ms), the gaps between
// consecutive answers of a burst (ms), the bursts' spans from their first
// call to their last answer added up (ms), and the order it answered them
// in.
type BurstKind struct {
	Kind   string     `json:"kind"`
	Bursts int        `json:"bursts"`
	Calls  int        `json:"calls"`
	OK     int        `json:"ok"`
	Own    []float64  `json:"own_ms"`
	Gaps   []float64  `json:"answer_gaps_ms"`
	Span   float64    `json:"span_ms"`
	Order  WriteOrder `json:"order"`
}

// BurstRow is one width's bursts.
type BurstRow struct {
	Width int         `json:"width"`
	Kinds []BurstKind `json:"kinds"`
}

// Burst runs reps bursts of width on d's World, each on a fresh run, and
// returns each kind's calls of all of them together.
func Burst(d *Driver, width, reps int) (BurstRow, error) {
	if width < 1 || reps < 1 {
		return BurstRow{}, fmt.Errorf("burst of width %d, %d repetitions: want both at least 1", width, reps)
	}
	row := BurstRow{Width: width}
	for _, k := range BurstKinds {
		row.Kinds = append(row.Kinds, BurstKind{Kind: k})
	}
	for range reps {
		h := History{Runs: 1, Batches: []Batch{{Calls: []ConcCall{{Call: Call{Op: "event", Type: "run_started"}}}}}}
		for _, k := range BurstKinds {
			n := width
			if !IsWriteKind(k) {
				n = min(width, MaxReadBurst)
			}
			var b Batch
			for i := range n {
				b.Calls = append(b.Calls, burstCall(k, i))
			}
			h.Batches = append(h.Batches, b)
		}
		res, err := d.RunHistory(h)
		if err != nil {
			return row, err
		}
		for ki := range BurstKinds {
			row.Kinds[ki].add(res[ki+1].Replies)
		}
	}
	return row, nil
}

// add counts one batch's replies.
func (k *BurstKind) add(reps []Reply) {
	ws := make([]Interval, len(reps))
	ends := make([]float64, len(reps))
	for i, r := range reps {
		ws[i] = Interval{From: float64(r.T0) / 1e6, To: float64(r.T1) / 1e6}
		ends[i] = ws[i].To
		k.Own = append(k.Own, ws[i].To-ws[i].From)
		if r.Res == "ok" {
			k.OK++
		}
	}
	k.Bursts++
	k.Calls += len(reps)
	slices.Sort(ends)
	for i := 1; i < len(ends); i++ {
		k.Gaps = append(k.Gaps, ends[i]-ends[i-1])
	}
	first := math.Inf(1)
	for _, w := range ws {
		first = math.Min(first, w.From)
	}
	if len(ws) > 0 {
		k.Span += ends[len(ends)-1] - first
	}
	k.Order = k.Order.Add(CountWriteOrder(ws))
}

// MeanSpan is one burst's span, on average (ms).
func (k BurstKind) MeanSpan() float64 {
	if k.Bursts == 0 {
		return 0
	}
	return k.Span / float64(k.Bursts)
}

// PercentileMS is sweep.Percentile on samples in ms (to the nanosecond).
func PercentileMS(xs []float64, p float64) float64 {
	ns := make([]int64, len(xs))
	for i, x := range xs {
		ns[i] = int64(math.Round(x * 1e6))
	}
	return float64(sweep.Percentile(ns, p)) / 1e6
}

// Median is the nearest-rank median of xs (ms; 0 when empty).
func Median(xs []float64) float64 { return PercentileMS(xs, 50) }

// BurstCalibration is one World's bursts at each width, and its uncontended
// writes: bursts of one, repeated.
type BurstCalibration struct {
	World string     `json:"world"`
	Alone BurstRow   `json:"alone"`
	Rows  []BurstRow `json:"rows"`
}

// CalibrateBursts bursts d's World at each width reps times, after
// alone bursts of one write of each kind.
func CalibrateBursts(d *Driver, widths []int, reps, alone int) (*BurstCalibration, error) {
	c := &BurstCalibration{World: d.World}
	var err error
	if c.Alone, err = Burst(d, 1, alone); err != nil {
		return c, err
	}
	for _, w := range widths {
		row, err := Burst(d, w, reps)
		if err != nil {
			return c, err
		}
		c.Rows = append(c.Rows, row)
	}
	return c, nil
}

// Served is the concurrency the World served a burst of kind ki with: the
// burst's throughput (its calls over its span) times a lone call's time
// (Little's law): 1 for a World that serves them one at a time, the burst's
// width for one that serves them all at once.
func (c *BurstCalibration) Served(row BurstRow, ki int) float64 {
	k := row.Kinds[ki]
	if k.Span <= 0 {
		return 0
	}
	return float64(k.Calls) / k.Span * Median(c.Alone.Kinds[ki].Own)
}

// WriteLimit and ReadLimit are the store model's pools: the median over
// widths and kinds of the concurrency served, at least 1.
func (c *BurstCalibration) WriteLimit() int { return c.limit(true) }
func (c *BurstCalibration) ReadLimit() int  { return c.limit(false) }

func (c *BurstCalibration) limit(writes bool) int {
	var xs []float64
	for _, row := range c.Rows {
		for ki, k := range row.Kinds {
			if IsWriteKind(k.Kind) == writes {
				xs = append(xs, c.Served(row, ki))
			}
		}
	}
	return max(1, int(math.Round(Median(xs))))
}

// Order is every width's write order together.
func (c *BurstCalibration) Order() WriteOrder {
	var o WriteOrder
	for _, row := range c.Rows {
		for _, k := range row.Kinds {
			if IsWriteKind(k.Kind) {
				o = o.Add(k.Order)
			}
		}
	}
	return o
}

// alone is the lone calls' own times of the kinds kind accepts.
func (c *BurstCalibration) alone(accept func(string) bool) []float64 {
	var xs []float64
	for _, k := range c.Alone.Kinds {
		if accept(k.Kind) {
			xs = append(xs, k.Own...)
		}
	}
	return xs
}

// ScenarioYAML is the calibrated store model as a scenario file on the
// World's own rules: each write the lone writes' time, WriteLimit of them at
// once, in arrival order unless at least a quarter of the overlapping
// writes answered out of it (then random order, as world-local's).
func (c *BurstCalibration) ScenarioYAML(world, command string) string {
	order := "fifo"
	if c.Order().Share() >= 0.25 {
		order = "random"
	}
	kind := func(name string) func(string) bool { return func(k string) bool { return k == name } }
	return fmt.Sprintf(`# The real %s's own costs under a burst of one run's calls, driven alone
# (no runtime: none published runs on it), measured by
#   %s
# Each call kind: a lone call's own times. Writes: %d served at once (a
# burst's throughput times a lone write's time, the median over widths and
# kinds), in %s order (%.2f of the overlapping writes answered out of
# arrival order); reads: %d at once, the same way (docs/VALIDATION.md).
name: calibrated-%s
description: fanout on %s's measured call costs
world: %s
store:
  runs_get: %s
  events_list: %s
  events_create: %s
  max_concurrent_reads: %d
  max_concurrent_writes: %d
  write_order: %s
`, world, command, c.WriteLimit(), order, c.Order().Share(), c.ReadLimit(), world, world, world,
		distYAML(c.alone(kind("runs.get"))), distYAML(c.alone(kind("events.list"))), distYAML(c.alone(IsWriteKind)),
		c.ReadLimit(), c.WriteLimit(), order)
}

// distYAML is xs (ms) as a scenario distribution: its min, nearest-rank
// p50, p90, p99, and max.
func distYAML(xs []float64) string {
	if len(xs) == 0 {
		return "{min: 0ms, p50: 0ms, p90: 0ms, p99: 0ms, max: 0ms}"
	}
	return fmt.Sprintf("{min: %.3fms, p50: %.3fms, p90: %.3fms, p99: %.3fms, max: %.3fms}",
		slices.Min(xs), PercentileMS(xs, 50), PercentileMS(xs, 90), PercentileMS(xs, 99), slices.Max(xs))
}
