package model

import (
	"fmt"
	"slices"
	"time"

	"github.com/simlab/simlab/model/program"
	"github.com/simlab/simlab/sim"
)

// Engine is the execution engine a run's workflow code runs on.
type Engine uint8

const (
	EngineNode    Engine = iota // Node.js: node dispatch loop / suspension publish
	EngineQuickJS               // QuickJS: queueStepMessage
)

func (e Engine) String() string { return [...]string{"node", "quickjs"}[e] }

// Scenario is everything a simulated run is built from, apart from the
// chooser. Every field has a default (DefaultScenario); a scenario file only
// names what it changes. The field names are the file format's (docs/SCENARIOS.md).
type Scenario struct {
	Name        string `json:"name" yaml:"name"`
	Description string `json:"description" yaml:"description"`
	// World names the profile (world-local, world-postgres, world-vercel);
	// Store overrides any of that profile's parameters.
	World string  `json:"world" yaml:"world"`
	Store Profile `json:"store" yaml:"store"`

	Runs        int           `json:"runs" yaml:"runs"`                 // workflow runs started
	RunInterval time.Duration `json:"run_interval" yaml:"run_interval"` // between run starts

	Workflow    Workflow           `json:"workflow" yaml:"workflow"`
	Deployments []DeploymentConfig `json:"deployments" yaml:"deployments"`
	Rollout     Rollout            `json:"rollout" yaml:"rollout"`
	Faults      FaultConfig        `json:"faults" yaml:"faults"`
	Limits      RunLimits          `json:"limits" yaml:"limits"`
	Budget      Budget             `json:"budget" yaml:"budget"`
	Variants    []string           `json:"variants" yaml:"variants"`
	// Swarm draws, per run, the world, version mix, fault sites, fault
	// window, fan-out shapes, inline count, runs and cancels (model/swarm.go);
	// the fields above are then only the base the draw starts from.
	Swarm bool `json:"swarm" yaml:"swarm"`
}

