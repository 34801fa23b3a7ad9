package realengine

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"time"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/program"
	"github.com/simlab/simlab/model/sweep"
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// Prologue names, as the real runtime's span attribute
// workflow.step.dispatch_prologue spells them.
const (
	RunContext = "run_context"
	RunsGet    = "runs_get"
)

// HarnessWorld is the World the real side runs (@workflow/world-local
// 5.0.0-beta.45), and so, by default, the World whose rules and atomicity
// the simlab side applies (SimScenario).
const HarnessWorld = "world-local"

// SimWorldScenario, as Options.SimWorld, runs the simlab side on the
// scenario's own World instead (its rules and atomicity: world-vercel's is
// DOMAIN.md §2's atomic World), as validate did before.
const SimWorldScenario = "scenario"

// MaxBranches is the widest fan-out the real side runs: every branch is a
// delivery in one Node process on a 2-core machine, and the run time grows
// with the width (docs/VALIDATION.md has the measured figures).
const MaxBranches = 512

// Options are a validation's grid.
type Options struct {
	Branches []int
	// Cores are the real runtimes, by version, or All (the catalog lists
	// them).
	Cores []string
	// WorldLocals are the world-local releases every core runs over, by
	// version, or All; none is the catalog's default (5.0.0-beta.45).
	WorldLocals []string
	// Catalog is what the engine directory's package.json installs; nil is
	// the one this source tree pins (Pinned).
	Catalog *Catalog
	// LegacyProducer adds a row per width of the first fetch-free core
	// (over the first world-local) with runContext stripped from every
	// published step message (a v1 producer).
	LegacyProducer bool
	// Repetitions of each real cell; Seeds of each simlab cell (1..Seeds).
	Repetitions, Seeds int
	// Timeout bounds one real run.
	Timeout time.Duration
	// TraceDir, if set, receives each real run's OTLP JSON Lines trace.
	TraceDir string
	// TimeScale multiplies every latency of the scenario on both sides
	// (Scaled); 0 means 1.
	TimeScale float64
	// Progress is called after each cell, real or simulated.
	Progress func(done, total int)
	// SimWorld is the World whose rules and atomicity the simlab side
	// applies, with the scenario's store model: "" or HarnessWorld (the
	// real side's World), or SimWorldScenario (the scenario's own).
	SimWorld string
	// SimStore, if set, is the store model the simlab side runs on (a
	// calibration's, simlab calibrate --write), and the real side runs with
	// no injected latency, pool or stale read: the real World's own costs
	// against the model's account of them.
	SimStore *model.Profile
}

// SimScenario is sc as the simlab side runs it: on simWorld's rules and
// atomicity (world.Txn's split calls: model.StoreRules, world.AtomicityOf)
// with sc's store model, latencies, pools and queue alike, unchanged. The
// real side imposes that store model on world-local, whose calls are not
// atomic; a simlab side on the scenario's own World (durabench-256's is
// world-vercel, whose model is atomic) cannot predict the races the real
// side meets.
func SimScenario(sc model.Scenario, simWorld string) model.Scenario {
	switch simWorld {
	case SimWorldScenario:
		return sc
	case "", HarnessWorld:
		sc.World = HarnessWorld
	}
	return sc
}

