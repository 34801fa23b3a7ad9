package check

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/flow"
	"github.com/simlab/simlab/model/program"
)

// Shrinking a program's counterexample: a smaller program draws other
// numbers from the same seed, so each edit is tried on the counterexample's
// seed and then on a few fresh ones, as Minimize does with schedules.
const (
	programShrinkSeeds = 64
	// programShrinkRuns bounds the runs one shrink makes (each a
	// simulation, judged on its spans when the run itself could show the
	// violation: mightViolate).
	programShrinkRuns = 20000
)

// mightViolate says, from a program's run alone, whether its spans could
// show prop violated: a replayable-log violation needs a run failed
// CORRUPTED_EVENT_LOG or a log no fresh replay consumes, a
// single-terminal-event one a run ended more than once. Any other property
// is judged on the spans every time.
func mightViolate(prop string, res *flow.Result) bool {
	switch prop {
	case "replayable-log":
		return res.Unconsumable()
	case "single-terminal-event":
		return res.RunEnds > 1
	}
	return true
}

// ProgramCounterexample is a shrunk counterexample of a program's scenario:
// the smallest scenario found whose run at Seed still violates the
// property, and that run's story.
type ProgramCounterexample struct {
	Scenario model.Scenario
	Seed     uint64
	Story    []string
	// Tries counts the runs the shrink made.
	Tries int
}

// MinimizeProgram shrinks a program's scenario whose run at seed violates
// prop: fewer branches and statements, fewer loop rounds and pool calls,
// an if or a loop replaced by its body, fewer hanging attempts, fewer
// hooks (each with its receives and disposes), a simpler driver, no
// crashes (programEdits), each kept while the property still fails (on the
// same seed or one of a few others). The runtime's knobs (max_inline,
// sequential replays, the time limit) are the scenario's configuration and
// stay as they are: a fix's residual keeps its fix. It stops trying once
// stop (if set) says so; what it returns is always a counterexample. ok is
// false when the input does not violate prop at seed.
func MinimizeProgram(sc model.Scenario, seed uint64, prop string, stop func() bool) (ProgramCounterexample, bool) {
	return minimizeProgram(sc, seed, prop, stop, false)
}

// MinimizeSearchCase is MinimizeProgram for a search's seed
// (model.Scenario.SeedScenario), whose knobs the search drew: they are
// inputs like its program, and go back to their defaults too while the
// property still fails.
func MinimizeSearchCase(sc model.Scenario, seed uint64, prop string, stop func() bool) (ProgramCounterexample, bool) {
	return minimizeProgram(sc, seed, prop, stop, true)
}

func minimizeProgram(sc model.Scenario, seed uint64, prop string, stop func() bool, drawnKnobs bool) (ProgramCounterexample, bool) {
	var x flow.Runner
	best := ProgramCounterexample{Scenario: sc, Seed: seed}
	violates := func(cand *model.Scenario, s uint64) ([]string, bool) {
		best.Tries++
		if cand.Validate() != nil {
			return nil, false
		}
		cfg, err := FlowConfig(cand)
		if err != nil {
			return nil, false
		}
		res, err := x.Run(cfg, s)
		if err != nil || !mightViolate(prop, res) {
			return nil, false
		}
		rep, err := judgeProgramRun(res, cand, cfg, s)
		if err != nil {
			return nil, false
		}
		for _, v := range rep.Verdicts {
			if v.Property == prop && len(v.Violations) > 0 {
				x := v.Violations[0]
				return programStory(res, cfg, x.Message, x.Evidence), true
			}
		}
		return nil, false
	}
	story, ok := violates(&sc, seed)
	if !ok {
		return best, false
	}
	best.Story = story
	stopped := func() bool { return stop != nil && stop() || best.Tries >= programShrinkRuns }
	for improved := true; improved && !stopped(); {
		improved = false
		for _, cand := range programEdits(best.Scenario, drawnKnobs) {
			if stopped() {
				break
			}
			// The counterexample's seed first, then fresh ones.
			for k := uint64(0); k <= programShrinkSeeds; k++ {
				s := k
				if k == 0 {
					s = best.Seed
				} else if k == best.Seed {
					continue
				}
				if story, ok := violates(&cand, s); ok {
					best.Scenario, best.Seed, best.Story = cand, s, story
					improved = true
					break
				}
				if stopped() {
					break
				}
			}
			if improved {
				break
			}
		}
	}
	return best, true
}

