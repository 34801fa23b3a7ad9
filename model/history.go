package model

import (
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// Op is a store operation.
type Op uint8

const (
	OpRunsGet Op = iota
	OpEventsCreate
	OpEventsList
)

func (o Op) String() string {
	return [...]string{"runs.get", "events.create", "events.list"}[o]
}

// ReadReason says why a runs.get was made.
type ReadReason uint8

const (
	ReasonNone          ReadReason = iota
	ReasonPrologue                 // the legacy prologue's read before the claim
	ReasonLastCompleter            // the fetch-free path's one lazy read
	ReasonOrchestrator             // an orchestrator invocation loading its run
)

func (r ReadReason) String() string {
	return [...]string{"", "prologue", "last_completer", "orchestrator"}[r]
}

// CallerKind says which actor made a call or a publish.
type CallerKind uint8

const (
	CallerClient       CallerKind = iota // the outside world: start and cancel
	CallerOrchestrator                   // a workflow invocation
	CallerConsumer                       // a step message's delivery
	CallerWorld                          // the World itself (exhausted messages)
)

func (c CallerKind) String() string {
	return [...]string{"client", "orchestrator", "consumer", "world"}[c]
}

// Caller identifies the actor: its kind and, for orchestrators and
// consumers, the delivery it runs in.
type Caller struct {
	Kind     CallerKind
	Delivery int32 // index into History.Deliveries; -1 for the client and the World
}

// Call is one store call, from its arrival at the store to its answer.
type Call struct {
	// The fields are ordered by size, largest first, so that the struct
	// has no padding: a recorded run keeps one Call per World call, the
	// largest of its tables (BenchmarkScale, docs/PERFORMANCE.md).

	Start  sim.Time // arrival at the store
	Served sim.Time // a slot became free (Start plus queueing)
	End    sim.Time // the answer
	// RetryAfter is set for TooEarly.
	RetryAfter sim.Time
	serial     uint64 // issue order, the call's identity in the run's hash
	// Row is the run row the answer carried, as an observer of the call
	// sees it: runs.get's row (stale or not), or the run an accepted
	// run_created or run_started returned. HasRow says there is one.
	Row    world.Identity
	Caller Caller
	Run    world.RunID
	Step   world.StepID // world.NoStep where none
	Fanout int32        // the fan-out a call is about (global index), -1 if none
	// LogPos is the accepted event's position in the run's log, or -1.
	LogPos int32
	// Attempt is the step's attempt an accepted step_started answered with.
	Attempt int32
	// Effect orders the run's calls by when each took effect: a read or a
	// list when the store served it (what it saw is the log then), a write
	// when it applied, run_created as it arrived. Calls that took effect at
	// one virtual instant keep the order the simulation applied them in,
	// which a plan must follow (realengine, planFrom).
	Effect uint32
	flight int32 // 1 + its slot in the engine's flights while in flight, else 0
	Op     Op
	Event  world.EventType
	// Lazy: a step_started that creates its step (core's claim of an
	// inline step, which no step_created precedes: the World logs one).
	Lazy   bool
	Reason ReadReason
	Result world.Result
	// For runs.get: the status returned and whether it was older than the
	// newest write.
	StatusRead world.RunStatus
	Stale      bool
	// Unreadable: runs.get could not give the row back (its fields do not
	// fit its status) and threw; StatusRead is then not an answer.
	Unreadable bool
	// WasLast is the atomic-fan-in World's answer to a terminal step write.
	WasLast bool
	// PendingEmpty is an events.list's answer about its fan-out: no step
	// created and not finished, as of when the store served the read. On an
	// inline step's step_completed it says the write answered with the log's
	// delta, which the invocation went on with instead of listing (core's
	// inline delta, lastCompleter.inlineDelta): a delta is only asked for
	// the one step of its suspension, so its fan-out has none pending.
	PendingEmpty bool
	// LogTerminal: the log an events.list (or run_started's preload, or an
	// inline delta) answered with holds the run's terminal event (what a
	// replay reading it sees first).
	LogTerminal bool
	HasRow      bool
	done        bool // answered; the slot may be reused once nothing refers to it
	landed      bool // a write in flight took its last step (flight.go)
}

// Site is where a step message was published (DOMAIN §5).
type Site uint8

const (
	SiteNone              Site = iota
	SiteNodeDispatchLoop       // orchestrator publishing the non-inline steps
	SiteDelayedRetry           // re-publish after step_retrying
	SiteSuspensionPublish      // resilient publish in parallel with step_created
	SiteQuickJS                // QuickJS engine's queueStepMessage
	SiteReroute                // the deployment guard re-enqueueing a message
	SiteStart                  // the client starting a run (workflow message)
	SiteFreshCopy              // world-vercel's failure path copying a message
	SiteInvokeReplay           // a finished step handing the replay to an invoke World's runner lane
	SiteBackstop               // a replay arming core's delayed wake for an inline step another invocation owns
)

func (s Site) String() string {
	return [...]string{"", "node_dispatch_loop", "delayed_retry", "suspension_resilient_publish",
		"quickjs_queue_step_message", "deployment_reroute", "run_start", "fresh_copy", "invoke_replay", "inline_backstop"}[s]
}

// MsgKind says what a message asks for.
type MsgKind uint8

const (
	MsgWorkflow MsgKind = iota // run the orchestrator
	MsgStep                    // run one step
)

// RunContext is the run's immutable identity a v2 producer stamps on step
// messages (DOMAIN §4). Run status is deliberately not part of it.
type RunContext struct {
	DeploymentID int32
	SpecVersion  int32
	StartedAt    sim.Time
	RootRunID    world.RunID
}

// Message is a queue message's body and its routing, as published.
type Message struct {
	ID        int32 // stable across redeliveries
	Kind      MsgKind
	Run       world.RunID
	Step      world.StepID
	Fanout    int32
	HasInput  bool // carries stepInput
	HasCtx    bool // carries runContext
	Ctx       RunContext
	Reroutes  int32 // deploymentMismatchRetryCount
	Target    int32 // deployment the message is pinned to
	Delay     sim.Time
	Key       uint64 // idempotency key; 0 for none
	Origin    int32  // for re-routes and fresh copies: the message copied, else -1
	Requested sim.Time
}

// Publish is one call to the queue's publish.
type Publish struct {
	Msg      int32 // index into History.Messages; -1 when deduplicated
	Run      world.RunID
	Step     world.StepID
	Site     Site
	Caller   Caller
	Producer Version // the producing deployment's producer version
	At       sim.Time
	Done     sim.Time // the queue's answer to the publish call
	Deduped  bool     // an idempotency key was already claimed: no message
}

// Version is a producer or consumer version.
type Version uint8

const (
	V1 Version = 1 // stamps no runContext / always takes the legacy prologue
	V2 Version = 2 // stamps runContext / fetch-free when the message carries it
)

func (v Version) String() string {
	if v == V1 {
		return "v1"
	}
	return "v2"
}

// Prologue says how a step delivery started.
type Prologue uint8

const (
	PrologueNone       Prologue = iota // not a step delivery, or stopped before one
	PrologueRunsGet                    // legacy: runs.get before the claim
	PrologueRunContext                 // fetch-free: identity from the message
)

func (p Prologue) String() string { return [...]string{"", "runs_get", "run_context"}[p] }

// Disposition is how a delivery ended for the queue.
type Disposition uint8

const (
	DispPending   Disposition = iota // still running when the simulation stopped
	DispAck                          // done with the message
	DispRedeliver                    // asked to be delivered again after a delay
	DispThrow                        // threw: redelivered with attempt + 1
	DispCrash                        // the consumer died mid-delivery
)

func (d Disposition) String() string {
	return [...]string{"pending", "ack", "redeliver", "throw", "crash"}[d]
}

// StepOutcome is what a step delivery did with its step.
type StepOutcome uint8

const (
	OutcomeNone      StepOutcome = iota
	OutcomeCompleted             // body ran and step_completed landed
	OutcomeFailed                // body failed for good: step_failed
	OutcomeRetry                 // body failed, step_retrying and a delayed re-publish
	OutcomeSkipped               // the claim or the terminal write met EntityConflict
	OutcomeGone                  // the run was over (RunExpired, or not running)
	OutcomeThrottled             // TooEarly: delivered again after retryAfter
)

func (o StepOutcome) String() string {
	return [...]string{"", "completed", "failed", "retry", "skipped", "gone", "throttled"}[o]
}

// Invocation is the delivery of a queue message that delivery d runs in: d
// itself when d delivered a message, else the orchestrator invocation an
// inline step runs inside. An inline step whose completion continued the
// workflow starts the next fan-out's inline steps as its own children, so the
// walk may take several hops. It returns -1 when the chain ends without a
// message (or loops, which only a model bug or an edited History can make).
func (h *History) Invocation(d int32) int32 {
	for range len(h.Deliveries) + 1 {
		switch {
		case d < 0 || int(d) >= len(h.Deliveries):
			return -1
		case h.Deliveries[d].Msg >= 0:
			return d
		}
		d = h.Deliveries[d].Parent
	}
	return -1
}

// Delivery is one delivery of a message to a consumer, or one inline step
// execution inside an orchestrator invocation (Msg = -1).
type Delivery struct {
	Msg          int32 // index into History.Messages, -1 for an inline step
	Parent       int32 // for an inline step: the invocation's delivery
	Kind         MsgKind
	Run          world.RunID
	Step         world.StepID
	Fanout       int32
	Attempt      int32
	Target       int32 // deployment the message was pinned to
	Deployment   int32 // deployment whose consumer handled it
	Version      Version
	Start, End   sim.Time
	Prologue     Prologue
	Disposition  Disposition
	Outcome      StepOutcome
	BodyRan      bool
	BodyStart    sim.Time
	BodyEnd      sim.Time
	LastComplete bool // this delivery saw an empty pending set
	Continued    bool // and went on to replay the workflow
	Rerouted     bool
	Recovered    bool // created the missing step from stepInput in-band
}

// FaultKind names an injected fault.
type FaultKind uint8

const (
	FaultCrash       FaultKind = iota // a consumer died between two calls
	FaultMisdeliver                   // a message went to another deployment
	FaultStaleRead                    // a runs.get returned an old status
	FaultDropCreate                   // a resilient step_created never landed
	FaultBodyFailure                  // a step body threw
	FaultCancel                       // the client cancelled the run
)

func (f FaultKind) String() string {
	return [...]string{"crash", "misdelivery", "stale_read", "lost_step_created", "body_failure", "cancel"}[f]
}

// Fault is one injected fault, when and where it hit.
type Fault struct {
	Kind     FaultKind
	At       sim.Time
	Run      world.RunID
	Delivery int32 // -1 where none
}

// Accepted is one event the World accepted, in log order per run.
type Accepted struct {
	world.LoggedEvent
	Caller Caller
	Call   int32 // index into History.Calls
}

// RunReadBack is one run read back after the simulation: the status
// runs.get answers, or Readable false when the call throws (a
// world-postgres row whose fields no longer fit its status,
// world.Store.Readable).
type RunReadBack struct {
	Status   world.RunStatus
	Readable bool
}

// RunInfo is the static description of a run.
type RunInfo struct {
	ID         world.RunID
	Deployment int32
	Engine     Engine
	StartAt    sim.Time
	CancelAt   sim.Time // 0: never cancelled
	// CancelledByFault: the cancellation is the client.cancel fault, not
	// the scenario's scripted faults.cancel_at.
	CancelledByFault bool
	Fanouts          []int32 // global fan-out indices, in order
}

// Fanout is one Promise.all in one run.
type Fanout struct {
	Run       world.RunID
	Index     int32 // position within the run's workflow
	FirstStep world.StepID
	Branches  int32
	Inline    int32
	// ContinuedBy says who replayed the workflow after the fan-out.
	ContinuedBy CallerKind
	Continued   bool
	// Counted as the run went, whether or not the History records calls.
	PrologueFetches int32 // legacy prologue reads of this fan-out's deliveries
	LazyFetches     int32 // fetch-free last completers' lazy reads
	LastCompleters  int32 // deliveries that saw the pending set empty
}

// Deployment is one deployment of the workflow code.
type Deployment struct {
	Name     string
	Producer Version
	Consumer Version
}

// Declared is what a scenario declares that properties judge by: the
// workflow's retry policy and fatal steps, and the work-after-end budget.
type Declared struct {
	MaxRetries   int32 // retries of a failing step before step_failed
	FatalSteps   int32 // the last that many steps of each fan-out fail fatally
	WorkAfterEnd int32 // Budget.WorkAfterEnd
}

// History is everything that happened in one simulated run of a scenario.
// Properties, traces and the TUI read it; nothing mutates it after the run.
type History struct {
	Seed     uint64
	Scenario string
	Variants []string
	Profile  string
	// Swarm is what a swarm scenario drew for this run, nil otherwise.
	Swarm       *SwarmDraw
	Deployments []Deployment
	Runs        []RunInfo
	Fanouts     []Fanout
	Messages    []Message
	Publishes   []Publish
	Deliveries  []Delivery
	Calls       []Call
	Accepted    []Accepted
	Faults      []Fault
	// FinalRuns is each run's row at the end.
	FinalRuns []world.RunView
	// ReadBack is each run as a runs.get made once the simulation ended
	// answers it: the read-back the real harness makes after its runs go
	// quiet (realengine harness.mjs readRunBack), an observation
	// through the World's API, unlike FinalRuns.
	ReadBack []RunReadBack
	// FinalSteps is each step's row at the end, per run, indexed by step.
	FinalSteps [][]world.Step
	// FaultsStopAt is when the fault phase ended (liveness is judged after).
	FaultsStopAt sim.Time
	// Drained says the queue and every actor finished before the limits.
	Drained bool
	// Retired lists the messages the queue dropped at its delivery cap
	// (a dead letter, as the queue reports it), in order.
	Retired []int32
	// Declared is what the scenario declares of the workflow code and the
	// budget, which an observer knows as the code's author does.
	Declared Declared
	// FaultSites reports the kernel's fault sites.
	FaultSites []sim.SiteReport
	Hash       uint64
	Events     uint64
	End        sim.Time
}

// reset makes h the History of a new run, with the header fields of head
// and a copy of variants, keeping its tables' room for the run to append
// to (a Runner's History): every other field starts from zero.
func (h *History) reset(head History, variants []string) *History {
	*h = History{Seed: head.Seed, Scenario: head.Scenario, Profile: head.Profile, Swarm: head.Swarm,
		Variants:   append(h.Variants[:0], variants...),
		Runs:       h.Runs[:0],
		Fanouts:    h.Fanouts[:0],
		Messages:   h.Messages[:0],
		Publishes:  h.Publishes[:0],
		Deliveries: h.Deliveries[:0],
		Accepted:   h.Accepted[:0],
		Faults:     h.Faults[:0],
		FinalRuns:  h.FinalRuns[:0],
		ReadBack:   h.ReadBack[:0],
		FinalSteps: h.FinalSteps[:0],
		Retired:    h.Retired[:0],
		FaultSites: h.FaultSites[:0],
	}
	return h
}
