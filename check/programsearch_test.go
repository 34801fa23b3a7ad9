package check

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/flow"
	"github.com/simlab/simlab/model/program"
	"github.com/simlab/simlab/model/seeds"
	"github.com/simlab/simlab/properties"
	"github.com/simlab/simlab/properties/spancheck"
)

// builtin is a built-in scenario.
func builtin(t *testing.T, name string) model.Scenario {
	t.Helper()
	sc, ok := model.Builtin(name)
	if !ok {
		t.Fatalf("no built-in %s", name)
	}
	return sc
}

// writeAndLoad writes sc as ProgramScenarioFile does and loads it back.
func writeAndLoad(t *testing.T, sc model.Scenario) model.Scenario {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sc.yaml")
	text := ProgramScenarioFile(sc, "a header")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := model.Spec{Scenario: path}.Load()
	if err != nil {
		t.Fatalf("the file does not load: %v\n%s", err, text)
	}
	return back
}

// A program's scenario file writes every field a program's scenario may
// set: read back, it is the same scenario (the driver of its hooks and
// cold replays too, not only the knobs of a program without hooks).
func TestProgramScenarioFileKeepsEveryProgramField(t *testing.T) {
	sc := model.DefaultScenario()
	sc.Name, sc.Description = "every-field", "each program field off its default"
	sc.Workflow.Fanouts = nil
	sc.Workflow.Program = []program.Node{{Hook: "h"}, {Race: []program.Node{{Receive: "h"}, {Sleep: time.Second}}, As: "got"}, {Step: "a", Hangs: 1}}
	w := &sc.Workflow
	w.MaxInline, w.MaxRetries, w.InlineOwnershipLease = 8, 5, 30*time.Second
	w.Body = flow.Defaults(nil).Body
	w.ReplayBase, w.ReplayPerEntity, w.ReplayPerEvent = 7*time.Millisecond, time.Millisecond, 2*time.Microsecond
	w.SequentialReplays, w.MaxDuration, w.LogView, w.ColdReplays, w.CallSiteIDs = true, 2*time.Second, model.LogViewOwnWrites, true, true
	w.Resumes = model.Resumes{Every: 50 * time.Millisecond, Count: 7, Burst: 3, Spread: 5 * time.Millisecond, One: true, AtDeadlines: true}
	sc.Faults.Crash, sc.Limits.MaxTime, sc.Budget.WorkAfterEnd = 0.05, 2*time.Hour, 4
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	back := writeAndLoad(t, sc)
	if a, b := program.Format(sc.Workflow.Program), program.Format(back.Workflow.Program); a != b {
		t.Errorf("the program read back:\n%s\nwant:\n%s", b, a)
	}
	back.Workflow.Program = sc.Workflow.Program // the parser's line numbers aside
	if !reflect.DeepEqual(back, sc) {
		t.Errorf("read back:\n%+v\nwant:\n%+v\n%s", back, sc, ProgramScenarioFile(sc))
	}
}

// A search's seed, written as the scenario file check writes, runs the
// seed's own case: the same run as the search's, whatever the seed drew
// (a driver, a time limit, crashes, max_inline, sequential replays), and
// the same properties violated.
func TestASearchSeedsFileRunsItsCase(t *testing.T) {
	sc := builtin(t, "program-search")
	knobs := map[string]bool{}
	violated := 0
	for seed := uint64(1); seed <= 200; seed++ {
		drawn := sc.SeedScenario(seed)
		back := writeAndLoad(t, drawn)
		for _, f := range ProgramFeatures(&back) {
			if f == "sequential" || f == "resumes" || strings.HasPrefix(f, "max_inline.") {
				knobs[f] = true
			}
		}
		a, err := FlowConfig(&drawn)
		if err != nil {
			t.Fatal(err)
		}
		b, err := FlowConfig(&back)
		if err != nil {
			t.Fatal(err)
		}
		var x, y flow.Runner // fresh: a reused Runner's empty slices are not nil
		want, wantRep, err := programRun(&x, &drawn, a, seed)
		if err != nil {
			t.Fatal(err)
		}
		got, gotRep, err := programRun(&y, &back, b, seed)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d: the file's run differs from the search's:\n%s", seed, ProgramScenarioFile(drawn))
		}
		if w, g := violations(wantRep), violations(gotRep); !slices.Equal(w, g) {
			t.Errorf("seed %d: the search's run violates %v, the file's %v", seed, w, g)
		} else if len(w) > 0 {
			violated++
		}
	}
	if len(knobs) < 4 || !knobs["sequential"] || !knobs["resumes"] {
		t.Errorf("200 seeds' files set %v: want a driver, sequential replays and some max_inline", knobs)
	}
	if violated == 0 {
		t.Error("no seed of 200 violates a property: the test wants one")
	}
}