// Row is one (branches, engine, core, prologue) cell summarized: the JSON
// contract of docs/VALIDATION.md. Counts are means per run over the
// repetitions (real) or seeds (simlab); *_min/*_max are their spread.
type Row struct {
	Branches                 int     `json:"branches"`
	Engine                   string  `json:"engine"` // real or simlab
	Core                     string  `json:"core"`   // package version, or simlab
	Prologue                 string  `json:"prologue"`
	Repetitions              int     `json:"repetitions"`
	RunsGetPrologue          float64 `json:"runs_get_prologue"`
	LazyPerFanout            float64 `json:"lazy_per_fanout"`
	ConcurrentLastCompleters float64 `json:"concurrent_last_completers"`
	StepStartedAccepted      float64 `json:"step_started_accepted"`
	StepStartedRejected      float64 `json:"step_started_rejected"`
	Deliveries               float64 `json:"deliveries"`
	Redeliveries             float64 `json:"redeliveries"`
	TTFSP50MS                float64 `json:"ttfs_p50_ms"`
	TTFSP90MS                float64 `json:"ttfs_p90_ms"`
	TTLSP50MS                float64 `json:"ttls_p50_ms"`
	TTLSP90MS                float64 `json:"ttls_p90_ms"`
	// Added fields.
	LazyPerFanoutMin        float64        `json:"lazy_per_fanout_min"`
	LazyPerFanoutMax        float64        `json:"lazy_per_fanout_max"`
	LastCompletersPerFanout float64        `json:"last_completers_per_fanout"`
	DispatchPrologue        map[string]int `json:"dispatch_prologue,omitempty"`
	// RealStoreP50MS/P90MS: the real World's own time per events.create, on
	// top of the drawn latency (the harness's one-process artifact).
	// Fanouts is how many fan-outs the row counted, ConcurrentFanouts how
	// many of them had concurrent last completers.
	Fanouts           int `json:"fanouts,omitempty"`
	ConcurrentFanouts int `json:"concurrent_fanouts,omitempty"`
	// WritesOutOfOrder, on the World's own costs (--sim-store): how many
	// of a run's overlapping writes the World answered out of arrival
	// order (order.go), measured alike on both sides.
	WritesOutOfOrder *WriteOrder `json:"writes_out_of_order,omitempty"`
	RealStoreP50MS   float64     `json:"real_store_ms_p50,omitempty"`
	RealStoreP90MS   float64     `json:"real_store_ms_p90,omitempty"`
	SpanNames        []string    `json:"span_names,omitempty"`
	// World is the World whose rules the row ran on: the real World, or the
	// one the simlab side applied (SimScenario); Atomicity how the simlab
	// side split its calls (world.Atomicity: world-local, world-postgres, or
	// call for an atomic World).
	World     string `json:"world,omitempty"`
	Atomicity string `json:"atomicity,omitempty"`
	// WorldLocal is a real row's @workflow/world-local release, Builders
	// the @workflow/builders release that compiled its workflow, and
	// WorldCapabilities what that World declares to the runtime (the keys
	// of its capabilities object), each as the harness loaded them.
	WorldLocal        string   `json:"world_local,omitempty"`
	Builders          string   `json:"builders,omitempty"`
	WorldCapabilities []string `json:"world_capabilities,omitempty"`
	// Corruption, judged per run on the run's own log and rows once it is
	// over (real: read back from the World, every page of events.list, then
	// runs.get and steps.get of every step the log names; simlab: its
	// History's accepted events). Totals over the repetitions or seeds,
	// except TerminalEvents, a mean per run.
	RunsCounted       int     `json:"runs_counted"`
	TerminalEvents    float64 `json:"terminal_events"`
	RunsMultiTerminal int     `json:"runs_multi_terminal"`
	TerminalEventsMax int     `json:"terminal_events_max"`
	UnreadableRows    int     `json:"unreadable_rows"`
	// RunsCorrupted are the runs failed CORRUPTED_EVENT_LOG or
	// REPLAY_DIVERGENCE (simlab's runtime never fails a run so yet: its
	// workflows are fan-out lists, which cannot diverge); RunsUnreplayable
	// the runs whose log, up to its end, simlab's replay of the workflow
	// (model/program) cannot consume.
	RunsCorrupted    int `json:"runs_corrupted"`
	RunsUnreplayable int `json:"runs_unreplayable"`
	// Who ends the run: RunsEndedByStep are the runs whose first accepted
	// terminal event a step message's delivery wrote (a queued last
	// completer's inline replay; the rest the orchestrator's invocation,
	// its inline steps included), EndAttempts the terminal run writes
	// attempted per run, accepted or not.
	RunsEndedByStep int     `json:"runs_ended_by_step"`
	EndAttempts     float64 `json:"end_attempts"`
}

// Result is a validation: the scenario and its rows, widths outer.
type Result struct {
	Scenario  string  `json:"scenario"`
	Rows      []Row   `json:"rows"`
	TimeScale float64 `json:"time_scale"`
	// SimWorld and SimAtomicity are the simlab side's World and how it
	// split its calls (Row.World, Row.Atomicity); StoreProfile the profile
	// the scenario's store model came from.
	SimWorld     string `json:"sim_world,omitempty"`
	SimAtomicity string `json:"sim_atomicity,omitempty"`
	StoreProfile string `json:"store_profile,omitempty"`
	// Calibrated: the simlab side ran on --sim-store's store model and the
	// real side with no injected latency.
	Calibrated bool `json:"calibrated,omitempty"`
	// Agreement judges each simlab row against the real row of its width
	// and prologue (Agreements).
	Agreement []Agreement `json:"agreement,omitempty"`
	// Gate is validate --gate's decision (Decide), absent without it.
	Gate *GateDecision `json:"gate,omitempty"`
}

