package flow

import (
	"errors"
	"fmt"
	"time"

	"github.com/simlab/simlab/model/program"
	"github.com/simlab/simlab/sim"
)

// View is what an invocation goes on with after its own write.
type View uint8

const (
	// ViewPrefix: the write's answer adds the events others wrote below
	// it, so the invocation's log is always a prefix of the run's (core
	// 5.0.0-beta.52 over world-local 5.0.0-beta.45: each event takes the
	// next free slot at its commit; docs/MODEL.md, "The replay").
	ViewPrefix View = iota
	// ViewOwnWrites: the invocation goes on with the log it loaded and its
	// own writes after it, without the events others wrote in between: a
	// World without slots (the runtime before spec version 6).
	ViewOwnWrites
	// ViewTailFence: a World without slot ids (as ViewOwnWrites) that
	// refuses a replay's write unless the writer's log is the run's tail:
	// nothing but its own writes (and its inline steps') landed since it
	// loaded; the sibling writes of one suspension share that snapshot.
	// The runtime restarts the refused replay in-process: it lists the log
	// again and replays (the team's append-tail-fence experiment,
	// vercel/workflow #3177, over #3145's in-process restart). A step's own
	// claim and result carry no loaded log and are not fenced.
	ViewTailFence
	// ViewCountGuard: a World without slot ids (as ViewOwnWrites) that
	// refuses a replay's write when it has recorded more events stamped at
	// or before the writer's watermark (the latest stamp in the log it
	// loaded) than that log holds: the
	// team's event-count guard (vercel/workflow #3145, measured with a
	// complete event index in #3172). It catches a log with a hole, an
	// event stamped earlier that committed after the read; a complete but
	// old prefix passes it. The runtime restarts the refused replay
	// in-process, as for the fence. No pinned World implements it.
	ViewCountGuard
)

func (v View) String() string {
	return [...]string{"prefix", "own-writes", "tail-fence", "count-guard"}[v]
}

// ParseView is the view named s.
func ParseView(s string) (View, error) {
	switch s {
	case "prefix":
		return ViewPrefix, nil
	case "own-writes":
		return ViewOwnWrites, nil
	case "tail-fence":
		return ViewTailFence, nil
	case "count-guard":
		return ViewCountGuard, nil
	}
	return 0, fmt.Errorf("view %q: want prefix, own-writes, tail-fence or count-guard", s)
}

