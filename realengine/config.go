package realengine

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/flow"
	"github.com/simlab/simlab/sim"
)

// dist is a sim.Dist in milliseconds, the harness's unit (store.mjs).
type dist struct {
	Min float64 `json:"min"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func distOf(d sim.Dist) dist {
	return dist{msOf(d.Min), msOf(d.P50), msOf(d.P90), msOf(d.P99), msOf(d.Max)}
}

// storeConfig is the store model store.mjs imposes on the real World.
type storeConfig struct {
	RunsGet             dist    `json:"runs_get"`
	EventsCreate        dist    `json:"events_create"`
	EventsList          dist    `json:"events_list"`
	Publish             dist    `json:"publish"`
	Deliver             dist    `json:"deliver"`
	MaxConcurrentReads  int     `json:"max_concurrent_reads"`
	MaxConcurrentWrites int     `json:"max_concurrent_writes"`
	StaleRead           float64 `json:"stale_read"`
	StaleLagMS          float64 `json:"stale_lag_ms"`
}

// HarnessConfig is what harness.mjs reads for one run: one scenario, both
// sides (the simlab side reads the same model.Scenario).
type HarnessConfig struct {
	Seed      uint64 `json:"seed"`
	Fanouts   []int  `json:"fanouts"`
	MaxInline int    `json:"max_inline"`
	// FlakySteps and FlakyTimes: the last FlakySteps steps of each fan-out
	// throw in their first FlakyTimes attempts (workflow.flaky_steps).
	FlakySteps int `json:"flaky_steps,omitempty"`
	FlakyTimes int `json:"flaky_times,omitempty"`
	// AwaitInlineClaims sets WORKFLOW_OPTIMISTIC_INLINE_START=0
	// (workflow.await_inline_claims).
	AwaitInlineClaims bool `json:"await_inline_claims,omitempty"`
	// LeaseSeconds sets WORKFLOW_INLINE_OWNERSHIP_LEASE_SECONDS
	// (workflow.inline_ownership_lease; 0: core's default).
	LeaseSeconds  int         `json:"inline_ownership_lease_seconds,omitempty"`
	Body          dist        `json:"body"`
	Runs          int         `json:"runs"`
	RunIntervalMS float64     `json:"run_interval_ms"`
	Consumers     int         `json:"consumers"`
	Store         storeConfig `json:"store"`
	Crash         float64     `json:"crash"`
	// MaxDurationMS kills a delivery that runs longer (the platform's
	// function time limit, flow.Config.MaxDuration; 0: none): no more
	// World calls, its step bodies end, and world-local redelivers it
	// after its 5 s backoff.
	MaxDurationMS float64 `json:"max_duration_ms,omitempty"`
	// BodyCrash is the chance a program step's process dies between its
	// claim and its body (flow.Config.Crash): the delivery running it,
	// queued or inline, crashes there.
	BodyCrash float64 `json:"body_crash,omitempty"`
	// ProgramTimeoutIsOutcome makes a program's run still going at the
	// timeout an outcome (RealRun.TimedOut: a run that never ended), not
	// an error.
	ProgramTimeoutIsOutcome bool `json:"program_timeout_is_outcome,omitempty"`
	CrashFirstDelivery      bool `json:"crash_first_delivery"`
	StripRunContext         bool `json:"strip_run_context"`
	ResilientDispatch       bool `json:"resilient_dispatch"`
	// DefaultDispatch leaves WORKFLOW_RESILIENT_STEP_DISPATCH unset, so the
	// runtime dispatches as it does by default (ResilientDispatch ignored).
	DefaultDispatch bool `json:"default_dispatch,omitempty"`
	BatchCreates    bool `json:"batch_creates"`
	// Invoke gives the wrapped World capabilities.invoke and keeps its
	// contract (one active workflow runner per run) in the harness's
	// handler: simlab's store.invoke (core 5.0.0-beta.55 on).
	Invoke bool `json:"invoke,omitempty"`
	// WorldLocal is the package the harness imports the real World from
	// (@workflow/world-local or an alias of another release; "" is the
	// former).
	WorldLocal string `json:"world_local,omitempty"`
	// WorldPostgres, if set, runs the core over world-postgres instead (a
	// reproduce of a world-postgres schedule): the package and the
	// migrated database's connection string.
	WorldPostgres *postgresWorld `json:"world_postgres,omitempty"`
	// Program, if set, runs that workflow of programs.ts (WorkflowFunction)
	// instead of the fan-out workflow, each step's body as ProgramSteps
	// gives it by statement index (Runner.RunProgram sets these).
	Program      string        `json:"program,omitempty"`
	ProgramSteps []programStep `json:"program_steps,omitempty"`
	// NoRetainedVM switches core's retained VM off
	// (WORKFLOW_RETAINED_VM=0): every pass of an invocation replays
	// afresh (flow.Config.RetainedVM false).
	NoRetainedVM bool `json:"no_retained_vm,omitempty"`
	// PinnedBodies, if set, fixes a program's step bodies by statement:
	// the nth body of a statement's step to begin takes its nth entry
	// (what a simulated run's did), the rest draw as their statement says.
	PinnedBodies map[int32][]PinnedBody `json:"-"`
	BundleDir    string                 `json:"bundle_dir"`
	DataDir      string                 `json:"data_dir"`
	TraceOut     string                 `json:"trace_out,omitempty"`
	TimeoutMS    int64                  `json:"timeout_ms"`
	DumpCalls    bool                   `json:"dump_calls,omitempty"`
	// Gate, if set, holds chosen World calls and releases them together
	// (gate.mjs): a race met every time instead of by timing.
	Gate *GateConfig `json:"gate,omitempty"`
	// ProbeReplay delivers each finished run's own message and its first
	// queued step's once more, and reports what the runtime then does.
	ProbeReplay bool `json:"probe_replay,omitempty"`
	// ProbeKinds picks ProbeReplay's probes: run, step, ghost (a step
	// message with a fresh step id, its stepInput kept) and ghost_bare
	// (without stepInput); none is run and step.
	ProbeKinds []string `json:"probe_kinds,omitempty"`
	// ProbeUntilAcked records every redelivery of a probe answered with an
	// error, until one is acked.
	ProbeUntilAcked bool `json:"probe_until_acked,omitempty"`
	// MaxQueueDeliveries sets the runtime's WORKFLOW_MAX_QUEUE_DELIVERIES
	// (0: its default, 48).
	MaxQueueDeliveries int `json:"max_queue_deliveries,omitempty"`
	// RecordBodies reports every step body (its run, step, delivery, begin
	// and end) and lets the gate's holds hold a body as it begins.
	RecordBodies bool `json:"record_bodies,omitempty"`
	// Race, if set, forces each run's first run_started and the run's cancel
	// into one interleaving of the real World's own I/O (race.mjs, on
	// realworld/node/gate.mjs).
	Race *RaceConfig `json:"race,omitempty"`
	// Resumes, if set, is an outside system resuming the program's hooks
	// (resumes.mjs; simlab's flow.Resumes).
	Resumes *ResumesConfig `json:"resumes,omitempty"`
}

// ResumesConfig is flow.Resumes in the harness's units.
type ResumesConfig struct {
	EveryMS     float64 `json:"every_ms"`
	Count       int     `json:"count"`
	Burst       int     `json:"burst,omitempty"`
	SpreadMS    float64 `json:"spread_ms,omitempty"`
	One         bool    `json:"one,omitempty"`
	AtDeadlines bool    `json:"at_deadlines,omitempty"`
}

// ResumesOf is the harness's driver for simlab's; nil when it resumes
// nothing.
func ResumesOf(r flow.Resumes) *ResumesConfig {
	if !r.On() {
		return nil
	}
	return &ResumesConfig{EveryMS: msOf(r.Every), Count: r.Count, Burst: r.Burst, SpreadMS: msOf(r.Spread), One: r.One, AtDeadlines: r.AtDeadlines}
}

// postgresWorld is harness.mjs's world_postgres.
type postgresWorld struct {
	Package string `json:"package"`
	URL     string `json:"url"`
}

// RaceConfig is race.mjs's spec. Kind "start_cancel": the harness cancels
// each run (Run#cancel) when the runtime's first run_started of the run
// reaches the store, and the two calls take their steps in Schedule's order
// ([call, step] pairs, call 0 the run_started and call 1 the cancel; the
// model's interleaving, findings.StartCancelSchedule).
type RaceConfig struct {
	Kind     string   `json:"kind"`
	Schedule [][2]int `json:"schedule"`
}

// GateConfig is gate.mjs's spec: FanIn holds every delivery's events.list
// after its own terminal step write until the run has FanIn of them (every
// branch a last completer); RunCompleted holds run_completed writes until
// that many are held, then releases them in one tick.
type GateConfig struct {
	FanIn        int `json:"fan_in,omitempty"`
	RunCompleted int `json:"run_completed,omitempty"`
	// Holds are gate.mjs's rules: each holds the World call or step body
	// What picks until a happening Until picks has happened on its run.
	Holds []HoldRule `json:"holds,omitempty"`
	// Actions are the harness's own calls on a happening (gate.mjs): Do
	// "cancel" cancels the run the first time On matches on it.
	Actions []GateAction `json:"actions,omitempty"`
	// Plan holds every call and body a simulated history names until its
	// turn in the history's order (plan.mjs; reproduce.go).
	Plan *planSpec `json:"plan,omitempty"`
}

// planSpec is plan.mjs's spec: the plan's entries, in order.
type planSpec struct {
	Entries []PlanEntry `json:"entries"`
	// Cut: judge once every entry is answered (Plan.Cut).
	Cut bool `json:"cut,omitempty"`
}

// HoldRule holds what What matches (a World call as it reaches the World, or
// a step body as it begins) until a happening Until matches: an interleaving
// named by what happens, never by when (gate.mjs, matches()).
type HoldRule struct {
	Name  string      `json:"name"`
	What  HoldPattern `json:"what"`
	Until HoldPattern `json:"until"`
}

// String says what the rule holds until when, for a reader.
func (h HoldRule) String() string {
	return h.What.String() + " until " + h.Until.String()
}

// String names the happenings p matches.
func (p HoldPattern) String() string {
	if p.Kind == "elapsed" {
		return fmt.Sprintf("the run's clock reaches %v", time.Duration(p.MS)*time.Millisecond)
	}
	var b strings.Builder
	switch p.Kind {
	case "answer":
		b.WriteString("the answer to ")
	case "body", "body_begin", "body_end":
		b.WriteString(p.Kind + " ")
	}
	b.WriteString(cmp.Or(p.Op, "any call"))
	if p.Event != "" {
		b.WriteString(" " + p.Event)
	}
	if p.Ordinal != nil {
		fmt.Fprintf(&b, " of entity #%d", *p.Ordinal)
	}
	if p.Statement != nil {
		fmt.Fprintf(&b, " from statement %d", *p.Statement)
	}
	if p.Result != "" {
		b.WriteString(" (" + p.Result + ")")
	}
	if p.From != "" {
		b.WriteString(" by a " + p.From + " delivery")
	}
	if p.Nth > 0 {
		fmt.Fprintf(&b, ", the %d. on the run", p.Nth)
	}
	return b.String()
}

// GateAction is one of gate.mjs's actions: Do ("cancel") the run when a
// happening On matches on it, once per run.
type GateAction struct {
	Name string      `json:"name"`
	On   HoldPattern `json:"on"`
	Do   string      `json:"do"`
}

// HoldPattern matches a happening on a run. Kind: call, body (What); call,
// answer, body_begin, body_end, elapsed (Until: the run's clock reaching MS). From: run (the run's own message's
// delivery, the orchestrator) or step (a queued step's delivery). Step
// "same" and Delivery "other"/"same" relate an Until happening to the held
// item; Nth picks the nth match of What on the run (0: every one).
type HoldPattern struct {
	Kind     string `json:"kind"`
	Op       string `json:"op,omitempty"`
	Event    string `json:"event,omitempty"`
	Lazy     *bool  `json:"lazy,omitempty"`
	Result   string `json:"result,omitempty"`
	From     string `json:"from,omitempty"`
	Step     string `json:"step,omitempty"`
	Delivery string `json:"delivery,omitempty"`
	Nth      int    `json:"nth,omitempty"`
	// Statement and Ordinal name an entity of a program's run: the
	// statement whose step it is and its place in the run's correlation-id
	// sequence (nil: any).
	Statement *int32 `json:"statement,omitempty"`
	Ordinal   *int32 `json:"ordinal,omitempty"`
	// MS is an "elapsed" Until's time: the run's clock (what a replay's
	// Date.now() counts from) in milliseconds.
	MS int64 `json:"ms,omitempty"`
}

// WorldLocalRedelivery is how long world-local's queue waits before it
// delivers a message again after an error answer (a crash or a kill).
const WorldLocalRedelivery = 5 * time.Second

// The real world-local queue's own rules (@workflow/world-local 5.0.0-beta.45,
// dist/queue.js): a delivery answered with an error (our injected crash
// answers HTTP 500) comes back after a fixed 5 s; the runtime caps a
// message at 48 deliveries; a delivery still running is never delivered again.
const (
	localRetryBackoff  = WorldLocalRedelivery
	localMaxDeliveries = 48
	// maxInlineLimit is the runtime's WORKFLOW_MAX_INLINE_STEPS range.
	maxInlineLimit = 16
	// batchEvents is the runtime's MAX_BATCH_FANOUT_EVENTS: step_created
	// events are written 32 at a time.
	batchEvents = 32
	// coreMaxRetries is the runtime's DEFAULT_STEP_MAX_RETRIES.
	coreMaxRetries = 3
)

// HarnessConfig translates a validated scenario, at one width, into what
// the real side runs, and refuses every knob the real engine on world-local
// cannot honour, naming it. legacy says the real producer must stamp no
// runContext (the legacy-producers variant on the simlab side).
func HarnessFor(sc model.Scenario, branches int) (HarnessConfig, error) {
	if err := Honourable(sc); err != nil {
		return HarnessConfig{}, err
	}
	fans := make([]int, len(sc.Workflow.Fanouts))
	for i := range fans {
		fans[i] = branches
	}
	p := sc.Store
	crash := sc.Faults.Crash
	return HarnessConfig{
		Fanouts:           fans,
		MaxInline:         sc.Workflow.MaxInline,
		FlakySteps:        sc.Workflow.FlakySteps,
		FlakyTimes:        sc.Workflow.FlakyTimes,
		AwaitInlineClaims: sc.Workflow.AwaitInlineClaims,
		LeaseSeconds:      int(sc.Workflow.InlineOwnershipLease / time.Second),
		Body:              distOf(sc.Workflow.Body),
		Runs:              sc.Runs,
		RunIntervalMS:     msOf(sc.RunInterval),
		Consumers:         p.Consumers,
		Store: storeConfig{
			RunsGet: distOf(p.RunsGet), EventsCreate: distOf(p.EventsWrite), EventsList: distOf(p.EventsList),
			Publish: distOf(p.Publish), Deliver: distOf(p.Deliver),
			MaxConcurrentReads: p.MaxConcurrentReads, MaxConcurrentWrites: p.MaxConcurrentWrites,
			StaleRead: sc.Faults.StaleRead, StaleLagMS: msOf(p.StaleLag),
		},
		Crash:              crash,
		CrashFirstDelivery: sc.Faults.CrashFirstDelivery,
		// world-local's cap is the runtime's, which can only be lowered.
		MaxQueueDeliveries: queueCap(p.MaxDeliveries),
		StripRunContext:    slices.Contains(sc.Variants, "legacy-producers"),
		// The runtime's WORKFLOW_RESILIENT_STEP_DISPATCH (off by default in
		// the published runtime): step_created and the step's publish in
		// parallel, the message carrying stepInput.
		ResilientDispatch: sc.Workflow.ResilientDispatch,
		// world-local has no events.createBatch; store.mjs offers one over
		// it when the scenario's World has it, and the runtime decides
		// whether to use it (never with resilient dispatch).
		BatchCreates: p.BatchCreates,
		Invoke:       p.Invoke,
	}, nil
}

// Honourable returns an error naming the first scenario knob the real engine
// on world-local cannot honour. The store model (latencies, pools, stale
// reads), the workflow's shape (fan-outs, inline count, bodies, runs),
// consumer concurrency and consumer crashes are honoured; what the real
// runtime has no switch for is refused rather than silently dropped.
func Honourable(sc model.Scenario) error {
	w, f, p := sc.Workflow, sc.Faults, sc.Store
	refuse := func(knob string, v any, why string) error {
		return fmt.Errorf("%s = %v: the real engine cannot honour it: %s", knob, v, why)
	}
	for _, v := range sc.Variants {
		// legacy-producers is a producer that stamps no runContext (the
		// harness strips it). The others change the protocol away from the
		// published runtime (replay-on-stale-pending included: the runtime
		// fails that replay, which is simlab's default).
		if v != "legacy-producers" {
			return refuse("variants", v, "a model switch with no counterpart in the published runtime (only legacy-producers has one)")
		}
	}
	switch {
	case w.MaxInline < 1 || w.MaxInline > maxInlineLimit:
		return refuse("workflow.max_inline", w.MaxInline, fmt.Sprintf("WORKFLOW_MAX_INLINE_STEPS takes 1..%d", maxInlineLimit))
	case w.ChunkSize != batchEvents:
		return refuse("workflow.chunk_size", w.ChunkSize, fmt.Sprintf("the runtime writes step_created in batches of %d (MAX_BATCH_FANOUT_EVENTS), not a setting", batchEvents))
	case w.FlakySteps > 0 && w.RetryDelay != time.Second:
		// A plain Error's retry: core answers {timeoutSeconds: 1} (a
		// queued step) or queues the retry with delaySeconds 1 (an inline
		// one); only a RetryableError's retryAfter sets another delay.
		return refuse("workflow.retry_delay", w.RetryDelay, "the harness's flaky steps throw a plain Error, which core retries after 1s")
	case w.FlakySteps > 0 && w.MaxRetries != coreMaxRetries:
		return refuse("workflow.max_retries", w.MaxRetries, fmt.Sprintf("core retries a step %d times (DEFAULT_STEP_MAX_RETRIES), not a setting", coreMaxRetries))
	case w.FatalSteps > 0:
		return refuse("workflow.fatal_steps", w.FatalSteps, "the harness's steps do not fail (not implemented on the real side)")
	case w.QuickJSShare > 0:
		return refuse("workflow.quickjs_share", w.QuickJSShare, "the harness runs the Node engine only")
	case len(sc.Deployments) != 1:
		return refuse("deployments", len(sc.Deployments), "world-local has one deployment (dpl_local@<version>)")
	case sc.Deployments[0].Consumer != "v2" || sc.Deployments[0].Producer != "v2":
		return refuse("deployments[0]", sc.Deployments[0].Producer+"/"+sc.Deployments[0].Consumer,
			"the consumer and producer are the core version under test; use the legacy-producers variant or core 5.0.0-beta.50 for the legacy path")
	case sc.Rollout.To != "":
		return refuse("rollout.to", sc.Rollout.To, "world-local has one deployment")
	case f.Swarm:
		return refuse("faults.swarm", f.Swarm, "swarm switches fault sites the real side does not have")
	case f.Misdeliver > 0:
		return refuse("faults.misdeliver", f.Misdeliver, "world-local has one deployment")
	case f.LostCreate > 0:
		return refuse("faults.lost_create", f.LostCreate, "the harness cannot drop a real step_created write")
	case f.BodyFailure > 0:
		return refuse("faults.body_failure", f.BodyFailure, "the harness's steps do not fail (not implemented on the real side)")
	case f.Cancel > 0 || f.CancelAt > 0:
		return refuse("faults.cancel", f.Cancel, "cancellation is not driven on the real side")
	case f.Until > 0 && (f.Crash > 0 || f.StaleRead > 0):
		return refuse("faults.until", f.Until, "the real side's faults do not stop at a time")
	}
	crashes := f.Crash > 0 || f.CrashFirstDelivery
	if crashes {
		// A crashed delivery answers 500; world-local brings it back after
		// its fixed backoff, which is simlab's visibility timeout here.
		switch {
		case p.VisibilityTimeout != localRetryBackoff:
			return refuse("store.visibility_timeout", p.VisibilityTimeout, "world-local redelivers a crashed delivery after its fixed 5s backoff; set it to 5s or turn crashes off")
		case p.MaxDeliveries > localMaxDeliveries:
			return refuse("store.max_deliveries", p.MaxDeliveries, "the runtime caps a message at 48 deliveries on world-local and can only lower the cap (WORKFLOW_MAX_QUEUE_DELIVERIES, which the harness sets); set at most 48, or 0")
		case p.FreshCopyOnThrow > 0:
			return refuse("store.fresh_copy_on_throw", p.FreshCopyOnThrow, "world-local redelivers the same message, never a fresh copy")
		}
	}
	if p.RedeliverInFlight && p.VisibilityTimeout < 30*time.Second {
		return refuse("store.redeliver_in_flight", p.RedeliverInFlight, "world-local never redelivers a delivery that is still running; with a visibility timeout under 30s simlab would")
	}
	if p.ListPerEvent > 0 || p.WritePerEvent > 0 || p.WritePerContender > 0 || p.ListPerContender > 0 {
		return refuse("store.list_per_event/write_per_event/write_per_contender", fmt.Sprintf("%v/%v/%v", p.ListPerEvent, p.WritePerEvent, p.WritePerContender),
			"a cost per logged event or per contending write is the model's account of the real World's own cost, which the harness cannot inject; give it to the simlab side with --sim-store")
	}
	if p.SharedWrites {
		return refuse("store.shared_writes", p.SharedWrites,
			"how the real World shares its own time among its writes is the model's account of its cost, which the harness cannot inject; give it to the simlab side with --sim-store")
	}
	if p.WriteOrder == model.WriteOrderRandom {
		return refuse("store.write_order", p.WriteOrder,
			"the order the real World answers its own writes in is the model's account of its cost, which the harness cannot inject (its pools serve in arrival order); give it to the simlab side with --sim-store")
	}
	if f.StaleRead > 0 && p.StaleLag <= 0 {
		return refuse("store.stale_lag", p.StaleLag, "stale reads need a positive lag")
	}
	if math.IsNaN(f.Crash) {
		return refuse("faults.crash", f.Crash, "not a probability")
	}
	return nil
}

// Scaled returns sc with every latency the store, the queue and the step
// bodies take (and the stale-read lag) multiplied by k, for both sides. The
// real side runs every delivery of a run in one Node process, whose own CPU
// time per call (tens of ms at 128 branches on a shared 2-core machine,
// recorded as real_store_ms) would otherwise add to the scenario's
// latencies; slowing the scenario down k times makes that artifact small
// against them, while the protocol's races keep their proportions.
func Scaled(sc model.Scenario, k float64) model.Scenario {
	if k == 1 {
		return sc
	}
	s := func(d time.Duration) time.Duration { return time.Duration(math.Round(float64(d) * k)) }
	sd := func(d sim.Dist) sim.Dist { return d.Scaled(k) }
	p := &sc.Store
	p.RunsGet, p.EventsWrite, p.EventsList = sd(p.RunsGet), sd(p.EventsWrite), sd(p.EventsList)
	p.Publish, p.Deliver = sd(p.Publish), sd(p.Deliver)
	p.StaleLag = s(p.StaleLag)
	sc.Workflow.Body = sd(sc.Workflow.Body)
	return sc
}

// programStep is how a real run's step of one statement behaves: its body
// time and how many results it draws from (0: it returns 1).
type programStep struct {
	Body    dist         `json:"body"`
	Results int          `json:"results"`
	Hangs   int          `json:"hangs,omitempty"`
	Pinned  []PinnedBody `json:"pinned,omitempty"`
}

// PinnedBody is one step body of a program's statement, fixed: how long it
// runs and the result it returns.
type PinnedBody struct {
	MS     float64 `json:"ms"`
	Result int64   `json:"result"`
}