// violations are the properties a report finds violated, in its order.
func violations(rep *spancheck.Report) []string {
	var out []string
	for _, v := range rep.Verdicts {
		if v.Judged && len(v.Violations) > 0 {
			out = append(out, v.Property)
		}
	}
	return out
}

// The features and pairs ProgramFeaturePairs counts: two of the program's,
// or one of the program's with a driver's, fault's or knob's; never step,
// seq, receive or resumes, nor two of the draw's own.
func TestProgramFeaturePairs(t *testing.T) {
	got := ProgramFeaturePairs([]string{"crash", "hook", "max_inline.1", "race", "receive", "resumes", "resumes.one", "seq", "sequential", "step"})
	want := []string{"crash+hook", "crash+race", "hook+max_inline.1", "hook+race", "hook+resumes.one", "hook+sequential",
		"max_inline.1+race", "race+resumes.one", "race+sequential"}
	if !slices.Equal(got, want) {
		t.Errorf("pairs %v, want %v", got, want)
	}
}

// A search's coverage counts its seeds' features and pairs: over 300 seeds
// of program-search every max_inline drawn, sequential replays and each
// driver pattern are reached, with the pairs of a hook with a race, with
// sequential replays and with max_inline 1; a pair's count is the number of
// seeds whose case has both. The search without hooks reaches none of
// their pairs, and no search reports two of the draw's own.
func TestASearchsCoverageCountsFeaturesAndPairs(t *testing.T) {
	sc := builtin(t, "program-search")
	const n = 300
	rep, err := Sweep(SweepConfig{Scenario: sc, Seeds: seeds.Count(n), Props: properties.All()})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"feature:max_inline.1", "feature:max_inline.2", "feature:max_inline.4", "feature:max_inline.8", "feature:max_inline.16",
		"feature:sequential", "feature:resumes.burst", "feature:resumes.once", "feature:resumes.deadlines_only", "feature:resumes.at_deadlines",
		"pair:hook+race", "pair:hook+sequential", "pair:hook+max_inline.1", "pair:clock+if", "pair:pool+race", "pair:loop+resumes.burst"} {
		if rep.Coverage[k] == 0 {
			t.Errorf("%s not reached in %d seeds", k, n)
		}
	}
	if _, ok := rep.Coverage["feature:max_inline.3"]; ok {
		t.Error("feature:max_inline.3 counted: the default is no feature")
	}
	// Counted from the cases themselves.
	has := func(prog []program.Node, k program.Kind) bool {
		found := false
		program.Walk(prog, func(n *program.Node) { found = found || n.Kind() == k })
		return found
	}
	hookRace, hookSeq, clockInline1 := 0, 0, 0
	for s := uint64(1); s <= n; s++ {
		k := flow.DrawHookCase(s)
		hook := has(k.Program, program.KindHook)
		if hook && has(k.Program, program.KindRace) {
			hookRace++
		}
		if hook && k.SequentialReplays {
			hookSeq++
		}
		if has(k.Program, program.KindClock) && k.MaxInline == 1 {
			clockInline1++
		}
	}
	for k, want := range map[string]int{"pair:hook+race": hookRace, "pair:hook+sequential": hookSeq, "pair:clock+max_inline.1": clockInline1} {
		if rep.Coverage[k] != want {
			t.Errorf("%s counted %d times, %d seeds' cases have both", k, rep.Coverage[k], want)
		}
	}
	plain := sc
	plain.Name, plain.Workflow.Search = "programs", model.SearchPrograms
	without, err := Sweep(SweepConfig{Scenario: plain, Seeds: seeds.Count(n), Props: properties.All()})
	if err != nil {
		t.Fatal(err)
	}
	if without.Coverage["pair:race+sequential"] == 0 || without.Coverage["feature:crash"] == 0 || without.Coverage["feature:time_limit"] == 0 {
		t.Errorf("the search without hooks: coverage %v: want its races with sequential replays, crashes and time limits", without.Coverage)
	}
	for _, r := range []*Report{rep, without} {
		for k := range r.Coverage {
			p, ok := strings.CutPrefix(k, "pair:")
			if !ok {
				continue
			}
			if r == without && (strings.Contains(p, "hook") || strings.Contains(p, "carry") || strings.Contains(p, "dispose") || strings.Contains(p, "resumes")) {
				t.Errorf("the search without hooks reports %s", k)
			}
			a, b, _ := strings.Cut(p, "+")
			if draw(a) && draw(b) {
				t.Errorf("%s: a pair of the draw's own", k)
			}
			for _, f := range []string{a, b} {
				if f == "step" || f == "seq" || f == "receive" || f == "resumes" {
					t.Errorf("%s: a pair with %s", k, f)
				}
			}
		}
	}
}

