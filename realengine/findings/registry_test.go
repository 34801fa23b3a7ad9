package findings

import (
	"errors"
	"strings"
	"testing"

	"github.com/simlab/simlab/realengine"
)

// The matrix's judges read what a real run reported; here they read made-up
// reports (no Node), so each verdict is shown to follow the evidence both
// ways.

func TestJudgeStalePending(t *testing.T) {
	failed := &realengine.RunError{Msg: `run wrun_1 failed: Workflow run "wrun_1" has no "startedAt" timestamp (should not happen)`, RunIDs: []string{"wrun_1"}}
	for _, c := range []struct {
		err  error
		want Verdict
	}{
		{failed, Holds},
		{nil, Fixed},
		{&realengine.RunError{Msg: "timed out after 60000 ms", RunIDs: []string{"wrun_1"}}, Undecided},
		{errors.New("harness crashed"), Undecided},
	} {
		if got := judgeStalePending(c.err); got.Verdict != c.want || got.Evidence == "" {
			t.Errorf("judgeStalePending(%v) = %+v, want %s", c.err, got, c.want)
		}
	}
}

func endedRunClaimRun(attempts ...int) *realengine.RealRun {
	out := &realengine.RealRun{}
	for i, status := range attempts {
		p := realengine.Probe{Kind: "ghost_bare", Attempt: i + 1, Status: status}
		if status >= 400 {
			p.Calls = append(p.Calls, struct {
				Op      string `json:"op"`
				Event   string `json:"event"`
				Result  string `json:"result"`
				Error   string `json:"error"`
				Status  string `json:"status"`
				RunEnds *int   `json:"run_ends"`
			}{Op: "events.create", Event: "step_started", Result: "WorkflowWorldError", Error: "Step not found"})
		}
		out.Probes = append(out.Probes, p)
	}
	return out
}

func TestJudgeEndedRunClaimRuns(t *testing.T) {
	j := judgeEndedRunClaimRuns([]*realengine.RealRun{endedRunClaimRun(500, 500, 200), endedRunClaimRun(200)})
	if j.Verdict != Holds || !strings.Contains(j.Evidence, "attempts 1-2") || !strings.Contains(j.Evidence, "WorkflowWorldError (not found)") {
		t.Errorf("a claim thrown and delivered again: %+v", j)
	}
	if j := judgeEndedRunClaimRuns([]*realengine.RealRun{endedRunClaimRun(200), endedRunClaimRun(200)}); j.Verdict != NotApplicable {
		t.Errorf("claims acked at once: %+v", j)
	}
	// Thrown once and never delivered again is not the loop.
	if j := judgeEndedRunClaimRuns([]*realengine.RealRun{endedRunClaimRun(500)}); j.Verdict != Undecided {
		t.Errorf("a claim thrown once, not redelivered: %+v", j)
	}
	if j := judgeEndedRunClaimRuns([]*realengine.RealRun{{}}); j.Verdict != Undecided {
		t.Errorf("no probe: %+v", j)
	}
}

func TestDispatchOrder(t *testing.T) {
	base := []realengine.Call{
		{Op: "events.create", Event: "step_created", Correlation: "s1", Result: "ok", Start: 0, End: 5},
		{Op: "events.create", Event: "step_created", Correlation: "s2", Result: "ok", Start: 0, End: 6},
	}
	def := &realengine.RealRun{Calls: append(append([]realengine.Call{}, base...), realengine.Call{Op: "queue", Step: "s1", Start: 7}, realengine.Call{Op: "queue", Step: "s2", Start: 8}, realengine.Call{Op: "queue", Start: 9})}
	if p, in, early := dispatchOrder(def); p != 2 || in != 0 || early != 0 {
		t.Errorf("default dispatch: %d publishes, %d with input, %d early", p, in, early)
	}
	// Resilient dispatch: the publish starts with the create and carries
	// the input.
	res := &realengine.RealRun{Calls: append(append([]realengine.Call{}, base...), realengine.Call{Op: "queue", Step: "s1", Start: 1, StepInput: true}, realengine.Call{Op: "queue", Step: "s3", Start: 8, StepInput: true})}
	if p, in, early := dispatchOrder(res); p != 2 || in != 2 || early != 2 {
		t.Errorf("resilient dispatch: %d publishes, %d with input, %d early", p, in, early)
	}
}