// Check refuses a grid before anything runs.
func (o *Options) Check(sc model.Scenario) error {
	if len(o.Branches) == 0 {
		return fmt.Errorf("--branches is empty: want at least one width")
	}
	for _, b := range o.Branches {
		if b < 1 || b > MaxBranches {
			return fmt.Errorf("--branches %d: the real engine runs fan-outs of 1..%d branches on this machine (each branch is a delivery in one Node process); a wider one would run for a very long time", b, MaxBranches)
		}
	}
	cores, err := o.catalog().ExpandCores(o.Cores)
	if err != nil {
		return fmt.Errorf("--cores: %w", err)
	}
	if _, err := o.catalog().ExpandWorldLocals(o.WorldLocals); err != nil {
		return fmt.Errorf("--world-local: %w", err)
	}
	if o.LegacyProducer && len(cores) > 0 && !slices.ContainsFunc(cores, Core.FetchFree) {
		return fmt.Errorf("--legacy-producer: none of --cores stamps runContext (5.0.0-beta.52 on), so there is nothing to strip")
	}
	if sc.Store.Invoke {
		for _, c := range cores {
			if !c.InvokePath() {
				return fmt.Errorf("store.invoke = true: core %s has no capabilities.invoke path (5.0.0-beta.55 on), so the real side would run as if the World declared none; pick --cores 5.0.0-beta.55 or later", c.Version)
			}
		}
	}
	if o.SimStore != nil && o.TimeScale != 0 && o.TimeScale != 1 {
		return fmt.Errorf("--time-scale %v with --sim-store: a calibrated store model is the real World's own costs, which a time scale cannot slow down", o.TimeScale)
	}
	if o.Repetitions < 1 {
		return fmt.Errorf("--repetitions %d: want at least 1", o.Repetitions)
	}
	if !(o.TimeScale >= 0 && o.TimeScale <= 100) { // NaN too
		return fmt.Errorf("--time-scale %v: want a factor between 1 and 100 (0 means 1)", o.TimeScale)
	}
	if o.Seeds < 1 {
		return fmt.Errorf("--seeds %d: want at least 1", o.Seeds)
	}
	if o.SimWorld != "" && o.SimWorld != HarnessWorld && o.SimWorld != SimWorldScenario {
		return fmt.Errorf("--sim-world %q: want %s (the real side's World) or %s (the scenario's own)", o.SimWorld, HarnessWorld, SimWorldScenario)
	}
	if slices.Contains(sc.Variants, "legacy-producers") && o.LegacyProducer {
		return fmt.Errorf("--legacy-producer: the scenario already switches on legacy-producers")
	}
	for _, b := range o.Branches {
		csc := SimScenario(sweep.CellScenario(sc, b, sweep.RunContext), o.SimWorld)
		if err := csc.Validate(); err != nil {
			return fmt.Errorf("scenario %s at %d branches: %w", sc.Name, b, err)
		}
	}
	return Honourable(sc)
}

func (o *Options) catalog() *Catalog {
	if o.Catalog != nil {
		return o.Catalog
	}
	return Pinned
}

