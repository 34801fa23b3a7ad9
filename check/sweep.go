package check

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/simlab/simlab/internal/freelist"
	"github.com/simlab/simlab/properties"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/flow"
	"github.com/simlab/simlab/model/seeds"
	"github.com/simlab/simlab/sim"
)

// SweepConfig is a seeded sweep: the scenario checked on every seed.
type SweepConfig struct {
	Scenario model.Scenario
	// Seeds are the whole check's seeds, Shard the part of them this sweep
	// checks (the zero Shard: all). They are streamed, never listed, so a
	// check of 10^12 seeds holds no more than one of 10.
	Seeds seeds.List
	Shard seeds.Shard
	Props []properties.Property
	// Spec names the scenario as the command line did (for the replay
	// command printed with each counterexample).
	Spec model.Spec
	// ScheduleDir, if set, receives one minimized schedule file per
	// violated property. ScheduleDirErr, if set, is why there is none
	// (no cache directory): a counterexample then says so instead.
	ScheduleDir    string
	ScheduleDirErr error
	// Progress is called after each seed, from the calling goroutine.
	Progress func(done int)
	// Each runs do(i) once for every i in [0, n), on as many goroutines as
	// it likes (nil: one after another). Each seed's simulation and checks
	// are independent; the report is merged in seed order, so it does not
	// depend on Each.
	Each func(n int, do func(i int))
	// Stop, if set, is asked before each seed is simulated and merged; once
	// it says true (Ctrl-C), no more seeds are simulated and the report
	// covers the seeds before the first one left out, marked Partial.
	Stop func() bool
	// Known, if set, says a violation of prop at seed is a known finding
	// (a baseline's): it is counted, but the first counterexample of each
	// property is its first violation that is not known, so the story a
	// check prints is the new one's.
	Known func(prop string, seed uint64) bool
	// UntilStable, if positive, stops the sweep once every declared outcome
	// has happened and the coverage (outcomes, and for swarm its features
	// and their pairs) has not grown for that many seeds; Seeds bounds it.
	UntilStable int
}

// seedResult is what one seed contributes to a Report.
type seedResult struct {
	done       bool
	coverage   map[string]int
	swarm      []string
	violations []properties.Violation
	// A program's run (model/flow) is judged on its spans: its
	// violations, the properties judged, and why the others were not.
	program   []programViolation
	judged    []string
	notJudged [][2]string
	err       error
}

// sweepChunk is how many seeds are simulated ahead of the merge: enough to
// keep every job busy between merges, few enough that a sweep of millions
// of seeds holds little and the progress bar moves often.
const sweepChunk = 256

// First is the first counterexample found for one property.
type First struct {
	Seed         uint64   `json:"seed"`
	Run          string   `json:"run"`
	Message      string   `json:"message"`
	Story        []string `json:"story"`
	Replay       string   `json:"replay"`
	ScheduleFile string   `json:"schedule_file,omitempty"`
	// ShrunkSeed is the seed a program's shrunk scenario file
	// (ScheduleFile) replays its counterexample at.
	ShrunkSeed uint64 `json:"shrunk_seed,omitempty"`
	// ScheduleError says why no schedule file was saved (an unwritable
	// directory): the counterexample is reported all the same.
	ScheduleError string `json:"schedule_error,omitempty"`
}

