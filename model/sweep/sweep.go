package sweep

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"time"

	"github.com/simlab/simlab/internal/freelist"
	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/seeds"
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// The prologues a sweep compares. They are names of how a cell is built,
// not of model.Prologue: legacy switches on the legacy-producers variant so
// that no message carries runContext; run_context leaves the scenario's
// producers as they are.
const (
	Legacy     = "legacy"
	RunContext = "run_context"
)

// legacyVariant is the protocol variant that stands for the legacy prologue.
const legacyVariant = "legacy-producers"

// Prologues lists the prologues a sweep knows, in their canonical order.
func Prologues() []string { return []string{Legacy, RunContext} }

// Shard names one of Count equal parts of a sweep; a cell's position in
// the grid decides its shard, as a seed's position does in check.
type Shard = seeds.Shard

// Options are the sweep's grid and how to run it.
type Options struct {
	// Branches are the fan-out widths; every fan-out of the scenario's
	// workflow takes the cell's width.
	Branches []int
	// Prologues are Legacy and/or RunContext.
	Prologues []string
	// Seeds: every cell runs seeds 1..Seeds. Cells of one seed share the
	// chooser's stream (common random numbers), so two prologues at one
	// width differ by the protocol, not by luck of the draw.
	Seeds int
	// Shard, if set, runs only the cells whose position in the grid is
	// Index modulo Count, and keeps their raw Samples for Merge.
	Shard *Shard
	// Each runs do(i) once for every i in [0, n). Nil runs them one after
	// another. A caller may run them at once (each is a simulation of its
	// own that shares no state); the result does not depend on how: every
	// cell writes only its own slot. simlab's kernel and model stay free of
	// goroutines; the command line brings the parallelism.
	Each func(n int, do func(i int))
	// Progress, if set, is called after each cell with the cells done and
	// the cells this process runs; with a parallel Each it is called from
	// Each's goroutines.
	Progress func(done, total int)
	// Stop, if set, is asked before each cell; once it says true (Ctrl-C),
	// no more cells are simulated and the Result, marked Partial, has the
	// rows of the cells done (each row says over how many seeds).
	Stop func() bool
}

// MaxSeeds bounds Options.Seeds and MaxCells the cells of one sweep: a
// row's percentiles need every sample of its seeds in memory, so a sweep
// of 10^12 seeds is refused rather than left to exhaust it.
const (
	MaxSeeds = 10_000
	MaxCells = 100_000
)

// InOrder is the default Each: one cell after another.
func InOrder(n int, do func(i int)) {
	for i := 0; i < n; i++ {
		do(i)
	}
}

// Row is one (branches, prologue) pair summarized over its seeds: the JSON
// contract of docs/SWEEP.md. Times are milliseconds of virtual time.
type Row struct {
	Branches int    `json:"branches"`
	Prologue string `json:"prologue"`
	Seeds    int    `json:"seeds"`
	// Time to first and last step: the earliest and latest accepted
	// step_completed/step_failed write of a run, minus the run's start;
	// one sample per run, nearest-rank percentiles over the seeds' runs.
	TTFSP50MS float64 `json:"ttfs_p50_ms"`
	TTFSP90MS float64 `json:"ttfs_p90_ms"`
	TTLSP50MS float64 `json:"ttls_p50_ms"`
	TTLSP90MS float64 `json:"ttls_p90_ms"`
	// RunsGetCount is every runs.get of the row's seeds, summed; the
	// latencies are each call's answer minus its arrival (queueing
	// included), nearest-rank over all of them.
	RunsGetCount int     `json:"runs_get_count"`
	RunsGetP50MS float64 `json:"runs_get_p50_ms"`
	RunsGetP90MS float64 `json:"runs_get_p90_ms"`
	// ReadsPerFanout: runs.get made by step deliveries (legacy prologue
	// reads plus lazy reads) per fan-out; LazyPerFanout: the lazy ones.
	ReadsPerFanout float64 `json:"reads_per_fanout"`
	LazyPerFanout  float64 `json:"lazy_per_fanout"`
	// LastCompletersPerFanout: deliveries that saw a fan-out's pending set
	// empty, per fan-out (1 where the list-then-decide race never hit).
	LastCompletersPerFanout float64 `json:"last_completers_per_fanout"`
	// ConcurrentLastCompleters is the fraction of fan-outs with more than
	// one last completer.
	ConcurrentLastCompleters float64 `json:"concurrent_last_completers"`
	// Undrained counts the row's seeds whose run stopped at a limit with
	// work left: the row's figures count only what happened before.
	Undrained int `json:"undrained,omitempty"`
}

