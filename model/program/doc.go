// Package program is a workflow as the runtime replays it: a small program
// (steps, Promise.all, Promise.race, a pool, sleeps, an if on a value the
// replay saw, a bounded loop) and its replay against an event log as
// @workflow/core replays one. Each entity the program creates (a step, a
// wait) takes the next ordinal of the run's correlation-id sequence, in the
// order the program creates them, so a replay that saw another log creates
// other entities under the same ids; the replay consumes the log event by
// event and diverges where core's does (Replay, Divergence).
//
// The package is pure: no kernel, no store, no time but the ordinals and the
// values in the log. The simulator's replays and the offline corpus that
// holds this replay against the real core's (realengine) both call Replay.
package program