// Workflow is the shape of every run's workflow code.
type Workflow struct {
	// Fanouts lists the width of each Promise.all, in order.
	Fanouts []int `json:"fanouts" yaml:"fanouts"`
	// Program is the workflow as a program (model/program): statements
	// run in order. A file that sets it sets no fanouts; a program of
	// Promise.all fan-outs of steps runs as that fan-out list (Fanouts is
	// set from it), and any other program runs as the runtime replays it
	// (model/flow, in simlab check and simlab run), with the knobs
	// model.ProgramFields lists and no others.
	Program []program.Node `json:"program,omitempty" yaml:"program"`
	// MaxInline steps of a fan-out run inside the orchestrator's invocation.
	MaxInline int `json:"max_inline" yaml:"max_inline"`
	// ChunkSize step_created events are written at once.
	ChunkSize int `json:"chunk_size" yaml:"chunk_size"`
	// ResilientDispatch publishes step messages in parallel with their
	// step_created, carrying stepInput.
	ResilientDispatch bool `json:"resilient_dispatch" yaml:"resilient_dispatch"`
	// Body is how long a step body runs.
	Body sim.Dist `json:"body" yaml:"body"`
	// FlakySteps: the last that many steps of each fan-out fail FlakyTimes
	// times before they succeed.
	FlakySteps int `json:"flaky_steps" yaml:"flaky_steps"`
	FlakyTimes int `json:"flaky_times" yaml:"flaky_times"`
	// FatalSteps: the last that many steps of each fan-out fail fatally.
	FatalSteps int `json:"fatal_steps" yaml:"fatal_steps"`
	// MaxRetries is how many times a failing step is retried (DOMAIN: 3).
	MaxRetries int `json:"max_retries" yaml:"max_retries"`
	// RetryDelay is the delaySeconds of a delayed retry's re-publish.
	RetryDelay time.Duration `json:"retry_delay" yaml:"retry_delay"`
	// QuickJSShare is the share of runs executed on the QuickJS engine.
	QuickJSShare float64 `json:"quickjs_share" yaml:"quickjs_share"`
	// AwaitInlineClaims is the runtime's explicit opt-out
	// WORKFLOW_OPTIMISTIC_INLINE_START=0: a turbo invocation's inline step
	// awaits its lazy claim before its body. Off (core's default), turbo
	// forces the optimistic start: the body runs while the claim is in
	// flight, and a lost claim's result is thrown away.
	AwaitInlineClaims bool `json:"await_inline_claims,omitempty" yaml:"await_inline_claims,omitempty"`
	// InlineOwnershipLease is core's inline-ownership lease
	// (WORKFLOW_INLINE_OWNERSHIP_LEASE_SECONDS, whole seconds from 1 s to
	// 900 s; 0 is core's default, 860 s): for that long after an inline
	// step's latest step_started, a replay that finds the step claimed by
	// another invocation leaves it to a backstop message delayed by what is
	// left of the lease, instead of running it.
	InlineOwnershipLease time.Duration `json:"inline_ownership_lease,omitempty" yaml:"inline_ownership_lease,omitempty"`
	// ReplayBase is the fixed part of what a replay of the workflow costs
	// the runtime, from the log's answer to the replay's first act (its
	// write, suspension or end), as the real core's workflow.replay.execute
	// spans measure it (simlab calibrate fits the three replay costs,
	// docs/VALIDATION.md). A replay that finds the run's end in its log
	// costs nothing: core's loop exits before the workflow runs.
	ReplayBase time.Duration `json:"replay_base,omitempty" yaml:"replay_base,omitempty"`
	// ReplayPerEntity is a replay's cost per entity the workflow code mints
	// as far as the replay goes (the steps of every fan-out up to the first
	// its log does not show finished, that one included).
	ReplayPerEntity time.Duration `json:"replay_per_entity,omitempty" yaml:"replay_per_entity,omitempty"`
	// ReplayPerEvent is a replay's cost per event of the log it loaded
	// (core consumes and hydrates each).
	ReplayPerEvent time.Duration `json:"replay_per_event,omitempty" yaml:"replay_per_event,omitempty"`
	// ReplayCPUs is how many processors every replay of the simulation
	// shares (processor sharing: n replays at once on c processors each go
	// at c/n of full speed once n > c), as the real harness's one Node
	// process runs every delivery's replay on one thread; 0, the default,
	// gives each replay a processor of its own, as production's function
	// instances do.
	ReplayCPUs int `json:"replay_cpus,omitempty" yaml:"replay_cpus,omitempty"`
	// SequentialReplays lets at most one invocation of a run replay at a
	// time (the runtime's WORKFLOW_SEQUENTIAL_REPLAYS). A program's
	// scenario only (model/flow runs it).
	SequentialReplays bool `json:"sequential_replays,omitempty" yaml:"sequential_replays,omitempty"`
	// MaxDuration kills an invocation that runs longer, as the platform's
	// function time limit does (0: none). A program's scenario only.
	MaxDuration time.Duration `json:"max_duration,omitempty" yaml:"max_duration,omitempty"`
	// LogView is what an invocation goes on with after its own write:
	// "prefix" (the default, the pinned release: a write's answer brings
	// the events below it), "own-writes" (a World without slot ids: the
	// log it loaded and its own writes), "tail-fence" (that World
	// refusing a replay's write from a log that is not the run's tail) or
	// "count-guard" (that World refusing a replay's write when more events
	// stamped at or before the log's latest stamp exist than it holds).
	// A program's scenario only.
	LogView string `json:"log_view,omitempty" yaml:"log_view,omitempty"`
	// ColdReplays makes every pass of an invocation replay the log afresh
	// (core's WORKFLOW_RETAINED_VM=0); by default, as in every pinned
	// release, an invocation that ran steps inline goes on in the VM it
	// parked, and the Date.now() reads it made stand. A program's scenario
	// only.
	ColdReplays bool `json:"cold_replays,omitempty" yaml:"cold_replays,omitempty"`
	// CallSiteIDs mints call-site correlation ids instead of positional
	// ones: the team's proposed fix (vercel/workflow #3179), in no pinned
	// core, as simlab replays --callsite-ids. A program's scenario only.
	CallSiteIDs bool `json:"callsite_ids,omitempty" yaml:"callsite_ids,omitempty"`
	// Resumes is an outside system resuming the program's hooks, as
	// core's resumeHook does (none by default). A program's scenario
	// only, with a hook.
	Resumes Resumes `json:"resumes,omitzero" yaml:"resumes,omitempty"`
	// Search makes each seed draw its own program, faults, driver,
	// max_inline and sequential replays, a search over workflow shapes:
	// "programs" (flow.DrawCase, as simlab replays --search) or "hooks"
	// (flow.DrawHookCase, programs with hooks and a driver for them). A
	// program's scenario only; it sets no program, resumes, crash, time
	// limit, max_inline or sequential replays of its own.
	Search string `json:"search,omitempty" yaml:"search,omitempty"`
}

