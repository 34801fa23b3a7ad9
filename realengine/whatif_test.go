package realengine

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/simlab/simlab/check"
)

// The model's side of --what-if: every answer its world-local gives a
// race group over every interleaving of the members' steps, from the
// store rebuilt as the History had it. The History's own answers are
// among them (the History is one interleaving), and the races the saved
// schedules force have more than one outcome in the model: the cancel
// racing the run's start can reopen the run or leave it cancelled; two
// last completers' run_completed can both be accepted or one refused.
func TestWhatIfModelOutcomesOfTheSavedRaces(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string // outcomes the model must have, among others
	}{
		{"f17-cancel-racing-start.json", []string{"ok, ok → running", "ok, ok → cancelled"}},
		{"f15-two-run-completed.json", []string{"ok, ok → completed", "ok, EntityConflictError → completed"}},
	} {
		s, err := check.LoadSchedule(scheduleFile(tc.file))
		if err != nil {
			t.Fatal(err)
		}
		_, wi, err := PrepareWhatIf(s, tc.file)
		if err != nil {
			t.Fatal(err)
		}
		// Each group's members are together in the plan.
		seen := map[int]bool{}
		for _, g := range raceGroups(wi.plan) {
			if id := wi.plan.Entries[g[0]].Group; seen[id] {
				t.Errorf("%s: race group %d is split in the plan", tc.file, id)
			} else {
				seen[id] = true
			}
		}
		// The group of the finding: the one with a run event.
		var g *RaceGroup
		for i := range wi.Groups {
			for _, m := range wi.Groups[i].Members {
				if g == nil && (strings.Contains(m, "run_completed") || strings.Contains(m, "run_cancelled")) {
					g = &wi.Groups[i]
				}
			}
		}
		if g == nil {
			t.Fatalf("%s: no race group of run events among %d", tc.file, len(wi.Groups))
		}
		for _, o := range wi.Groups {
			var answers []string
			for _, m := range o.Model {
				answers = append(answers, m.Answers)
			}
			if !slices.Contains(answers, o.History) {
				t.Errorf("%s group %d: the History's answers %q are not among the model's outcomes %q", tc.file, o.Group, o.History, o.Model)
			}
		}
		t.Logf("%s: group %d %v: history %q; model %q %s", tc.file, g.Group, g.Members, g.History, g.Model, g.ModelNote)
		var answers []string
		for _, m := range g.Model {
			answers = append(answers, m.Answers)
		}
		if !slices.Contains(answers, g.History) {
			t.Errorf("%s: the History's answers %q are not among the model's outcomes %q", tc.file, g.History, g.Model)
		}
		for _, w := range tc.want {
			if !slices.ContainsFunc(g.Model, func(m ModelOutcome) bool { return m.String() == w }) {
				t.Errorf("%s: the model's outcomes %q lack %q", tc.file, g.Model, w)
			}
		}
	}
}

// A plan with no race group is refused: nothing in it is released
// together. --what-if's groups take in step writes too (a fan-out's
// creates in flight at once), where reproduce's take run events only.
func TestWhatIfRefusesAPlanWithoutARace(t *testing.T) {
	_, err := whatIfGroups(&Plan{Entries: []PlanEntry{{Key: "a"}, {Key: "b"}}})
	if !errors.Is(err, ErrNotReproducible) || !strings.Contains(err.Error(), "no race group") {
		t.Fatalf("err %v, want a refusal naming the missing race group", err)
	}
	s, rp := loadSaved(t, "stale-pending-run-failed.json")
	if g := raceGroups(rp.Plan); len(g) != 0 {
		t.Fatalf("reproduce's plan has %d race groups, want none (no two run events in flight at once)", len(g))
	}
	_, wi, err := PrepareWhatIf(s, "stale-pending-run-failed.json")
	if err != nil || len(wi.Groups) == 0 {
		t.Fatalf("--what-if: %v, %d groups; want the fan-out's creates as a group", err, len(wi.Groups))
	}
}

// OnlyReal names each real answer the model's World cannot give, and
// nothing for a group the plan never released.
func TestWhatIfOnlyReal(t *testing.T) {
	wi := &WhatIf{Groups: []RaceGroup{
		{Group: 1, Model: []ModelOutcome{{Answers: "ok, ok", RunStatus: "completed"}}, Real: []RealOutcome{
			{Core: "c", Answers: "ok, ok", Runs: 2, InModel: true},
			{Core: "c", Answers: "ok, RunExpiredError", Runs: 1},
		}},
		{Group: 2, Real: []RealOutcome{{Core: "c", Answers: notReleased + " (entry 4 waiting)", Runs: 3}}},
	}}
	got := wi.OnlyReal()
	if len(got) != 1 || got[0] != "group 1 on core c: ok, RunExpiredError" {
		t.Fatalf("OnlyReal %q, want the one answer the model lacks", got)
	}
	if r := wi.Groups[1].Real[0]; r.Released() {
		t.Errorf("%q counts as released", r.Answers)
	}
	if r := wi.Groups[0].Real[1]; !r.Released() {
		t.Errorf("%q counts as never released", r.Answers)
	}
}

// groupAnswers says where a plan that broke before a group's release
// broke: before the group (an entry the runtime never made) or at it.
func TestWhatIfGroupAnswersNamesTheBreak(t *testing.T) {
	report := func(broke int, missing []int, states ...string) *PlanReport {
		pr := &PlanReport{}
		pr.Broken = &struct {
			Entry       int   `json:"entry"`
			Missing     []int `json:"missing"`
			Outstanding int   `json:"outstanding"`
			Held        []int `json:"held"`
		}{Entry: broke, Missing: missing}
		for _, s := range states {
			pr.Status = append(pr.Status, struct {
				State  string `json:"state"`
				Result string `json:"result"`
				Status string `json:"status"`
			}{State: s, Result: "ok"})
		}
		return pr
	}
	for _, c := range []struct {
		pr   *PlanReport
		want string
	}{
		{report(1, []int{1}, "answered", "waiting", "answered", "waiting"), notReleased + " (the plan broke before the group: entry 1 never came)"},
		{report(2, []int{3}, "answered", "answered", "held", "waiting"), notReleased + " (the plan broke at the group: entry 3 never came)"},
		{report(9, nil, "answered", "answered", "answered", "answered"), "ok, ok"},
	} {
		if got := groupAnswers(c.pr, 2, 2); got != c.want {
			t.Errorf("groupAnswers = %q, want %q", got, c.want)
		}
	}
}