// Config is one run of a program and the runtime's knobs.
type Config struct {
	Program *program.Compiled
	View    View
	// SequentialReplays lets at most one invocation of the run replay at a
	// time (the runtime's WORKFLOW_SEQUENTIAL_REPLAYS): another waits
	// SequentialRetry and tries again.
	SequentialReplays bool
	SequentialRetry   time.Duration
	// MaxInline is how many of a suspension's new steps the invocation
	// runs itself (core's MAX_INLINE_STEPS, 3); the rest are queued.
	MaxInline int
	// StaleRestarts is how many times one delivery restarts a replay in
	// process after the fence or the count guard refused a write
	// (WORKFLOW_PRECONDITION_MAX_INPROCESS_RESTARTS, 3); the next refusal
	// re-invokes the run StaleReinvokeDelay later (2 s), at most
	// StaleReinvocations times (WORKFLOW_PRECONDITION_MAX_REINVOCATIONS, 5),
	// and then the run fails (core's runtime error): core 5.0.0-beta.52's
	// restartReplayInProcess and reinvokeAfterStaleRejection.
	StaleRestarts, StaleReinvocations int
	StaleReinvokeDelay                time.Duration
	// RecoveryReplays is how many fresh replays a divergence gets before
	// the run fails CORRUPTED_EVENT_LOG (WORKFLOW_REPLAY_DIVERGENCE_MAX_RETRIES).
	RecoveryReplays int
	// Replay is what a replay costs: base, per entity (the entities its
	// loaded log names; those it mints past them are not counted) and per
	// event of its log.
	Replay program.ReplayCost
	// Write, List and Read are the World's calls' times (events.create,
	// events.list, runs.get); Deliver is the queue's, from publish to
	// delivery; Body is a step's run time when its statement gives none.
	Write, List, Read, Deliver, Body sim.Dist
	// MaxDuration kills an invocation that runs longer (the platform's
	// function time limit; 0: none): it writes nothing more and its
	// message comes back Redeliver later.
	MaxDuration time.Duration
	Redeliver   time.Duration
	// Crash is the chance that a step's process dies between its claim
	// and its body (a queued step's delivery, or the invocation running it
	// inline): nothing more is written and the message comes back after
	// Redeliver.
	Crash float64
	// MaxDeliveries is the runtime's cap on a workflow message's
	// deliveries (WORKFLOW_MAX_QUEUE_DELIVERIES, 48): the delivery after
	// it fails the run (MAX_DELIVERIES_EXCEEDED). A step message killed
	// that many times is dropped (core caps none; world-local stops at
	// 256).
	MaxDeliveries int
	// InlineLease is the inline-ownership lease: a replay that finds a
	// pending step another invocation's message claimed inline leaves it
	// to that owner until the lease, counted from the step's latest
	// step_started, runs out (a backstop invocation then decides again),
	// and past it queues the step's message; the owner's own redelivery
	// runs it again (WORKFLOW_INLINE_OWNERSHIP_LEASE_SECONDS, 860 s).
	InlineLease time.Duration
	// StepMaxRetries is a step's retry budget (core's
	// DEFAULT_STEP_MAX_RETRIES, 3): an attempt past StepMaxRetries+1 that
	// died without an error (killed, crashed) is not run; the step fails
	// "exceeded max retries" (step_failed) instead. A queued step counts
	// its message's deliveries, checked against its step_started count; an
	// inline re-run its own step_started count.
	StepMaxRetries int
	// MaxTime bounds the run's virtual time (0: none).
	MaxTime time.Duration
	// MaxEvents bounds the run's kernel events (0: none): a run whose
	// invocations loop without the log growing (an own-writes replay
	// parked on an event its program is not at, re-writing the creates the
	// World refused, pass after pass) ends there, Stuck, instead of
	// filling memory within its MaxTime.
	MaxEvents int64
	// Clock is when a replay's Date.now() moves to an event's time (the
	// pinned core's: program.ClockPerPass; beta.55's: ClockPerDelivery).
	Clock program.ClockMode
	// CallSiteIDs mints call-site correlation ids instead of positional
	// ones (the team's proposed fix, vercel/workflow #3179; no pinned core
	// has it): program.Replayer.CallSite.
	CallSiteIDs bool
	// Conflicts is when a replay hands a hook_conflict's rejection to the
	// receives awaiting the hook (the pinned core's: program.ConflictAtOnce;
	// beta.55's: ConflictInLogOrder).
	Conflicts program.ConflictMode
	// RetainedVM: an invocation that ran steps inline goes on in the VM it
	// parked, with the new events appended, instead of replaying afresh
	// (core's WORKFLOW_RETAINED_VM, on in every pinned release): the
	// Date.now() reads it made stand. Its resumed replay diverging, it
	// replays afresh in-process, as core falls back to a cold replay.
	RetainedVM bool
	// Resumes is the outside system that resumes the run's hooks (none
	// by default).
	Resumes Resumes
}

// Resumes is an outside system resuming a run's hooks as core's
// resumeHook does: it looks the hook up by its token (hooks.getByToken;
// a hook not created yet, disposed or conflicted is not found), writes
// hook_received, and publishes a workflow invocation that wakes the run.
// Each tick resumes every hook the World holds live at that moment, or
// with One a single one of them, drawn.
type Resumes struct {
	// Every is the cadence of its ticks from the run's start, Count how
	// many ticks in all (0: none).
	Every time.Duration
	Count int
	// Burst is how many resumes of each hook one tick sends (0: one),
	// each after a delay drawn uniformly from [0, Spread]: a burst of
	// near-simultaneous wakes.
	Burst  int
	Spread time.Duration
	// One: a tick resumes one live hook, drawn uniformly, not all.
	One bool
	// AtDeadlines also ticks at each wait's resumeAt less Spread/2, so a
	// hook's payloads land within Spread around the wait's own wake.
	AtDeadlines bool
}

// On reports whether the driver resumes anything.
func (r Resumes) On() bool { return r.Count > 0 || r.AtDeadlines }

// Validate names the first value the driver cannot run.
func (r Resumes) Validate() error {
	switch {
	case r.Count < 0 || r.Count > 10000:
		return fmt.Errorf("resumes.count %d: want 0..10000 ticks", r.Count)
	case r.Count > 0 && r.Every <= 0:
		return fmt.Errorf("resumes.every %v: want a positive cadence for %d ticks", r.Every, r.Count)
	case r.Every < 0 || r.Spread < 0:
		return errors.New("resumes: a duration is negative")
	case r.Burst < 0 || r.Burst > 64:
		return fmt.Errorf("resumes.burst %d: want 0..64 resumes of each hook per tick", r.Burst)
	}
	return nil
}