// Report is `simlab check --json`: a contract (docs/CLI.md).
type Report struct {
	Scenario   string            `json:"scenario"`
	Variants   []string          `json:"variants"`
	Seeds      int               `json:"seeds"`
	Violations map[string]int    `json:"violations"` // seeds (runs) violating each property
	First      map[string]*First `json:"first"`
	Coverage   map[string]int    `json:"coverage"`
	// Declared lists the outcomes the scenario declares ("sometimes"
	// assertions), so that a merge of shard reports can recompute Missing
	// from the merged coverage.
	Declared []string `json:"declared"`
	// Missing lists the outcomes this scenario declares must happen at
	// least once in a sweep ("sometimes" assertions) that never did.
	Missing []string `json:"coverage_missing"`
	// ViolatingSeeds lists, per violated property, the seeds that violate
	// it (seeds grammar: 1..8,42), what a baseline records.
	ViolatingSeeds map[string]string `json:"violating_seeds,omitempty"`
	// Baseline is the verdict against known findings (check --baseline).
	Baseline *BaselineVerdict `json:"baseline,omitempty"`
	// SwarmCoverage is what a swarm scenario's seeds reached.
	SwarmCoverage *SwarmCoverage `json:"swarm_coverage,omitempty"`
	// StoppedBy says what ended a check --until-stable: "stable" (every
	// declared outcome happened and coverage stopped growing) or "seeds"
	// (the seed list ran out first), with the detail in StoppedReason.
	StoppedBy     string `json:"stopped_by,omitempty"`
	StoppedReason string `json:"stopped_reason,omitempty"`
	// SeedList is the whole check's seeds in the seed grammar and Shard
	// the part this report covers (absent: all of them); Sets are the
	// --set assignments and Config fingerprints the scenario as checked
	// (every field, after --set and --variant). merge combines only the
	// shards of one check: the same seeds, split once, configured alike.
	SeedList string       `json:"seed_list"`
	Shard    *seeds.Shard `json:"shard,omitempty"`
	Sets     []string     `json:"sets"`
	Config   string       `json:"config"`
	// Partial says the check was stopped (Ctrl-C) before every seed was
	// checked: Seeds counts those that were, from the first on.
	Partial bool `json:"partial"`
	// NotJudged lists, for a program's scenario (judged on each run's
	// spans, with check --trace's rules), the properties no run's spans
	// could judge, each with the reason; Violations leaves them out.
	NotJudged map[string]string `json:"not_judged,omitempty"`
}

// Failed reports whether any property was violated or a declared outcome
// never happened.
func (r *Report) Failed() bool {
	if r.Baseline != nil {
		return len(r.Baseline.New) > 0 || len(r.Missing) > 0
	}
	for _, n := range r.Violations {
		if n > 0 {
			return true
		}
	}
	return len(r.Missing) > 0
}

// ConfigOf fingerprints a scenario as a check sees it: every field, after
// --set and --variant. Two reports with the same fingerprint checked the
// same scenario.
func ConfigOf(sc *model.Scenario) string {
	b, err := json.Marshal(sc)
	if err != nil {
		panic(fmt.Sprintf("properties: a scenario does not marshal: %v", err)) // a programming error
	}
	h := fnv.New64a()
	h.Write(b)
	return fmt.Sprintf("%016x", h.Sum64())
}