// Resumes is the outside driver of a program's hooks (model/flow's
// flow.Resumes): ticks every Every, Count in all, each resuming every live
// hook Burst times (0: once) spread over Spread; AtDeadlines also ticks at
// each wait's deadline, so a payload races the wait's own wake.
type Resumes struct {
	// Every is the cadence of the driver's ticks, from the run's start.
	Every time.Duration `json:"every,omitempty" yaml:"every,omitempty"`
	// Count is how many ticks it sends in all (0: none at a cadence).
	Count int `json:"count,omitempty" yaml:"count,omitempty"`
	// Burst is how many resumes of each live hook one tick sends (0: one).
	Burst int `json:"burst,omitempty" yaml:"burst,omitempty"`
	// Spread is the window a tick's resumes are drawn over: each starts
	// after a delay uniform in [0, spread].
	Spread time.Duration `json:"spread,omitempty" yaml:"spread,omitempty"`
	// One makes a tick resume one live hook, drawn, instead of every one.
	One bool `json:"one,omitempty" yaml:"one,omitempty"`
	// AtDeadlines also ticks at each wait's resumeAt less spread/2, so a
	// hook's payloads land within spread around the wait's own wake.
	AtDeadlines bool `json:"at_deadlines,omitempty" yaml:"at_deadlines,omitempty"`
}

// Set reports whether the scenario sets the driver at all.
func (r Resumes) Set() bool { return r != Resumes{} }

// Lease is the inline-ownership lease in effect (InlineOwnershipLease, or
// core's default).
func (w *Workflow) Lease() time.Duration {
	if w.InlineOwnershipLease == 0 {
		return defaultInlineOwnershipLease
	}
	return w.InlineOwnershipLease
}

// DeploymentConfig is one deployment: its producer and consumer versions and
// the share of runs that start on it.
type DeploymentConfig struct {
	Name     string  `json:"name" yaml:"name"`
	Producer string  `json:"producer" yaml:"producer"` // v1 or v2
	Consumer string  `json:"consumer" yaml:"consumer"` // v1 or v2
	Share    float64 `json:"share" yaml:"share"`
}

// Rollout moves every run started at or after At onto deployment To; runs
// already pinned elsewhere keep their deployment (old and new side by side).
type Rollout struct {
	At time.Duration `json:"at" yaml:"at"`
	To string        `json:"to" yaml:"to"`
}