// draw says a feature is a driver's, fault's or knob's.
func draw(f string) bool {
	return strings.HasPrefix(f, "resumes") || strings.HasPrefix(f, "max_inline.") || f == "crash" || f == "time_limit" || f == "sequential"
}

// A hook goes with its receives and disposes, in its own scope only:
// another block's hook of the same name keeps its own; what a receive
// leaves empty goes with it; each edit compiles.
func TestHookEditsRemoveAHookWithItsReads(t *testing.T) {
	prog := []program.Node{
		{Seq: []program.Node{
			{Hook: "h"},
			{Race: []program.Node{{Receive: "h"}, {Sleep: time.Second}}, As: "won"},
			{If: "won", Then: []program.Node{{Step: "a"}}},
			{Loop: 2, Do: []program.Node{{Receive: "h"}}},
			{Dispose: "h"},
		}},
		{Seq: []program.Node{{Hook: "h"}, {Receive: "h"}, {Step: "b"}}},
	}
	if err := program.Validate(prog, "program"); err != nil {
		t.Fatal(err)
	}
	edits := hookEdits(prog)
	if len(edits) != 2 {
		t.Fatalf("%d edits, want one per hook:\n%v", len(edits), edits)
	}
	want := []string{
		"program:\n  - seq:\n      - race:\n          - sleep: 1s\n        as: won\n      - if: won\n        then:\n          - step: a\n  - seq:\n      - hook: h\n      - receive: h\n      - step: b\n",
		"program:\n  - seq:\n      - hook: h\n      - race:\n          - receive: h\n          - sleep: 1s\n        as: won\n      - if: won\n        then:\n          - step: a\n      - loop: 2\n        do:\n          - receive: h\n      - dispose: h\n  - seq:\n      - step: b\n",
	}
	for i, e := range edits {
		if got := program.Format(e); got != want[i] {
			t.Errorf("edit %d:\n%s\nwant:\n%s", i, got, want[i])
		}
		if err := program.Validate(e, "program"); err != nil {
			t.Errorf("edit %d does not compile: %v", i, err)
		}
	}
	if program.Format(prog) == want[0] || len(prog[0].Seq) != 5 {
		t.Error("hookEdits changed the program it was given")
	}
}

