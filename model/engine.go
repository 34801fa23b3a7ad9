package model

import (
	"fmt"
	"slices"
	"sync"
	"unsafe"

	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// Kernel event kinds. The payload is an index into one of the engine's tables.
const (
	evRunStart     uint32 = iota + 1 // payload: run index
	evCancel                         // payload: run index
	evCallDone                       // payload: call index
	evPublishDone                    // payload: pending publish index
	evDeliver                        // payload: message index | epoch<<32
	evBodyDone                       // payload: proc index
	evVisExpire                      // payload: proc index
	evStopFaults                     // payload: 0
	evTxnStep                        // payload: call serial; ref: call index
	evSharedWake                     // payload: the shared write capacity's generation
	evSharedSlice                    // payload: call serial; ref: round-robin write slot
	evReplayFinish                   // payload: the shared replay processors' generation
)

// Options choose what a run records.
type Options struct {
	// Record keeps every call, publish, accepted event and fault in the
	// History. Off, only what the actors need (messages, deliveries,
	// fan-outs) and the counters are kept: a sweep that only needs verdicts
	// and counts does not pay for the rest.
	Record bool
	// RecordStream keeps the kernel's event stream, to name the first event
	// where two runs differ.
	RecordStream bool
	// Seed is stamped on the History for the reader; the chooser decides.
	Seed uint64
}

// Counts are kept whether or not the History records. They are also the
// counts of `run --json` (Summary), so json names are a contract: add, never
// rename.
type Counts struct {
	Deliveries          int `json:"deliveries"`
	Redeliveries        int `json:"redeliveries"`
	RunsGet             int `json:"runs_get"`
	StepStartedAccepted int `json:"step_started_accepted"`
	StepStartedRejected int `json:"step_started_rejected"`
	StoreCalls          int `json:"store_calls"`
	Publishes           int `json:"publishes"`
	Deduped             int `json:"deduped_publishes"`
	Crashes             int `json:"crashes"`
	Reroutes            int `json:"reroutes"`
	StaleReads          int `json:"stale_reads"`
	LazyFetches         int `json:"lazy_fetches"`
	PrologueFetches     int `json:"prologue_fetches"`
	Recoveries          int `json:"recoveries"`
	Gone                int `json:"gone"`
	Skipped             int `json:"skipped"`
	Throttled           int `json:"throttled"`
	ConcurrentLast      int `json:"concurrent_last_completers"`
	Exhausted           int `json:"exhausted"`
	// Work after the end (DOMAIN §2, §7): writes the World refused because
	// the run had ended, replays begun on a log that already held the run's
	// terminal event, step bodies begun after the run's terminal event.
	WritesRefusedEnded int `json:"writes_refused_ended"`
	ReplaysAfterEnd    int `json:"replays_after_end"`
	BodiesAfterEnd     int `json:"bodies_after_end"`
	// EndSeen counts actors told the run had ended and stopping there: a
	// delivery gone (refused claim, legacy or orchestrator read), a lazy
	// read reading a terminal status, a replay finding the end in its log.
	EndSeen int `json:"end_seen"`
	// UnreadableReads counts runs.get calls that threw because the run's
	// row could no longer be read back (world-postgres, racing UPDATEs).
	UnreadableReads int `json:"unreadable_reads"`
}

// engine is one simulation of a scenario.
type engine struct {
	sc      *Scenario
	prof    Profile
	vs      variantSet
	opts    Options
	k       *sim.Kernel
	c       sim.Chooser
	faults  *sim.Faults
	store   *world.Store
	h       *History
	counts  Counts
	service // the World as a service: calls and pools (service.go)
	q       queue
	procs   []proc
	// priors holds the procs' prior steps (suspension.priorAt).
	priors []world.StepID
	// batchLeft holds, per chunk of a batched suspension, the creates
	// still unanswered (suspension.batchAt).
	batchLeft []int32
	// replayCPU shares workflow.replay_cpus among the replays (replaycpu.go).
	replayCPU replayCPU
	// The actors (DOMAIN.md §5): each a file, each driven by advance.
	client    client
	orch      orchestrator
	cons      consumer
	completer lastCompleter

	siteCrash, siteStale, siteLost, siteBody, siteCancel sim.Site
	deployments                                          []Deployment
	shareCum                                             []float64
	rolloutTo                                            int32
	lastActive                                           sim.Time
	// handler is dispatch as a method value, made once per Runner.
	handler sim.Handler
}

// Result is one simulation's outcome.
type Result struct {
	History *History
	Counts  Counts
	Stats   sim.Stats
	Stream  []sim.Event
}

// newEngine makes an engine and wires its actors to it; Run (or a test)
// then sets up the store, kernel, faults and History.
func newEngine(sc *Scenario, vs variantSet, opts Options, c sim.Chooser) *engine {
	e := &engine{sc: sc, prof: sc.Store, vs: vs, opts: opts, c: c}
	e.client = client{e}
	e.orch = orchestrator{e}
	e.cons = consumer{e}
	e.completer = lastCompleter{engine: e}
	return e
}

// Run simulates the scenario with the chooser and returns what happened.
// The Result is the caller's to keep.
//
// It runs on a Runner borrowed from runners and returns a copy of the
// Runner's Result, each table allocated once at its length. A Runner made
// for every run grew each table by doubling (copying it about once) and
// then trimmed it (copying it again), all in memory the runtime had just
// taken from the system, or given back to it after an earlier large run:
// a page fault every 4 KiB. A large run's time per unit of work was then
// up to twice a small one's (BenchmarkScale, docs/PERFORMANCE.md: point 4,
// third pass); on a borrowed Runner only the copy is new memory.
func Run(sc *Scenario, c sim.Chooser, opts Options) (*Result, error) {
	r := runners.Get().(*Runner)
	res, err := r.runKept(sc, c, opts)
	if r.room() <= maxPooledRoom {
		runners.Put(r)
	}
	return res, err
}

// maxPooledRoom is the most room, in bytes, a Runner's largest tables may
// have for Run to keep it for the next Run: a pooled Runner stays in the
// process until two collections after its last run, and a million-event
// run's (BenchmarkMillionEvents, about 250 MB) would have tripled the
// memory its caller holds after the run. A run that large pays for its
// tables' growth, as every run did before Runners were pooled.
const maxPooledRoom = 64 << 20

// room is about how much memory r's largest tables hold: the ones that
// grow with a run's work.
func (r *Runner) room() int {
	e, h := &r.e, &r.h
	return cap(e.calls)*int(unsafe.Sizeof(Call{})) + cap(h.Deliveries)*int(unsafe.Sizeof(Delivery{})) +
		cap(h.Messages)*int(unsafe.Sizeof(Message{})) + cap(h.Publishes)*int(unsafe.Sizeof(Publish{})) +
		cap(h.Accepted)*int(unsafe.Sizeof(Accepted{})) + cap(e.procs)*int(unsafe.Sizeof(proc{})) +
		cap(e.q.msgs)*int(unsafe.Sizeof(msgRT{})) + r.store.Room()
}

// runKept is Run on r: its Result copied out for the caller to keep, and
// nothing the caller passed in kept alive by the idle Runner.
func (r *Runner) runKept(sc *Scenario, c sim.Chooser, opts Options) (*Result, error) {
	res, err := r.Run(sc, c, opts)
	if err == nil {
		res = res.clone()
	}
	r.e.sc, r.e.c, r.h.Swarm = nil, nil, nil
	return res, err
}

// runners are the Runners Run borrows. The pool drops a Runner that no Run
// has taken for two garbage collections, and with it the room a large run
// left in it.
var runners = sync.Pool{New: func() any { return NewRunner() }}

// A Runner simulates one seed after another with one engine, History,
// store, kernel and queue, reset between runs and never reallocated: a
// worker of a sweep or a check allocates nothing per seed once its tables
// have grown to the largest run's size. A run's results are the ones Run
// gives, byte for byte; only its memory is shared. The Result a Runner's
// Run returns, its History and Stream, are valid until the Runner's next
// Run, and a History's empty tables may be empty rather than nil. A Runner
// is not safe for use by more than one goroutine at a time.
type Runner struct {
	e      engine
	h      History
	res    Result
	store  world.Store
	k      sim.Kernel
	faults sim.Faults
	// vsNames are the variants vs was resolved from (haveVS: it was).
	vsNames []string
	vs      variantSet
	haveVS  bool
}

// NewRunner returns a Runner with nothing allocated yet.
func NewRunner() *Runner { return &Runner{} }

// Run simulates the scenario with the chooser, as the package's Run does,
// on the Runner's reused memory.
func (r *Runner) Run(sc *Scenario, c sim.Chooser, opts Options) (*Result, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	if sc.IsProgram() {
		return nil, ErrProgramScenario
	}
	vs, err := r.variants(sc.Variants)
	if err != nil {
		return nil, err
	}
	var draw *SwarmDraw
	if sc.Swarm {
		drawn, d := DrawSwarm(*sc, c)
		sc, draw = &drawn, &d
	}
	e := &r.e
	e.reset(sc, vs, opts, c)
	fence := world.FenceFixed
	if vs.preFixFence {
		fence = world.FencePreFix
	}
	r.store.ResetFor(StoreRules(sc.World), fence)
	e.store = &r.store
	if e.prof.AtomicCalls {
		e.store.SetAtomicity(world.AtomicCall)
	}
	r.k.Reset(sim.Config{Handler: r.dispatch(), RecordStream: opts.RecordStream, Capacity: 64})
	e.k = &r.k
	e.faults = &r.faults
	if err := e.setupFaults(); err != nil {
		return nil, err
	}
	e.reads.limit = e.prof.MaxConcurrentReads
	e.writes.limit = e.prof.MaxConcurrentWrites
	e.shared.reset(e.prof.MaxConcurrentWrites)
	e.rr.reset()
	e.h = r.h.reset(History{Seed: opts.Seed, Scenario: sc.Name, Profile: sc.World, Swarm: draw}, sc.Variants)
	e.h.Declared = Declared{MaxRetries: int32(sc.Workflow.MaxRetries), FatalSteps: int32(sc.Workflow.FatalSteps), WorkAfterEnd: int32(sc.Budget.WorkAfterEnd)}
	e.setupDeployments()
	e.client.plan()
	if sc.Faults.Until > 0 {
		e.k.Schedule(sim.Time(sc.Faults.Until), evStopFaults, 0, 0)
	}
	stats, err := e.k.Run(sim.Limits{MaxEvents: sc.Limits.MaxEvents, MaxTime: sim.Time(sc.Limits.MaxTime)})
	if err != nil {
		return nil, err
	}
	e.finish(stats)
	r.res = Result{History: e.h, Counts: e.counts, Stats: stats, Stream: e.k.Stream()}
	return &r.res, nil
}

// variants resolves the variants' names, once for a Runner that runs one
// scenario seed after seed (resolving allocates).
func (r *Runner) variants(names []string) (variantSet, error) {
	if r.haveVS && slices.Equal(r.vsNames, names) {
		return r.vs, nil
	}
	vs, err := resolveVariants(names)
	if err != nil {
		return vs, err
	}
	r.vs, r.vsNames, r.haveVS = vs, append(r.vsNames[:0], names...), true
	return vs, nil
}

// dispatch is the engine's handler as a method value made once per Runner:
// a method value allocates each time it is taken.
func (r *Runner) dispatch() sim.Handler {
	if r.e.handler == nil {
		r.e.handler = r.e.dispatch
	}
	return r.e.handler
}

// reset makes e a new engine for sc, as newEngine would, keeping every
// table's room: the fields Run sets afterwards start from zero.
func (e *engine) reset(sc *Scenario, vs variantSet, opts Options, c sim.Chooser) {
	sv := &e.service
	*e = engine{sc: sc, prof: sc.Store, vs: vs, opts: opts, c: c, handler: e.handler,
		service: service{calls: sv.calls[:0], flights: sv.flights[:0], freeFlights: sv.freeFlights[:0],
			parked: sv.parked[:0], free: sv.free[:0],
			writesIn: sv.writesIn[:0], drawable: sv.drawable[:0], earlier: sv.earlier,
			reads:  pool{waiting: sv.reads.waiting[:0]},
			writes: pool{waiting: sv.writes.waiting[:0]},
			shared: sharedWrites{marks: sv.shared.marks[:0], writes: sv.shared.writes[:0]},
			rr:     sv.rr},
		q:           e.q,
		procs:       e.procs[:0],
		priors:      e.priors[:0],
		batchLeft:   e.batchLeft[:0],
		replayCPU:   replayCPU{active: e.replayCPU.active[:0], done: e.replayCPU.done[:0]},
		deployments: e.deployments[:0],
		shareCum:    e.shareCum[:0],
		completer:   lastCompleter{fans: e.completer.fans[:0], logged: e.completer.logged[:0], createdAt: e.completer.createdAt[:0], finishedAt: e.completer.finishedAt[:0], owner: e.completer.owner[:0], settled: e.completer.settled[:0]},
	}
	e.q.reset()
	e.client = client{e}
	e.orch = orchestrator{e}
	e.cons = consumer{e}
	e.completer.engine = e
}

func (e *engine) setupFaults() error {
	f := &e.sc.Faults
	enable := 1.0
	if f.Swarm {
		enable = 0.25
	}
	if e.faults == nil {
		e.faults = &sim.Faults{}
	}
	e.faults.Reset(e.c, sim.SiteConfig{})
	for _, fs := range faultSites {
		rate := *fs.rate(f)
		cfg := sim.SiteConfig{Enable: enable, Fire: rate}
		if rate == 0 {
			cfg.Enable = 0
		}
		site, err := e.faults.Configure(fs.site, cfg)
		if err != nil {
			return err
		}
		*fs.handle(e) = site
	}
	return nil
}

func (e *engine) setupDeployments() {
	total := 0.0
	for _, d := range e.sc.Deployments {
		total += d.Share
	}
	cum := 0.0
	e.rolloutTo = -1
	for i, d := range e.sc.Deployments {
		p, _ := parseVersion(d.Producer)
		c, _ := parseVersion(d.Consumer)
		if e.vs.legacyProducers {
			p = V1
		}
		e.deployments = append(e.deployments, Deployment{Name: d.Name, Producer: p, Consumer: c})
		cum += d.Share / total
		e.shareCum = append(e.shareCum, cum)
		if d.Name == e.sc.Rollout.To {
			e.rolloutTo = int32(i)
		}
	}
	e.h.Deployments = e.deployments
	e.initQueue()
}

func (e *engine) fault(kind FaultKind, run world.RunID, proc int32) {
	if e.opts.Record {
		e.h.Faults = append(e.h.Faults, Fault{Kind: kind, At: e.k.Now(), Run: run, Delivery: proc})
	}
}

func (e *engine) dispatch(ev *sim.Event) {
	if ev.Kind != evDeliver && ev.Kind != evVisExpire && ev.Kind != evStopFaults && ev.Kind != evSharedWake && ev.Kind != evReplayFinish {
		e.active()
	}
	switch ev.Kind {
	case evRunStart:
		e.client.start(int32(ev.Payload))
	case evCancel:
		e.client.cancel(int32(ev.Payload))
	case evCallDone:
		e.callDone(int32(ev.Ref))
	case evTxnStep:
		e.txnStep(int32(ev.Ref))
	case evSharedWake:
		e.sharedWoken(ev.Payload) // calls active() unless stale
	case evSharedSlice:
		e.rrSliceDone(int32(ev.Ref))
	case evPublishDone:
		e.q.publishDone(int32(ev.Payload))
	case evDeliver:
		// active() is called inside: a stale delivery event changes nothing.
		e.q.deliver(int32(ev.Payload&0xffffffff), uint32(ev.Payload>>32))
	case evBodyDone:
		e.resume(int32(ev.Payload))
	case evVisExpire:
		e.q.visibilityExpired(int32(ev.Payload)) // calls active() when it acts
	case evReplayFinish:
		e.replayFinished(ev.Payload) // calls active() unless stale
	case evStopFaults:
		e.faults.Stop()
		e.h.FaultsStopAt = e.k.Now()
	default:
		panic(fmt.Sprintf("model: unknown event kind %d", ev.Kind))
	}
}

// active notes that the current event changed something. Timers that find
// nothing to do (a visibility timeout after an ack) still run, but the run's
// end is the last instant anything happened.
func (e *engine) active() { e.lastActive = e.k.Now() }

func (e *engine) finish(stats sim.Stats) {
	h := e.h
	h.Hash = stats.Hash
	h.Events = stats.Events
	h.End = e.lastActive
	// The end of the fault phase is an event like any other; when it lies
	// past the time limit it is the last one pending once the workflow's
	// work is done, and ending the faults then changes nothing: the run
	// drained (issue 22: a faults.until past limits.max_time made every
	// run a liveness violation).
	stopPending := e.sc.Faults.Until > 0 && h.FaultsStopAt == 0
	h.Drained = stats.Reason == sim.Drained || stats.Pending == 1 && stopPending
	h.FaultSites = e.faults.ReportTo(h.FaultSites)
	for i, info := range h.Runs {
		h.FinalRuns = append(h.FinalRuns, e.store.Get(world.RunID(i)))
		id := world.RunID(i)
		h.ReadBack = append(h.ReadBack, RunReadBack{Status: e.store.Get(id).Status, Readable: e.store.Readable(id)})
		if !e.opts.Record {
			continue
		}
		n := 0
		for _, f := range info.Fanouts {
			n += int(h.Fanouts[f].Branches)
		}
		var steps []world.Step
		if j := len(h.FinalSteps); j < cap(h.FinalSteps) && cap(h.FinalSteps[:j+1][j]) >= n {
			steps = h.FinalSteps[:j+1][j][:0]
		} else {
			steps = make([]world.Step, 0, n)
		}
		for _, f := range info.Fanouts {
			fo := &h.Fanouts[f]
			for s := int32(0); s < fo.Branches; s++ {
				steps = append(steps, e.store.Step(info.ID, fo.FirstStep+world.StepID(s)))
			}
		}
		h.FinalSteps = append(h.FinalSteps, steps)
	}
	if e.opts.Record {
		// The calls stay with the Runner for the next seed (Run copies
		// what its caller keeps).
		h.Calls = e.calls
	}
	for i := range h.Fanouts {
		f := &e.completer.fans[i]
		fo := &h.Fanouts[i]
		fo.PrologueFetches, fo.LazyFetches, fo.LastCompleters = f.prologue, f.lazy, f.lastSeen
		if f.lastSeen > 1 {
			e.counts.ConcurrentLast++
		}
	}
}

// ---- the engine as the queue's host ----

// initQueue wires the queue to the kernel, the History and the engine; it
// runs once the deployments are known. The misdelivery site was configured
// in place by setupFaults.
func (e *engine) initQueue() {
	q := &e.q
	q.host, q.k, q.c, q.prof, q.faults = e, e.k, e.c, &e.prof, e.faults
	q.h, q.counts, q.record = e.h, &e.counts, e.opts.Record
	q.runtimeCaps = RuntimeCapsDeliveries(e.sc.World)
	q.setDeployments(e.deployments)
	steps := 0
	for _, n := range e.sc.Workflow.Fanouts {
		steps += n
	}
	q.sizeKeys(int32(steps))
}

// publish sends a message for producer p (or the client when p < 0); p
// waits for the publish call's answer.
func (e *engine) publish(p int32, m Message, site Site, producer Version) {
	var caller Caller
	if p >= 0 {
		e.procs[p].outstanding++
	}
	if e.opts.Record {
		caller = e.callerOf(p)
	}
	e.q.publish(p, m, site, caller, producer)
}

func (e *engine) newDelivery(m, dep, attempt int32) int32 {
	msg := &e.h.Messages[m]
	return e.newProc(Delivery{
		Msg: m, Parent: -1, Kind: msg.Kind, Run: msg.Run, Step: msg.Step, Fanout: msg.Fanout,
		Attempt: attempt, Target: msg.Target, Deployment: dep, Version: e.deployments[dep].Consumer,
	})
}

func (e *engine) startDelivery(p int32) { e.advance(p) }

func (e *engine) published(p int32) {
	if e.procs[p].state == psBatching {
		e.orch.batchWorkDone(p) // a publish answered (before resume: it may let a parked inline step go on)
	}
	e.resume(p)
}

// exhausted is the World's rule for a message past its delivery cap: the
// run cannot make progress through that message, so the World fails it.
func (e *engine) exhausted(msg *Message) {
	idx := e.newCall(-1, OpEventsCreate, msg.Run, world.NoStep, -1)
	e.calls[idx].Caller = Caller{Kind: CallerWorld, Delivery: -1}
	e.calls[idx].Event = world.EvRunFailed
	e.issue(-1, idx)
}
