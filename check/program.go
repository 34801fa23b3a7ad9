package check

import (
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
	switch w.LogView {
	case model.LogViewOwnWrites:
		cfg.View = flow.ViewOwnWrites
	case model.LogViewTailFence:
		cfg.View = flow.ViewTailFence
	case model.LogViewCountGuard:
		cfg.View = flow.ViewCountGuard
	}
	if r := w.Resumes; r.Set() {
		cfg.Resumes = flow.Resumes{Every: r.Every, Count: r.Count, Burst: r.Burst, Spread: r.Spread, One: r.One, AtDeadlines: r.AtDeadlines}
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
// which features its drawn program and faults have: the search's coverage of
// shapes (feature:hook, feature:carry, feature:race, ...), beside what its
// runs did.
func countProgramFeatures(cov map[string]int, sc *model.Scenario) {
	seen := map[string]bool{}
	program.Walk(sc.Workflow.Program, func(n *program.Node) {
		seen["feature:"+n.Kind().String()] = true
		if n.Carry {
			seen["feature:carry"] = true
		}
	})
	if r := sc.Workflow.Resumes; r.Set() {
		seen["feature:resumes"] = true
		if r.One {
			seen["feature:resumes.one"] = true
		}
		if r.AtDeadlines {
			seen["feature:resumes.at_deadlines"] = true
		}
	}
	if sc.Faults.Crash > 0 {
		seen["feature:crash"] = true
	}
	if sc.Workflow.MaxDuration > 0 {
		seen["feature:time_limit"] = true
	}
	for k := range seen {
		cov[k]++
	}
}
