package check

import (
	"fmt"
	"slices"
	"time"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/flow"
	"github.com/simlab/simlab/model/program"
	"github.com/simlab/simlab/properties/spancheck"
	"github.com/simlab/simlab/traces"
)

// FlowConfig is the run a program's scenario (model.Scenario.IsProgram)
// asks for: model/flow's defaults, then every field the scenario may set
// (model.ProgramFields).
func FlowConfig(sc *model.Scenario) (flow.Config, error) {
	compiled, err := program.Compile(sc.Workflow.Program)
	if err != nil {
		return flow.Config{}, err
	}
	w := &sc.Workflow
	cfg := flow.Defaults(compiled)
	cfg.MaxInline, cfg.Body, cfg.StepMaxRetries, cfg.InlineLease = w.MaxInline, w.Body, w.MaxRetries, w.Lease()
	cfg.Replay = program.ReplayCost{Base: w.ReplayBase, PerEntity: w.ReplayPerEntity, PerEvent: w.ReplayPerEvent}
	cfg.SequentialReplays, cfg.MaxDuration, cfg.RetainedVM = w.SequentialReplays, w.MaxDuration, !w.ColdReplays
	cfg.CallSiteIDs = w.CallSiteIDs
	switch w.LogView {
	case model.LogViewOwnWrites:
		cfg.View = flow.ViewOwnWrites
	case model.LogViewTailFence:
		cfg.View = flow.ViewTailFence
	case model.LogViewCountGuard:
		cfg.View = flow.ViewCountGuard
	}
	if r := w.Resumes; r.Set() {
		cfg.Resumes = r.Flow()
	}
	cfg.Crash = sc.Faults.Crash
	cfg.MaxTime = sc.Limits.MaxTime
	if w.MaxDuration > 0 {
		// Room for the kills and redeliveries a time limit makes: each
		// delivery up to the cap may run to the limit and come back.
		cfg.MaxTime = max(cfg.MaxTime, time.Duration(cfg.MaxDeliveries)*(w.MaxDuration+cfg.Redeliver))
	}
	if err := cfg.Validate(); err != nil {
		return flow.Config{}, err
	}
	return cfg, nil
}

// programRun runs seed of a program's scenario on x and judges check's
// properties on the run's spans, with check --trace's rules: the same
// judge for a simulated program and a real engine's trace.
func programRun(x *flow.Runner, sc *model.Scenario, cfg flow.Config, seed uint64) (*flow.Result, *spancheck.Report, error) {
	res, err := x.Run(cfg, seed)
	if err != nil {
		return nil, nil, err
	}
	rep, err := judgeProgramRun(res, sc, cfg, seed)
	return res, rep, err
}

// ProgramTrace is what traces.BuildFlow needs of seed's run of a program's
// scenario: the run, named by the scenario, with its budget and story (nil:
// none on the run's span).
func ProgramTrace(sc *model.Scenario, cfg flow.Config, res *flow.Result, seed uint64, story []string) traces.FlowRun {
	budget := sc.Budget.WorkAfterEnd
	return traces.FlowRun{Result: res, Config: cfg, Seed: seed, Workflow: sc.Name, Story: story, WorkAfterEnd: &budget}
}

// judgeProgramRun judges check's properties on the spans of a program's run.
func judgeProgramRun(res *flow.Result, sc *model.Scenario, cfg flow.Config, seed uint64) (*spancheck.Report, error) {
	spans, _, err := traces.BuildFlow(ProgramTrace(sc, cfg, res, seed, nil), traces.Options{})
	if err != nil {
		return nil, err
	}
	return spancheck.Check(traces.FromReadOnly(spans)), nil
}

// programViolation is a property a program's run broke: the first
// violation its spans show. Its story is told only for a report's first
// counterexample (programStoryAt): telling it replays the program.
type programViolation struct {
	prop, run, message string
	evidence           []string
}

// programVerdicts is what one seed of a program's scenario contributes:
// its violations (the properties among props), the properties judged, and
// why the others were not.
func programVerdicts(rep *spancheck.Report, wanted map[string]bool, r *seedResult) {
	for _, v := range rep.Verdicts {
		if !wanted[v.Property] {
			continue
		}
		if !v.Judged {
			r.notJudged = append(r.notJudged, [2]string{v.Property, v.Why})
			continue
		}
		r.judged = append(r.judged, v.Property)
		if len(v.Violations) == 0 {
			continue
		}
		x := v.Violations[0]
		r.program = append(r.program, programViolation{prop: v.Property, run: x.Run, message: x.Message, evidence: x.Evidence})
	}
}

// countProgramCoverage counts how a program's run went.
func countProgramCoverage(cov map[string]int, res *flow.Result) {
	add := func(k string, n int) {
		if n > 0 {
			cov[k] += n
		}
	}
	switch code, _ := res.FailureCode(); {
	case res.FirstEnd() == nil:
		add("no_end", 1)
	case code != "":
		add("run_failed:"+code, 1)
	default:
		add("run_completed", 1)
	}
	if res.RunEnds > 1 {
		add("ended_twice", 1)
	}
	if res.Divergences > 0 {
		add("divergence", 1)
	}
	if res.MaxConcurrentReplays > 1 {
		add("concurrent_replays", 1)
	}
	add("crash", res.Crashes)
	add("killed", res.Killed-res.Crashes)
	add("duplicate_start", res.DuplicateStarts)
	add("hung_step", res.HungSteps)
}