// Validate runs the grid on the real engine (r prepared) and in simlab.
func Validate(ctx context.Context, r *Runner, sc model.Scenario, o Options) (*Result, error) {
	if err := o.Check(sc); err != nil {
		return nil, err
	}
	if o.TimeScale == 0 {
		o.TimeScale = 1
	}
	sc = Scaled(sc, o.TimeScale)
	ssc := SimScenario(sc, o.SimWorld)
	realSc := sc
	if o.SimStore != nil {
		ssc.Store = *o.SimStore
		realSc = zeroLatency(sc)
	}
	res := &Result{Scenario: sc.Name, TimeScale: o.TimeScale, SimWorld: ssc.World, SimAtomicity: simAtomicity(ssc), StoreProfile: sc.Store.Name,
		Calibrated: o.SimStore != nil}
	legacyScenario := slices.Contains(sc.Variants, "legacy-producers")
	type realCell struct {
		core  Core
		wl    WorldLocal
		strip bool
	}
	var reals []realCell
	cores, _ := o.catalog().ExpandCores(o.Cores)
	wls, _ := o.catalog().ExpandWorldLocals(o.WorldLocals)
	for _, c := range cores {
		for _, w := range wls {
			reals = append(reals, realCell{core: c, wl: w})
		}
	}
	if i := slices.IndexFunc(cores, Core.FetchFree); o.LegacyProducer && i >= 0 {
		reals = append(reals, realCell{core: cores[i], wl: wls[0], strip: true})
	}
	prologues := []string{sweep.RunContext, sweep.Legacy}
	if legacyScenario {
		prologues = []string{sweep.Legacy}
	}
	total := len(o.Branches) * (len(reals)*o.Repetitions + len(prologues))
	done := 0
	tick := func() {
		done++
		if o.Progress != nil {
			o.Progress(done, total)
		}
	}
	for _, b := range o.Branches {
		for _, rc := range reals {
			cfg, err := HarnessFor(realSc, b)
			if err != nil {
				return nil, err
			}
			cfg.StripRunContext = cfg.StripRunContext || rc.strip
			cfg.WorldLocal = rc.wl.Package()
			// On the World's own costs the real call record is kept, for
			// the order the World answered its writes in (order.go).
			cfg.DumpCalls = cfg.DumpCalls || res.Calibrated
			var runs []*RealRun
			for rep := 1; rep <= o.Repetitions; rep++ {
				cfg.Seed = uint64(rep)
				cfg.TraceOut = ""
				if o.TraceDir != "" {
					cfg.TraceOut = filepath.Join(o.TraceDir, fmt.Sprintf("real-%s-wl%s-%d-%s-rep%d.jsonl", rc.core.Version, rc.wl.Version, b, realPrologue(rc.core, cfg.StripRunContext), rep))
				}
				run, err := r.Run(ctx, rc.core, cfg, o.Timeout)
				if err != nil {
					return res, err
				}
				runs = append(runs, run)
				tick()
			}
			row := RealRow(b, rc.core, rc.wl, cfg.StripRunContext, runs)
			if res.Calibrated {
				var order WriteOrder
				for _, run := range runs {
					order = order.Add(realWriteOrder(run))
				}
				row.WritesOutOfOrder = &order
			}
			res.Rows = append(res.Rows, row)
		}
		for _, p := range prologues {
			row, err := simRow(ssc, b, p, o.Seeds, res.Calibrated)
			if err != nil {
				return res, err
			}
			res.Rows = append(res.Rows, row)
			tick()
		}
	}
	res.Agreement = Agreements(res.Rows)
	return res, nil
}

// realPrologue is the prologue a real cell's consumers run: a core before
// beta.52 predates runContext, so its consumers always read the run first.
func realPrologue(c Core, stripped bool) string {
	if stripped || !c.FetchFree() {
		return RunsGet
	}
	return RunContext
}

// sample is what one real run or one simlab seed adds to its row, in the
// same shape for both sides.
type sample struct {
	runs, prologue, accepted, rejected, deliveries, redeliveries int
	lazy, last                                                   []int // per fan-out
	ttfs, ttls                                                   []int64
	// terminal is the accepted terminal run events of each run's log;
	// unreadable the run and step rows that could not be read back;
	// corrupted and unreplayable the runs counted as Row's fields are.
	terminal                            []int
	unreadable, corrupted, unreplayable int
	// endedByStep and endAttempts are Row's RunsEndedByStep and the
	// terminal writes attempted, over the sample's runs.
	endedByStep, endAttempts int
}

// rowSums accumulates a row's samples; finish turns them into the row.
type rowSums struct {
	row                           Row
	runs, fans, lazy, lastc, conc int
	sum                           [5]int // prologue, accepted, rejected, deliveries, redeliveries
	ttfs, ttls                    []int64
	terminal, endAttempts         int
}

func (a *rowSums) add(s sample) {
	a.runs += s.runs
	for i, v := range []int{s.prologue, s.accepted, s.rejected, s.deliveries, s.redeliveries} {
		a.sum[i] += v
	}
	lazy := 0
	for i := range s.lazy {
		lazy += s.lazy[i]
		a.lastc += s.last[i]
		if s.last[i] > 1 {
			a.conc++
		}
	}
	r := ratio(lazy, len(s.lazy))
	if a.fans == 0 {
		a.row.LazyPerFanoutMin, a.row.LazyPerFanoutMax = r, r
	}
	a.row.LazyPerFanoutMin, a.row.LazyPerFanoutMax = min(a.row.LazyPerFanoutMin, r), max(a.row.LazyPerFanoutMax, r)
	a.fans += len(s.lazy)
	a.lazy += lazy
	a.ttfs = append(a.ttfs, s.ttfs...)
	a.ttls = append(a.ttls, s.ttls...)
	for _, n := range s.terminal {
		a.row.RunsCounted++
		a.terminal += n
		if n > 1 {
			a.row.RunsMultiTerminal++
		}
		a.row.TerminalEventsMax = max(a.row.TerminalEventsMax, n)
	}
	a.row.UnreadableRows += s.unreadable
	a.row.RunsCorrupted += s.corrupted
	a.row.RunsUnreplayable += s.unreplayable
	a.row.RunsEndedByStep += s.endedByStep
	a.endAttempts += s.endAttempts
}