// A driver's edits each move one field toward its zero, and applying any
// of them over and over ends; a driver with nothing to simplify has none.
func TestDriverEditsEnd(t *testing.T) {
	r := model.Resumes{Every: 20 * time.Millisecond, Count: 150, Burst: 3, Spread: 5 * time.Millisecond, One: true, AtDeadlines: true}
	size := func(r model.Resumes) int {
		b := func(v bool) int {
			if v {
				return 1
			}
			return 0
		}
		return r.Count + r.Burst + int(r.Spread/time.Millisecond) + b(r.One) + b(r.AtDeadlines)
	}
	steps := 0
	for edits := driverEdits(r); len(edits) > 0; edits = driverEdits(r) {
		for _, e := range edits {
			if size(e) >= size(r) {
				t.Fatalf("edit %+v of %+v is no simpler", e, r)
			}
			if !(flow.Resumes{Count: e.Count, AtDeadlines: e.AtDeadlines}).On() {
				t.Fatalf("edit %+v of %+v resumes nothing", e, r)
			}
		}
		r = edits[len(edits)-1] // the smallest step each time: the longest way down
		steps++
	}
	if r != (model.Resumes{Every: 20 * time.Millisecond, Count: 1}) && r != (model.Resumes{AtDeadlines: true}) {
		t.Errorf("ended at %+v after %d edits: want a single tick or the deadlines alone", r, steps)
	}
}

// A counterexample with a hook, a driver and knobs it does not need (the
// clock storm's corrupted log beside a hook raced against a sleep, resumed
// in bursts at a cadence and at deadlines, max_inline 8, sequential
// replays, crashes) shrinks to one with no hook and no driver, whose file
// still corrupts; a plain shrink keeps the scenario's knobs, a search
// case's shrink puts the knobs it drew back at their defaults; and a
// search's counterexample that needs its driver keeps one, simpler than it
// drew.
func TestMinimizeProgramShrinksHooksDriverAndKnobs(t *testing.T) {
	sc := builtin(t, "clock-storm")
	sc.Workflow.Program = append([]program.Node{{Hook: "x"}, {Race: []program.Node{{Receive: "x"}, {Sleep: 100 * time.Millisecond}}, As: "got"}},
		append(sc.Workflow.Program, program.Node{Dispose: "x"})...)
	sc.Workflow.Resumes = model.Resumes{Every: 50 * time.Millisecond, Count: 60, Burst: 3, Spread: 5 * time.Millisecond, One: true, AtDeadlines: true}
	sc.Workflow.MaxInline, sc.Workflow.SequentialReplays, sc.Faults.Crash = 8, true, 0.05
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	seed := firstCorrupted(t, sc, 200)
	// The scenario's own knobs are its configuration: a plain shrink
	// keeps them.
	kept, ok := MinimizeProgram(sc, seed, "replayable-log", nil)
	if !ok {
		t.Fatalf("seed %d does not violate replayable-log", seed)
	}
	if w := &kept.Scenario.Workflow; w.MaxInline != 8 || !w.SequentialReplays {
		t.Errorf("a plain shrink left max_inline %d, sequential %v: want the scenario's 8 and on", w.MaxInline, w.SequentialReplays)
	}
	// Drawn by a search, they are inputs and go back to their defaults.
	ce, ok := MinimizeSearchCase(sc, seed, "replayable-log", nil)
	if !ok {
		t.Fatalf("seed %d does not violate replayable-log", seed)
	}
	w := &ce.Scenario.Workflow
	text := ProgramScenarioFile(ce.Scenario)
	if program.MustCompile(w.Program).UsesHooks() || w.Resumes.Set() || w.MaxInline != 3 || w.SequentialReplays || ce.Scenario.Faults.Crash != 0 {
		t.Errorf("shrunk to a hook %v, driver %+v, max_inline %d, sequential %v, crash %v: want none of them\n%s",
			program.MustCompile(w.Program).UsesHooks(), w.Resumes, w.MaxInline, w.SequentialReplays, ce.Scenario.Faults.Crash, text)
	}
	back := writeAndLoad(t, ce.Scenario)
	cfg, err := FlowConfig(&back)
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := flow.Run(cfg, ce.Seed); !res.Unconsumable() {
		t.Errorf("the shrunk file's run at seed %d ended %s with a log a fresh replay consumes:\n%s", ce.Seed, res.End, text)
	}

	// A search's run ended twice by a wake and a hook's resume: the
	// shrunk case keeps a hook and a driver, simpler than the drawn one.
	ps := builtin(t, "program-search")
	rep, err := Sweep(SweepConfig{Scenario: ps, Seeds: seeds.Count(200), Props: properties.All()})
	if err != nil {
		t.Fatal(err)
	}
	f := rep.First["single-terminal-event"]
	if f == nil {
		t.Fatal("no run of program-search's 200 seeds ended twice: the test needs one")
	}
	drawn := ps.SeedScenario(f.Seed)
	if !drawn.Workflow.Resumes.Set() {
		t.Fatalf("seed %d's case has no driver to simplify: the test needs one", f.Seed)
	}
	ce, ok = MinimizeSearchCase(drawn, f.Seed, "single-terminal-event", nil)
	if !ok {
		t.Fatalf("seed %d does not violate single-terminal-event", f.Seed)
	}
	d, s := drawn.Workflow.Resumes, ce.Scenario.Workflow.Resumes
	simpler := s.Count < d.Count || s.Burst < d.Burst || s.Spread < d.Spread || d.One && !s.One || d.AtDeadlines && !s.AtDeadlines
	if !simpler || s.Count > d.Count || s.Burst > d.Burst || s.Spread > d.Spread || s.One && !d.One || s.AtDeadlines && !d.AtDeadlines {
		t.Errorf("seed %d's driver %+v shrunk to %+v: want it simpler\n%s", f.Seed, d, s, ProgramScenarioFile(ce.Scenario))
	}
	back = writeAndLoad(t, ce.Scenario)
	if cfg, err = FlowConfig(&back); err != nil {
		t.Fatal(err)
	}
	if res, _ := flow.Run(cfg, ce.Seed); res.RunEnds < 2 {
		t.Errorf("the shrunk file's run at seed %d ended %d times: want twice or more\n%s", ce.Seed, res.RunEnds, ProgramScenarioFile(ce.Scenario))
	}
}