// Defaults are the runtime's knobs as the pinned release sets them, and
// call times of the order world-local answers in.
func Defaults(p *program.Compiled) Config {
	ms := time.Millisecond
	return Config{
		Program: p, View: ViewPrefix, SequentialRetry: 100 * ms, MaxInline: 3, RecoveryReplays: 3,
		StaleRestarts: 3, StaleReinvocations: 5, StaleReinvokeDelay: 2 * time.Second,
		Replay:         program.Beta52ReplayCost,
		Write:          sim.Dist{Min: 1 * ms, P50: 3 * ms, P90: 8 * ms, P99: 20 * ms, Max: 40 * ms},
		List:           sim.Dist{Min: 1 * ms, P50: 3 * ms, P90: 8 * ms, P99: 20 * ms, Max: 40 * ms},
		Read:           sim.Dist{Min: 1 * ms, P50: 2 * ms, P90: 5 * ms, P99: 10 * ms, Max: 20 * ms},
		Deliver:        sim.Dist{Min: 1 * ms, P50: 5 * ms, P90: 20 * ms, P99: 60 * ms, Max: 120 * ms},
		Body:           sim.Dist{Min: 50 * ms, P50: 300 * ms, P90: 800 * ms, P99: 1500 * ms, Max: 2 * time.Second},
		Redeliver:      5 * time.Second,
		MaxDeliveries:  48,
		InlineLease:    860 * time.Second,
		StepMaxRetries: 3,
		MaxTime:        time.Hour,
		MaxEvents:      2_000_000,
		RetainedVM:     true,
	}
}

// Validate names the first knob that cannot be run.
func (c *Config) Validate() error {
	if c.Program == nil {
		return errors.New("flow: no program")
	}
	if c.MaxInline < 0 || c.RecoveryReplays < 0 {
		return fmt.Errorf("flow: max_inline %d, recovery_replays %d: must not be negative", c.MaxInline, c.RecoveryReplays)
	}
	if c.StaleRestarts < 0 || c.StaleReinvocations < 0 || c.StaleReinvokeDelay < 0 {
		return fmt.Errorf("flow: stale_restarts %d, stale_reinvocations %d, stale_reinvoke_delay %v: must not be negative", c.StaleRestarts, c.StaleReinvocations, c.StaleReinvokeDelay)
	}
	if c.Crash < 0 || c.Crash > 1 {
		return fmt.Errorf("flow: crash %v: want a chance in [0, 1]", c.Crash)
	}
	if c.Crash > 0 && c.Redeliver == 0 {
		return errors.New("flow: crash needs a positive redeliver")
	}
	if c.StepMaxRetries < 0 {
		return fmt.Errorf("flow: step_max_retries %d: must not be negative", c.StepMaxRetries)
	}
	if c.MaxDeliveries < 1 || c.InlineLease <= 0 {
		return fmt.Errorf("flow: max_deliveries %d, inline_lease %v: want at least one delivery and a positive lease", c.MaxDeliveries, c.InlineLease)
	}
	if c.Replay.Base < 0 || c.Replay.PerEntity < 0 || c.Replay.PerEvent < 0 || c.MaxDuration < 0 || c.Redeliver < 0 || c.SequentialRetry < 0 || c.MaxTime < 0 || c.MaxEvents < 0 {
		return errors.New("flow: a duration is negative")
	}
	if err := c.Resumes.Validate(); err != nil {
		return fmt.Errorf("flow: %w", err)
	}
	if c.SequentialReplays && c.SequentialRetry == 0 {
		return errors.New("flow: sequential replays need a positive sequential_retry")
	}
	if c.MaxDuration > 0 && c.Redeliver == 0 {
		return errors.New("flow: max_duration needs a positive redeliver")
	}
	for name, d := range map[string]sim.Dist{"write": c.Write, "list": c.List, "read": c.Read, "deliver": c.Deliver, "body": c.Body} {
		if err := d.Validate(); err != nil {
			return fmt.Errorf("flow: %s: %w", name, err)
		}
	}
	return nil
}

// End is how the run ended.
type End uint8

const (
	Stuck     End = iota // no terminal event when nothing was left to do
	Completed            // run_completed
	Failed               // run_failed: a step failed
	Corrupted            // run_failed CORRUPTED_EVENT_LOG after the recovery replays
)

func (e End) String() string { return [...]string{"stuck", "completed", "failed", "corrupted"}[e] }