// programEdits are the scenarios one edit smaller than sc, the biggest cuts
// first: no crashes; a hook gone with its receives and disposes; the
// program's edits; a simpler driver (driverEdits); then, for knobs a search
// drew, the runtime's knobs back at their defaults (max_inline 3,
// sequential replays off, no time limit). A program left with no hook
// loses its driver too.
func programEdits(sc model.Scenario, drawnKnobs bool) []model.Scenario {
	var out []model.Scenario
	if sc.Faults.Crash > 0 {
		c := sc
		c.Faults.Crash = 0
		out = append(out, c)
	}
	withProgram := func(p []program.Node) {
		c := sc
		c.Workflow.Program = p
		if c.Workflow.Resumes.Set() {
			if cp, err := program.Compile(p); err == nil && !cp.UsesHooks() {
				c.Workflow.Resumes = model.Resumes{}
			}
		}
		out = append(out, c)
	}
	for _, p := range hookEdits(sc.Workflow.Program) {
		withProgram(p)
	}
	for _, p := range listEdits(sc.Workflow.Program, true) {
		withProgram(p)
	}
	for _, r := range driverEdits(sc.Workflow.Resumes) {
		c := sc
		c.Workflow.Resumes = r
		out = append(out, c)
	}
	def := model.DefaultScenario().Workflow
	w := &sc.Workflow
	for _, k := range []struct {
		on   bool
		edit func(w *model.Workflow)
	}{
		{w.MaxInline != def.MaxInline, func(w *model.Workflow) { w.MaxInline = def.MaxInline }},
		{w.SequentialReplays, func(w *model.Workflow) { w.SequentialReplays = false }},
		{w.MaxDuration > 0, func(w *model.Workflow) { w.MaxDuration = 0 }},
	} {
		if k.on && drawnKnobs {
			c := sc
			k.edit(&c.Workflow)
			out = append(out, c)
		}
	}
	return out
}

// driverEdits are the drivers one edit simpler than r: no ticks at the
// waits' deadlines (while ticks at a cadence are left), every live hook
// resumed rather than one drawn, one resume per tick, no spread, fewer
// ticks (half, one fewer, none when the deadlines tick). Each edit moves
// a field toward its zero, so a shrink ends.
func driverEdits(r model.Resumes) []model.Resumes {
	var out []model.Resumes
	with := func(edit func(r *model.Resumes)) {
		c := r
		edit(&c)
		out = append(out, c)
	}
	if r.AtDeadlines && r.Count > 0 {
		with(func(c *model.Resumes) { c.AtDeadlines = false })
	}
	if r.One {
		with(func(c *model.Resumes) { c.One = false })
	}
	if r.Burst > 0 {
		with(func(c *model.Resumes) { c.Burst = 0 }) // 0 and 1 both send one
	}
	if r.Spread > 0 {
		with(func(c *model.Resumes) { c.Spread = 0 })
	}
	if r.Count > 1 {
		if r.Count/2 < r.Count-1 {
			with(func(c *model.Resumes) { c.Count = r.Count / 2 })
		}
		with(func(c *model.Resumes) { c.Count = r.Count - 1 })
	}
	if r.Count > 0 && r.AtDeadlines {
		with(func(c *model.Resumes) { c.Count, c.Every = 0, 0 })
	}
	return out
}

// hookEdits are the programs without one of ns's hooks each: its hook
// statement, and every receive and dispose of it in its scope (the rest of
// its list and the lists inside it; a hook's name is block-scoped and no
// other hook of that name is in scope there), a race, all or seq left
// with no statement dropped with them, a loop with no body, an if with
// neither branch.
func hookEdits(ns []program.Node) [][]program.Node {
	var out [][]program.Node
	for j := 0; ; j++ {
		k := j
		p, ok := withoutHook(ns, &k)
		if !ok {
			return out
		}
		if len(p) > 0 {
			out = append(out, p)
		}
	}
}

