package engine

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"time"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/sweep"
	"github.com/simlab/simlab/sim"
)

// Prologue names, as the real runtime's span attribute
// workflow.step.dispatch_prologue spells them.
const (
	RunContext = "run_context"
	RunsGet    = "runs_get"
)

// MaxBranches is the widest fan-out the real side runs: every branch is a
// delivery in one Node process on a 2-core machine, and the run time grows
// with the width (docs/VALIDATION.md has the measured figures).
const MaxBranches = 512

// Options are a validation's grid.
type Options struct {
	Branches []int
	// Cores are the real runtimes, by version (Cores lists them).
	Cores []string
	// LegacyProducer adds a row per width of the first core with runContext
	// stripped from every published step message (a v1 producer).
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
	RealStoreP50MS float64  `json:"real_store_ms_p50,omitempty"`
	RealStoreP90MS float64  `json:"real_store_ms_p90,omitempty"`
	SpanNames      []string `json:"span_names,omitempty"`
}

// Result is a validation: the scenario and its rows, widths outer.
type Result struct {
	Scenario  string  `json:"scenario"`
	Rows      []Row   `json:"rows"`
	TimeScale float64 `json:"time_scale"`
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
	for _, c := range o.Cores {
		if _, err := CoreByVersion(c); err != nil {
			return fmt.Errorf("--cores: %w", err)
		}
	}
	if o.Repetitions < 1 {
		return fmt.Errorf("--repetitions %d: want at least 1", o.Repetitions)
	}
	if o.TimeScale < 0 || o.TimeScale > 100 {
		return fmt.Errorf("--time-scale %v: want a factor between 1 and 100 (0 means 1)", o.TimeScale)
	}
	if o.Seeds < 1 {
		return fmt.Errorf("--seeds %d: want at least 1", o.Seeds)
	}
	if slices.Contains(sc.Variants, "legacy-producers") && o.LegacyProducer {
		return fmt.Errorf("--legacy-producer: the scenario already switches on legacy-producers")
	}
	for _, b := range o.Branches {
		csc := sweep.CellScenario(sc, b, sweep.RunContext)
		if err := csc.Validate(); err != nil {
			return fmt.Errorf("scenario %s at %d branches: %w", sc.Name, b, err)
		}
	}
	return Honourable(sc)
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
	res := &Result{Scenario: sc.Name, TimeScale: o.TimeScale}
	legacyScenario := slices.Contains(sc.Variants, "legacy-producers")
	type realCell struct {
		core  Core
		strip bool
	}
	var reals []realCell
	for _, v := range o.Cores {
		c, _ := CoreByVersion(v)
		reals = append(reals, realCell{core: c})
	}
	if o.LegacyProducer && len(reals) > 0 {
		reals = append(reals, realCell{core: reals[0].core, strip: true})
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
			cfg, err := harnessFor(sc, b)
			if err != nil {
				return nil, err
			}
			cfg.StripRunContext = cfg.StripRunContext || rc.strip
			var runs []*RealRun
			for rep := 1; rep <= o.Repetitions; rep++ {
				cfg.Seed = uint64(rep)
				cfg.TraceOut = ""
				if o.TraceDir != "" {
					cfg.TraceOut = filepath.Join(o.TraceDir, fmt.Sprintf("real-%s-%d-%s-rep%d.jsonl", rc.core.Version, b, realPrologue(rc.core, cfg.StripRunContext), rep))
				}
				run, err := r.Run(ctx, rc.core, cfg, o.Timeout)
				if err != nil {
					return res, err
				}
				runs = append(runs, run)
				tick()
			}
			res.Rows = append(res.Rows, realRow(b, rc.core, cfg.StripRunContext, runs))
		}
		for _, p := range prologues {
			row, err := simRow(sc, b, p, o.Seeds)
			if err != nil {
				return res, err
			}
			res.Rows = append(res.Rows, row)
			tick()
		}
	}
	return res, nil
}

// realPrologue is the prologue a real cell's consumers run: core beta.50
// predates runContext, so its consumers always read the run first.
func realPrologue(c Core, stripped bool) string {
	if stripped || c.Alias == "core-b50" {
		return RunsGet
	}
	return RunContext
}