// Sweep checks every seed and reports violations, first counterexamples and
// coverage.
func Sweep(cfg SweepConfig) (*Report, error) {
	sc := cfg.Scenario
	rep := &Report{Scenario: sc.Name, Variants: append([]string{}, sc.Variants...), Violations: map[string]int{},
		First: map[string]*First{}, Coverage: map[string]int{}, SeedList: cfg.Seeds.String(),
		Sets: append([]string{}, cfg.Spec.Sets...), Config: ConfigOf(&sc)}
	if cfg.Shard.Count > 1 {
		sh := cfg.Shard
		rep.Shard = &sh
	}
	for _, p := range cfg.Props {
		rep.Violations[p.Name] = 0
	}
	each := cfg.Each
	if each == nil {
		each = func(n int, do func(i int)) {
			for i := range n {
				do(i)
			}
		}
	}
	stop := cfg.Stop
	if stop == nil {
		stop = func() bool { return false }
	}
	st := &sweepState{violating: map[string][]uint64{}, seen: map[string]bool{}, declared: Declared(&sc)}
	isProgram := sc.IsProgram()
	var flowCfg flow.Config
	wanted := map[string]bool{}
	search := sc.Workflow.Search != ""
	if isProgram {
		var err error
		if !search {
			if flowCfg, err = FlowConfig(&sc); err != nil {
				return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
			}
		}
		for _, p := range cfg.Props {
			wanted[p.Name] = true
		}
		st.judged, st.notJudged = map[string]bool{}, map[string]string{}
	}
	if sc.Swarm {
		rep.SwarmCoverage = newSwarmCoverage()
	}
	results := make([]seedResult, sweepChunk)
	chunk := make([]uint64, 0, sweepChunk)
	workers := freelist.List[worker]{New: func() *worker { return &worker{runner: model.NewRunner(), keys: coverageKeys{}} }}
	// flush simulates the chunk's seeds and merges them in seed order; it
	// says false once the sweep is to end (stopped, or an error).
	flush := func() (bool, error) {
		each(len(chunk), func(i int) {
			if stop() {
				return // left out: results[i].done stays false
			}
			w := workers.Get()
			defer workers.Put(w)
			r := &results[i]
			if r.coverage == nil {
				r.coverage = map[string]int{}
			}
			if isProgram {
				seedSc, fcfg := &sc, flowCfg
				if search {
					// The seed's own program, driver and faults.
					drawn := sc.SeedScenario(chunk[i])
					c, err := FlowConfig(&drawn)
					if err != nil {
						*r = seedResult{done: true, err: fmt.Errorf("seed %d: %w", chunk[i], err)}
						return
					}
					seedSc, fcfg = &drawn, c
				}
				res, jrep, err := programRun(&w.flow, seedSc, fcfg, chunk[i])
				if err != nil {
					*r = seedResult{done: true, err: err}
					return
				}
				clear(r.coverage)
				countProgramCoverage(r.coverage, res)
				if search {
					countProgramFeatures(r.coverage, seedSc)
				}
				programVerdicts(jrep, wanted, r)
				r.done = true
				return
			}
			w.sc = sc // each worker simulates its own copy
			w.pcg.Reset(chunk[i])
			res, err := w.runner.Run(&w.sc, &w.pcg, model.Options{Record: true, Seed: chunk[i]})
			if err != nil {
				*r = seedResult{done: true, err: err}
				return
			}
			// The slot's coverage map is reused: cleared, it keeps its room.
			clear(r.coverage)
			countCoverage(r.coverage, res, w.keys)
			h := res.History
			r.done, r.violations = true, w.check.Run(h, cfg.Props)
			if h.Swarm != nil {
				r.swarm = SwarmFeaturesOf(h.Swarm, deploymentConfigs(h), h)
			}
		})
		defer func() {
			for j := range results {
				results[j] = seedResult{coverage: results[j].coverage}
			}
			chunk = chunk[:0]
		}()
		for i, seed := range chunk {
			r := results[i]
			if !r.done {
				// A seed left out ends the report: what it covers is
				// every seed up to here, so a partial report still means
				// "seeds from the first, in order".
				rep.Partial = true
				return false, nil
			}
			if r.err != nil {
				return false, r.err
			}
			merge(rep, &cfg, &sc, seed, r, st)
			if cfg.Progress != nil {
				cfg.Progress(rep.Seeds)
			}
			if cfg.UntilStable > 0 && st.stable(rep, cfg.UntilStable, seed, r) {
				return false, nil
			}
		}
		return true, nil
	}
	for seed := range cfg.Seeds.Seeds(cfg.Shard) {
		if len(chunk) == 0 && stop() {
			rep.Partial = true // seeds are left: this one at least
			break
		}
		if chunk = append(chunk, seed); len(chunk) < sweepChunk {
			continue
		}
		if more, err := flush(); err != nil {
			return nil, err
		} else if !more {
			break
		}
	}
	if len(chunk) > 0 && !rep.Partial && rep.StoppedBy == "" {
		if _, err := flush(); err != nil {
			return nil, err
		}
	}
	if cfg.UntilStable > 0 && rep.StoppedBy == "" && !rep.Partial {
		rep.StoppedBy = "seeds"
		why := fmt.Sprintf("the coverage last grew at seed %d, %d seeds before the end", st.lastGrowthSeed, rep.Seeds-st.lastGrowth)
		if m := missing(st.declared, rep.Coverage); len(m) > 0 {
			why = "declared outcomes never happened: " + strings.Join(m, ", ")
		}
		rep.StoppedReason = fmt.Sprintf("the %d seeds ran out before the coverage was stable (%s)", rep.Seeds, why)
	}
	if rep.SwarmCoverage != nil {
		rep.SwarmCoverage.finish()
	}
	if isProgram {
		for p := range rep.Violations {
			if !st.judged[p] {
				if rep.NotJudged == nil {
					rep.NotJudged = map[string]string{}
				}
				rep.NotJudged[p] = st.notJudged[p]
				delete(rep.Violations, p)
			}
		}
	}
	rep.Declared = append([]string{}, st.declared...) // [] in JSON when none
	rep.Missing = missing(rep.Declared, rep.Coverage)
	rep.ViolatingSeeds = formatSeedLists(st.violating)
	return rep, nil
}