// withoutHook is ns without its j-th hook statement (in walk order) and
// that hook's receives and disposes; false when ns has no j-th hook. j
// counts down the hooks passed.
func withoutHook(ns []program.Node, j *int) ([]program.Node, bool) {
	for i := range ns {
		if ns[i].Kind() == program.KindHook {
			if *j == 0 {
				rest := stripHook(ns[i+1:], ns[i].Hook)
				return append(cloneNodes(ns[:i]), rest...), true
			}
			*j--
			continue
		}
		n := cloneNode(ns[i])
		for _, l := range childLists(&n) {
			if *l == nil {
				continue
			}
			if edited, ok := withoutHook(*l, j); ok {
				*l = edited
				out := cloneNodes(ns)
				out[i] = n
				return out, true
			}
		}
	}
	return nil, false
}

// stripHook is a copy of ns without the receives and disposes of hook h,
// and without what they leave empty (see hookEdits).
func stripHook(ns []program.Node, h string) []program.Node {
	var out []program.Node
	for i := range ns {
		n := cloneNode(ns[i])
		if k := n.Kind(); k == program.KindReceive && n.Receive == h || k == program.KindDispose && n.Dispose == h {
			continue
		}
		had := n.Kind()
		for _, l := range childLists(&n) {
			if *l != nil {
				if *l = stripHook(*l, h); len(*l) == 0 {
					*l = nil
				}
			}
		}
		switch had {
		case program.KindAll, program.KindRace, program.KindSeq:
			if n.All == nil && n.Race == nil && n.Seq == nil {
				continue
			}
		case program.KindLoop:
			if n.Do == nil {
				continue
			}
		case program.KindIf:
			if n.Then == nil && n.Else == nil {
				continue
			}
		}
		out = append(out, n)
	}
	return out
}

// childLists are n's lists of statements: an all's, race's or seq's
// branches, an if's branches, a loop's body.
func childLists(n *program.Node) []*[]program.Node {
	return []*[]program.Node{&n.All, &n.Race, &n.Seq, &n.Then, &n.Else, &n.Do}
}

// listEdits are the lists one edit smaller than ns: a half of it, one
// statement fewer, or one statement made smaller. top says ns is the whole
// program (it keeps a statement).
func listEdits(ns []program.Node, top bool) [][]program.Node {
	var out [][]program.Node
	if len(ns) >= 4 {
		out = append(out, cloneNodes(ns[:len(ns)/2]), cloneNodes(ns[len(ns)/2:]))
	}
	if len(ns) > 1 || !top {
		for i := range ns {
			l := append(cloneNodes(ns[:i]), cloneNodes(ns[i+1:])...)
			if len(l) == 0 {
				l = nil // an if's branch gone: no empty list to write
			}
			out = append(out, l)
		}
	}
	for i := range ns {
		for _, n := range nodeEdits(ns[i]) {
			l := cloneNodes(ns)
			l[i] = n
			out = append(out, l)
		}
	}
	return out
}

// nodeEdits are the statements one edit smaller than n.
func nodeEdits(n program.Node) []program.Node {
	var out []program.Node
	with := func(edit func(c *program.Node)) {
		c := cloneNode(n)
		edit(&c)
		out = append(out, c)
	}
	seq := func(body []program.Node) {
		out = append(out, program.Node{Seq: cloneNodes(body), As: n.As})
	}
	switch n.Kind() {
	case program.KindAll, program.KindRace, program.KindSeq:
		kids := n.All
		switch n.Kind() {
		case program.KindRace:
			kids = n.Race
		case program.KindSeq:
			kids = n.Seq
		}
		if len(kids) == 1 {
			k := cloneNode(kids[0])
			if k.As == "" {
				k.As = n.As
			}
			out = append(out, k)
		}
		for _, l := range listEdits(kids, false) {
			with(func(c *program.Node) {
				switch n.Kind() {
				case program.KindAll:
					c.All = l
				case program.KindRace:
					c.Race = l
				default:
					c.Seq = l
				}
			})
		}
	case program.KindIf:
		seq(n.Then)
		seq(n.Else)
		for _, l := range listEdits(n.Then, false) {
			with(func(c *program.Node) { c.Then = l })
		}
		for _, l := range listEdits(n.Else, false) {
			with(func(c *program.Node) { c.Else = l })
		}
	case program.KindLoop:
		seq(n.Do)
		if n.Loop > 1 {
			with(func(c *program.Node) { c.Loop = n.Loop / 2 })
			with(func(c *program.Node) { c.Loop = n.Loop - 1 })
		}
		for _, l := range listEdits(n.Do, false) {
			with(func(c *program.Node) { c.Do = l })
		}
	case program.KindPool:
		out = append(out, program.Node{Step: n.Step, Body: n.Body, Results: n.Results, Hangs: n.Hangs, As: n.As})
		if n.N > 1 {
			with(func(c *program.Node) { c.N = n.N / 2 })
			with(func(c *program.Node) { c.N = n.N - 1 })
		}
		if n.Pool > 1 {
			with(func(c *program.Node) { c.Pool = n.Pool - 1 })
		}
	}
	if n.Hangs > 0 {
		with(func(c *program.Node) { c.Hangs = 0 })
		if n.Hangs > 1 {
			with(func(c *program.Node) { c.Hangs = n.Hangs - 1 })
		}
	}
	return out
}

