package world

import (
	"errors"
	"fmt"

	"github.com/simlab/simlab/sim"
)

// ErrInvariant is wrapped by every error Verify returns.
var ErrInvariant = errors.New("world: invariant violated")

// Verify replays every run's log from scratch and checks that the rows are its
// projections and that the log obeys the per-step properties of DOMAIN §9 (at
// most one step_created and one terminal event per step, attempt = accepted
// step_started). It allocates and is meant for tests and end-of-run checks,
// not the hot path.
func (s *Store) Verify() error {
	for i := range s.runs {
		if err := s.verifyRun(RunID(i)); err != nil {
			return fmt.Errorf("run %d: %w", i, err)
		}
	}
	return nil
}

func (s *Store) verifyRun(id RunID) error {
	r := &s.runs[id]
	if len(r.log) == 0 || r.log[0].Type != EvRunCreated {
		return fmt.Errorf("log does not start with run_created: %w", ErrInvariant)
	}
	type replayed struct {
		created   bool
		status    StepStatus
		attempt   int32
		terminals int
	}
	steps := make([]replayed, len(r.steps))
	var (
		status             = RunPending
		startedAt, endedAt sim.Time
		started, ended     bool
	)
	for i, e := range r.log {
		if e.Pos != int32(i) || e.Run != id {
			return fmt.Errorf("event %d has pos %d run %d: %w", i, e.Pos, e.Run, ErrInvariant)
		}
		if i > 0 && e.At < r.log[i-1].At {
			return fmt.Errorf("event %d at %v precedes its predecessor: %w", i, e.At, ErrInvariant)
		}
		if ended && !s.allowedAfterEnd(e.Type) {
			return fmt.Errorf("%v at %d after the run's terminal event: %w", e.Type, i, ErrInvariant)
		}
		if !e.Type.IsStepEvent() {
			switch e.Type {
			case EvRunCreated:
				if i != 0 {
					return fmt.Errorf("second run_created at %d: %w", i, ErrInvariant)
				}
			case EvRunStarted:
				if started || ended {
					return fmt.Errorf("run_started at %d after start or end: %w", i, ErrInvariant)
				}
				started, startedAt, status = true, e.At, RunRunning
			case EvRunCompleted, EvRunFailed, EvRunCancelled:
				if ended {
					return fmt.Errorf("second terminal run event at %d: %w", i, ErrInvariant)
				}
				ended, endedAt = true, e.At
				status = runTerminal(e.Type)
			}
			continue
		}
		if e.Step < 0 || int(e.Step) >= len(steps) {
			return fmt.Errorf("event %d names step %d beyond the step table: %w", i, e.Step, ErrInvariant)
		}
		st := &steps[e.Step]
		if e.Type == EvStepCreated {
			if st.created {
				return fmt.Errorf("second step_created for step %d: %w", e.Step, ErrInvariant)
			}
			st.created = true
			continue
		}
		if !st.created {
			return fmt.Errorf("%v before step_created for step %d: %w", e.Type, e.Step, ErrInvariant)
		}
		switch e.Type {
		case EvStepStarted:
			st.attempt++
			st.status = StepRunning
		case EvStepRetrying:
			st.status = StepPending
		case EvStepCompleted, EvStepFailed:
			st.terminals++
			st.status = stepTerminal(e.Type)
		}
		if st.terminals > 1 {
			return fmt.Errorf("second terminal event for step %d: %w", e.Step, ErrInvariant)
		}
	}
	v := r.view
	if v.Status != status || v.StartedAt != startedAt || v.CompletedAt != endedAt {
		return fmt.Errorf("row {%v started %v completed %v} != replay {%v started %v completed %v}: %w",
			v.Status, v.StartedAt, v.CompletedAt, status, startedAt, endedAt, ErrInvariant)
	}
	for i, st := range steps {
		row := r.steps[i]
		if row.Exists != st.created || (st.created && (row.Status != st.status || row.Attempt != st.attempt)) {
			return fmt.Errorf("step %d row %+v != replay %+v: %w", i, row, st, ErrInvariant)
		}
	}
	return nil
}

// allowedAfterEnd reports whether an event of type t may follow the run's
// terminal event in the log: in-flight steps may finish (on the real Worlds
// also retry, since step_retrying never reads the run), and only the pre-fix
// fence lets a step start (which is the bug the lab is there to find).
func (s *Store) allowedAfterEnd(t EventType) bool {
	switch t {
	case EvStepCompleted, EvStepFailed:
		return true
	case EvStepRetrying:
		return s.rules != RulesDomain
	case EvStepStarted:
		return s.fence == FencePreFix
	}
	return false
}