// Entry is one event of the run's log and who wrote it.
type Entry struct {
	program.Event
	At sim.Time
	// By is the actor that wrote it (Result.Actors).
	By int32
	// Saw is how many events the writer's log held when it decided to
	// write this, the replay's view for a replay's writes (-1: a step's
	// own claim or result, which no replay decided). Loaded is how many of
	// them were the run's log as it is (its first Loaded events); the rest
	// were the writer's own writes after them (View).
	Saw, Loaded int32
}

// Write is one write an actor issued, accepted or not: the story of a
// corrupted log names the refused ones too.
type Write struct {
	Entry
	Accepted bool
	// Fenced: refused by the tail fence (ViewTailFence) or the count
	// guard (ViewCountGuard), not by the
	// World's rules.
	Fenced bool
	// Issued is when the write's call began (Entry.At: when it landed).
	Issued sim.Time
}

// CallKind is a World call other than a write.
type CallKind uint8

const (
	CallList CallKind = iota // events.list
	CallRead                 // runs.get, a last completer's lazy read
	CallHook                 // hooks.getByToken, an outside resume's lookup
)

func (k CallKind) String() string {
	return [...]string{"events.list", "runs.get", "hooks.getByToken"}[k]
}

// Call is one list or read an actor made, answered at End; Served is the
// log's length a list answered with (-1 for a read).
type Call struct {
	Actor      int32
	Kind       CallKind
	Start, End sim.Time
	Served     int32
}

// Actor is one delivery or inline step of the run.
type Actor struct {
	Kind ActorKind
	// Message is the queue message a delivery took (-1: an inline step).
	Message int32
	// Parent is an inline step's invocation (-1 otherwise).
	Parent int32
	// Start and End bound its work: from its delivery (an inline step's
	// start) to its last act, its death, or, Unfinished, the run's last
	// instant (a body that hangs with no time limit).
	Start, End sim.Time
	Unfinished bool
	// BodyStart and BodyEnd bound a step's body (BodyEnd 0: it never
	// returned: killed, or hanging); Body says one began.
	Body               bool
	BodyStart, BodyEnd sim.Time
	// Ordinal and Name are a step's, Node its statement (Compiled.Nodes;
	// -1 for a workflow invocation) and Result the value its body drew.
	Ordinal int32
	Name    string
	Node    int32
	Result  int64
	// Replays are the replays this actor made: the log each saw and how
	// it ended.
	Replays []Replay
	Killed  bool
	// Cause is why a workflow invocation's message was sent; Attempt is
	// its recovery replays so far; Delivery is which delivery of its
	// message this is (1 the first).
	Cause    Cause
	Attempt  int32
	Delivery int32
}

// Cause is why a workflow message was sent.
type Cause uint8

const (
	CauseStart      Cause = iota // the run's start
	CauseWake                    // a wait fell due
	CauseRecovery                // a replay diverged
	CauseLock                    // the sequential-replay lock was held
	CauseHandOff                 // a last completer could not take the lock
	CauseRedelivery              // its invocation was killed
	CauseBackstop                // an inline step another invocation owns
	CauseResume                  // a hook resumed from outside
	CauseStale                   // a replay refused as stale past its in-process restarts
)

func (c Cause) String() string {
	return [...]string{"the run's start", "a wait's wake", "a recovery replay", "the replay lock's retry", "a last completer's hand-off", "a redelivery after a kill", "an inline step's backstop", "a hook's resume", "a stale replay's re-invocation"}[c]
}

// ActorKind is what an actor is.
type ActorKind uint8

const (
	ActorWorkflow ActorKind = iota // a workflow message's invocation
	ActorStep                      // a queued step's delivery
	ActorInline                    // a step an invocation runs itself
	ActorResume                    // an outside system resuming a hook
)

func (k ActorKind) String() string { return [...]string{"workflow", "step", "inline", "resume"}[k] }

// Replay is one replay an actor made.
type Replay struct {
	// Start is when it began (the log loaded), At when it ended and acted.
	Start   sim.Time
	At      sim.Time
	Saw     int32 // events in the log it replayed
	Outcome program.Status
	Div     program.Divergence
	DivAt   int32
	Minted  int32
}