// Sample is what one cell — one seed at one (branches, prologue) — adds to
// its row: the raw values, so rows can be recomputed from any partition of
// the cells (percentiles cannot be merged from percentiles).
type Sample struct {
	Branches int    `json:"branches"`
	Prologue string `json:"prologue"`
	Seed     uint64 `json:"seed"`
	// One entry per run that wrote at least one terminal step event.
	TTFSNS []int64 `json:"ttfs_ns"`
	TTLSNS []int64 `json:"ttls_ns"`
	// One entry per completed runs.get, in issue order.
	RunsGetNS      []int64 `json:"runs_get_ns"`
	Fanouts        int     `json:"fanouts"`
	StepReads      int     `json:"step_reads"`
	LazyReads      int     `json:"lazy_reads"`
	LastCompleters int     `json:"last_completers"`
	ConcurrentLast int     `json:"concurrent_last"`
	// QueuedBranches sums each fan-out's branches beyond max_inline: the
	// deliveries a legacy prologue pays one read for.
	QueuedBranches int `json:"queued_branches"`
	// Undrained: the run stopped at a limit (limits.max_time or
	// max_events) with work left, so its sample is of what happened first.
	Undrained bool `json:"undrained,omitempty"`
}

// Result is a sweep: its grid, the calibration's uncontended read, and a row
// per (branches, prologue). A shard's Result also names its shard and keeps
// its Samples; its Rows cover only its own cells.
type Result struct {
	Scenario         string   `json:"scenario"`
	Variants         []string `json:"variants"`
	Branches         []int    `json:"branches"`
	Prologues        []string `json:"prologues"`
	Seeds            int      `json:"seeds"`
	RunsGetBaseP50MS float64  `json:"runs_get_base_p50_ms"`
	Rows             []Row    `json:"rows"`
	Shard            *Shard   `json:"shard,omitempty"`
	Samples          []Sample `json:"samples,omitempty"`
	// Partial says the sweep was stopped (Ctrl-C) before every cell ran:
	// the rows cover the cells that did.
	Partial bool `json:"partial,omitempty"`
}

// cell is one simulation of the grid; pos is its position in grid order
// (branches, then prologue, then seed), which sharding splits.
type cell struct {
	pos      int
	branches int
	prologue string
	seed     uint64
}

