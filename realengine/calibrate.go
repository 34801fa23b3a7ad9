package realengine

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/sweep"
	"github.com/simlab/simlab/sim"
)

// CalibrateOptions are a calibration's settings: the widths it bursts the
// real World at, the real runs per width, and the releases.
type CalibrateOptions struct {
	Branches    []int
	Repetitions int
	Core        string // default: the pinned default core
	WorldLocal  string // default: the pinned default world-local
	Timeout     time.Duration
	// Progress, if set, is told after each real run how many have ended.
	Progress func(done int)
}

// CallKind is one kind of World call a calibration measures: an
// operation, and for events.create the event class (a step's claim, its
// end, its create, the run's own events), because world-local serves them
// by different locks and files.
type CallKind struct {
	Op    string `json:"op"`
	Event string `json:"event,omitempty"`
}

func (k CallKind) String() string {
	if k.Event == "" {
		return k.Op
	}
	return k.Op + " " + k.Event
}

// KindCost is what one kind of call cost the real World at one width: its
// own time per call (ms) as a distribution, how many were in the World at
// once, the uncontended time (the p50 of calls that met no other of their
// kind) and the concurrency the World served them with: the busy-period
// throughput times the uncontended time (Little's law), 1 for a World that
// serves them one at a time whatever arrives.
type KindCost struct {
	Kind        CallKind `json:"kind"`
	Calls       int      `json:"calls"`
	Own         dist     `json:"own_ms"`
	Uncontended dist     `json:"uncontended_ms"`
	// alone are the uncontended samples and aloneAt the run's log length
	// at each, and own every call's time, for a profile (Profile).
	alone       []float64
	aloneAt     []int
	own         []float64
	PeakInWorld int     `json:"peak_in_world"`
	MeanInWorld float64 `json:"mean_in_world"`
	Served      float64 `json:"served_concurrency"`
	// Throughput is calls per second while some call of the kind was in
	// the World; MeanLog the run's mean log length at the calls.
	Throughput float64 `json:"throughput_per_s"`
	MeanLog    float64 `json:"mean_log_events"`
}

// CalibrationRow is one width's measurement over its repetitions.
type CalibrationRow struct {
	Branches int        `json:"branches"`
	Runs     int        `json:"runs"`
	Kinds    []KindCost `json:"kinds"`
	// DeliverMS is the queue's time from a publish's answer to its
	// message's first delivery.
	DeliverMS dist `json:"deliver_ms"`
	deliver   []float64
	// WritesOutOfOrder is the order the World answered each run's
	// overlapping writes in (order.go).
	WritesOutOfOrder WriteOrder `json:"writes_out_of_order"`
	// served is what each write answered while the World was busy with its
	// run's writes cost, and lists what each list cost (order.go, callCost).
	served []callCost
	lists  []callCost
	// Replays are the runs' workflow.replay.execute spans (ReplaySample).
	Replays []ReplaySample `json:"replays"`
}

// Calibration is a calibration's result.
type Calibration struct {
	Core       string           `json:"core"`
	WorldLocal string           `json:"world_local"`
	Rows       []CalibrationRow `json:"rows"`
	// Partial: the calibration stopped (Ctrl-C, a failed run) before
	// every width ran all its repetitions; Rows are what did (a width cut
	// short counts the runs it finished).
	Partial bool `json:"partial,omitempty"`
}

// Calibrate bursts the real World: the fanout workflow at each width with
// no injected latency, pool or fault (the World's own costs only), every
// call recorded, and reports each call kind's cost. It is what the World
// profiles' service times rest on (docs/VALIDATION.md). When it stops
// early it returns what it measured so far, marked Partial, with the error.
func Calibrate(ctx context.Context, r *Runner, o CalibrateOptions) (*Calibration, error) {
	core, err := CoreByVersion(cmp.Or(o.Core, Pinned.DefaultCore))
	if err != nil {
		return nil, err
	}
	wl, err := Pinned.WorldLocal(cmp.Or(o.WorldLocal, Pinned.DefaultWorldLocal))
	if err != nil {
		return nil, err
	}
	if o.Repetitions < 1 {
		o.Repetitions = 1
	}
	if o.Timeout <= 0 {
		o.Timeout = 3 * time.Minute
	}
	sc, _ := model.Builtin("fanout")
	out := &Calibration{Core: core.Version, WorldLocal: wl.Version}
	for _, b := range o.Branches {
		if b < 1 || b > MaxBranches {
			return nil, fmt.Errorf("--branches %d: want 1..%d", b, MaxBranches)
		}
		cfg, err := HarnessFor(zeroLatency(sc), b)
		if err != nil {
			return nil, err
		}
		cfg.DumpCalls, cfg.WorldLocal = true, wl.Package()
		var runs []*RealRun
		for rep := 1; rep <= o.Repetitions; rep++ {
			cfg.Seed = uint64(rep)
			run, err := r.Run(ctx, core, cfg, o.Timeout)
			if err != nil {
				if len(runs) > 0 {
					out.Rows = append(out.Rows, calibrationRow(b, runs))
				}
				out.Partial = true
				return out, fmt.Errorf("%d branches, repetition %d: %w", b, rep, err)
			}
			runs = append(runs, run)
			if o.Progress != nil {
				o.Progress(len(out.Rows)*o.Repetitions + len(runs))
			}
		}
		out.Rows = append(out.Rows, calibrationRow(b, runs))
	}
	return out, nil
}