// Result is one run.
type Result struct {
	End End
	Log []Entry
	// Writes are every write that landed, in landing order; Calls every
	// list and read answered, in answer order.
	Writes []Write
	Calls  []Call
	Actors []Actor
	// Fresh is a fresh replay of the log before its end: Diverged means
	// the log is one no replay of the program consumes.
	Fresh       program.Outcome
	Divergences int // replays that diverged
	// MaxConcurrentReplays is the most replays of the run in progress at
	// once.
	MaxConcurrentReplays int
	// RunEndAttempts counts run_completed and run_failed writes issued;
	// RunEnds those the World accepted (more than one: the run ended more
	// than once).
	RunEndAttempts int
	RunEnds        int
	// DuplicateStarts counts steps the log shows started more than once.
	DuplicateStarts int
	// HungSteps counts steps the log shows started more than once, never
	// retried and never finished: the production marker of the team's
	// inline-hang runs (vercel/workflow #4199).
	HungSteps int
	// Killed counts invocations and queued steps killed at the time limit
	// or by a crash; Crashes the crashes.
	Killed  int
	Crashes int
	// Clock, Conflicts and CallSite are the replays' (Config.Clock,
	// Conflicts, CallSiteIDs), for the story's replays; View the World's
	// (Config.View), for the story's refusals.
	Clock     program.ClockMode
	Conflicts program.ConflictMode
	CallSite  bool
	View      View
	// FenceRestarts counts replays restarted because the tail fence or the
	// count guard refused one of their writes (ViewTailFence,
	// ViewCountGuard); StaleReinvocations the re-invocations past a
	// delivery's in-process restarts, StaleFailures the runs failed past
	// them (Config.StaleRestarts).
	FenceRestarts                     int
	StaleReinvocations, StaleFailures int
	Stats                             sim.Stats
}

// Unconsumable says the run's log is one no replay consumes: the run failed
// CORRUPTED_EVENT_LOG, or a fresh replay of its log diverges (what
// replayable-log judges).
func (r *Result) Unconsumable() bool {
	return r.End == Corrupted || r.Fresh.Status == program.Diverged
}

// FirstEnd is the write whose run_completed or run_failed the World accepted
// first, the run's end (nil: the run never ended).
func (r *Result) FirstEnd() *Write {
	for i := range r.Writes {
		if w := &r.Writes[i]; w.Accepted && (w.Type == program.RunFailed || w.Type == program.RunCompleted) {
			return w
		}
	}
	return nil
}

// FailureCode is the errorCode core writes on the run_failed that ended the
// run, and the actor that wrote it: CORRUPTED_EVENT_LOG (its recovery
// replays diverged), MAX_DELIVERIES_EXCEEDED (a workflow message past the
// delivery cap, loading nothing) or USER_ERROR (the workflow threw: a step
// failed for good); "" and -1 when the run did not fail.
func (r *Result) FailureCode() (string, int32) {
	w := r.FirstEnd()
	switch {
	case w == nil || w.Type == program.RunCompleted:
		return "", -1
	case r.End == Corrupted:
		return "CORRUPTED_EVENT_LOG", w.By
	case len(r.Actors[w.By].Replays) == 0:
		return "MAX_DELIVERIES_EXCEEDED", w.By
	}
	return "USER_ERROR", w.By
}

// Run runs the program once under seed's chooser. The Result is the
// caller's to keep.
func Run(cfg Config, seed uint64) (*Result, error) {
	return RunWith(cfg, sim.NewPCG(seed))
}

// RunWith runs the program once under chooser c. The Result is the
// caller's to keep.
func RunWith(cfg Config, c sim.Chooser) (*Result, error) {
	var x Runner
	return x.run(cfg, c)
}

// A Runner runs seed after seed with one set of tables, reset between runs
// and never reallocated once grown: a sweep of seeds allocates little per
// seed. The Result its Run returns is valid until its next Run. A Runner
// is not safe for use by more than one goroutine at a time.
type Runner struct {
	r   runner
	res Result
	k   sim.Kernel
	pcg *sim.PCG
}

// Run runs the program once under seed's chooser, on x's tables.
func (x *Runner) Run(cfg Config, seed uint64) (*Result, error) {
	if x.pcg == nil {
		x.pcg = sim.NewPCG(seed)
	} else {
		x.pcg.Reset(seed)
	}
	return x.run(cfg, x.pcg)
}

func (x *Runner) run(cfg Config, c sim.Chooser) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &x.r
	r.reset(cfg, c, &x.res)
	x.k.Reset(sim.Config{Handler: r.dispatch})
	r.k = &x.k
	r.startRun()
	limits := sim.Limits{MaxEvents: cfg.MaxEvents}
	if cfg.MaxTime > 0 {
		limits.MaxTime = sim.Time(cfg.MaxTime)
	}
	stats, err := r.k.Run(limits)
	if err != nil {
		return nil, err
	}
	r.finish(stats)
	return r.res, nil
}

// EndAt is the index of the log's first run-end event, or -1.
func (res *Result) EndAt() int {
	for i := range res.Log {
		if t := res.Log[i].Type; t == program.RunCompleted || t == program.RunFailed {
			return i
		}
	}
	return -1
}
