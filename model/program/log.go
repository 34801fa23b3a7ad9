package program

import "fmt"

// EventType is an event of a run's log, as the replay reads it.
type EventType uint8

const (
	RunCreated EventType = iota
	RunStarted
	RunCompleted
	RunFailed
	RunCancelled
	StepCreated
	StepStarted
	StepRetrying
	StepCompleted
	StepFailed
	WaitCreated
	WaitCompleted
	HookCreated
	HookConflict
	HookReceived
	HookDisposed
)

var eventNames = [...]string{"run_created", "run_started", "run_completed", "run_failed", "run_cancelled",
	"step_created", "step_started", "step_retrying", "step_completed", "step_failed", "wait_created", "wait_completed",
	"hook_created", "hook_conflict", "hook_received", "hook_disposed"}

func (t EventType) String() string {
	if int(t) < len(eventNames) {
		return eventNames[t]
	}
	return fmt.Sprintf("event(%d)", t)
}

// ParseEventType is the type named s.
func ParseEventType(s string) (EventType, bool) {
	for i, n := range eventNames {
		if n == s {
			return EventType(i), true
		}
	}
	return 0, false
}

// EntityKind is what an entity is, and the prefix of its correlation id
// (step_, wait_, hook_).
type EntityKind uint8

const (
	EntityNone EntityKind = iota // a run event: no correlation id
	EntityStep
	EntityWait
	EntityHook
)

func (k EntityKind) String() string { return [...]string{"", "step", "wait", "hook"}[k] }

// kindOf is the entity kind an event type addresses: the prefix the
// runtime writes on its correlation id.
func kindOf(t EventType) EntityKind {
	switch {
	case t >= StepCreated && t <= StepFailed:
		return EntityStep
	case t == WaitCreated || t == WaitCompleted:
		return EntityWait
	case t >= HookCreated && t <= HookDisposed:
		return EntityHook
	}
	return EntityNone
}

// Event is one event of a log as the replay consumes it. Its correlation
// id is Kind's prefix and the Ordinal-th id of the run's sequence; a log
// written by the runtime always has Kind = the type's own, an edited or
// corrupted one may not.
type Event struct {
	Type    EventType
	Kind    EntityKind
	Ordinal int32
	// Name is the step name a step event carries (eventData.stepName), ""
	// when it carries none.
	Name string
	// Result is a step_completed's value.
	Result int64
	// ResumeAt is a wait_created's resumeAt, and a wait_completed's when it
	// carries one (0: none), in milliseconds of the run's clock.
	ResumeAt int64
	// Token is a hook_created's or hook_conflict's token: its place in
	// the run's token sequence (core draws a hook's token from the
	// workflow VM's seeded Math.random, as its correlation id's, so it is
	// positional too: the j-th hook a replay creates gets the j-th token).
	Token int32
	// CreatedMS is when the event was written (its createdAt), in
	// milliseconds since the run was created: the replay's clock advances
	// to it as it consumes the event (a clock statement reads it).
	CreatedMS int64
}

// E is the event of type t addressing entity ordinal, with the kind its
// type implies.
func E(t EventType, ordinal int32) Event {
	return Event{Type: t, Kind: kindOf(t), Ordinal: ordinal}
}

// Named is e carrying step name name.
func (e Event) Named(name string) Event { e.Name = name; return e }

func (e Event) String() string {
	if e.Kind == EntityNone {
		return e.Type.String()
	}
	s := fmt.Sprintf("%s %s#%d", e.Type, e.Kind, e.Ordinal)
	if e.Name != "" {
		s += " " + e.Name
	}
	if e.Type == StepCompleted {
		s += fmt.Sprintf(" → %d", e.Result)
	}
	if e.Type == HookCreated || e.Type == HookConflict {
		s += fmt.Sprintf(" token#%d", e.Token)
	}
	return s
}
