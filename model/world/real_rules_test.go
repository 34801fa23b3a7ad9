package world

import "testing"

// TestRealWorldRules pins every rule where the real Worlds differ from
// DOMAIN.md §2 (RulesDomain), each with the published version whose answer
// the differential test in conformance/ compared (docs/CONFORMANCE.md). The
// versions: world-local 5.0.0-beta.45 (wl-fixed, FenceFixed) and beta.43
// (wl-pre, FencePreFix); world-postgres 5.0.0-beta.27 (wpg-pre, FencePreFix).
// world-local beta.46 (wl-b46) answers every case as beta.45 and world-postgres
// beta.29 (wpg-b29) as beta.27: one rule set each, no flag per version (the
// fence cases name them).
func TestRealWorldRules(t *testing.T) {
	local, pg := RulesLocal, RulesPostgres
	fixed, pre := FenceFixed, FencePreFix
	cases := []struct {
		shownBy string
		rules   Rules
		fence   Fence
		run     RunStatus
		step    stepSetup
		ev      Event
		want    Result
		status  StepStatus // afterwards, when want is OK
		attempt int32
		exists  bool
	}{
		// Order of checks: the step is looked up before the run's status.
		{"world-local 5.0.0-beta.45: bare step_started of a missing step on an ended run is not found", local, fixed, RunCancelled, noStep,
			Event{Type: EvStepStarted}, NotFound, 0, 0, false},
		{"world-postgres 5.0.0-beta.27: the same", pg, pre, RunCancelled, noStep,
			Event{Type: EvStepStarted}, NotFound, 0, 0, false},
		{"world-local 5.0.0-beta.45: step_started of a completed step on an ended run conflicts", local, fixed, RunCompleted, doneStep,
			Event{Type: EvStepStarted}, EntityConflict, StepCompleted, 1, true},
		{"world-postgres 5.0.0-beta.27: step_completed of a failed step on an ended run conflicts", pg, pre, RunCancelled, failedStep,
			Event{Type: EvStepCompleted}, EntityConflict, StepFailed, 1, true},
		// The fence.
		{"world-local 5.0.0-beta.45, beta.46: started on an ended run with the step running is RunExpired", local, fixed, RunCancelled, runningStep,
			Event{Type: EvStepStarted}, RunExpired, StepRunning, 1, true},
		{"world-local 5.0.0-beta.43: accepted, attempt + 1 (the bug)", local, pre, RunCancelled, runningStep,
			Event{Type: EvStepStarted}, OK, StepRunning, 2, true},
		{"world-postgres 5.0.0-beta.27, beta.29: accepted, attempt + 1 (the bug, still there)", pg, pre, RunCompleted, runningStep,
			Event{Type: EvStepStarted}, OK, StepRunning, 2, true},
		{"world-local 5.0.0-beta.43: started on an ended run with the step pending is RunExpired", local, pre, RunCancelled, pendingStep,
			Event{Type: EvStepStarted}, RunExpired, StepPending, 0, true},
		// step_completed and step_retrying never read the run.
		{"world-local 5.0.0-beta.45: step_completed of a pending step on an ended run is accepted", local, fixed, RunCancelled, pendingStep,
			Event{Type: EvStepCompleted}, OK, StepCompleted, 0, true},
		{"world-local 5.0.0-beta.45: step_retrying of a running step on an ended run is accepted", local, fixed, RunCompleted, runningStep,
			Event{Type: EvStepRetrying, RetryAfter: now + 50}, OK, StepPending, 1, true},
		{"world-postgres 5.0.0-beta.27: step_retrying of a pending step on an ended run is accepted", pg, pre, RunFailed, pendingStep,
			Event{Type: EvStepRetrying, RetryAfter: now + 50}, OK, StepPending, 0, true},
		// step_failed reads the run on world-local, not on world-postgres.
		{"world-local 5.0.0-beta.45: step_failed of a pending step on an ended run is RunExpired", local, fixed, RunCancelled, pendingStep,
			Event{Type: EvStepFailed}, RunExpired, StepPending, 0, true},
		{"world-postgres 5.0.0-beta.27, beta.29: step_failed of a pending step on an ended run is accepted", pg, pre, RunCancelled, pendingStep,
			Event{Type: EvStepFailed}, OK, StepFailed, 0, true},
		{"world-local 5.0.0-beta.45: step_failed of a running step on an ended run is accepted", local, fixed, RunCancelled, runningStep,
			Event{Type: EvStepFailed}, OK, StepFailed, 1, true},
		// No claim needed before an outcome.
		{"world-local 5.0.0-beta.45: step_completed of a pending step on a live run is accepted", local, fixed, RunRunning, pendingStep,
			Event{Type: EvStepCompleted}, OK, StepCompleted, 0, true},
		{"world-postgres 5.0.0-beta.27: step_retrying of a pending step on a live run is accepted", pg, pre, RunRunning, pendingStep,
			Event{Type: EvStepRetrying, RetryAfter: now + 50}, OK, StepPending, 0, true},
		// Lazy starts.
		{"world-local 5.0.0-beta.45: a lazy step_started creates its missing step, running, attempt 1", local, fixed, RunRunning, noStep,
			Event{Type: EvStepStarted, Lazy: true}, OK, StepRunning, 1, true},
		{"world-postgres 5.0.0-beta.27: the same", pg, pre, RunPending, noStep,
			Event{Type: EvStepStarted, Lazy: true}, OK, StepRunning, 1, true},
		{"world-local 5.0.0-beta.45: a lazy step_started of an existing step conflicts (already created)", local, fixed, RunRunning, pendingStep,
			Event{Type: EvStepStarted, Lazy: true}, EntityConflict, StepPending, 0, true},
		{"world-local 5.0.0-beta.43: a lazy step_started on an ended run conflicts before the fence", local, pre, RunCancelled, runningStep,
			Event{Type: EvStepStarted, Lazy: true}, EntityConflict, StepRunning, 1, true},
		{"world-postgres 5.0.0-beta.27: step_created on an ended run conflicts", pg, pre, RunCancelled, noStep,
			Event{Type: EvStepCreated}, EntityConflict, 0, 0, false},
		{"world-postgres 5.0.0-beta.27: a second step_created conflicts", pg, pre, RunRunning, pendingStep,
			Event{Type: EvStepCreated}, EntityConflict, StepPending, 0, true},
		// retryAfter.
		{"world-local 5.0.0-beta.45: step_started before retryAfter is TooEarly", local, fixed, RunRunning, retryStep(now + 50),
			Event{Type: EvStepStarted}, TooEarly, StepPending, 1, true},
		{"world-postgres 5.0.0-beta.27: step_started after retryAfter is accepted", pg, pre, RunRunning, retryStep(now - 50),
			Event{Type: EvStepStarted}, OK, StepRunning, 2, true},
	}
	for _, c := range cases {
		t.Run(c.shownBy, func(t *testing.T) {
			s := buildFor(t, c.rules, c.fence, c.run, c.step)
			c.ev.Run, c.ev.Step = 0, theStep
			before := len(s.Log(0))
			res, _, _ := s.Apply(now, c.ev)
			if res != c.want {
				t.Fatalf("%v: got %v, want %v", c.ev.Type, res, c.want)
			}
			grew := len(s.Log(0)) - before
			switch {
			case res != OK && grew != 0:
				t.Fatalf("refused %v logged %d events", c.ev.Type, grew)
			case res == OK && c.ev.Lazy && grew != 2:
				t.Fatalf("lazy start logged %d events, want step_created + step_started", grew)
			case res == OK && !c.ev.Lazy && grew != 1:
				t.Fatalf("accepted %v logged %d events, want 1", c.ev.Type, grew)
			}
			st := s.Step(0, theStep)
			if st.Exists != c.exists || (c.exists && (st.Status != c.status || st.Attempt != c.attempt)) {
				t.Fatalf("step afterwards %+v, want exists=%v %v attempt %d", st, c.exists, c.status, c.attempt)
			}
			if err := s.Verify(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