// finish turns the sums into per-run means and the times into nearest-rank
// percentiles (sweep.Percentile, as simlab sweep).
func (a *rowSums) finish() Row {
	row := a.row
	per := func(v int) float64 {
		if a.runs == 0 {
			return 0
		}
		return math.Round(float64(v)/float64(a.runs)*100) / 100
	}
	row.RunsGetPrologue, row.StepStartedAccepted, row.StepStartedRejected = per(a.sum[0]), per(a.sum[1]), per(a.sum[2])
	row.Deliveries, row.Redeliveries = per(a.sum[3]), per(a.sum[4])
	row.LazyPerFanout = ratio(a.lazy, a.fans)
	row.TerminalEvents = ratio(a.terminal, row.RunsCounted)
	row.EndAttempts = ratio(a.endAttempts, row.RunsCounted)
	row.LastCompletersPerFanout = ratio(a.lastc, a.fans)
	row.ConcurrentLastCompleters = ratio(a.conc, a.fans)
	row.Fanouts, row.ConcurrentFanouts = a.fans, a.conc
	row.TTFSP50MS, row.TTFSP90MS = msOfNS(sweep.Percentile(a.ttfs, 50)), msOfNS(sweep.Percentile(a.ttfs, 90))
	row.TTLSP50MS, row.TTLSP90MS = msOfNS(sweep.Percentile(a.ttls, 50)), msOfNS(sweep.Percentile(a.ttls, 90))
	return row
}

func msOfNS(ns int64) float64 { return math.Round(float64(ns)/1e3) / 1e3 }

func nsOfMS(ms []float64) []int64 {
	out := make([]int64, len(ms))
	for i, v := range ms {
		out[i] = int64(v * 1e6)
	}
	return out
}

func RealRow(b int, c Core, wl WorldLocal, stripped bool, runs []*RealRun) Row {
	a := rowSums{row: Row{Branches: b, Engine: "real", Core: c.Version, Prologue: realPrologue(c, stripped), Repetitions: len(runs),
		DispatchPrologue: map[string]int{}, World: HarnessWorld, WorldLocal: wl.Version}}
	if len(runs) > 0 {
		a.row.Builders, a.row.WorldCapabilities = runs[0].Builders, runs[0].WorldCapabilities
	}
	var own []int64
	names := map[string]bool{}
	for _, r := range runs {
		s := sample{runs: len(r.Runs), prologue: r.Counts.RunsGetPrologue, accepted: r.Counts.StepStartedAccepted,
			rejected: r.Counts.StepStartedRejected, deliveries: r.Counts.Deliveries, redeliveries: r.Counts.Redeliveries,
			ttfs: nsOfMS(r.TTFSMS), ttls: nsOfMS(r.TTLSMS)}
		for _, f := range r.Fanouts {
			s.lazy = append(s.lazy, f.LazyReads)
			s.last = append(s.last, f.LastCompleters)
		}
		for _, run := range r.Runs {
			if run.EndedBy == "step" {
				s.endedByStep++
			}
			s.endAttempts += run.EndAttempts
		}
		for _, b := range r.ReadBack {
			s.terminal = append(s.terminal, b.TerminalEvents)
			s.unreadable += len(b.Unreadable)
			if b.Corrupted() {
				s.corrupted++
			}
			if !r.Replayable(b) {
				s.unreplayable++
			}
		}
		a.add(s)
		own = append(own, nsOfMS(r.WriteOwnMS)...)
		for k, v := range r.DispatchPrologue {
			a.row.DispatchPrologue[k] += v
		}
		for k := range r.SpanNames {
			names[k] = true
		}
	}
	row := a.finish()
	row.RealStoreP50MS, row.RealStoreP90MS = msOfNS(sweep.Percentile(own, 50)), msOfNS(sweep.Percentile(own, 90))
	for k := range names {
		row.SpanNames = append(row.SpanNames, k)
	}
	slices.Sort(row.SpanNames)
	return row
}