// FaultConfig sets every fault's rate. A rate is the chance that the fault
// fires each time the code reaches its site; with Swarm, each site is first
// switched on for the whole run with probability 0.25 (FoundationDB BUGGIFY).
type FaultConfig struct {
	Swarm bool `json:"swarm" yaml:"swarm"`
	// Until ends the fault phase: from then on nothing fires, so liveness can
	// be judged once the queue drains. 0 means the faults never stop.
	Until time.Duration `json:"until" yaml:"until"`
	// Crash: a consumer dies between two of its calls.
	Crash float64 `json:"crash" yaml:"crash"`
	// Misdeliver: a message is delivered to another deployment's consumer.
	Misdeliver float64 `json:"misdeliver" yaml:"misdeliver"`
	// StaleRead: a runs.get returns the run as it was up to store.stale_lag ago.
	StaleRead float64 `json:"stale_read" yaml:"stale_read"`
	// LostCreate: a resiliently dispatched step_created never lands.
	LostCreate float64 `json:"lost_create" yaml:"lost_create"`
	// BodyFailure: a step body throws (a retry follows).
	BodyFailure float64 `json:"body_failure" yaml:"body_failure"`
	// Cancel: a run is cancelled from outside at a time drawn in [0, CancelWithin).
	Cancel       float64       `json:"cancel" yaml:"cancel"`
	CancelWithin time.Duration `json:"cancel_within" yaml:"cancel_within"`
	// CancelAt cancels every run this long after it starts (scripted; 0: off).
	CancelAt time.Duration `json:"cancel_at" yaml:"cancel_at"`
	// CrashFirstDelivery crashes every step message's first delivery just
	// before its claim (scripted, for the golden scenarios).
	CrashFirstDelivery bool `json:"crash_first_delivery" yaml:"crash_first_delivery"`
}

// faultSite is one rated fault of the model: the scenario field that sets
// its rate, the kernel site it fires at, and the engine's handle to it.
// Validation and the engine's setup read this one list, so a fault cannot
// be validated but never set up, or set up but never validated.
type faultSite struct {
	field  string // under faults: in a scenario file
	site   string // sim.Faults site name, shown in a run's fault report
	rate   func(*FaultConfig) *float64
	handle func(*engine) *sim.Site
}

var faultSites = []faultSite{
	{"crash", "consumer.crash", func(f *FaultConfig) *float64 { return &f.Crash }, func(e *engine) *sim.Site { return &e.siteCrash }},
	{"misdeliver", "queue.misdeliver", func(f *FaultConfig) *float64 { return &f.Misdeliver }, func(e *engine) *sim.Site { return &e.q.misdeliver }},
	{"stale_read", "store.stale_read", func(f *FaultConfig) *float64 { return &f.StaleRead }, func(e *engine) *sim.Site { return &e.siteStale }},
	{"lost_create", "producer.lost_create", func(f *FaultConfig) *float64 { return &f.LostCreate }, func(e *engine) *sim.Site { return &e.siteLost }},
	{"body_failure", "step.body_failure", func(f *FaultConfig) *float64 { return &f.BodyFailure }, func(e *engine) *sim.Site { return &e.siteBody }},
	{"cancel", "client.cancel", func(f *FaultConfig) *float64 { return &f.Cancel }, func(e *engine) *sim.Site { return &e.siteCancel }},
}

// Budget is the work the scenario allows that nobody can use, checked by
// the property bounded-work-after-end.
type Budget struct {
	// WorkAfterEnd: reads, listings, replays and step bodies one actor (a
	// delivery) may begin after its run's end was accepted. The default, 2,
	// is a fan-in listing and a lazy read: how a fetch-free last completer
	// learns the end.
	WorkAfterEnd int `json:"work_after_end" yaml:"work_after_end"`
}

// The bounds of a scenario's size, so that memory is bounded whatever a
// file or --set says (docs/SCENARIOS.md): a run records its history, about
// 400 bytes an event, and plans every run's fan-outs before it starts.
const (
	MaxRuns    = 100_000
	MaxFanouts = 1_000_000 // runs × len(workflow.fanouts)
	MaxEvents  = 10_000_000
)

// RunLimits bound a simulation.
type RunLimits struct {
	MaxEvents int64         `json:"max_events" yaml:"max_events"`
	MaxTime   time.Duration `json:"max_time" yaml:"max_time"`
}