// Replay fits what a replay costs the real core over every width's
// replays (FitReplayCost).
func (c *Calibration) Replay() ReplayCost {
	var all []ReplaySample
	for _, row := range c.Rows {
		all = append(all, row.Replays...)
	}
	return FitReplayCost(all)
}

// zeroLatency is sc with no injected latency, pool, stale read or fault:
// the real side runs on the World's own costs.
func zeroLatency(sc model.Scenario) model.Scenario {
	p := &sc.Store
	zero := sim.Fixed(0)
	p.RunsGet, p.EventsWrite, p.EventsList, p.Publish, p.Deliver = zero, zero, zero, zero, zero
	p.MaxConcurrentReads, p.MaxConcurrentWrites = 0, 0
	sc.Faults = model.FaultConfig{}
	return sc
}

// kindOf is the calibration kind of a recorded call.
func kindOf(c Call) (CallKind, bool) {
	switch c.Op {
	case "runs.get", "events.list", "queue":
		return CallKind{Op: c.Op}, true
	case "events.create":
		switch c.Event {
		case "step_created", "step_started", "step_completed", "step_failed", "step_retrying":
			return CallKind{Op: c.Op, Event: c.Event}, true
		default:
			return CallKind{Op: c.Op, Event: "run"}, true
		}
	}
	return CallKind{}, false
}

// Pool kinds aggregate what simlab's store model serves from one pool:
// every events.create (writes) and every runs.get and events.list (reads).
var (
	writesPool = CallKind{Op: "writes", Event: "all events.create"}
	readsPool  = CallKind{Op: "reads", Event: "runs.get and events.list"}
)

