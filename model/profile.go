package model

import (
	"fmt"
	"time"

	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// Profile is one World: the store's latency and contention, and its queue's
// delivery rules. Profiles are parameter sets, not copies of the real code:
// they keep the behaviour DOMAIN.md §2–§3 says the protocol depends on.
type Profile struct {
	Name string `json:"name" yaml:"name"`

	// Store latency per operation (service time once a slot is free).
	RunsGet     sim.Dist `json:"runs_get" yaml:"runs_get"`
	EventsWrite sim.Dist `json:"events_create" yaml:"events_create"`
	EventsList  sim.Dist `json:"events_list" yaml:"events_list"`
	// How many reads (runs.get, events.list) and writes (events.create) the
	// store serves at once; the rest wait in arrival order. 0 means unbounded.
	MaxConcurrentReads  int `json:"max_concurrent_reads" yaml:"max_concurrent_reads"`
	MaxConcurrentWrites int `json:"max_concurrent_writes" yaml:"max_concurrent_writes"`
	// SharedWrites: the writes in flight share the World's write capacity
	// (processor sharing) instead of waiting for one of
	// max_concurrent_writes slots in arrival order: with n in flight and
	// max_concurrent_writes c, each advances through its service time at
	// min(1, c/n) of full speed, so a burst's writes all progress at once and
	// answer late together, as world-local's one Node process interleaves
	// every write it has begun (simlab calibrate: 13 to 250 writes of a run
	// in the World at once). With max_concurrent_writes 0 nothing is shared.
	// Left out of JSON when false, so that a scenario's JSON, and with it
	// the config hash of a sweep or a saved schedule, stays what it was.
	SharedWrites bool `json:"shared_writes,omitempty" yaml:"shared_writes"`
	// WriteSlices, with shared_writes: 0 shares the capacity continuously
	// (processor sharing: writes of equal work that arrived together answer
	// together); n ≥ 1 cuts each write's work into n slices served round
	// robin, one slice per server at a time, so that a burst's writes
	// progress together but answer a slice apart, in arrival order, as an
	// event loop running each write's next continuation in turn.
	WriteSlices int `json:"write_slices,omitempty" yaml:"write_slices"`
	// WriteOrder is the order writes waiting for one of
	// max_concurrent_writes slots are served in: "fifo" (or empty), arrival
	// order; "random", a waiting write drawn at random whenever a slot
	// frees (random order of service). world-local's writes of one run
	// contend for the log's next slot (events-storage.js storeEvent: each
	// draws the next position and publishes it with an exclusive create, and
	// a loser bumps and tries again), so which of a burst's waiting writes
	// lands next is whichever wins the race, not the oldest: simlab
	// calibrate measures the share of overlapping writes that answered out
	// of arrival order. Left out of JSON when empty, as shared_writes.
	WriteOrder string `json:"write_order,omitempty" yaml:"write_order"`
	// StaleLag bounds how far behind a runs.get may be: the read returns the
	// run as it was up to StaleLag ago (a chooser draw; 0 is fresh).
	StaleLag time.Duration `json:"stale_lag" yaml:"stale_lag"`

	// Queue.
	Publish sim.Dist `json:"publish" yaml:"publish"`
	Deliver sim.Dist `json:"deliver" yaml:"deliver"`
	// VisibilityTimeout: how long a message whose consumer crashed stays
	// invisible before it is delivered again.
	VisibilityTimeout time.Duration `json:"visibility_timeout" yaml:"visibility_timeout"`
	// ThrowBackoff: how long after a throw the message is delivered again.
	ThrowBackoff time.Duration `json:"throw_backoff" yaml:"throw_backoff"`
	// MaxDeliveries caps a message's deliveries; 0 means no cap. When a
	// message is exhausted its run is failed (MAX_DELIVERIES): by the World
	// itself, or, where the cap is the runtime's (RuntimeCapsDeliveries: on
	// world-local), by the delivery past it.
	MaxDeliveries int `json:"max_deliveries" yaml:"max_deliveries"`
	// FreshCopyOnThrow is the chance that a thrown message is re-enqueued as
	// a fresh message (new id, attempt 1) instead of redelivered (world-vercel).
	FreshCopyOnThrow float64 `json:"fresh_copy_on_throw" yaml:"fresh_copy_on_throw"`
	// IdempotencyTTL is how long a publish's idempotency key stays claimed.
	IdempotencyTTL time.Duration `json:"idempotency_ttl" yaml:"idempotency_ttl"`
	// IdempotencyInFlight: a key stays claimed only while its message is
	// in the queue, from its publish until it is acked or retired, whatever
	// the TTL. world-local's queue keeps its keys in an in-process map it
	// clears when a message's delivery loop ends (dist/queue.js,
	// inflightMessages), so a step re-published after its message was
	// acked is delivered again.
	IdempotencyInFlight bool `json:"idempotency_in_flight" yaml:"idempotency_in_flight"`
	// ListPerEvent and WritePerEvent add to an events.list's and an
	// events.create's service time per event already in the run's log: a
	// World that reads and rewrites a run's log whole (world-local's files)
	// costs more per call as the run grows, which no fixed distribution
	// says (simlab calibrate measures both; 0 for the built-in profiles).
	ListPerEvent  time.Duration `json:"list_per_event" yaml:"list_per_event"`
	WritePerEvent time.Duration `json:"write_per_event" yaml:"write_per_event"`
	// WritePerContender adds to an events.create's service time per write
	// of its run in the World when it is served (waiting or in service, it
	// included): world-local's writes of one run contend for the log's
	// next slot, every loser trying again after each publish, so a write
	// costs more the more writes it contends with, whatever the log's
	// length (simlab calibrate: the time per write served grows with the
	// writes in the World, R² 0.73, and not with the log, R² 0.01;
	// docs/VALIDATION.md). Left out of JSON when 0, as shared_writes.
	WritePerContender time.Duration `json:"write_per_contender,omitempty" yaml:"write_per_contender"`
	// ListPerContender adds to an events.list's service time per write of
	// its run in the World when it is served: the list reads the run's
	// files through the same few I/O threads the contending writes keep
	// busy (simlab calibrate: a list took 1.3 ms with no write of its run in
	// the World and 12 ms beside 73 at 128 branches). Left out of JSON when 0.
	ListPerContender time.Duration `json:"list_per_contender,omitempty" yaml:"list_per_contender"`
	// RedeliverInFlight: a delivery still running after VisibilityTimeout is
	// delivered again while the first goes on (at-least-once). world-local
	// has no bound on how long an invocation may run, so it does not.
	RedeliverInFlight bool `json:"redeliver_in_flight" yaml:"redeliver_in_flight"`
	// BatchCreates: the World implements events.createBatch, so the
	// orchestrator writes a fan-out's step_created events in chunks of
	// workflow.chunk_size, every chunk at once, publishing each chunk's
	// steps as soon as its own creates are in, while the inline steps run
	// (core beta.52's batched fan-out, orchestrator.suspendBatched), unless
	// workflow.resilient_dispatch is on (the runtime never batches a
	// resilient dispatch). Without it (world-local and
	// world-postgres 5.0 betas have no createBatch) the runtime takes its
	// single-event path: every step_created of the fan-out is written at
	// once, and the queued steps are published after the last one lands.
	BatchCreates bool `json:"batch_creates" yaml:"batch_creates"`
	// Invoke: the World declares capabilities.invoke (@workflow/world
	// beta.37: at most one active workflow runner per run). Its queue
	// delivers a run's workflow messages one at a time, and core beta.55
	// hands every finished background step's replay to that lane: the step's
	// consumer publishes a workflow message and returns, with no pending
	// check and no lazy read (runtime.js, "Invoke-capable worlds serialize
	// orchestrator deliveries"). No built-in World declares it.
	Invoke bool `json:"invoke" yaml:"invoke"`
	// Consumers bounds how many deliveries each deployment handles at once;
	// the rest wait in the queue. 0 means unbounded.
	Consumers int `json:"consumers" yaml:"consumers"`
	// AtomicCalls makes every events.create validate and apply in one step
	// at the end of its service (DOMAIN.md §2's World, and simlab's before
	// issue 18) instead of in its adapter's own steps spread over the
	// service time (world.Txn: world-local and world-postgres are not atomic
	// across concurrent calls on one run; docs/CONFORMANCE.md). world-vercel,
	// whose store cannot be observed here, is always atomic.
	AtomicCalls bool `json:"atomic_calls" yaml:"atomic_calls"`
}

func ms(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

func dist(minMS, p50, p90, p99, maxMS float64) sim.Dist {
	return sim.Dist{Min: ms(minMS), P50: ms(p50), P90: ms(p90), P99: ms(p99), Max: ms(maxMS)}
}

// Profiles returns the built-in Worlds by name.
func Profiles() map[string]Profile {
	return map[string]Profile{
		"world-local":    LocalProfile(),
		"world-postgres": PostgresProfile(),
		"world-vercel":   VercelProfile(),
	}
}

// isProfile says name is a built-in World, as Profiles()[name] would, without
// building the map (Validate runs once a seed).
func isProfile(name string) bool {
	switch name {
	case "world-local", "world-postgres", "world-vercel":
		return true
	}
	return false
}

// ProfileNames lists the built-in Worlds in a stable order.
func ProfileNames() []string { return []string{"world-local", "world-postgres", "world-vercel"} }

// LocalProfile is world-local: an in-process, filesystem-like store with a
// small in-process queue and no bound on how long an invocation may run.
func LocalProfile() Profile {
	return Profile{
		Name:                "world-local",
		RunsGet:             dist(0.2, 0.5, 1, 3, 10),
		EventsWrite:         dist(0.5, 1, 2, 5, 20),
		EventsList:          dist(0.3, 0.8, 1.5, 4, 15),
		MaxConcurrentReads:  8,
		MaxConcurrentWrites: 4,
		StaleLag:            0,
		Publish:             dist(0.1, 0.2, 0.5, 1, 5),
		Deliver:             dist(0.1, 0.3, 1, 3, 10),
		VisibilityTimeout:   5 * time.Second,
		// world-local's queue waits 5 s after a failed delivery before the
		// next (dist/queue.js, "5s linear backoff to approximate VQS retry
		// timing"); the model had 1 s.
		ThrowBackoff: 5 * time.Second,
		// world-local's queue has no cap, but the runtime has: a delivery
		// past WORKFLOW_MAX_QUEUE_DELIVERIES (48, it can only be lowered)
		// writes run_failed and acks (core runtime.js, "Workflow handler
		// exceeded max deliveries"): RuntimeCapsDeliveries.
		MaxDeliveries:       48,
		IdempotencyTTL:      time.Hour,
		IdempotencyInFlight: true,
		Consumers:           0,
	}
}

// PostgresProfile is world-postgres: a job table whose attempt counter is
// incremented when a worker claims a job, at most 3 attempts.
func PostgresProfile() Profile {
	return Profile{
		Name:                "world-postgres",
		RunsGet:             dist(1, 3, 8, 20, 60),
		EventsWrite:         dist(2, 5, 12, 30, 100),
		EventsList:          dist(1.5, 4, 10, 25, 80),
		MaxConcurrentReads:  16,
		MaxConcurrentWrites: 8,
		StaleLag:            0,
		Publish:             dist(1, 2, 5, 10, 30),
		Deliver:             dist(2, 10, 50, 200, 1000),
		VisibilityTimeout:   30 * time.Second,
		ThrowBackoff:        2 * time.Second,
		MaxDeliveries:       3,
		IdempotencyTTL:      24 * time.Hour,
		RedeliverInFlight:   true,
		Consumers:           0,
	}
}

// VercelProfile is world-vercel: a remote store behind an API with read
// replicas, and a visibility-timeout queue whose failure path may enqueue a
// fresh copy of a message.
func VercelProfile() Profile {
	return Profile{
		Name:                "world-vercel",
		RunsGet:             dist(15, 40, 80, 200, 600),
		EventsWrite:         dist(20, 50, 100, 250, 800),
		EventsList:          dist(20, 45, 90, 220, 700),
		MaxConcurrentReads:  32,
		MaxConcurrentWrites: 32,
		StaleLag:            200 * time.Millisecond,
		Publish:             dist(5, 15, 40, 100, 300),
		Deliver:             dist(10, 30, 80, 250, 1000),
		VisibilityTimeout:   300 * time.Second,
		ThrowBackoff:        5 * time.Second,
		MaxDeliveries:       32,
		FreshCopyOnThrow:    0.5,
		IdempotencyTTL:      24 * time.Hour,
		RedeliverInFlight:   true,
		BatchCreates:        true,
		Consumers:           0,
	}
}

// Validate names the first field whose value cannot work.
func (p Profile) Validate() error {
	dists := []struct {
		name string
		d    sim.Dist
	}{
		{"runs_get", p.RunsGet}, {"events_create", p.EventsWrite}, {"events_list", p.EventsList},
		{"publish", p.Publish}, {"deliver", p.Deliver},
	}
	for _, d := range dists {
		if err := d.d.Validate(); err != nil {
			return fmt.Errorf("profile %s: %s.%w", p.Name, d.name, err)
		}
	}
	nonNeg := []struct {
		name string
		v    int64
	}{
		{"max_concurrent_reads", int64(p.MaxConcurrentReads)},
		{"max_concurrent_writes", int64(p.MaxConcurrentWrites)},
		{"stale_lag", int64(p.StaleLag)},
		{"throw_backoff", int64(p.ThrowBackoff)},
		{"max_deliveries", int64(p.MaxDeliveries)},
		{"consumers", int64(p.Consumers)},
		{"idempotency_ttl", int64(p.IdempotencyTTL)},
		{"list_per_event", int64(p.ListPerEvent)},
		{"write_per_event", int64(p.WritePerEvent)},
		{"write_per_contender", int64(p.WritePerContender)},
		{"list_per_contender", int64(p.ListPerContender)},
		{"write_slices", int64(p.WriteSlices)},
	}
	for _, f := range nonNeg {
		if f.v < 0 {
			return fmt.Errorf("profile %s: %s = %d: must not be negative", p.Name, f.name, f.v)
		}
	}
	if p.WriteSlices > 0 && !p.SharedWrites {
		return fmt.Errorf("profile %s: write_slices = %d needs shared_writes: true (it says how a shared write capacity is served)", p.Name, p.WriteSlices)
	}
	switch p.WriteOrder {
	case "", WriteOrderFIFO:
	case WriteOrderRandom:
		if p.SharedWrites || p.MaxConcurrentWrites == 0 {
			return fmt.Errorf("profile %s: write_order = random needs writes that wait for a slot (max_concurrent_writes > 0, shared_writes false): it says which waiting write a freed slot serves", p.Name)
		}
	default:
		return fmt.Errorf("profile %s: write_order = %q: want %q or %q", p.Name, p.WriteOrder, WriteOrderFIFO, WriteOrderRandom)
	}
	if p.VisibilityTimeout <= 0 {
		return fmt.Errorf("profile %s: visibility_timeout = %v: must be positive", p.Name, p.VisibilityTimeout)
	}
	if !(p.FreshCopyOnThrow >= 0 && p.FreshCopyOnThrow <= 1) {
		return fmt.Errorf("profile %s: fresh_copy_on_throw = %v: want a probability in [0, 1]", p.Name, p.FreshCopyOnThrow)
	}
	return nil
}

// The orders a write pool serves its waiting writes in (Profile.WriteOrder).
const (
	WriteOrderFIFO   = "fifo"
	WriteOrderRandom = "random"
)

// StoreRules is the events.create rule set of a built-in World: world-local
// and world-postgres follow their real adapters (checked by the differential
// test in conformance/); world-vercel keeps DOMAIN.md §2, which nothing here
// can check.
func StoreRules(profile string) world.Rules {
	switch profile {
	case "world-local":
		return world.RulesLocal
	case "world-postgres":
		return world.RulesPostgres
	}
	return world.RulesDomain
}

// RuntimeCapsDeliveries reports whether a run on world's adapter has its
// message cap from the runtime, not from the queue: world-local's queue has
// none, so the delivery past max_deliveries is made and the runtime's
// handler writes run_failed as its first call and acks (core runtime.js,
// "Workflow handler exceeded max deliveries", before any other call); the
// write is that delivery's. On the other Worlds the model keeps the World
// failing the run itself. It follows the World the run is on, not the name
// of the latency profile it was given (a Go-built scenario may run
// world-local with another World's latencies).
func RuntimeCapsDeliveries(world string) bool { return world == "world-local" }

// TakeLatencies gives p the call and queue latency distributions of from
// (runs.get, events.create, events.list, publish, delivery), keeping p's
// rules, atomicity, pools and queue: the same World with slower or faster
// calls.
func (p *Profile) TakeLatencies(from Profile) {
	p.RunsGet, p.EventsWrite, p.EventsList, p.Publish, p.Deliver = from.RunsGet, from.EventsWrite, from.EventsList, from.Publish, from.Deliver
}