func realRow(b int, c Core, stripped bool, runs []*RealRun) Row {
	row := Row{Branches: b, Engine: "real", Core: c.Version, Prologue: realPrologue(c, stripped), Repetitions: len(runs),
		DispatchPrologue: map[string]int{}, LazyPerFanoutMin: math.Inf(1)}
	var ttfs, ttls, own []int64
	var nRuns, fans, lazy, lastc, conc int
	names := map[string]bool{}
	for _, r := range runs {
		for _, v := range r.WriteOwnMS {
			own = append(own, int64(v*1e6))
		}
		nRuns += len(r.Runs)
		row.RunsGetPrologue += float64(r.Counts.RunsGetPrologue)
		row.StepStartedAccepted += float64(r.Counts.StepStartedAccepted)
		row.StepStartedRejected += float64(r.Counts.StepStartedRejected)
		row.Deliveries += float64(r.Counts.Deliveries)
		row.Redeliveries += float64(r.Counts.Redeliveries)
		rf, rl := 0, 0
		for _, f := range r.Fanouts {
			rf++
			rl += f.LazyReads
			lastc += f.LastCompleters
			if f.LastCompleters > 1 {
				conc++
			}
		}
		fans += rf
		lazy += rl
		row.LazyPerFanoutMin = min(row.LazyPerFanoutMin, ratio(rl, rf))
		row.LazyPerFanoutMax = max(row.LazyPerFanoutMax, ratio(rl, rf))
		for _, v := range r.TTFSMS {
			ttfs = append(ttfs, int64(v*1e6))
		}
		for _, v := range r.TTLSMS {
			ttls = append(ttls, int64(v*1e6))
		}
		for k, v := range r.DispatchPrologue {
			row.DispatchPrologue[k] += v
		}
		for k := range r.SpanNames {
			names[k] = true
		}
	}
	finish(&row, nRuns, fans, lazy, lastc, conc, ttfs, ttls)
	row.RealStoreP50MS = math.Round(float64(sweep.Percentile(own, 50))/1e3) / 1e3
	row.RealStoreP90MS = math.Round(float64(sweep.Percentile(own, 90))/1e3) / 1e3
	for k := range names {
		row.SpanNames = append(row.SpanNames, k)
	}
	slices.Sort(row.SpanNames)
	return row
}

// simRow runs simlab on seeds 1..n at one width and prologue.
func simRow(sc model.Scenario, b int, prologue string, seeds int) (Row, error) {
	csc := sweep.CellScenario(sc, b, prologue)
	p := RunContext
	if prologue == sweep.Legacy {
		p = RunsGet
	}
	row := Row{Branches: b, Engine: "simlab", Core: "simlab", Prologue: p, Repetitions: seeds, LazyPerFanoutMin: math.Inf(1)}
	var ttfs, ttls []int64
	var nRuns, fans, lazy, lastc, conc int
	for s := 1; s <= seeds; s++ {
		res, err := model.Run(&csc, sim.NewPCG(uint64(s)), model.Options{Record: true, Seed: uint64(s)})
		if err != nil {
			return row, fmt.Errorf("simlab, %d branches, %s, seed %d: %w", b, prologue, s, err)
		}
		h := res.History
		nRuns += len(h.Runs)
		row.StepStartedAccepted += float64(res.Counts.StepStartedAccepted)
		row.StepStartedRejected += float64(res.Counts.StepStartedRejected)
		row.Deliveries += float64(res.Counts.Deliveries)
		row.Redeliveries += float64(res.Counts.Redeliveries)
		rf, rl := 0, 0
		for _, f := range h.Fanouts {
			rf++
			rl += int(f.LazyFetches)
			row.RunsGetPrologue += float64(f.PrologueFetches)
			lastc += int(f.LastCompleters)
			if f.LastCompleters > 1 {
				conc++
			}
		}
		fans += rf
		lazy += rl
		row.LazyPerFanoutMin = min(row.LazyPerFanoutMin, ratio(rl, rf))
		row.LazyPerFanoutMax = max(row.LazyPerFanoutMax, ratio(rl, rf))
		a, z := sweep.StepTimes(h)
		ttfs = append(ttfs, a...)
		ttls = append(ttls, z...)
	}
	finish(&row, nRuns, fans, lazy, lastc, conc, ttfs, ttls)
	return row, nil
}

// finish turns a row's sums into per-run means and its times into
// nearest-rank percentiles (sweep.Percentile, as simlab sweep).
func finish(row *Row, nRuns, fans, lazy, lastc, conc int, ttfs, ttls []int64) {
	per := func(v float64) float64 {
		if nRuns == 0 {
			return 0
		}
		return math.Round(v/float64(nRuns)*100) / 100
	}
	row.RunsGetPrologue = per(row.RunsGetPrologue)
	row.StepStartedAccepted = per(row.StepStartedAccepted)
	row.StepStartedRejected = per(row.StepStartedRejected)
	row.Deliveries = per(row.Deliveries)
	row.Redeliveries = per(row.Redeliveries)
	row.LazyPerFanout = ratio(lazy, fans)
	row.LastCompletersPerFanout = ratio(lastc, fans)
	row.ConcurrentLastCompleters = ratio(conc, fans)
	if math.IsInf(row.LazyPerFanoutMin, 1) {
		row.LazyPerFanoutMin = 0
	}
	ms := func(ns int64) float64 { return math.Round(float64(ns)/1e3) / 1e3 }
	row.TTFSP50MS, row.TTFSP90MS = ms(sweep.Percentile(ttfs, 50)), ms(sweep.Percentile(ttfs, 90))
	row.TTLSP50MS, row.TTLSP90MS = ms(sweep.Percentile(ttls, 50)), ms(sweep.Percentile(ttls, 90))
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return math.Round(float64(a)/float64(b)*1e4) / 1e4
}