// DefaultScenario is the `fanout` scenario: one run, a 16-branch fan-out on
// world-local, every deployment v2. Every other scenario starts from it.
func DefaultScenario() Scenario {
	return Scenario{
		Name:        "fanout",
		Description: "one run with a 16-branch fan-out on world-local, v2 producers and consumers",
		World:       "world-local",
		Store:       LocalProfile(),
		Runs:        1,
		Workflow: Workflow{
			Fanouts:           []int{16},
			MaxInline:         3,
			ChunkSize:         32,
			ResilientDispatch: true,
			Body:              dist(5, 20, 50, 100, 250),
			MaxRetries:        3,
			RetryDelay:        time.Second,
			// What a replay costs core 5.0.0-beta.52, the pinned default.
			ReplayBase:      program.Beta52ReplayCost.Base,
			ReplayPerEntity: program.Beta52ReplayCost.PerEntity,
			ReplayPerEvent:  program.Beta52ReplayCost.PerEvent,
		},
		Deployments: []DeploymentConfig{{Name: "dpl-a", Producer: "v2", Consumer: "v2", Share: 1}},
		Limits:      RunLimits{MaxEvents: 10_000_000, MaxTime: time.Hour},
		Budget:      Budget{WorkAfterEnd: 2},
	}
}

// Validate checks the meaning of every field and names the first that is
// wrong. Parsing has already checked the types.
func (s *Scenario) Validate() error {
	if !isProfile(s.World) {
		return fmt.Errorf("world = %q: want one of %v", s.World, ProfileNames())
	}
	if err := s.Store.Validate(); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if s.Runs < 1 || s.Runs > MaxRuns {
		return fmt.Errorf("runs = %d: want 1 to %d", s.Runs, MaxRuns)
	}
	if s.RunInterval < 0 {
		return fmt.Errorf("run_interval = %v: must not be negative", s.RunInterval)
	}
	w := &s.Workflow
	if w.Search != "" {
		return s.validateProgram() // each seed draws its program
	}
	if w.Program != nil {
		if err := program.Validate(w.Program, "workflow.program"); err != nil {
			return err
		}
		if s.IsProgram() {
			return s.validateProgram()
		}
		widths, _ := program.FanoutWidths(w.Program)
		if !slices.Equal(widths, w.Fanouts) {
			return fmt.Errorf("workflow.program is the fan-outs %v but workflow.fanouts is %v: set one of them", widths, w.Fanouts)
		}
	}
	if err := w.refuseProgramKnobs(); err != nil {
		return err
	}
	if len(w.Fanouts) == 0 {
		return fmt.Errorf("workflow.fanouts is empty: want at least one fan-out width")
	}
	if n := s.Runs * len(w.Fanouts); n > MaxFanouts {
		return fmt.Errorf("runs × workflow.fanouts = %d × %d = %d fan-outs: want at most %d (each is planned before the run starts)",
			s.Runs, len(w.Fanouts), n, MaxFanouts)
	}
	for i, n := range w.Fanouts {
		if n < 1 || n > 100000 {
			return fmt.Errorf("workflow.fanouts[%d] = %d: want a width between 1 and 100000", i, n)
		}
	}
	checks := []struct {
		name string
		v    int
	}{
		{"workflow.max_inline", w.MaxInline}, {"workflow.flaky_steps", w.FlakySteps},
		{"workflow.flaky_times", w.FlakyTimes}, {"workflow.fatal_steps", w.FatalSteps},
		{"workflow.max_retries", w.MaxRetries},
	}
	for _, c := range checks {
		if c.v < 0 {
			return fmt.Errorf("%s = %d: must not be negative", c.name, c.v)
		}
	}
	if w.ChunkSize < 1 {
		return fmt.Errorf("workflow.chunk_size = %d: want at least 1", w.ChunkSize)
	}
	if err := w.Body.Validate(); err != nil {
		return fmt.Errorf("workflow.body.%w", err)
	}
	if w.RetryDelay < 0 {
		return fmt.Errorf("workflow.retry_delay = %v: must not be negative", w.RetryDelay)
	}
	for _, c := range []struct {
		key string
		d   time.Duration
	}{{"replay_base", w.ReplayBase}, {"replay_per_entity", w.ReplayPerEntity}, {"replay_per_event", w.ReplayPerEvent}} {
		if c.d < 0 {
			return fmt.Errorf("workflow.%s = %v: must not be negative", c.key, c.d)
		}
	}
	if w.ReplayCPUs < 0 {
		return fmt.Errorf("workflow.replay_cpus = %d: want 0 (a processor per replay) or more", w.ReplayCPUs)
	}
	if l := w.InlineOwnershipLease; l != 0 && (l < time.Second || l > 900*time.Second || l%time.Second != 0) {
		return fmt.Errorf("workflow.inline_ownership_lease = %v: want whole seconds from 1s to 900s (core clamps WORKFLOW_INLINE_OWNERSHIP_LEASE_SECONDS to 1..900), or 0 for core's 860s", l)
	}
	if !(w.QuickJSShare >= 0 && w.QuickJSShare <= 1) {
		return fmt.Errorf("workflow.quickjs_share = %v: want a share in [0, 1]", w.QuickJSShare)
	}
	if len(s.Deployments) == 0 {
		return fmt.Errorf("deployments is empty: want at least one deployment")
	}
	names := map[string]bool{}
	total := 0.0
	for i, d := range s.Deployments {
		if d.Name == "" {
			return fmt.Errorf("deployments[%d].name is empty", i)
		}
		if names[d.Name] {
			return fmt.Errorf("deployments[%d].name = %q: used twice", i, d.Name)
		}
		names[d.Name] = true
		if _, err := parseVersion(d.Producer); err != nil {
			return fmt.Errorf("deployments[%d].producer = %q: %w", i, d.Producer, err)
		}
		if _, err := parseVersion(d.Consumer); err != nil {
			return fmt.Errorf("deployments[%d].consumer = %q: %w", i, d.Consumer, err)
		}
		if !(d.Share >= 0 && d.Share <= 1) {
			return fmt.Errorf("deployments[%d].share = %v: want a share in [0, 1]", i, d.Share)
		}
		total += d.Share
	}
	if total <= 0 {
		return fmt.Errorf("deployments: every share is 0; at least one deployment must start runs")
	}
	if s.Rollout.To != "" && !names[s.Rollout.To] {
		return fmt.Errorf("rollout.to = %q: no deployment has that name", s.Rollout.To)
	}
	if s.Rollout.At < 0 {
		return fmt.Errorf("rollout.at = %v: must not be negative", s.Rollout.At)
	}
	f := &s.Faults
	for _, fs := range faultSites {
		if v := *fs.rate(f); !(v >= 0 && v <= 1) {
			return fmt.Errorf("faults.%s = %v: want a probability in [0, 1]", fs.field, v)
		}
	}
	if f.Until < 0 || f.CancelWithin < 0 || f.CancelAt < 0 {
		return fmt.Errorf("faults: until, cancel_within and cancel_at must not be negative")
	}
	if f.Cancel > 0 && f.CancelWithin <= 0 {
		return fmt.Errorf("faults.cancel_within = %v: must be positive when faults.cancel is set", f.CancelWithin)
	}
	if s.Limits.MaxEvents < 1 || s.Limits.MaxEvents > MaxEvents {
		return fmt.Errorf("limits.max_events = %d: want 1 to %d (the bound on what a run records; a run at it holds about 4 GB)",
			s.Limits.MaxEvents, MaxEvents)
	}
	if s.Budget.WorkAfterEnd < 0 {
		return fmt.Errorf("budget.work_after_end = %d: must not be negative", s.Budget.WorkAfterEnd)
	}
	if s.Limits.MaxTime < 0 {
		return fmt.Errorf("limits.max_time = %v: must not be negative", s.Limits.MaxTime)
	}
	for i, v := range s.Variants {
		if _, ok := variantByName(v); !ok {
			return fmt.Errorf("variants[%d] = %q: unknown variant; want one of %v", i, v, VariantNames())
		}
	}
	return nil
}

func parseVersion(s string) (Version, error) {
	switch s {
	case "v1":
		return V1, nil
	case "v2":
		return V2, nil
	}
	return 0, fmt.Errorf("want v1 or v2")
}