func (o *Options) validate(sc *model.Scenario) error {
	if len(o.Branches) == 0 {
		return fmt.Errorf("branches is empty: want at least one fan-out width")
	}
	seen := map[int]bool{}
	for i, b := range o.Branches {
		if b < 1 || b > 100000 {
			return fmt.Errorf("branches[%d] = %d: want a width between 1 and 100000", i, b)
		}
		if seen[b] {
			return fmt.Errorf("branches[%d] = %d: listed twice", i, b)
		}
		seen[b] = true
	}
	if len(o.Prologues) == 0 {
		return fmt.Errorf("prologues is empty: want %s and/or %s", Legacy, RunContext)
	}
	seenP := map[string]bool{}
	for i, p := range o.Prologues {
		if p != Legacy && p != RunContext {
			return fmt.Errorf("prologues[%d] = %q: want %s or %s", i, p, Legacy, RunContext)
		}
		if seenP[p] {
			return fmt.Errorf("prologues[%d] = %q: listed twice", i, p)
		}
		seenP[p] = true
		// A run_context cell whose producers are forced to v1 would be
		// labelled fetch-free while measuring the legacy path.
		if p == RunContext && slices.Contains(sc.Variants, legacyVariant) {
			return fmt.Errorf("prologues[%d] = %s: the scenario already switches on %s, so no cell could be fetch-free; use the %s prologue instead",
				i, p, legacyVariant, Legacy)
		}
	}
	if o.Seeds < 1 || o.Seeds > MaxSeeds {
		return fmt.Errorf("seeds = %d: want 1 to %d (every sample of a row is held to compute its percentiles)", o.Seeds, MaxSeeds)
	}
	if n := len(o.Branches) * len(o.Prologues) * o.Seeds; n > MaxCells {
		return fmt.Errorf("%d branches × %d prologues × %d seeds = %d cells: want at most %d; sweep fewer seeds or widths (or split it with --shard and merge)",
			len(o.Branches), len(o.Prologues), o.Seeds, n, MaxCells)
	}
	if s := o.Shard; s != nil && (s.Count < 1 || s.Index < 0 || s.Index >= s.Count) {
		return fmt.Errorf("shard = %d/%d: want i/n with 0 ≤ i < n", s.Index, s.Count)
	}
	return nil
}

// grid lists the cells this process runs, in grid order.
func (o *Options) grid() []cell {
	var cells []cell
	pos := 0
	for _, b := range o.Branches {
		for _, p := range o.Prologues {
			for s := 1; s <= o.Seeds; s++ {
				if o.Shard == nil || o.Shard.Takes(pos) {
					cells = append(cells, cell{pos: pos, branches: b, prologue: p, seed: uint64(s)})
				}
				pos++
			}
		}
	}
	return cells
}

// CellScenario is sc with every fan-out b wide and the prologue's variant
// (Legacy switches on legacy-producers): the scenario one cell simulates.
func CellScenario(sc model.Scenario, b int, prologue string) model.Scenario {
	fans := make([]int, len(sc.Workflow.Fanouts))
	for i := range fans {
		fans[i] = b
	}
	sc.Workflow.Fanouts = fans
	sc.Variants = slices.Clone(sc.Variants)
	if prologue == Legacy && !slices.Contains(sc.Variants, legacyVariant) {
		sc.Variants = append(sc.Variants, legacyVariant)
	}
	return sc
}

// Run sweeps sc over the grid of opts. It is deterministic: the same
// scenario and options give the same Result, however opts.Each runs cells.
func Run(sc model.Scenario, opts Options) (*Result, error) {
	if err := opts.validate(&sc); err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	// Every cell's scenario must be valid before any runs: a width the
	// scenario cannot take is bad input, not a failure halfway through.
	for _, b := range opts.Branches {
		for _, p := range opts.Prologues {
			csc := CellScenario(sc, b, p)
			if err := csc.Validate(); err != nil {
				return nil, fmt.Errorf("sweep: scenario %s at %d branches, %s prologue: %w", sc.Name, b, p, err)
			}
		}
	}
	cells := opts.grid()
	samples, partial, err := runCells(sc, cells, opts)
	if err != nil {
		return nil, err
	}
	res := header(sc, opts)
	res.Rows = rows(res, samples)
	res.Partial = partial
	if opts.Shard != nil {
		sh := *opts.Shard
		res.Shard = &sh
		res.Samples = samples
	}
	return res, nil
}

func header(sc model.Scenario, opts Options) *Result {
	return &Result{
		Scenario:         sc.Name,
		Variants:         append([]string{}, sc.Variants...),
		Branches:         slices.Clone(opts.Branches),
		Prologues:        slices.Clone(opts.Prologues),
		Seeds:            opts.Seeds,
		RunsGetBaseP50MS: ms(int64(sc.Store.RunsGet.P50)),
	}
}

