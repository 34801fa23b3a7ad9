package program

import "time"

// ReplayCost is what one replay of a workflow costs the runtime, from the
// log's answer to the replay's first act: a fixed part, a part per entity
// its code mints and a part per event of the log it consumes.
type ReplayCost struct {
	Base, PerEntity, PerEvent time.Duration
}

// Of is the cost of a replay that mints entities and consumes events.
func (c ReplayCost) Of(entities, events int) time.Duration {
	return c.Base + c.PerEntity*time.Duration(entities) + c.PerEvent*time.Duration(events)
}

// Beta52ReplayCost is core 5.0.0-beta.52's (the pinned default), as simlab
// calibrate --branches 16,64,128 --repetitions 3 fitted it on the release's
// workflow.replay.execute spans on this project's machine
// (docs/VALIDATION.md, "Who ends the run, and what a replay costs").
var Beta52ReplayCost = ReplayCost{Base: 1350 * time.Microsecond, PerEntity: 140 * time.Microsecond, PerEvent: 49 * time.Microsecond}