// sweepState is what a sweep carries from seed to seed besides its report:
// the seeds violating each property, and for --until-stable the coverage
// keys seen and when they last grew.
type sweepState struct {
	violating      map[string][]uint64
	seen           map[string]bool
	declared       []string
	lastGrowth     int    // rep.Seeds when the coverage last grew
	lastGrowthSeed uint64 // the seed that grew it
	// For a program's scenario: the properties some run's spans judged,
	// and why the others were not.
	judged    map[string]bool
	notJudged map[string]string
}

// stable records seed's coverage and reports whether the sweep is now
// stable (every declared outcome happened, no growth for n seeds), setting
// the report's StoppedBy when it is.
func (st *sweepState) stable(rep *Report, n int, seed uint64, r seedResult) bool {
	grew := false
	for _, k := range append(slices.Sorted(maps.Keys(r.coverage)), swarmKeys(r.swarm)...) {
		if !st.seen[k] {
			st.seen[k], grew = true, true
		}
	}
	if grew {
		st.lastGrowth, st.lastGrowthSeed = rep.Seeds, seed
	}
	if len(missing(st.declared, rep.Coverage)) > 0 || rep.Seeds-st.lastGrowth < n {
		return false
	}
	rep.StoppedBy = "stable"
	rep.StoppedReason = fmt.Sprintf("stopped after seed %d (%d seeds): every declared outcome has happened and the coverage (%d outcomes, features and pairs) has not grown for %d seeds, since seed %d",
		seed, rep.Seeds, len(st.seen), n, st.lastGrowthSeed)
	return true
}

// formatSeedLists writes each property's seeds in the seeds grammar; nil
// when there are none, so a clean report prints no field.
func formatSeedLists(m map[string][]uint64) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := map[string]string{}
	for k, list := range m {
		slices.Sort(list)
		out[k] = seeds.Format(list)
	}
	return out
}

// merge adds one seed's result to the report: coverage, the seeds that
// violate each property, and each property's first counterexample with its
// minimized schedule.
func merge(rep *Report, cfg *SweepConfig, sc *model.Scenario, seed uint64, r seedResult, st *sweepState) {
	for k, n := range r.coverage {
		rep.Coverage[k] += n
	}
	// Violations counts the seeds (runs of the simulation) that violate a
	// property, not its violations: one seed may violate a property in
	// many workflow runs.
	violated := map[string]bool{}
	for _, v := range r.violations {
		if !violated[v.Property] {
			violated[v.Property] = true
			rep.Violations[v.Property]++
			st.violating[v.Property] = append(st.violating[v.Property], seed)
		}
		if rep.First[v.Property] != nil || cfg.Known != nil && cfg.Known(v.Property, seed) {
			continue
		}
		f := &First{Seed: seed, Run: model.RunName(v.Run), Message: v.Message, Story: properties.Story(v),
			Replay: cfg.Spec.RunCommand(seed)}
		cfg.saveSchedule(f, func() (string, string, error) {
			path, err := saveMinimized(cfg.ScheduleDir, *sc, seed, v.Property, cfg.Stop)
			return path, "minimized: simlab replay " + path, err
		})
		rep.First[v.Property] = f
	}
	for _, p := range r.judged {
		st.judged[p] = true
	}
	for _, nj := range r.notJudged {
		if st.notJudged[nj[0]] == "" {
			st.notJudged[nj[0]] = nj[1]
		}
	}
	for _, v := range r.program {
		rep.Violations[v.prop]++
		st.violating[v.prop] = append(st.violating[v.prop], seed)
		if rep.First[v.prop] != nil || cfg.Known != nil && cfg.Known(v.prop, seed) {
			continue
		}
		seedSc := sc.SeedScenario(seed) // a search's: the seed's own program
		f := &First{Seed: seed, Run: v.run, Message: v.message, Story: programStoryAt(&seedSc, seed, v), Replay: cfg.Spec.RunCommand(seed)}
		cfg.saveSchedule(f, func() (string, string, error) {
			path, s, err := saveMinimizedProgram(cfg.ScheduleDir, seedSc, seed, v.prop, cfg.Stop, sc.Workflow.Search != "")
			f.ShrunkSeed = s
			line := fmt.Sprintf("shrunk: simlab run --scenario %s --seed %d", model.ShellQuote(path), s)
			if v.prop == ReplayableLog && ProgramForceable(seedSc) == nil {
				line += "; on the real core: " + ReproduceProgramCommand(path, s)
			}
			return path, line, err
		})
		rep.First[v.prop] = f
	}
	if rep.SwarmCoverage != nil && r.swarm != nil {
		rep.SwarmCoverage.add(r.swarm)
	}
	rep.Seeds++
}