// runCells simulates the cells, each into its own slot, so the order in
// which a parallel Each finishes them cannot reach the result. Once Stop
// says so, the cells not begun are left out and partial is true.
func runCells(sc model.Scenario, cells []cell, opts Options) (samples []Sample, partial bool, err error) {
	out := make([]Sample, len(cells))
	errs := make([]error, len(cells))
	ran := make([]bool, len(cells))
	each := opts.Each
	if each == nil {
		each = InOrder
	}
	// Widest cells first: a cell's cost grows with its width, and the grid
	// lists the widest last, so a parallel Each ended on one goroutine
	// running the widest cells while the others had nothing left (the
	// longest-first rule of list scheduling).
	order := make([]int, len(cells))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(cells[b].branches, cells[a].branches) })
	var done atomic.Int64
	each(len(cells), func(k int) {
		if opts.Stop != nil && opts.Stop() {
			return
		}
		i := order[k]
		r := cellRunners.Get()
		out[i], errs[i] = runCell(r, sc, cells[i])
		cellRunners.Put(r)
		ran[i] = true
		if n := done.Add(1); opts.Progress != nil {
			opts.Progress(int(n), len(cells))
		}
	})
	for i, err := range errs {
		if err != nil {
			c := cells[i]
			return nil, false, fmt.Errorf("sweep: %d branches, %s prologue, seed %d: %w", c.branches, c.prologue, c.seed, err)
		}
	}
	samples = out[:0]
	for i := range out {
		if ran[i] {
			samples = append(samples, out[i])
		} else {
			partial = true
		}
	}
	return samples, partial, nil
}

// cellRunners outlives a sweep: a Runner's tables grow to the widest cell
// it ran, and a fresh list per sweep paid that growth again in every
// goroutine of every sweep (half of a short sweep's time at --jobs 2 went
// to the growth and its garbage). It holds at most as many Runners as ran
// at once.
var cellRunners = freelist.List[cellRunner]{New: func() *cellRunner { return &cellRunner{run: model.NewRunner()} }}

// cellRunner is one goroutine's reused simulation memory: a cell's History
// is read into its Sample before the next cell reuses it.
type cellRunner struct {
	run *model.Runner
	pcg sim.PCG
}

// runCell simulates one cell with recording on (latencies need the Calls)
// and keeps what its row needs.
func runCell(r *cellRunner, sc model.Scenario, c cell) (Sample, error) {
	csc := CellScenario(sc, c.branches, c.prologue)
	r.pcg.Reset(c.seed)
	res, err := r.run.Run(&csc, &r.pcg, model.Options{Record: true, Seed: c.seed})
	if err != nil {
		return Sample{}, err
	}
	return sampleOf(res.History, c, csc.Workflow.MaxInline), nil
}

func sampleOf(h *model.History, c cell, maxInline int) Sample {
	s := Sample{Branches: c.branches, Prologue: c.prologue, Seed: c.seed, Undrained: !h.Drained}
	for i := range h.Calls {
		call := &h.Calls[i]
		// A call the simulation stopped before answering has no end.
		if call.Op == model.OpRunsGet && call.End >= call.Start && call.End > 0 {
			s.RunsGetNS = append(s.RunsGetNS, int64(call.End-call.Start))
		}
	}
	s.TTFSNS, s.TTLSNS = StepTimes(h)
	for _, f := range h.Fanouts {
		s.Fanouts++
		s.StepReads += int(f.PrologueFetches + f.LazyFetches)
		s.LazyReads += int(f.LazyFetches)
		s.LastCompleters += int(f.LastCompleters)
		if f.LastCompleters > 1 {
			s.ConcurrentLast++
		}
		s.QueuedBranches += int(f.Branches) - min(int(f.Branches), maxInline)
	}
	return s
}