func cloneNodes(ns []program.Node) []program.Node {
	if ns == nil {
		return nil
	}
	out := make([]program.Node, len(ns))
	for i := range ns {
		out[i] = cloneNode(ns[i])
	}
	return out
}

func cloneNode(n program.Node) program.Node {
	for _, l := range childLists(&n) {
		*l = cloneNodes(*l)
	}
	return n
}

// ProgramScenarioFile writes a program's scenario as the scenario file that
// rebuilds it (model.ParseScenario reads it back as the same scenario):
// its name, every field of model.ProgramFields that differs from the
// default, and the program; header lines, if any, lead it as comments.
func ProgramScenarioFile(sc model.Scenario, header ...string) string {
	var b strings.Builder
	for _, h := range header {
		fmt.Fprintf(&b, "# %s\n", h)
	}
	fmt.Fprintf(&b, "name: %s\n", yamlString(sc.Name))
	if sc.Description != "" {
		fmt.Fprintf(&b, "description: %s\n", yamlString(sc.Description))
	}
	def := model.DefaultScenario()
	w, dw := &sc.Workflow, &def.Workflow
	b.WriteString("workflow:\n")
	field := func(key string, v any, differs bool) {
		if differs {
			fmt.Fprintf(&b, "  %s: %v\n", key, v)
		}
	}
	field("max_inline", w.MaxInline, w.MaxInline != dw.MaxInline)
	field("body", fmt.Sprintf("{min: %v, p50: %v, p90: %v, p99: %v, max: %v}", w.Body.Min, w.Body.P50, w.Body.P90, w.Body.P99, w.Body.Max), w.Body != dw.Body)
	field("max_retries", w.MaxRetries, w.MaxRetries != dw.MaxRetries)
	field("inline_ownership_lease", w.InlineOwnershipLease, w.InlineOwnershipLease != dw.InlineOwnershipLease)
	field("replay_base", w.ReplayBase, w.ReplayBase != dw.ReplayBase)
	field("replay_per_entity", w.ReplayPerEntity, w.ReplayPerEntity != dw.ReplayPerEntity)
	field("replay_per_event", w.ReplayPerEvent, w.ReplayPerEvent != dw.ReplayPerEvent)
	field("sequential_replays", w.SequentialReplays, w.SequentialReplays)
	field("max_duration", w.MaxDuration, w.MaxDuration != 0)
	field("log_view", w.LogView, w.LogView != "")
	field("cold_replays", w.ColdReplays, w.ColdReplays)
	field("callsite_ids", w.CallSiteIDs, w.CallSiteIDs)
	if r := w.Resumes; r.Set() {
		var kv []string
		for _, f := range []struct {
			key string
			v   any
			on  bool
		}{{"every", r.Every, r.Every != 0}, {"count", r.Count, r.Count != 0}, {"burst", r.Burst, r.Burst != 0},
			{"spread", r.Spread, r.Spread != 0}, {"one", r.One, r.One}, {"at_deadlines", r.AtDeadlines, r.AtDeadlines}} {
			if f.on {
				kv = append(kv, fmt.Sprintf("%s: %v", f.key, f.v))
			}
		}
		field("resumes", "{"+strings.Join(kv, ", ")+"}", true)
	}
	prog := program.Format(w.Program) // "program:\n  - ...", indented one more level
	for _, line := range strings.Split(strings.TrimRight(prog, "\n"), "\n") {
		b.WriteString("  " + line + "\n")
	}
	if sc.Faults.Crash != def.Faults.Crash {
		fmt.Fprintf(&b, "faults:\n  crash: %v\n", sc.Faults.Crash)
	}
	if sc.Limits.MaxTime != def.Limits.MaxTime {
		fmt.Fprintf(&b, "limits:\n  max_time: %v\n", sc.Limits.MaxTime)
	}
	if sc.Budget.WorkAfterEnd != def.Budget.WorkAfterEnd {
		fmt.Fprintf(&b, "budget:\n  work_after_end: %d\n", sc.Budget.WorkAfterEnd)
	}
	return b.String()
}