// workflow.callsite_ids runs a program's scenario with call-site ids (the
// team's proposed fix, #3179): the hook storm without slot ids corrupts
// fewer of its seeds than with positional ids, and some still, as replays
// --callsite-ids says; reproduce refuses it (no pinned core has the fix).
func TestCallSiteIDsInAScenario(t *testing.T) {
	sc := builtin(t, "hook-storm")
	sc.Workflow.LogView = model.LogViewOwnWrites
	corrupted := func(callSite bool) int {
		sc.Workflow.CallSiteIDs = callSite
		cfg, err := FlowConfig(&sc)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.CallSiteIDs != callSite {
			t.Fatalf("FlowConfig: call-site ids %v, want %v", cfg.CallSiteIDs, callSite)
		}
		n := 0
		for seed := uint64(1); seed <= 60; seed++ {
			res, err := flow.Run(cfg, seed)
			if err != nil {
				t.Fatal(err)
			}
			if res.End == flow.Corrupted {
				n++
			}
		}
		return n
	}
	positional, callSite := corrupted(false), corrupted(true)
	if callSite == 0 || callSite >= positional {
		t.Errorf("hook storm without slot ids, 60 seeds: %d corrupted with positional ids, %d with call-site ids; want fewer, not none", positional, callSite)
	}
	sc.Workflow.LogView = model.LogViewPrefix
	if err := ProgramForceable(sc); err == nil || !strings.Contains(err.Error(), "callsite_ids") {
		t.Errorf("ProgramForceable with call-site ids: %v; want it refused", err)
	}
}