// StepTimes returns, per run that wrote a terminal step event, its TTFS and
// TTLS: the earliest and latest End of an accepted step_completed or
// step_failed call, minus the run's start. It needs a recorded History.
func StepTimes(h *model.History) (ttfs, ttls []int64) {
	first := make([]sim.Time, len(h.Runs))
	last := make([]sim.Time, len(h.Runs))
	seen := make([]bool, len(h.Runs))
	for i := range h.Calls {
		call := &h.Calls[i]
		if call.Op == model.OpEventsCreate && call.Result == world.OK && call.Event.EndsStep() {
			r := call.Run
			if !seen[r] || call.End < first[r] {
				first[r] = call.End
			}
			if !seen[r] || call.End > last[r] {
				last[r] = call.End
			}
			seen[r] = true
		}
	}
	for r, info := range h.Runs {
		if seen[r] {
			ttfs = append(ttfs, int64(first[r]-info.StartAt))
			ttls = append(ttls, int64(last[r]-info.StartAt))
		}
	}
	return ttfs, ttls
}

// rows summarizes samples per (branches, prologue), in the grid's order;
// a pair with no sample (possible in a shard) has no row.
func rows(res *Result, samples []Sample) []Row {
	var out []Row
	for _, b := range res.Branches {
		for _, p := range res.Prologues {
			var ttfs, ttls, gets []int64
			row := Row{Branches: b, Prologue: p}
			var fans, reads, lazy, lastc, conc int
			for i := range samples {
				s := &samples[i]
				if s.Branches != b || s.Prologue != p {
					continue
				}
				row.Seeds++
				ttfs = append(ttfs, s.TTFSNS...)
				ttls = append(ttls, s.TTLSNS...)
				gets = append(gets, s.RunsGetNS...)
				fans += s.Fanouts
				reads += s.StepReads
				lazy += s.LazyReads
				lastc += s.LastCompleters
				conc += s.ConcurrentLast
				if s.Undrained {
					row.Undrained++
				}
			}
			if row.Seeds == 0 {
				continue
			}
			// The three lists are this row's own: each is sorted once, in
			// place, for both of its percentiles (a copy and a sort per
			// percentile was most of the time a parallel sweep spent on
			// one goroutine after its cells).
			slices.Sort(ttfs)
			slices.Sort(ttls)
			slices.Sort(gets)
			row.TTFSP50MS, row.TTFSP90MS = ms(ofSorted(ttfs, 50)), ms(ofSorted(ttfs, 90))
			row.TTLSP50MS, row.TTLSP90MS = ms(ofSorted(ttls, 50)), ms(ofSorted(ttls, 90))
			row.RunsGetCount = len(gets)
			row.RunsGetP50MS, row.RunsGetP90MS = ms(ofSorted(gets, 50)), ms(ofSorted(gets, 90))
			row.ReadsPerFanout = ratio(reads, fans)
			row.LazyPerFanout = ratio(lazy, fans)
			row.LastCompletersPerFanout = ratio(lastc, fans)
			row.ConcurrentLastCompleters = ratio(conc, fans)
			out = append(out, row)
		}
	}
	return out
}

// Percentile is the nearest-rank percentile of xs (0 < p ≤ 100): the
// smallest value with at least p% of the values at or below it, that is the
// ⌈p/100·n⌉-th smallest. It is always one of the values — no interpolation,
// so a p90 is a latency some call really had. An empty xs gives 0.
func Percentile(xs []int64, p float64) int64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return ofSorted(s, p)
}

// ofSorted is Percentile of a list already sorted.
func ofSorted(s []int64, p float64) int64 {
	if len(s) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = max(1, min(rank, len(s)))
	return s[rank-1]
}

// ms turns nanoseconds into milliseconds, rounded to the microsecond so
// the JSON stays short; the rounding is the same on every machine.
func ms(ns int64) float64 { return math.Round(float64(ns)/float64(time.Microsecond)) / 1000 }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return math.Round(float64(a)/float64(b)*1e4) / 1e4
}

