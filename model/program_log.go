package model

import (
	"cmp"
	"slices"

	"github.com/simlab/simlab/model/program"
	"github.com/simlab/simlab/model/world"
)

// FanoutStep is the name every step of a fan-out list's program has
// (program.FromFanouts): the simulator's steps carry no name of their own.
const FanoutStep = "step"

// programTypes maps the store's event types to the replay's.
var programTypes = map[world.EventType]program.EventType{
	world.EvRunCreated: program.RunCreated, world.EvRunStarted: program.RunStarted,
	world.EvRunCompleted: program.RunCompleted, world.EvRunFailed: program.RunFailed, world.EvRunCancelled: program.RunCancelled,
	world.EvStepCreated: program.StepCreated, world.EvStepStarted: program.StepStarted, world.EvStepRetrying: program.StepRetrying,
	world.EvStepCompleted: program.StepCompleted, world.EvStepFailed: program.StepFailed,
}

// ProgramEvent is accepted event a as a replay reads it: a step event names
// its step by its global index, the step's ordinal in the fan-out list's
// program, and carries FanoutStep and the result 1. ok is false for an
// event the replay passes over (attr_set).
func ProgramEvent(a *Accepted) (e program.Event, ok bool) {
	t, ok := programTypes[a.Type]
	if !ok {
		return e, false
	}
	e = program.E(t, -1)
	if a.Step != world.NoStep {
		e.Ordinal, e.Name, e.Result = int32(a.Step), FanoutStep, 1
	}
	return e, true
}

// ProgramLog is run's log as a replay reads it, from the History's accepted
// events (a recorded History): in log order, each step event naming its
// step by its global index, which is its ordinal in the fan-out list's
// program, and carrying FanoutStep and the result 1.
func (h *History) ProgramLog(run world.RunID) []program.Event {
	var acc []*Accepted
	for i := range h.Accepted {
		if h.Accepted[i].Run == run {
			acc = append(acc, &h.Accepted[i])
		}
	}
	slices.SortStableFunc(acc, func(a, b *Accepted) int { return cmp.Compare(a.Pos, b.Pos) })
	out := make([]program.Event, 0, len(acc))
	for _, a := range acc {
		if e, ok := ProgramEvent(a); ok {
			out = append(out, e)
		}
	}
	return out
}