// programDeclared is what a sweep of a program's scenario must see at least
// once, given its knobs: the crashes it asks for, and the kills a time
// limit on a hanging step makes.
func programDeclared(sc *model.Scenario) []string {
	var out []string
	if sc.Faults.Crash > 0 {
		out = append(out, "crash")
	}
	if sc.Workflow.MaxDuration > 0 && program.MustCompile(sc.Workflow.Program).HangingAttempts() > 0 {
		out = append(out, "killed")
	}
	return out
}

// programStoryAt is seed's violation of a program's scenario told, the
// run run again (it is deterministic).
func programStoryAt(sc *model.Scenario, seed uint64, v programViolation) []string {
	cfg, err := FlowConfig(sc)
	if err != nil {
		return []string{v.message}
	}
	res, err := flow.Run(cfg, seed)
	if err != nil {
		return []string{v.message}
	}
	return programStory(res, cfg, v.message, v.evidence)
}

// programStory is a program's violation told: the spans' message and
// evidence, then what the run itself says of it (a corrupted log's writers,
// a run's several ends).
func programStory(res *flow.Result, cfg flow.Config, message string, evidence []string) []string {
	story := append([]string{message}, evidence...)
	return append(story, res.Explain(cfg.Program)...)
}

// countProgramFeatures counts, for a search's seed (model.Scenario.SeedScenario),
// which features its drawn program, driver, faults and knobs have (ProgramFeatures),
// and which pairs of them (ProgramFeaturePairs): the search's coverage of
// shapes, beside what its runs did.
func countProgramFeatures(cov map[string]int, sc *model.Scenario) {
	fs := ProgramFeatures(sc)
	for _, f := range fs {
		cov["feature:"+f]++
	}
	for _, p := range ProgramFeaturePairs(fs) {
		cov["pair:"+p]++
	}
}

// ProgramFeatures lists, sorted, the features a program's scenario has: each
// kind of statement its program holds (hook, race, pool, ...), carry (a
// carried read), the driver's (resumes; resumes.one, a tick resuming one
// hook; resumes.burst, more than one resume per hook and tick;
// resumes.once, a single tick; resumes.at_deadlines; resumes.deadlines_only,
// no tick at a cadence), the faults' (crash, time_limit) and the runtime's
// knobs off their defaults (max_inline.N; sequential).
func ProgramFeatures(sc *model.Scenario) []string {
	seen := map[string]bool{}
	program.Walk(sc.Workflow.Program, func(n *program.Node) {
		seen[n.Kind().String()] = true
		if n.Carry {
			seen["carry"] = true
		}
	})
	if r := sc.Workflow.Resumes; r.Set() {
		seen["resumes"] = true
		seen["resumes.one"] = r.One
		seen["resumes.burst"] = r.Burst > 1
		seen["resumes.once"] = r.Count == 1
		seen["resumes.at_deadlines"] = r.AtDeadlines
		seen["resumes.deadlines_only"] = r.Count == 0
	}
	seen["crash"] = sc.Faults.Crash > 0
	seen["time_limit"] = sc.Workflow.MaxDuration > 0
	if w := &sc.Workflow; w.MaxInline != model.DefaultScenario().Workflow.MaxInline {
		seen[fmt.Sprintf("max_inline.%d", w.MaxInline)] = true
	}
	seen["sequential"] = sc.Workflow.SequentialReplays
	var out []string
	for f, on := range seen {
		if on {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

// ProgramFeaturePairs lists, sorted, the pairs among features (as
// ProgramFeatures lists them) a search's coverage counts, each named "a+b"
// with a before b: two of the program's (a kind of statement, or carry),
// or one of the program's with one of its driver, faults or knobs. Left
// out: step, seq and receive (nearly every program has the first two, and
// a search's receives come with their hook), resumes (a search's case has
// a driver exactly when its program has a hook), and a driver's, fault's or
// knob's pairs among themselves (those the draw makes, not the shapes).
func ProgramFeaturePairs(features []string) []string {
	var prog, other []string
	for _, f := range features {
		switch {
		case f == "step" || f == "seq" || f == "receive" || f == "resumes":
		case f == "carry" || slices.Contains(programKinds, f):
			prog = append(prog, f)
		default:
			other = append(other, f)
		}
	}
	var out []string
	pair := func(a, b string) {
		if b < a {
			a, b = b, a
		}
		out = append(out, a+"+"+b)
	}
	for i, a := range prog {
		for _, b := range prog[i+1:] {
			pair(a, b)
		}
		for _, b := range other {
			pair(a, b)
		}
	}
	slices.Sort(out)
	return out
}

// programKinds are the names of a program's kinds of statement.
var programKinds = func() []string {
	var out []string
	for k := program.KindStep; k <= program.KindDispose; k++ {
		out = append(out, k.String())
	}
	return out
}()
