package world

import "github.com/simlab/simlab/sim"

// Step ids across runs.
//
// A real step id is a correlation id the runtime mints per step; simlab's
// engine numbers a run's steps 0, 1, ... and never names one run's step in
// another run's event. The real Worlds still differ when an id is reused in
// another run, and the differential test in conformance/ reuses ids on
// purpose to show how (docs/CONFORMANCE.md):
//
//   - world-local (RulesLocal) keys a step by (run, id): the same id in
//     another run is another step, with rules and rows of its own.
//   - world-postgres (RulesPostgres) keys its steps table by the id alone
//     (primary key step_id) and inserts rows with ON CONFLICT DO NOTHING,
//     while every read and update also filters on the run. So the first run
//     to create an id holds its row; in any other run the id is a step that
//     can never exist: step_created is accepted and logged but creates no row
//     (a second one there is EntityConflict: the events table is unique per
//     run, id and type), a lazy step_started is EntityConflict ("already
//     created"), and every other step event is NotFound.
//   - RulesDomain keys by (run, id), as DOMAIN.md §1 says.
//
// A name is (the run that minted it, its number there): Event.Step with
// WithStepIDOf. Everything a store keeps for names used outside their run is
// in one stepIDs, nil until the first such event, so the engine's calls pay
// one nil check.

// stepName is a step id as the real Worlds see it: the id run from minted for
// its step number step.
type stepName struct {
	from RunID
	step StepID
}

// namedRow is run run's row (or log entry) under a name.
type namedRow struct {
	run  RunID
	name stepName
}

// stepIDs is what a store knows about step ids used outside the run that
// minted them.
type stepIDs struct {
	// rows are the step rows that a run holds under a name minted by
	// another run.
	rows map[namedRow]*Step
	// holder (RulesPostgres) is the run holding the row of a name minted by
	// another run (a name held by its minter is in the minter's own slots).
	holder map[stepName]RunID
	// ghosts (RulesPostgres) are the runs that logged a step_created for a
	// name whose row another run holds: accepted, logged, no row.
	ghosts map[namedRow]bool
}

// WithStepIDOf returns ev naming the id run from minted for its step
// ev.Step, instead of ev.Run's own step ev.Step: a step id reused in another
// run. The engine never does this; the conformance test does.
func (ev Event) WithStepIDOf(from RunID) Event {
	ev.idFrom = 0
	if from != ev.Run {
		ev.idFrom = from + 1
	}
	return ev
}

// StepIDOf returns the run whose step numbering ev.Step comes from: ev.Run
// unless WithStepIDOf named another run.
func (ev Event) StepIDOf() RunID {
	if ev.idFrom == 0 {
		return ev.Run
	}
	return ev.idFrom - 1
}

func (ev Event) name() stepName { return stepName{from: ev.StepIDOf(), step: ev.Step} }

// StepOf returns the row run id holds under the id that run from minted for
// its step step (Step(id, step) is StepOf(id, id, step)); Exists is false when
// the run has no such row, whoever else holds the id.
func (s *Store) StepOf(id, from RunID, step StepID) Step {
	if st := s.namedRow(id, stepName{from: from, step: step}); st != nil {
		return *st
	}
	return Step{}
}

// namedRow finds run id's row under name, or nil.
func (s *Store) namedRow(id RunID, name stepName) *Step {
	if name.from == id {
		if !s.Has(id) || name.step < 0 || int(name.step) >= len(s.runs[id].steps) || !s.runs[id].steps[name.step].Exists {
			return nil
		}
		return &s.runs[id].steps[name.step]
	}
	if s.ids == nil {
		return nil
	}
	return s.ids.rows[namedRow{run: id, name: name}]
}

// heldElsewhere reports whether a run other than id holds name's row
// (RulesPostgres keys rows by the name alone).
func (s *Store) heldElsewhere(id RunID, name stepName) bool {
	if name.from != id && s.Step(name.from, name.step).Exists {
		return true
	}
	if s.ids == nil {
		return false
	}
	h, ok := s.ids.holder[name]
	return ok && h != id
}

// ghost reports whether run id logged a step_created under name without a
// row (RulesPostgres).
func (s *Store) ghost(id RunID, name stepName) bool {
	return s.ids != nil && s.ids.ghosts[namedRow{run: id, name: name}]
}

func (s *Store) initIDs() {
	if s.ids == nil {
		s.ids = &stepIDs{rows: map[namedRow]*Step{}, holder: map[stepName]RunID{}, ghosts: map[namedRow]bool{}}
	}
}

// createNamed makes run r's row under ev's name pending and logs its
// step_created.
func (s *Store) createNamed(r *runRow, now sim.Time, ev Event) int32 {
	id, name := r.view.RunID, ev.name()
	if name.from == id {
		return r.create(now, ev)
	}
	s.initIDs()
	created := ev
	created.Type, created.Lazy = EvStepCreated, false
	pos := r.append(now, created)
	s.ids.rows[namedRow{run: id, name: name}] = &Step{Exists: true, Status: StepPending}
	if s.rules == RulesPostgres {
		s.ids.holder[name] = id
	}
	return pos
}

// resolveNamed is rules 2 and 3 of applyStepReal for a store that has seen a
// step id used outside its run (or for such an event): it finds the run's row
// under ev's name, creating it for step_created and a lazy step_started
// unless, on RulesPostgres, another run holds the name. A nil row means the
// call is decided with res and pos.
func (s *Store) resolveNamed(r *runRow, now sim.Time, ev Event) (st *Step, res Result, pos int32) {
	id, name := r.view.RunID, ev.name()
	if name.from != id {
		s.initIDs()
	}
	st = s.namedRow(id, name)
	taken := st == nil && s.rules == RulesPostgres && s.heldElsewhere(id, name)
	switch {
	case ev.Type == EvStepCreated:
		switch {
		case st != nil, s.ghost(id, name):
			return nil, EntityConflict, -1
		case ev.Step < 0:
			return nil, NotFound, -1
		case taken:
			// The row INSERT does nothing (ON CONFLICT DO NOTHING on step_id)
			// and the event INSERT goes through.
			s.initIDs()
			s.ids.ghosts[namedRow{run: id, name: name}] = true
			return nil, OK, r.append(now, ev)
		}
		return nil, OK, s.createNamed(r, now, ev)
	case st == nil && ev.Lazy && ev.Step >= 0:
		if taken {
			// The lazy start's row INSERT returns nothing: "already created".
			return nil, EntityConflict, -1
		}
		s.createNamed(r, now, ev)
		st = s.namedRow(id, name)
	case st == nil:
		return nil, NotFound, -1
	case ev.Lazy:
		return nil, EntityConflict, -1
	}
	return st, OK, 0
}