// yamlString quotes s for YAML (a JSON string is a YAML string).
func yamlString(s string) string { return fmt.Sprintf("%q", s) }

// programScheduleFileName names the shrunk scenario of prop's
// counterexample at seed of a program's scenario.
func programScheduleFileName(sc model.Scenario, prop string, seed uint64) string {
	return fmt.Sprintf("%s-%s-seed%d.yaml", sc.Name, prop, seed)
}

// saveMinimizedProgram shrinks a program's counterexample and saves the
// shrunk scenario as a file that replays it: simlab run --scenario FILE
// --seed N. It returns the file and the seed.
func saveMinimizedProgram(dir string, sc model.Scenario, seed uint64, prop string, stop func() bool, drawnKnobs bool) (string, uint64, error) {
	ce, ok := minimizeProgram(sc, seed, prop, stop, drawnKnobs)
	if !ok {
		return "", 0, fmt.Errorf("seed %d no longer violates %s when run again (a program's run is deterministic: a bug)", seed, prop)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", 0, fmt.Errorf("schedules directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, programScheduleFileName(sc, prop, seed))
	header := []string{fmt.Sprintf("simlab check's shrunk counterexample of %s: scenario %s, seed %d, shrunk in %d runs.", prop, sc.Name, seed, ce.Tries),
		fmt.Sprintf("Replay: simlab run --scenario %s --seed %d", path, ce.Seed)}
	if prop == ReplayableLog && ProgramForceable(ce.Scenario) == nil {
		header = append(header, "On the real core: "+ReproduceProgramCommand(path, ce.Seed))
	}
	text := ProgramScenarioFile(ce.Scenario, header...)
	return path, ce.Seed, os.WriteFile(path, []byte(text), 0o644)
}

// ReplayableLog is the property simlab reproduce forces for a program.
const ReplayableLog = "replayable-log"

// ProgramForceable says whether simlab reproduce can hold a program's
// scenario to the real core (nil), or why not.
func ProgramForceable(sc model.Scenario) error {
	w := &sc.Workflow
	switch {
	case !sc.IsProgram():
		return fmt.Errorf("scenario %s is not a program (workflow.program): reproduce a fan-out's saved schedule (.json) instead", sc.Name)
	case w.LogView != model.LogViewPrefix && w.LogView != "":
		return fmt.Errorf("workflow.log_view %s: every pinned core runs on slot ids (the prefix view)", w.LogView)
	case w.SequentialReplays:
		return errors.New("workflow.sequential_replays: the real harness does not switch sequential replays on")
	case w.CallSiteIDs:
		return errors.New("workflow.callsite_ids: no pinned core mints call-site correlation ids (vercel/workflow #3179 is a proposal)")
	case w.MaxRetries != model.DefaultScenario().Workflow.MaxRetries:
		return fmt.Errorf("workflow.max_retries %d: the real core's step retry budget is its own (%d)", w.MaxRetries, model.DefaultScenario().Workflow.MaxRetries)
	case sc.Faults.Crash > 0:
		return fmt.Errorf("faults.crash %v: a crash is drawn on each side, not forced; remove it from the scenario", sc.Faults.Crash)
	case w.Search != "":
		return fmt.Errorf("workflow.search %s draws a program per seed: reproduce the seed's shrunk counterexample, the scenario file simlab check writes", w.Search)
	case w.Resumes.Set():
		return errors.New("workflow.resumes: the outside driver's resumes are timed on the real side, not held in simlab's order; reproduce cannot force them yet")
	}
	return nil
}

// ReproduceProgramCommand forces a program's shrunk replayable-log
// counterexample on the real core.
func ReproduceProgramCommand(path string, seed uint64) string {
	return fmt.Sprintf("simlab reproduce %s --seed %d", model.ShellQuote(path), seed)
}