// Merge combines the Results of the shards of one sweep into the Result an
// unsharded run of the same sweep returns: it checks that the parts are the
// same sweep and together hold every cell exactly once, then recomputes the
// rows from the samples.
func Merge(parts []*Result) (*Result, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("merge: no sweep results")
	}
	base := parts[0]
	for i, p := range parts {
		if p.Shard == nil {
			return nil, fmt.Errorf("merge: part %d is not a shard's output (no \"shard\"): only shard results carry the samples rows are recomputed from", i)
		}
		if p.Partial {
			return nil, fmt.Errorf("merge: part %d (shard %d/%d) was stopped before all its cells ran: run that shard again", i, p.Shard.Index, p.Shard.Count)
		}
		if p.Scenario != base.Scenario || !slices.Equal(p.Variants, base.Variants) || !slices.Equal(p.Branches, base.Branches) ||
			!slices.Equal(p.Prologues, base.Prologues) || p.Seeds != base.Seeds || p.RunsGetBaseP50MS != base.RunsGetBaseP50MS {
			return nil, fmt.Errorf("merge: part %d (scenario %s, branches %v, prologues %v, %d seeds) is not the same sweep as part 0 (scenario %s, branches %v, prologues %v, %d seeds)",
				i, p.Scenario, p.Branches, p.Prologues, p.Seeds, base.Scenario, base.Branches, base.Prologues, base.Seeds)
		}
		if p.Shard.Count != base.Shard.Count {
			return nil, fmt.Errorf("merge: part %d is shard %d/%d, part 0 is of %d shards", i, p.Shard.Index, p.Shard.Count, base.Shard.Count)
		}
	}
	n := base.Shard.Count
	have := make([]int, n)
	for _, p := range parts {
		have[p.Shard.Index]++
	}
	for i, k := range have {
		if k != 1 {
			return nil, fmt.Errorf("merge: shard %d/%d given %d times; want each of the %d shards exactly once", i, n, k, n)
		}
	}
	bi := map[int]int{}
	for i, b := range base.Branches {
		bi[b] = i
	}
	pi := map[string]int{}
	for i, p := range base.Prologues {
		pi[p] = i
	}
	total := len(base.Branches) * len(base.Prologues) * base.Seeds
	slot := make([]*Sample, total)
	for i, p := range parts {
		for j := range p.Samples {
			s := &p.Samples[j]
			b, okB := bi[s.Branches]
			q, okP := pi[s.Prologue]
			if !okB || !okP || s.Seed < 1 || s.Seed > uint64(base.Seeds) {
				return nil, fmt.Errorf("merge: part %d sample %d (%d branches, %s, seed %d) is outside the sweep's grid", i, j, s.Branches, s.Prologue, s.Seed)
			}
			pos := (b*len(base.Prologues)+q)*base.Seeds + int(s.Seed-1)
			if pos%n != p.Shard.Index {
				return nil, fmt.Errorf("merge: part %d (shard %d/%d) holds a cell of shard %d: %d branches, %s, seed %d", i, p.Shard.Index, n, pos%n, s.Branches, s.Prologue, s.Seed)
			}
			if slot[pos] != nil {
				return nil, fmt.Errorf("merge: the cell %d branches, %s, seed %d is in two parts", s.Branches, s.Prologue, s.Seed)
			}
			slot[pos] = s
		}
	}
	samples := make([]Sample, 0, total)
	for pos, s := range slot {
		if s == nil {
			b := base.Branches[pos/(len(base.Prologues)*base.Seeds)]
			q := base.Prologues[pos/base.Seeds%len(base.Prologues)]
			return nil, fmt.Errorf("merge: no part holds the cell %d branches, %s, seed %d: a shard's output is incomplete", b, q, pos%base.Seeds+1)
		}
		samples = append(samples, *s)
	}
	res := &Result{Scenario: base.Scenario, Variants: append([]string{}, base.Variants...), Branches: slices.Clone(base.Branches),
		Prologues: slices.Clone(base.Prologues), Seeds: base.Seeds, RunsGetBaseP50MS: base.RunsGetBaseP50MS}
	res.Rows = rows(res, samples)
	return res, nil
}
