package model

import (
	"slices"
	"strings"
	"testing"

	"github.com/simlab/simlab/model/flow"
)

// A program's scenario file: what it may set is read, what it may not is
// refused naming the field, and the knobs only a program reads are refused
// on a fan-out scenario.
func TestProgramScenarioFields(t *testing.T) {
	const prog = "  program:\n    - race: [{step: a}, {sleep: 1s}]\n    - step: b\n"
	ok := "name: p\nworkflow:\n  log_view: own-writes\n  sequential_replays: true\n  max_duration: 2s\n  max_inline: 2\n" + prog +
		"faults:\n  crash: 0.1\nbudget:\n  work_after_end: 3\n"
	sc, err := ParseScenario([]byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Validate(); err != nil || !sc.IsProgram() {
		t.Fatalf("a program's scenario: %v, IsProgram %v", err, sc.IsProgram())
	}
	if sc.Description != "" {
		t.Errorf("description %q: want none (the default's is the fan-out's)", sc.Description)
	}
	for _, c := range []struct{ doc, want string }{
		{"name: p\nruns: 2\nworkflow:\n" + prog, "runs: a program's run"},
		{"name: p\nworld: world-postgres\nworkflow:\n" + prog, "world: a program's run"},
		{"name: p\nvariants: [pre-fix-fence]\nworkflow:\n" + prog, "variants: a program's run"},
		{"name: p\nfaults:\n  stale_read: 0.1\nworkflow:\n" + prog, "faults.stale_read: a program's run"},
		{"name: p\nworkflow:\n  chunk_size: 4\n" + prog, "workflow.chunk_size: a program's run"},
		{"name: p\nworkflow:\n  log_view: sideways\n" + prog, `workflow.log_view = "sideways"`},
		{"name: p\nworkflow:\n  max_duration: -1s\n" + prog, "workflow.max_duration = -1s"},
		{"name: p\nfaults:\n  crash: 2\nworkflow:\n" + prog, "faults.crash = 2"},
		{"name: f\nworkflow:\n  fanouts: [4]\n  sequential_replays: true\n", "workflow.sequential_replays: only a program's run reads it"},
		{"name: f\nworkflow:\n  fanouts: [4]\n  log_view: prefix\n", "workflow.log_view: only a program's run reads it"},
	} {
		sc, err := ParseScenario([]byte(c.doc))
		if err == nil {
			err = sc.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error containing %q", c.doc, err, c.want)
		}
	}
	sc.Workflow.Fanouts = []int{3}
	if err := sc.Validate(); err == nil || !strings.Contains(err.Error(), "set one of them") {
		t.Errorf("a program with fan-outs: %v", err)
	}
}

// The fan-out engine refuses a program's scenario instead of running
// something else.
func TestRunRefusesAProgramsScenario(t *testing.T) {
	sc, err := ParseScenario([]byte("name: p\nworkflow:\n  program:\n    - sleep: 1s\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(&sc, nil, Options{}); err != ErrProgramScenario {
		t.Errorf("Run: %v, want ErrProgramScenario", err)
	}
}

// The built-in programs' scenarios load by name, are programs, and are
// valid; a file may start from one (base: storm).
func TestBuiltinProgramScenarios(t *testing.T) {
	names := BuiltinProgramNames()
	if want := []string{"clock-storm", "control", "hook-storm", "inline-hang", "program-search", "storm", "wake-loop"}; !slices.Equal(names, want) {
		t.Fatalf("built-in programs %v: want %v", names, want)
	}
	for _, n := range names {
		sc, err := Spec{Scenario: n}.Load()
		if err != nil || !sc.IsProgram() || sc.Name != n {
			t.Errorf("%s: %v, a program %v, name %q", n, err, sc.IsProgram(), sc.Name)
		}
	}
	sc, err := ParseScenario([]byte("name: mine\nbase: storm\nworkflow:\n  log_view: own-writes\n"))
	if err != nil || !sc.IsProgram() || sc.Workflow.LogView != LogViewOwnWrites {
		t.Errorf("base: storm: %v, a program %v, view %q", err, sc.IsProgram(), sc.Workflow.LogView)
	}
	if err == nil {
		if err := sc.Validate(); err != nil {
			t.Errorf("base: storm: %v", err)
		}
	}
}

// workflow.resumes is refused where it would be ignored or resume nothing.
func TestResumesAreRefusedWhereTheyCannotBeHonoured(t *testing.T) {
	const hooked = "name: x\nworkflow:\n  program:\n    - hook: h\n    - race: [{receive: h}, {sleep: 1s}]\n"
	cases := []struct{ yaml, want string }{
		{"name: x\nbase: storm\nworkflow:\n  resumes: {every: 100ms, count: 3}\n", "the program creates no hook"},
		{hooked + "  resumes: {every: 100ms}\n", "resumes nothing"},
		{hooked + "  resumes: {count: 3}\n", "want a positive cadence"},
		{hooked + "  resumes: {every: 1s, count: 1, burst: 65}\n", "want 0..64"},
		{"name: x\nworkflow:\n  fanouts: [3]\n  resumes: {every: 1s, count: 1}\n", "only a program's run reads it"},
		{"name: x\nworkflow:\n  fanouts: [3]\n  callsite_ids: true\n", "workflow.callsite_ids: only a program's run reads it"},
	}
	for _, c := range cases {
		sc, err := ParseScenario([]byte(c.yaml))
		if err == nil {
			err = sc.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.yaml, err, c.want)
		}
	}
}

// A search's seed scenario carries every knob its case draws: the driver,
// faults, max_inline and sequential replays (so the scenario file written
// from it runs the seed's own case), and validates as a plain program's
// scenario; over the search's seeds the knobs leave their defaults. A
// search scenario that sets max_inline or sequential replays itself is
// refused, naming them; the default max_inline is no setting.
func TestASearchSeedScenarioCarriesTheDrawnKnobs(t *testing.T) {
	sc, ok := Builtin("program-search")
	if !ok {
		t.Fatal("no program-search")
	}
	inline, sequential := 0, 0
	for seed := uint64(1); seed <= 200; seed++ {
		d, k := sc.SeedScenario(seed), flow.DrawHookCase(seed)
		w := &d.Workflow
		if w.Search != "" || w.MaxInline != k.MaxInline || w.SequentialReplays != k.SequentialReplays || w.Resumes != resumesOf(k.Resumes) ||
			d.Faults.Crash != k.Crash || w.MaxDuration != k.MaxDuration {
			t.Fatalf("seed %d's scenario: %+v, crash %v; its case %+v", seed, *w, d.Faults.Crash, k)
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("seed %d's scenario: %v", seed, err)
		}
		if w.MaxInline != 3 {
			inline++
		}
		if w.SequentialReplays {
			sequential++
		}
	}
	if inline == 0 || sequential == 0 {
		t.Errorf("200 seeds: %d with max_inline other than 3, %d sequential: want some of each", inline, sequential)
	}
	for _, c := range []struct{ set, want string }{
		{"  max_inline: 8\n", "draws each seed's max_inline and sequential replays"},
		{"  sequential_replays: true\n", "draws each seed's max_inline and sequential replays"},
		{"  max_inline: 3\n", ""},
	} {
		s, err := ParseScenario([]byte("name: s\nbase: program-search\nworkflow:\n" + c.set))
		if err == nil {
			err = s.Validate()
		}
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("program-search with %q: %v, want %q", c.set, err, c.want)
		}
	}
}

// A scenario file that searches (workflow.search) names no program, and so
// no fan-out list either: the default's is not the scenario's, and a file
// setting one beside the search is refused at its line.
func TestASearchScenarioFileNeedsNoFanouts(t *testing.T) {
	for _, search := range []string{SearchPrograms, SearchHooks} {
		s, err := ParseScenario([]byte("name: mine\nworkflow:\n  search: " + search + "\n"))
		if err != nil {
			t.Fatalf("search %s: %v", search, err)
		}
		if !s.IsProgram() || len(s.Workflow.Fanouts) != 0 || s.Description != "" {
			t.Errorf("search %s: fanouts %v, description %q: want a program's scenario with neither", search, s.Workflow.Fanouts, s.Description)
		}
		if seed := s.SeedScenario(3); len(seed.Workflow.Program) == 0 {
			t.Errorf("search %s: seed 3 drew no program", search)
		}
	}
	_, err := ParseScenario([]byte("workflow:\n  search: hooks\n  fanouts: [4]\n"))
	if err == nil || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), "workflow.fanouts") {
		t.Errorf("a search beside fanouts: %v; want workflow.fanouts refused at line 3", err)
	}
}