// calibrationRow measures the runs of one width.
func calibrationRow(branches int, runs []*RealRun) CalibrationRow {
	row := CalibrationRow{Branches: branches, Runs: len(runs), Replays: replaySamples(branches, runs)}
	type span struct {
		from, to float64
		n        int // events in the run's log at the call
	}
	byKind := map[CallKind][][]span{} // per run: the kind's calls' World intervals
	var deliver []float64
	for ri, run := range runs {
		order, byRun := realWrites(run)
		row.WritesOutOfOrder = row.WritesOutOfOrder.Add(writeOrderOfRuns(order, byRun))
		row.served = append(row.served, servedWrites(order, byRun)...)
		row.lists = append(row.lists, listCosts(run, byRun)...)
		published := map[string]float64{}
		// The run's log length at a call: 1 (run_created) plus the writes
		// accepted before it began.
		var accepted []float64
		for _, c := range run.Calls {
			if c.Op == "events.create" && c.Result == "ok" && c.End >= 0 {
				accepted = append(accepted, c.End)
			}
		}
		slices.Sort(accepted)
		logAt := func(t float64) int {
			i, _ := slices.BinarySearch(accepted, t)
			return i
		}
		add := func(k CallKind, s span) {
			for len(byKind[k]) <= ri {
				byKind[k] = append(byKind[k], nil)
			}
			byKind[k][ri] = append(byKind[k][ri], s)
		}
		for _, c := range run.Calls {
			k, ok := kindOf(c)
			if !ok || c.End < 0 || c.Delivery < 0 {
				// The client's calls (its run_created, its polling for
				// the return value) are not the runtime's.
				continue
			}
			from, own := c.Served, c.Real
			if c.Op == "queue" {
				// The wrapper's publish has no pool: its time is the call's.
				from, own = c.Start, c.End-c.Start
				// A message's first publish: a later one under the same
				// idempotency key (a replay's re-dispatch) gets the same
				// message id back from world-local, after the message may
				// already have been delivered.
				if _, seen := published[c.Message]; c.Message != "" && !seen {
					published[c.Message] = c.End
				}
			}
			// The log length the World works on when it serves the call:
			// the events accepted before it answered (under a burst a call
			// waits in the World while the log grows; a list's page holds
			// at most a page of them).
			s := span{from, from + own, logAt(from + own)}
			add(k, s)
			switch c.Op {
			case "events.create":
				add(writesPool, s)
			case "runs.get", "events.list":
				add(readsPool, s)
			}
		}
		first := map[string]bool{}
		for _, d := range run.Deliveries {
			if at, ok := published[d.Message]; ok && !first[d.Message] {
				first[d.Message] = true
				// world-local may deliver before the publish call has
				// returned: no delay, not a negative one.
				deliver = append(deliver, max(0, d.Start-at))
			}
		}
	}
	kinds := make([]CallKind, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i].String() < kinds[j].String() })
	for _, k := range kinds {
		var own, alone []float64
		var aloneAt []int
		peak, inWorld, busy, served, logSum := 0, 0.0, 0.0, 0, 0
		for _, spans := range byKind[k] {
			if len(spans) == 0 {
				continue
			}
			slices.SortFunc(spans, func(a, b span) int {
				if a.from != b.from {
					return cmp.Compare(a.from, b.from)
				}
				return cmp.Compare(a.to, b.to)
			})
			// Sweep the run's intervals: how many were in the World at each
			// call's arrival, and the busy periods (some call in the World).
			var ends []float64
			busyFrom, busyTo := spans[0].from, spans[0].to
			for i, s := range spans {
				own = append(own, s.to-s.from)
				ends = slices.DeleteFunc(ends, func(e float64) bool { return e <= s.from })
				n := len(ends) + 1
				peak = max(peak, n)
				inWorld += float64(n)
				met := len(ends) > 0
				for _, t := range spans[i+1:] {
					if t.from >= s.to {
						break
					}
					met = true
				}
				if !met {
					alone = append(alone, s.to-s.from)
					aloneAt = append(aloneAt, s.n)
				}
				ends = append(ends, s.to)
				if s.from > busyTo {
					busy += busyTo - busyFrom
					busyFrom, busyTo = s.from, s.to
				} else {
					busyTo = math.Max(busyTo, s.to)
				}
				served++
				logSum += s.n
			}
			busy += busyTo - busyFrom
		}
		kc := KindCost{Kind: k, Calls: len(own), Own: distOfMS(own), PeakInWorld: peak}
		if served > 0 {
			kc.MeanInWorld = inWorld / float64(served)
		}
		kc.alone, kc.aloneAt, kc.own = alone, aloneAt, own
		if len(alone) == 0 {
			// Every call met another: the fastest is the best estimate.
			alone = []float64{kc.Own.Min}
		}
		kc.Uncontended = distOfMS(alone)
		if busy > 0 {
			kc.Throughput = float64(served) / busy * 1000
			kc.Served = float64(served) / busy * kc.Uncontended.P50
		}
		if served > 0 {
			kc.MeanLog = float64(logSum) / float64(served)
		}
		row.Kinds = append(row.Kinds, kc)
	}
	row.DeliverMS, row.deliver = distOfMS(deliver), deliver
	return row
}

// distOfMS summarizes samples (ms) as the store model's distribution, with
// sweep's nearest-rank percentiles (on whole nanoseconds).
func distOfMS(xs []float64) dist {
	if len(xs) == 0 {
		return dist{}
	}
	ns := make([]int64, len(xs))
	for i, x := range xs {
		ns[i] = int64(math.Round(x * 1e6))
	}
	pct := func(p float64) float64 { return msOfNS(sweep.Percentile(ns, p)) }
	return dist{Min: slices.Min(xs), P50: pct(50), P90: pct(90), P99: pct(99), Max: slices.Max(xs)}
}