// saveSchedule saves f's minimized counterexample with save (its file, and
// the replay command to add), when there is a directory to save it in. A
// schedule that cannot be saved loses nothing else: the counterexample, its
// story and its replay command stand.
func (cfg *SweepConfig) saveSchedule(f *First, save func() (path, replay string, err error)) {
	switch {
	case cfg.ScheduleDir != "":
		if path, replay, err := save(); err != nil {
			f.ScheduleError = err.Error()
		} else {
			f.ScheduleFile = path
			f.Replay += "   (" + replay + ")"
		}
	case cfg.ScheduleDirErr != nil:
		f.ScheduleError = cfg.ScheduleDirErr.Error()
	}
}

// missing lists the declared outcomes the coverage never saw, in declared
// order; empty (a JSON [], never null) when none is missing.
func missing(declared []string, coverage map[string]int) []string {
	out := []string{}
	for _, need := range declared {
		if coverage[need] == 0 {
			out = append(out, need)
		}
	}
	return out
}

// MergeReports combines the reports of the shards of one check into the
// report one process checking all their seeds prints: seeds, violations and
// coverage sum; the first counterexample of each property is the one with
// the lowest seed (an unsharded check walks seeds in increasing order);
// coverage_missing is recomputed from declared and the merged coverage,
// since an outcome one shard never saw another may have.
//
// It refuses parts that are not together one whole check: each shard of
// one split exactly once, of the same seeds, scenario and configuration,
// none stopped before its end.
func MergeReports(parts []*Report) (*Report, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("merge: no check reports")
	}
	base := parts[0]
	whole := seeds.Shard{Index: 0, Count: 1}
	shardOf := func(p *Report) seeds.Shard {
		if p.Shard == nil {
			return whole
		}
		return *p.Shard
	}
	list, err := seeds.ParseList(base.SeedList)
	if err != nil {
		return nil, fmt.Errorf("merge: report 0: seed_list %w", err)
	}
	n := shardOf(base).Count
	have := make([]int, n)
	out := &Report{Scenario: base.Scenario, Variants: append([]string{}, base.Variants...), Violations: map[string]int{},
		First: map[string]*First{}, Coverage: map[string]int{}, Declared: append([]string{}, base.Declared...),
		SeedList: base.SeedList, Sets: append([]string{}, base.Sets...), Config: base.Config}
	merged := map[string][]uint64{}
	for i, p := range parts {
		sh := shardOf(p)
		switch {
		case p.Scenario != base.Scenario || !slices.Equal(p.Variants, base.Variants):
			return nil, fmt.Errorf("merge: report %d checks scenario %s with variants %v, report 0 scenario %s with %v: not shards of one check",
				i, p.Scenario, p.Variants, base.Scenario, base.Variants)
		case p.Config != base.Config:
			return nil, fmt.Errorf("merge: report %d checks another configuration of %s than report 0 (--set %v, fingerprint %s; report 0: --set %v, fingerprint %s): not shards of one check",
				i, p.Scenario, p.Sets, p.Config, base.Sets, base.Config)
		case !slices.Equal(p.Declared, base.Declared):
			return nil, fmt.Errorf("merge: report %d declares %v, report 0 declares %v: not shards of one check", i, p.Declared, base.Declared)
		case p.SeedList != base.SeedList:
			return nil, fmt.Errorf("merge: report %d is a shard of seeds %s, report 0 of seeds %s: not shards of one check", i, p.SeedList, base.SeedList)
		case sh.Count != n:
			return nil, fmt.Errorf("merge: report %d is shard %d/%d, report 0 shard %d/%d: shards of one check are split the same way",
				i, sh.Index, sh.Count, shardOf(base).Index, n)
		case sh.Index < 0 || sh.Index >= n:
			return nil, fmt.Errorf("merge: report %d names shard %d/%d, which does not exist", i, sh.Index, sh.Count)
		case p.Partial:
			return nil, fmt.Errorf("merge: report %d (shard %d/%d) was stopped after %d seeds: check that shard again", i, sh.Index, n, p.Seeds)
		case uint64(p.Seeds) != sh.Len(list):
			return nil, fmt.Errorf("merge: report %d (shard %d/%d) checked %d seeds, its shard of %s holds %d: not a whole shard",
				i, sh.Index, n, p.Seeds, p.SeedList, sh.Len(list))
		}
		if have[sh.Index]++; have[sh.Index] > 1 {
			return nil, fmt.Errorf("merge: shard %d/%d is given twice (report %d): give each shard exactly once", sh.Index, n, i)
		}
		out.Seeds += p.Seeds
		for k, n := range p.Violations {
			out.Violations[k] += n
		}
		for k, n := range p.Coverage {
			out.Coverage[k] += n
		}
		for k, list := range p.ViolatingSeeds {
			got, err := seeds.Parse(list, 0)
			if err != nil {
				return nil, fmt.Errorf("merge: report %d: violating_seeds[%s] = %w", i, k, err)
			}
			merged[k] = append(merged[k], got...)
		}
		for k, f := range p.First {
			if f == nil {
				continue
			}
			if cur := out.First[k]; cur == nil || f.Seed < cur.Seed {
				out.First[k] = f
			}
		}
	}
	var absent []string
	for i, k := range have {
		if k == 0 {
			absent = append(absent, fmt.Sprintf("shard %d/%d", i, n))
		}
	}
	if len(absent) > 0 {
		return nil, fmt.Errorf("merge: %s missing: give every shard of the check exactly once", strings.Join(absent, ", "))
	}
	// A program's property is not judged in the whole check when no
	// shard's runs judged it (a shard that did has it in Violations).
	for _, p := range parts {
		for k, why := range p.NotJudged {
			if _, judged := out.Violations[k]; !judged {
				if out.NotJudged == nil {
					out.NotJudged = map[string]string{}
				}
				out.NotJudged[k] = why
			}
		}
	}
	out.Missing = missing(out.Declared, out.Coverage)
	out.ViolatingSeeds = formatSeedLists(merged)
	var sw []*SwarmCoverage
	for _, p := range parts {
		sw = append(sw, p.SwarmCoverage)
	}
	out.SwarmCoverage = mergeSwarmCoverage(sw)
	return out, nil
}