func TestReopenedProblems(t *testing.T) {
	reopened := realengine.ReadBack{FirstTerminal: "run_cancelled", TerminalEvents: 1, TerminalByType: map[string]int{"run_cancelled": 1},
		BeforeTerminal: map[string]int{"run_created": 1},
		AfterTerminal:  map[string]int{"run_started": 1, "step_created": 4, "step_started": 4, "step_completed": 4},
		RunStatus:      "running"}
	if bad := reopenedProblems(reopened, 4); len(bad) != 0 {
		t.Errorf("a reopened run: %v", bad)
	}
	cancelled := realengine.ReadBack{FirstTerminal: "run_cancelled", TerminalEvents: 1, TerminalByType: map[string]int{"run_cancelled": 1},
		BeforeTerminal: map[string]int{"run_created": 1, "run_started": 1, "step_created": 3}, AfterTerminal: map[string]int{}, RunStatus: "cancelled"}
	if bad := reopenedProblems(cancelled, 4); len(bad) != 3 {
		t.Errorf("a run the cancel ended: %v, want three differences", bad)
	}
}

func TestFindingsAreKnown(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range Findings {
		if seen[f.ID] || f.Title == "" || f.judge == nil {
			t.Errorf("finding %+v: duplicate, untitled or unjudged", f)
		}
		seen[f.ID] = true
		if g, err := FindingByID(f.ID); err != nil || g.ID != f.ID {
			t.Errorf("FindingByID(%s): %v", f.ID, err)
		}
	}
	if _, err := FindingByID("nope"); err == nil || !strings.Contains(err.Error(), "lazy-reads") {
		t.Errorf("unknown finding: %v", err)
	}
}

func TestScheduleVerdict(t *testing.T) {
	for _, c := range []struct {
		verdicts map[string]int
		last     realengine.CoreReproduction
		want     Verdict
		says     string
	}{
		{map[string]int{realengine.VerdictReproduced: 3}, realengine.CoreReproduction{Verdict: realengine.VerdictReproduced, JudgedOn: "spans"}, Holds, "violated on the real run's spans"},
		{map[string]int{realengine.VerdictHonouredNotViolated: 3}, realengine.CoreReproduction{Verdict: realengine.VerdictHonouredNotViolated, Reason: "the plan was honoured, yet p holds"}, Fixed, "p holds"},
		{map[string]int{realengine.VerdictReproduced: 2, realengine.VerdictDiverged: 1}, realengine.CoreReproduction{Verdict: realengine.VerdictDiverged, DivergedAt: 31, Reason: "runs.get never came"}, Undecided, "diverged at entry 31"},
		{map[string]int{realengine.VerdictReproduced: 2, realengine.VerdictHonouredNotViolated: 1}, realengine.CoreReproduction{Verdict: realengine.VerdictHonouredNotViolated}, Undecided, "reproduced 2"},
	} {
		got := scheduleVerdict("x.json", "p", c.verdicts, 3, c.last)
		if got.Verdict != c.want || !strings.Contains(got.Evidence, c.says) {
			t.Errorf("scheduleVerdict(%v) = %+v, want %s saying %q", c.verdicts, got, c.want, c.says)
		}
	}
}

func TestJudgeDateNowReplays(t *testing.T) {
	pending := func(name string) realengine.RealReplay {
		return realengine.RealReplay{Outcome: "suspended", Pending: []realengine.RealPending{{Ordinal: 2, Kind: "step", Name: name}}}
	}
	diverged := realengine.RealReplay{Outcome: "diverged", At: 8, Message: "name mismatch"}
	for _, c := range []struct {
		rs   realengine.DateNowReplays
		want Verdict
	}{
		{realengine.DateNowReplays{Short: pending("y"), Longer: pending("x"), Stale: diverged}, Holds},
		{realengine.DateNowReplays{Short: pending("y"), Longer: pending("y"), Stale: pending("y")}, Fixed},
		{realengine.DateNowReplays{Short: pending("x"), Longer: pending("x"), Stale: diverged}, Undecided},
		{realengine.DateNowReplays{Short: pending("y"), Longer: pending("x"), Stale: pending("y")}, Undecided},
	} {
		if got := judgeDateNowReplays(c.rs); got.Verdict != c.want || got.Evidence == "" {
			t.Errorf("%+v: %+v, want %s", c.rs, got, c.want)
		}
	}
}