// StoreProfile is what a calibration says the World's store model is, as a
// queue with simlab's two pools. Reads: the uncontended calls' times, a
// list's growing with the run's log (base + per event × events logged,
// fitted over every width), and the concurrency the World served bursts of
// them with (Little's law), and a list's cost per write of its run in the
// World. Writes: one at a time, in random order when the World answered at
// least a quarter of its overlapping writes out of arrival order, each
// costing base + per × the run's writes in the World (fitted on the time per
// write served, over every width), spread as the uncontended writes are
// around their median.
type StoreProfile struct {
	RunsGet, EventsList, EventsWrite dist
	// Publish and Deliver are the queue's: a publish's own time and the
	// time from its answer to the message's first delivery, every call of
	// every width pooled (world-local's queue serves a burst's publishes
	// all at once, so they are latencies, not a pool).
	Publish, Deliver dist
	ListPerEventMS   float64
	// WritePerContenderMS: a write's cost per write of its run in the World
	// (model.Profile.WritePerContender), and R2 how much of the variance of
	// the time per write served the fit explains (against R2Log, the same
	// fit on the run's log length instead).
	WritePerContenderMS float64
	R2, R2Log           float64
	// ListPerContenderMS: a list's cost per write of its run in the World
	// (model.Profile.ListPerContender).
	ListPerContenderMS  float64
	MaxConcurrentReads  int
	MaxConcurrentWrites int
	// WriteOrder is the order the one write at a time is given to the
	// writes waiting for it (model.Profile.WriteOrder): random when the
	// World answered at least a quarter of its overlapping writes out of
	// arrival order over the calibration (WritesOutOfOrder; random order of
	// service reverses about half of the pairs that wait together, first
	// come first served none), else fifo. OutOfOrder is that share.
	WriteOrder string
	OutOfOrder float64
}

// randomOrderAt is the share of overlapping writes answered out of arrival
// order from which the calibration serves writes in random order: halfway
// between first come first served (none) and random order (about half).
const randomOrderAt = 0.25

// Profile derives the store model from the calibration.
func (c *Calibration) Profile() StoreProfile {
	var get, list, write []float64
	var listAt []int
	var reads []float64
	// The writes' pool: the time per write served while the World was busy
	// with the run's writes, against the writes in the World.
	var served, lists []callCost
	var publish, deliver []float64
	var order WriteOrder
	for _, row := range c.Rows {
		deliver = append(deliver, row.deliver...)
		order = order.Add(row.WritesOutOfOrder)
		served = append(served, row.served...)
		lists = append(lists, row.lists...)
		for _, k := range row.Kinds {
			switch k.Kind {
			case CallKind{Op: "queue"}:
				publish = append(publish, k.own...)
			case CallKind{Op: "runs.get"}:
				get = append(get, k.alone...)
			case CallKind{Op: "events.list"}:
				list, listAt = append(list, k.alone...), append(listAt, k.aloneAt...)
			case writesPool:
				write = append(write, k.alone...)
			case readsPool:
				reads = append(reads, k.Served)
			}
		}
	}
	// A list's cost: base plus a cost per logged event, from the lists no
	// write of their run was in the World beside (the alone ones when
	// there are too few), and a cost per write in the World fitted on
	// every list's time less its per-event part.
	var clean []float64
	var cleanAt []int
	for _, l := range lists {
		if l.inWorld == 0 {
			clean, cleanAt = append(clean, l.took), append(cleanAt, l.logged)
		}
	}
	if len(clean) >= 2 {
		list, listAt = clean, cleanAt
	}
	listBase, listPer := fitPerEvent(list, listAt)
	var listRest, listIn []float64
	for _, l := range lists {
		listRest, listIn = append(listRest, l.took-listPer*float64(l.logged)), append(listIn, float64(l.inWorld))
	}
	_, listPerContender := fitLine(listRest, listIn)
	// A write's service: the time per write served fitted as base + per ×
	// the run's writes in the World (the slot contention); the log's
	// length, which the fit used before, explains none of it (R2Log). Its
	// spread is the uncontended writes' shape around their median.
	gap, inWorld, logged := make([]float64, len(served)), make([]float64, len(served)), make([]float64, len(served))
	for i, w := range served {
		gap[i], inWorld[i], logged[i] = w.took, float64(w.inWorld), float64(w.logged)
	}
	base, perContender := fitLine(gap, inWorld)
	baseLog, perLog := fitLine(gap, logged)
	var writeBase []float64
	if med := distOfMS(write).P50; med > 0 {
		for _, w := range write {
			writeBase = append(writeBase, w/med*base)
		}
	}
	limit := func(xs []float64) int {
		if len(xs) == 0 {
			return 0
		}
		return max(1, int(math.Round(distOfMS(xs).P50)))
	}
	writes, discipline := 0, ""
	if len(served) > 0 {
		writes, discipline = 1, model.WriteOrderFIFO
		if order.Share() >= randomOrderAt {
			discipline = model.WriteOrderRandom
		}
	}
	return StoreProfile{RunsGet: distOfMS(get), EventsList: distOfMS(listBase), EventsWrite: distOfMS(writeBase),
		Publish: distOfMS(publish), Deliver: distOfMS(deliver),
		ListPerEventMS: listPer, ListPerContenderMS: listPerContender, WritePerContenderMS: perContender,
		R2: rSquared(gap, inWorld, base, perContender), R2Log: rSquared(gap, logged, baseLog, perLog),
		MaxConcurrentReads: limit(reads), MaxConcurrentWrites: writes, WriteOrder: discipline, OutOfOrder: order.Share()}
}