// saveMinimized records the violating seed's schedule, minimizes it (less
// far once stop says so) and saves it as a file.
func saveMinimized(dir string, sc model.Scenario, seed uint64, prop string, stop func() bool) (string, error) {
	p, _ := properties.ByName(prop)
	_, choices, err := Record(&sc, sim.NewPCG(seed), seed)
	if err != nil {
		return "", err
	}
	msc, mchoices, h := MinimizeUntil(sc, choices, p, stop)
	// The directory is made only when there is something to save, so a
	// check that finds nothing leaves no trace in the user's cache.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("schedules directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, ScheduleFileName(sc, prop, seed))
	err = SaveSchedule(path, Schedule{Property: prop, Seed: seed, HistoryHash: fmt.Sprintf("%016x", h.Hash), Scenario: msc, Choices: mchoices})
	return path, err
}

// ScheduleFileName names the minimized schedule of prop's counterexample at
// seed: the scenario, each variant after a "+", the property and the seed,
// so that checks of one scenario with different variants never overwrite
// each other's files.
func ScheduleFileName(sc model.Scenario, prop string, seed uint64) string {
	name := sc.Name
	for _, v := range sc.Variants {
		name += "+" + v
	}
	return fmt.Sprintf("%s-%s-seed%d.json", name, prop, seed)
}

// worker is what one of a sweep's goroutines reuses from seed to seed: a
// Runner (engine, History, store, kernel), a chooser, the property
// checker's scratch and the coverage keys it has made.
type worker struct {
	runner *model.Runner
	flow   flow.Runner
	pcg    sim.PCG
	sc     model.Scenario
	check  properties.Checker
	keys   coverageKeys
}