// simRow runs simlab on seeds 1..n at one width and prologue.
func simRow(sc model.Scenario, b int, prologue string, seeds int, withOrder bool) (Row, error) {
	csc := sweep.CellScenario(sc, b, prologue)
	p := RunContext
	if prologue == sweep.Legacy {
		p = RunsGet
	}
	a := rowSums{row: Row{Branches: b, Engine: "simlab", Core: "simlab", Prologue: p, Repetitions: seeds, World: sc.World, Atomicity: simAtomicity(sc)}}
	var order WriteOrder
	for seed := 1; seed <= seeds; seed++ {
		res, err := model.Run(&csc, sim.NewPCG(uint64(seed)), model.Options{Record: true, Seed: uint64(seed)})
		if err != nil {
			return a.row, fmt.Errorf("simlab, %d branches, %s, seed %d: %w", b, prologue, seed, err)
		}
		h := res.History
		s := sample{runs: len(h.Runs), accepted: res.Counts.StepStartedAccepted, rejected: res.Counts.StepStartedRejected,
			deliveries: res.Counts.Deliveries, redeliveries: res.Counts.Redeliveries}
		for _, f := range h.Fanouts {
			s.prologue += int(f.PrologueFetches)
			s.lazy = append(s.lazy, int(f.LazyFetches))
			s.last = append(s.last, int(f.LastCompleters))
		}
		s.ttfs, s.ttls = sweep.StepTimes(h)
		s.terminal, s.unreadable = simCorruption(h)
		s.unreplayable = simUnreplayable(h)
		s.endedByStep, s.endAttempts = simWhoEnded(h)
		a.add(s)
		if withOrder {
			order = order.Add(simWriteOrder(h))
		}
	}
	row := a.finish()
	if withOrder {
		row.WritesOutOfOrder = &order
	}
	return row, nil
}

// simAtomicity is how the simlab side's World splits its calls.
func simAtomicity(sc model.Scenario) string {
	if sc.Store.AtomicCalls {
		return world.AtomicCall.String()
	}
	return world.AtomicityOf(model.StoreRules(sc.World)).String()
}

// simCorruption is simlab's side of the read-back: the accepted terminal
// run events of each run's log, from the History, and the runs whose row
// runs.get could not give back at the end (History.ReadBack; only a
// world-postgres row can be torn so, never a world-local one, which is
// written whole).
func simCorruption(h *model.History) (terminal []int, unreadable int) {
	terminal = make([]int, len(h.Runs))
	index := make(map[world.RunID]int, len(h.Runs))
	for i, r := range h.Runs {
		index[r.ID] = i
	}
	for i := range h.Accepted {
		if a := &h.Accepted[i]; a.Type.EndsRun() {
			if j, ok := index[a.Run]; ok {
				terminal[j]++
			}
		}
	}
	for _, rb := range h.ReadBack {
		if !rb.Readable {
			unreadable++
		}
	}
	return terminal, unreadable
}

// simWhoEnded counts the runs whose first accepted terminal event a step
// message's delivery wrote (its invocation's message, so an inline step
// counts as the orchestrator's, as on the real side), and the terminal
// run writes attempted.
func simWhoEnded(h *model.History) (byStep, attempts int) {
	first := make([]int, len(h.Runs)) // 1 + the call that ended the run first
	for i := range h.Calls {
		c := &h.Calls[i]
		if c.Op != model.OpEventsCreate || !c.Event.EndsRun() {
			continue
		}
		attempts++
		if c.Result != world.OK || int(c.Run) >= len(first) {
			continue
		}
		if f := first[c.Run]; f == 0 || c.End < h.Calls[f-1].End {
			first[c.Run] = i + 1
		}
	}
	for _, f := range first {
		if f == 0 {
			continue
		}
		if inv := h.Invocation(h.Calls[f-1].Caller.Delivery); inv >= 0 && h.Deliveries[inv].Kind == model.MsgStep {
			byStep++
		}
	}
	return byStep, attempts
}

// simUnreplayable counts the runs whose log, up to its end, the fan-out
// list's replay cannot consume.
func simUnreplayable(h *model.History) int {
	n := 0
	for _, info := range h.Runs {
		var widths []int
		for _, f := range info.Fanouts {
			widths = append(widths, int(h.Fanouts[f].Branches))
		}
		p := program.MustCompile(program.FromFanouts(widths, model.FanoutStep))
		if program.Replay(p, program.BeforeEnd(h.ProgramLog(info.ID))).Status == program.Diverged {
			n++
		}
	}
	return n
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return math.Round(float64(a)/float64(b)*1e4) / 1e4
}