// fitLine fits y = a + b × x by least squares (b ≥ 0, a ≥ 0).
func fitLine(y, x []float64) (a, b float64) {
	if len(y) == 0 {
		return 0, 0
	}
	var sx, sy, sxx, sxy float64
	for i := range y {
		sx, sy, sxx, sxy = sx+x[i], sy+y[i], sxx+x[i]*x[i], sxy+x[i]*y[i]
	}
	k := float64(len(y))
	if den := k*sxx - sx*sx; den > 0 {
		b = max(0, (k*sxy-sx*sy)/den)
	}
	return max(0, (sy-b*sx)/k), b
}

// rSquared is the share of y's variance that a + b × x explains.
func rSquared(y, x []float64, a, b float64) float64 {
	if len(y) == 0 {
		return 0
	}
	var mean float64
	for _, v := range y {
		mean += v
	}
	mean /= float64(len(y))
	var res, tot float64
	for i, v := range y {
		d := v - (a + b*x[i])
		res, tot = res+d*d, tot+(v-mean)*(v-mean)
	}
	if tot == 0 {
		return 0
	}
	return 1 - res/tot
}

// fitPerEvent fits own = base + per × n (fitLine) and returns each
// sample's base (own − per × n, at least 0) and per.
func fitPerEvent(own []float64, n []int) ([]float64, float64) {
	if len(own) < 2 {
		return own, 0
	}
	xs := make([]float64, len(n))
	for i, v := range n {
		xs[i] = float64(v)
	}
	_, per := fitLine(own, xs)
	base := make([]float64, len(own))
	for i := range own {
		base[i] = max(0, own[i]-per*xs[i])
	}
	return base, per
}

// ScenarioYAML is the profile as a scenario file (docs/SCENARIOS.md): the
// fanout scenario on world-local with the calibrated store model, for
// simlab validate --sim-store FILE.
func (p StoreProfile) ScenarioYAML(c *Calibration, command string) string {
	rc := c.Replay()
	rbase, rentity, revent := rc.Durations()
	d := func(x dist) string {
		ms := func(v float64) string { return fmt.Sprintf("%.3fms", v) }
		return fmt.Sprintf("{min: %s, p50: %s, p90: %s, p99: %s, max: %s}", ms(x.Min), ms(x.P50), ms(x.P90), ms(x.P99), ms(x.Max))
	}
	return fmt.Sprintf(`# The real world-local %s's own costs under core %s, measured by
#   %s
# Reads: the uncontended calls' own times, a list's plus a cost per event in
# the run's log and per write of the run in the World, and the concurrency
# the World served bursts of them with.
# Writes: the World's one write at a time, given to the waiting writes in
# the order the World answered them in (write_order: random if at least a
# quarter of its overlapping writes answered out of arrival order; %.2f did);
# each write costs base plus a cost per write of its run in the World, fitted
# on the time per write served (R² %.2f; on the log's length instead, R²
# %.2f; docs/VALIDATION.md). The queue: its publishes' own times and its
# delivery times, all widths pooled.
# The workflow: what a replay costs core %s, fitted on the replays that
# overlapped no other (%d of %d; R² %.2f; docs/VALIDATION.md)%s.
name: calibrated-world-local
description: fanout on world-local's measured service times and concurrency
world: world-local
store:
  runs_get: %s
  events_list: %s
  events_create: %s
  publish: %s
  deliver: %s
  list_per_event: %.4fms
  write_per_contender: %.4fms
  list_per_contender: %.4fms
  max_concurrent_reads: %d
  max_concurrent_writes: %d
  write_order: %s
workflow:
  replay_base: %v
  replay_per_entity: %v
  replay_per_event: %v
`, c.WorldLocal, c.Core, command, p.OutOfOrder, p.R2, p.R2Log, c.Core, rc.Solo, rc.Samples, rc.R2, unfittedNote(rc.Unfitted), d(p.RunsGet), d(p.EventsList), d(p.EventsWrite), d(p.Publish), d(p.Deliver), p.ListPerEventMS, p.WritePerContenderMS, p.ListPerContenderMS, p.MaxConcurrentReads, p.MaxConcurrentWrites, p.WriteOrder, rbase, rentity, revent)
}

// unfittedNote names the replay costs the calibration could not fit.
func unfittedNote(parts []string) string {
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, " and ") + " not fitted (every solo replay had the same), held at 0"
}
