package world

import (
	"fmt"

	"github.com/simlab/simlab/sim"
)

// RunID names a run. The store assigns them densely in CreateRun order so that
// every per-run table is a slice indexed by the id.
type RunID int32

// StepID names a step within its run. The orchestrator numbers steps densely
// from 0, which lets the store keep a run's steps in a slice indexed by id.
type StepID int32

// NoStep is the Step of run-level events.
const NoStep StepID = -1

// RunStatus is the run row's status (DOMAIN §1).
type RunStatus uint8

// Run statuses; the last three are terminal.
const (
	RunPending RunStatus = iota
	RunRunning
	RunCompleted
	RunFailed
	RunCancelled
)

// Terminal reports whether no further run transition is possible.
func (s RunStatus) Terminal() bool { return s >= RunCompleted && s <= RunCancelled }

var runStatusNames = [...]string{"pending", "running", "completed", "failed", "cancelled"}

func (s RunStatus) String() string {
	if int(s) < len(runStatusNames) {
		return runStatusNames[s]
	}
	return fmt.Sprintf("RunStatus(%d)", uint8(s))
}

// StepStatus is the step row's status. `retrying` is not a status of its own:
// it returns the step to pending with a RetryAfter time (DOMAIN §1).
type StepStatus uint8

// Step statuses; the last two are terminal.
const (
	StepPending StepStatus = iota
	StepRunning
	StepCompleted
	StepFailed
)

// Terminal reports whether the step has finished for good.
func (s StepStatus) Terminal() bool { return s == StepCompleted || s == StepFailed }

var stepStatusNames = [...]string{"pending", "running", "completed", "failed"}

func (s StepStatus) String() string {
	if int(s) < len(stepStatusNames) {
		return stepStatusNames[s]
	}
	return fmt.Sprintf("StepStatus(%d)", uint8(s))
}

// EventType is the type of an event in a run's log.
type EventType uint8

// Event types carry an Ev prefix because RunCompleted, StepFailed and the like
// already name statuses; Ev* is always an event, Run*/Step* always a status.
// EvAttrSet is a run-level event that changes no projection; it
// exists because the DOMAIN §2 table gives it its own rule on terminal runs.
const (
	EvRunCreated EventType = iota
	EvRunStarted
	EvRunCompleted
	EvRunFailed
	EvRunCancelled
	EvStepCreated
	EvStepStarted
	EvStepCompleted
	EvStepFailed
	EvStepRetrying
	EvAttrSet
)

var eventTypeNames = [...]string{
	"run_created", "run_started", "run_completed", "run_failed", "run_cancelled",
	"step_created", "step_started", "step_completed", "step_failed", "step_retrying",
	"attr_set",
}

// EndsRun reports whether t is a terminal run event: run_completed,
// run_failed or run_cancelled. Every reader that asks "did this end the run"
// asks here, so the store, the properties and the sweep agree on it.
func (t EventType) EndsRun() bool { return t >= EvRunCompleted && t <= EvRunCancelled }

// EndsStep reports whether t is a terminal step event: step_completed or
// step_failed (step_retrying returns the step to pending).
func (t EventType) EndsStep() bool { return t == EvStepCompleted || t == EvStepFailed }

func (t EventType) String() string {
	if int(t) < len(eventTypeNames) {
		return eventTypeNames[t]
	}
	return fmt.Sprintf("EventType(%d)", uint8(t))
}

// IsStepEvent reports whether the event addresses a step row.
func (t EventType) IsStepEvent() bool { return t >= EvStepCreated && t <= EvStepRetrying }

// valid reports whether t is one of the declared event types.
func (t EventType) valid() bool { return t <= EvAttrSet }

// Result is what events.create answers.
type Result uint8

// Results of Apply. Every result but OK leaves the log and the rows untouched.
const (
	OK Result = iota
	RunExpired
	EntityConflict
	NotFound
	TooEarly
)

var resultNames = [...]string{"ok", "run_expired", "entity_conflict", "not_found", "too_early"}

func (r Result) String() string {
	if int(r) < len(resultNames) {
		return resultNames[r]
	}
	return fmt.Sprintf("Result(%d)", uint8(r))
}

// Fence selects the step_started rule on terminal runs: FenceFixed refuses it
// always; FencePreFix reproduces the historical bug that accepted it when the
// step row still read running (DOMAIN §2).
type Fence uint8

// Fences.
const (
	FenceFixed Fence = iota
	FencePreFix
)

func (f Fence) String() string {
	switch f {
	case FenceFixed:
		return "fixed"
	case FencePreFix:
		return "prefix"
	}
	return fmt.Sprintf("Fence(%d)", uint8(f))
}

// Rules selects whose events.create the store applies. The real Worlds were
// observed through the differential test in conformance/ (docs/CONFORMANCE.md);
// RulesDomain is DOMAIN.md §2 as written, kept for world-vercel, whose store
// cannot be observed here (unverified).
type Rules uint8

// Rule sets.
const (
	RulesDomain   Rules = iota // DOMAIN.md §2; world-vercel (unverified)
	RulesLocal                 // @workflow/world-local 5.0.0-beta.43 / beta.45 / beta.46
	RulesPostgres              // @workflow/world-postgres 5.0.0-beta.27 / beta.29
)

func (r Rules) String() string {
	switch r {
	case RulesDomain:
		return "domain"
	case RulesLocal:
		return "world-local"
	case RulesPostgres:
		return "world-postgres"
	}
	return fmt.Sprintf("Rules(%d)", uint8(r))
}

// Identity is the run's immutable fields: exactly what a runContext may carry
// (DOMAIN §1, §4). StartedAt is 0 until the first run_started.
type Identity struct {
	StartedAt    sim.Time // first: the struct then has no padding
	RunID        RunID
	DeploymentID int32
	SpecVersion  int32
	RootRunID    RunID
}

// Event is the argument of events.create.
type Event struct {
	Type       EventType
	Run        RunID
	Step       StepID   // NoStep for run events
	RetryAfter sim.Time // for EvStepRetrying: when the step may start again
	// Lazy marks a step_started that carries the step's name and input: on
	// the real Worlds it creates its step when missing (logging step_created
	// first) and conflicts when the step exists. Ignored by RulesDomain.
	Lazy bool
	// idFrom is 1 + the run whose step numbering Step comes from when that
	// is not Run, 0 for Run's own (stepids.go, WithStepIDOf). The engine
	// never sets it.
	idFrom RunID
}

// LoggedEvent is an accepted event as it sits in the run's log.
type LoggedEvent struct {
	Event
	At  sim.Time
	Pos int32 // index in the run's log
}

// Step is the step row. Exists is false for a (run, step) never created.
type Step struct {
	Exists     bool
	Status     StepStatus
	Attempt    int32 // accepted step_started events for this step
	RetryAfter sim.Time
}

// RunView is the run row as runs.get returns it: a copy.
type RunView struct {
	Identity
	Status      RunStatus
	CompletedAt sim.Time
}
