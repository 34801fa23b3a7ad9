package engine

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/simlab/simlab/properties"
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
		s, err := properties.LoadSchedule(scheduleFile(tc.file))
		if err != nil {
			t.Fatal(err)
		}
		_, wi, err := PrepareWhatIf(s, tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if len(wi.Groups) == 0 {
			t.Fatalf("%s: no race group", tc.file)
		}
		g := wi.Groups[0]
		t.Logf("%s: group %d %v: history %q; model %q %s", tc.file, g.Group, g.Members, g.History, g.Model, g.ModelNote)
		var answers []string
		for _, m := range g.Model {
			answers = append(answers, answersOf(m))
		}
		if !slices.Contains(answers, g.History) {
			t.Errorf("%s: the History's answers %q are not among the model's outcomes %q", tc.file, g.History, g.Model)
		}
		for _, w := range tc.want {
			if !slices.Contains(g.Model, w) {
				t.Errorf("%s: the model's outcomes %q lack %q", tc.file, g.Model, w)
			}
		}
	}
}

// A schedule whose plan has no race group is refused: nothing in it is
// released together.
func TestWhatIfRefusesAPlanWithoutARace(t *testing.T) {
	s, err := properties.LoadSchedule(scheduleFile("stale-pending-run-failed.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = PrepareWhatIf(s, "stale-pending-run-failed.json")
	if !errors.Is(err, ErrNotReproducible) || !strings.Contains(err.Error(), "no race group") {
		t.Fatalf("err %v, want a refusal naming the missing race group", err)
	}
}
