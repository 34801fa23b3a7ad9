package world

import (
	"errors"
	"fmt"
	"sort"

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
	steps := make([]replayed, len(r.steps))
	named := map[stepName]*replayed{} // steps under another run's ids (stepids.go)
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
		var st *replayed
		switch {
		case e.idFrom != 0:
			if st = named[e.name()]; st == nil {
				st = &replayed{}
				named[e.name()] = st
			}
		case e.Step >= 0 && int(e.Step) >= len(steps) && s.ghost(id, e.name()):
			// A step_created without a row (RulesPostgres): its own id is
			// held by another run.
			steps = append(steps, make([]replayed, int(e.Step)+1-len(steps))...)
			st = &steps[e.Step]
		case e.Step < 0 || int(e.Step) >= len(steps):
			return fmt.Errorf("event %d names step %d beyond the step table: %w", i, e.Step, ErrInvariant)
		default:
			st = &steps[e.Step]
		}
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
		st.events++
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
		var row Step
		if i < len(r.steps) {
			row = r.steps[i]
		}
		if err := s.verifyStep(id, stepName{from: id, step: StepID(i)}, row, st); err != nil {
			return err
		}
	}
	return s.verifyNamed(id, named)
}

// replayed is a step row as its run's log says it must be.
type replayed struct {
	created   bool
	status    StepStatus
	attempt   int32
	terminals int
	events    int // after step_created
}

// verifyStep checks run id's row under name against its replay. A
// step_created without a row is right only on RulesPostgres, for a name whose
// row another run holds, with nothing logged after it.
func (s *Store) verifyStep(id RunID, name stepName, row Step, st replayed) error {
	what := fmt.Sprintf("step %d", name.step)
	if name.from != id {
		what = fmt.Sprintf("step %d of run %d's ids", name.step, name.from)
	}
	if st.created && !row.Exists {
		if s.rules != RulesPostgres || !s.ghost(id, name) || !s.heldElsewhere(id, name) || st.events != 0 {
			return fmt.Errorf("%s: step_created logged, no row, %d events after it: %w", what, st.events, ErrInvariant)
		}
		return nil
	}
	if row.Exists != st.created || (st.created && (row.Status != st.status || row.Attempt != st.attempt)) {
		return fmt.Errorf("%s row %+v != replay %+v: %w", what, row, st, ErrInvariant)
	}
	if row.Exists && s.rules == RulesPostgres && s.heldElsewhere(id, name) {
		return fmt.Errorf("%s: a row here and another run's for the same id: %w", what, ErrInvariant)
	}
	return nil
}

// verifyNamed checks the rows run id holds under other runs' ids against
// their replays, in a fixed order, and that no such row lacks a log.
func (s *Store) verifyNamed(id RunID, named map[stepName]*replayed) error {
	var names []stepName
	for n := range named {
		names = append(names, n)
	}
	if s.ids != nil {
		for k := range s.ids.rows {
			if k.run == id && named[k.name] == nil {
				names = append(names, k.name)
			}
		}
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := names[i], names[j]
		return a.from < b.from || (a.from == b.from && a.step < b.step)
	})
	for _, n := range names {
		var st replayed
		if p := named[n]; p != nil {
			st = *p
		}
		if err := s.verifyStep(id, n, s.StepOf(id, n.from, n.step), st); err != nil {
			return err
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
