package flow

import (
	"slices"

	"github.com/simlab/simlab/model/program"
	wworld "github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// This file is the World of one run: its log, and world-local's rules for
// the events a program's run writes (model/world holds the run and step
// rules against the real Worlds; the wait rules here are world-local
// 5.0.0-beta.45's storage, read from its dist/: an entity's create is
// refused when its correlation id exists, a wait completes once, nothing
// is accepted after the run's end). Each accepted event takes the next
// position at its commit: the log has no holes.
//
// A correlation id is its kind's prefix and its ordinal (step_X, wait_X,
// hook_X): a step and a wait two replays minted at one ordinal are two
// entities to the World, and both land (vercel/workflow #3696: "one
// correlation id bound to a step_ and a wait_"), so each kind has its own
// table. Hooks are model/world's Hooks with world-local's rules, which
// conformance holds against the real Worlds (docs/CONFORMANCE.md, "Hooks").

// worldEntity is what the World holds for one correlation id.
type worldEntity struct {
	kind     program.EntityKind
	name     string
	resumeAt int64
	finished bool
	started  int32
	// owner is 1 + the queue message whose invocation claimed the step
	// inline (0: none, a queued step); lastStart its latest step_started;
	// queued that its own message went out.
	owner     int32
	lastStart sim.Time
	queued    bool
	// createdAt and finishedAt are 1 + the log positions of a step's
	// step_created and first step_completed or step_failed (0: none yet).
	createdAt, finishedAt int32
}

// world is one run's log and entities.
type world struct {
	log []Entry
	// events are the log's events alone, beside it: a replay of a prefix
	// reads them in place.
	events []program.Event
	// steps and waits by ordinal (kind EntityNone: none yet); hooks the
	// run's hooks, hookIDs their ordinals in the order first created.
	steps, waits []worldEntity
	hooks        wworld.Hooks
	hookIDs      []int32
	ended        bool
	started      bool
	// ends counts the accepted run-end events.
	ends int
	// corrupted marks the run_failed written for CORRUPTED_EVENT_LOG.
	corrupted bool
	end       program.EventType
}

// entity is step ord's row.
func (w *world) entity(ord int32) *worldEntity { return grow(&w.steps, ord) }

// wait is wait ord's row.
func (w *world) wait(ord int32) *worldEntity { return grow(&w.waits, ord) }

func grow(t *[]worldEntity, ord int32) *worldEntity {
	if ord < 0 {
		return nil
	}
	for int(ord) >= len(*t) {
		*t = append(*t, worldEntity{})
	}
	return &(*t)[ord]
}

// liveHooks are the ordinals of the hooks the World holds live.
func (w *world) liveHooks(out []int32) []int32 {
	for _, id := range w.hookIDs {
		if w.hooks.Live(id) {
			out = append(out, id)
		}
	}
	return out
}

// apply is a write landing at now: whether the World accepted it, and the
// log's length after it. A lazy step_started creates its step and logs its
// step_created with it (core's inline claim, docs/MODEL.md "An inline
// step's claim creates it").
// owner is the claiming invocation's queue message + 1 for an inline
// claim, 0 for a queued step's own. endedAtCheck is whether the run had
// ended when a run-end write's call began: world-local reads the run's
// status, then writes its event and row, so two ends whose calls overlap
// are both accepted (docs/MODEL.md finding 1: the run ended more than
// once), while one that begins after the end is refused.
func (w *world) apply(now sim.Time, wr *Entry, lazy bool, owner int32, endedAtCheck bool) bool {
	ev := wr.Event
	if w.ended {
		switch {
		case ev.Type == program.RunCompleted || ev.Type == program.RunFailed:
			if endedAtCheck {
				return false
			}
			w.ends++
			w.append(now, wr)
			return true
		case ev.Type == program.StepCompleted || ev.Type == program.StepFailed:
			// Running steps may finish (model/world, rule 5).
			if e := w.entity(ev.Ordinal); e.kind == program.EntityStep && e.started > 0 && !e.finished {
				e.finished = true
				w.append(now, wr)
				return true
			}
		}
		return false
	}
	switch ev.Type {
	case program.RunCompleted, program.RunFailed:
		w.ended, w.end, w.ends = true, ev.Type, 1
		w.hooks.End() // the run's end deletes its hooks
		w.append(now, wr)
		return true
	case program.RunStarted:
		// Idempotent: a second start is answered ok and logs nothing.
		if !w.started {
			w.started = true
			w.append(now, wr)
		}
		return true
	case program.StepCreated, program.WaitCreated:
		e := w.entity(ev.Ordinal)
		if ev.Type == program.WaitCreated {
			e = w.wait(ev.Ordinal)
		}
		if e.kind != program.EntityNone {
			return false
		}
		e.kind, e.name, e.resumeAt = ev.Kind, ev.Name, ev.ResumeAt
		w.append(now, wr)
		return true
	case program.HookCreated, program.HookReceived, program.HookDisposed:
		var res wworld.HookResult
		switch ev.Type {
		case program.HookCreated:
			if !slices.Contains(w.hookIDs, ev.Ordinal) {
				w.hookIDs = append(w.hookIDs, ev.Ordinal)
			}
			res = w.hooks.Create(ev.Ordinal, ev.Token, false)
		case program.HookReceived:
			res = w.hooks.Receive(ev.Ordinal, false)
		default:
			res = w.hooks.Dispose(ev.Ordinal, false)
		}
		if res.Appended() {
			logged := *wr
			if res == wworld.HookConflict {
				logged.Type = program.HookConflict // the token is another live hook's
			}
			w.append(now, &logged)
		}
		return !res.Refused()
	case program.StepStarted:
		e := w.entity(ev.Ordinal)
		if lazy {
			if e.kind != program.EntityNone {
				return false
			}
			e.kind, e.name = program.EntityStep, ev.Name
			created := *wr
			created.Type = program.StepCreated
			w.append(now, &created)
		} else if e.kind != program.EntityStep || e.finished {
			return false
		}
		e.started++
		e.owner, e.lastStart = owner, now
		started := *wr
		started.Name = ""
		w.append(now, &started)
		return true
	case program.StepCompleted, program.StepFailed:
		e := w.entity(ev.Ordinal)
		if e.kind != program.EntityStep || e.finished {
			return false
		}
		e.finished = true
		w.append(now, wr)
		return true
	case program.WaitCompleted:
		e := w.wait(ev.Ordinal)
		if e.kind != program.EntityWait || e.finished {
			return false
		}
		e.finished = true
		w.append(now, wr)
		return true
	}
	return false
}

func (w *world) append(now sim.Time, wr *Entry) {
	e := *wr
	e.At = now
	if e.Kind == program.EntityStep {
		ent, pos := w.entity(e.Ordinal), int32(len(w.log))+1
		switch e.Type {
		case program.StepCreated:
			ent.createdAt = pos
		case program.StepCompleted, program.StepFailed:
			if ent.finishedAt == 0 {
				ent.finishedAt = pos
			}
		}
	}
	w.log = append(w.log, e)
	w.events = append(w.events, e.Event)
}

// pendingSteps reports whether the first n events of the log hold a step
// created and not finished: what a queued step's consumer lists to learn
// whether it is the last to finish; and whether one of those is claimed
// inline by queue message owner-1 (owner 0: not asked). The claim's owner
// is the World's (core reads it from the listed step_started: the same but
// for a claim the list does not show yet, as leftToItsOwner).
func (w *world) pendingSteps(n int, owner int32) (pending, owned bool) {
	for i := range w.steps {
		e := &w.steps[i]
		if e.createdAt == 0 || int(e.createdAt) > n || e.finishedAt != 0 && int(e.finishedAt) <= n {
			continue // not created in the first n events, or finished there
		}
		pending = true
		if owner != 0 && e.owner == owner {
			return true, true
		}
	}
	return pending, false
}
