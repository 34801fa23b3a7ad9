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

// programTypes maps the store's event types to the replay's (1 + the
// replay's; 0: an event the replay passes over), indexed by the store's:
// a check maps every accepted event of every seed.
var programTypes = [...]uint8{
	world.EvRunCreated: 1 + uint8(program.RunCreated), world.EvRunStarted: 1 + uint8(program.RunStarted),
	world.EvRunCompleted: 1 + uint8(program.RunCompleted), world.EvRunFailed: 1 + uint8(program.RunFailed),
	world.EvRunCancelled: 1 + uint8(program.RunCancelled), world.EvStepCreated: 1 + uint8(program.StepCreated),
	world.EvStepStarted: 1 + uint8(program.StepStarted), world.EvStepRetrying: 1 + uint8(program.StepRetrying),
	world.EvStepCompleted: 1 + uint8(program.StepCompleted), world.EvStepFailed: 1 + uint8(program.StepFailed),
	world.EvAttrSet: 0,
}

// ProgramEvent is accepted event a as a replay reads it: a step event names
// its step by its global index, the step's ordinal in the fan-out list's
// program, and carries FanoutStep and the result 1. ok is false for an
// event the replay passes over (attr_set).
func ProgramEvent(a *Accepted) (e program.Event, ok bool) {
	if int(a.Type) >= len(programTypes) || programTypes[a.Type] == 0 {
		return e, false
	}
	e = program.E(program.EventType(programTypes[a.Type]-1), -1)
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