// coverageKeys are coverage keys made from a prefix and a name ("fault:"
// and a site's name), made once: joining them every seed allocates.
type coverageKeys map[[2]string]string

func (k coverageKeys) key(prefix, name string) string {
	if k == nil {
		return prefix + name
	}
	if s, ok := k[[2]string{prefix, name}]; ok {
		return s
	}
	s := prefix + name
	k[[2]string{prefix, name}] = s
	return s
}

// countCoverage counts the interesting outcomes of one run; keys, if not
// nil, caches the keys it joins.
func countCoverage(cov map[string]int, res *model.Result, keys coverageKeys) {
	c := res.Counts
	add := func(k string, n int) {
		if n > 0 {
			cov[k] += n
		}
	}
	add("stale_read", c.StaleReads)
	add("lazy_fetch", c.LazyFetches)
	add("prologue_fetch", c.PrologueFetches)
	add("gone", c.Gone)
	add("skipped", c.Skipped)
	add("throttled", c.Throttled)
	add("reroute", c.Reroutes)
	add("crash", c.Crashes)
	add("redelivery", c.Redeliveries)
	add("recovery", c.Recoveries)
	add("concurrent_last_completers", c.ConcurrentLast)
	add("exhausted", c.Exhausted)
	add("write_refused_ended", c.WritesRefusedEnded)
	add("replay_after_end", c.ReplaysAfterEnd)
	add("body_after_end", c.BodiesAfterEnd)
	add("end_seen", c.EndSeen)
	for _, s := range res.History.FaultSites {
		if s.Fired > 0 {
			add(keys.key("fault:", s.Name), s.Fired)
		}
	}
	if d := res.History.Swarm; d != nil {
		add(keys.key("world:", d.World), 1)
		if d.Windows >= 3 {
			add("long_window", 1)
			if slices.Contains(d.Sites, "crash") {
				add(keys.key(d.World, "+crash+long_window"), 1)
			}
		}
	}
}

// Declared lists the outcomes a sweep of sc must see at least once, given
// the knobs it turns on ("sometimes" assertions): a green sweep in which the
// paths it was meant to exercise never ran fails instead.
func Declared(sc *model.Scenario) []string {
	if sc.IsProgram() {
		return programDeclared(sc)
	}
	if sc.Swarm {
		// What a swarm sweep must reach: every World, long fault windows,
		// and the combination the pre-fix fence bug needs.
		return []string{"world:world-local", "world:world-postgres", "world:world-vercel", "long_window",
			"world-postgres+crash+long_window", "crash", "end_seen"}
	}
	var out []string
	f := &sc.Faults
	fetchFree := false
	for _, d := range sc.Deployments {
		if d.Producer == "v2" && d.Consumer == "v2" && d.Share > 0 {
			fetchFree = true
		}
	}
	for _, v := range sc.Variants {
		if v == "legacy-producers" {
			fetchFree = false
		}
	}
	queued := false
	for _, w := range sc.Workflow.Fanouts {
		if w > sc.Workflow.MaxInline {
			queued = true
		}
	}
	if fetchFree && queued {
		out = append(out, "lazy_fetch")
	}
	if f.Crash > 0 {
		out = append(out, "crash", "redelivery", "fault:consumer.crash")
	}
	if f.StaleRead > 0 && sc.Store.StaleLag > 0 {
		out = append(out, "fault:store.stale_read")
	}
	if f.Misdeliver > 0 && len(sc.Deployments) > 1 {
		out = append(out, "reroute", "fault:queue.misdeliver")
	}
	if f.Cancel > 0 || f.CancelAt > 0 {
		// A cancel must be seen by an actor that then stops: a delivery
		// gone at its claim or read, or a last completer whose lazy read
		// (or replay's log) shows the end. "gone" alone was too narrow: on
		// the fetch-free path a cancel before the lazy read (golden-t4)
		// meets no claim.
		out = append(out, "end_seen")
	}
	if f.LostCreate > 0 && sc.Workflow.ResilientDispatch && queued {
		out = append(out, "fault:producer.lost_create")
	}
	if f.BodyFailure > 0 {
		out = append(out, "fault:step.body_failure")
	}
	return out
}
