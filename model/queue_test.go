package model

import (
	"slices"
	"testing"
	"time"

	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// Tests of the World's queue (DOMAIN §3): visibility timeouts, delays,
// idempotency keys, attempt counting, the delivery cap and deployment-pinned
// routing. Whole scenarios where the History can show the point; a
// hand-built engine where a test must drive publish itself.

// Fixed latencies of the queue tests: every draw is exact, so times are too.
const (
	qRunsGet = 40 * time.Millisecond
	qWrite   = 10 * time.Millisecond
	qList    = 10 * time.Millisecond
	qPublish = 5 * time.Millisecond
	qDeliver = 20 * time.Millisecond
)

// queueProfile returns the named built-in World with fixed latencies.
func queueProfile(t testing.TB, name string) Profile {
	t.Helper()
	p, ok := Profiles()[name]
	if !ok {
		t.Fatalf("no profile %q", name)
	}
	p.RunsGet = sim.Fixed(qRunsGet)
	p.EventsWrite = sim.Fixed(qWrite)
	p.EventsList = sim.Fixed(qList)
	p.Publish = sim.Fixed(qPublish)
	p.Deliver = sim.Fixed(qDeliver)
	return p
}

// runScenario runs sc with recording on and insists the queue drained.
func runScenario(t testing.TB, sc *Scenario, seed uint64) *History {
	t.Helper()
	r, err := Run(sc, sim.NewPCG(seed), Options{Record: true, Seed: seed})
	if err != nil {
		t.Fatalf("%s seed %d: %v", sc.Name, seed, err)
	}
	if !r.History.Drained {
		t.Fatalf("%s seed %d: did not drain", sc.Name, seed)
	}
	return r.History
}

// deliveriesByMsg groups message-backed deliveries by message, in the order
// they were claimed.
func deliveriesByMsg(h *History) map[int32][]int32 {
	out := map[int32][]int32{}
	for i, d := range h.Deliveries {
		if d.Msg >= 0 {
			out[d.Msg] = append(out[d.Msg], int32(i))
		}
	}
	return out
}

// newQueueEngine builds an engine for sc the way Run does, without starting
// any run or the kernel, so that a test can publish by hand.
func newQueueEngine(t testing.TB, sc *Scenario, seed uint64) *engine {
	t.Helper()
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	vs, err := resolveVariants(sc.Variants)
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(sc, vs, Options{Record: true, Seed: seed}, sim.NewPCG(seed))
	e.store = world.New(world.FenceFixed)
	e.k = sim.New(sim.Config{Handler: e.dispatch})
	if err := e.setupFaults(); err != nil {
		t.Fatal(err)
	}
	e.reads.limit = e.prof.MaxConcurrentReads
	e.writes.limit = e.prof.MaxConcurrentWrites
	e.h = &History{Seed: seed, Scenario: sc.Name, Profile: sc.World}
	e.setupDeployments()
	// A far-future no-op lets runUntil move the clock when nothing else is
	// pending; it is never reached.
	e.k.Schedule(sim.Time(1000*time.Hour), evStopFaults, 0, 0)
	return e
}

// addTestRun creates a pending run with one one-branch fan-out on deployment 0.
func (e *engine) addTestRun() (world.RunID, int32) {
	id := e.store.CreateRun(e.k.Now(), 0, 1, -1)
	fan := int32(len(e.h.Fanouts))
	e.h.Runs = append(e.h.Runs, RunInfo{ID: id, Fanouts: []int32{fan}})
	e.h.Fanouts = append(e.h.Fanouts, Fanout{Run: id, FirstStep: 0, Branches: 1})
	e.completer.fans = append(e.completer.fans, fanRT{})
	return id, fan
}

// runUntil dispatches every event up to virtual time at and leaves the
// clock there.
func runUntil(t testing.TB, e *engine, at time.Duration) {
	t.Helper()
	st, err := e.k.Run(sim.Limits{MaxTime: sim.Time(at)})
	if err != nil {
		t.Fatal(err)
	}
	if st.Reason != sim.TimeLimit || e.k.Now() != sim.Time(at) {
		t.Fatalf("clock at %v (%v), want %v", e.k.Now(), st.Reason, sim.Time(at))
	}
}

// A crashed delivery comes back after the visibility timeout. Where the
// World bounds an invocation (RedeliverInFlight) the timeout runs from the
// delivery's start; on world-local it runs from the crash. The legacy
// prologue's runs.get puts the crash well after the start, so the two rules
// give different times.
func TestCrashedDeliveryReturnsAfterTheVisibilityTimeout(t *testing.T) {
	for _, name := range ProfileNames() {
		t.Run(name, func(t *testing.T) {
			sc := DefaultScenario()
			sc.World = name
			sc.Store = queueProfile(t, name)
			sc.Workflow.Fanouts = []int{4}
			sc.Workflow.MaxInline = 1
			sc.Workflow.Body = sim.Fixed(20 * time.Millisecond)
			sc.Variants = []string{"legacy-producers"}
			sc.Faults.CrashFirstDelivery = true
			vt := sc.Store.VisibilityTimeout
			for seed := uint64(1); seed <= 5; seed++ {
				h := runScenario(t, &sc, seed)
				crashed := 0
				for m, ds := range deliveriesByMsg(h) {
					first := h.Deliveries[ds[0]]
					if first.Kind != MsgStep {
						continue
					}
					if first.Disposition != DispCrash || first.Attempt != 1 {
						t.Fatalf("seed %d msg %d: first delivery %v attempt %d, want a crash on attempt 1", seed, m, first.Disposition, first.Attempt)
					}
					if first.End <= first.Start {
						t.Fatalf("seed %d msg %d: crash at %v, not after the start %v: the test cannot tell the rules apart", seed, m, first.End, first.Start)
					}
					if len(ds) < 2 {
						t.Fatalf("seed %d msg %d: crashed and never delivered again", seed, m)
					}
					second := h.Deliveries[ds[1]]
					if second.Attempt != 2 || second.Msg != first.Msg || h.Messages[second.Msg].ID != m {
						t.Fatalf("seed %d msg %d: redelivery attempt %d of msg %d, want attempt 2 of the same message", seed, m, second.Attempt, second.Msg)
					}
					from := first.End // world-local: from the crash
					if sc.Store.RedeliverInFlight {
						from = first.Start // bounded invocation: from the delivery
					}
					if earliest := from.Add(vt); second.Start < earliest {
						t.Fatalf("seed %d msg %d: redelivered at %v, before %v (visibility timeout %v)", seed, m, second.Start, earliest, vt)
					}
					if want := from.Add(vt + qDeliver); second.Start != want {
						t.Fatalf("seed %d msg %d: redelivered at %v, want %v (crash %v, start %v)", seed, m, second.Start, want, first.End, first.Start)
					}
					crashed++
				}
				if crashed != 3 {
					t.Fatalf("seed %d: %d crashed step messages, want the 3 queued branches", seed, crashed)
				}
				if h.FinalRuns[0].Status != world.RunCompleted {
					t.Fatalf("seed %d: run ended %v", seed, h.FinalRuns[0].Status)
				}
			}
		})
	}
}

// flakyOn is the default scenario on World name whose last step of each
// fan-out fails once and is retried after delay.
func flakyOn(name string, delay time.Duration) Scenario {
	sc := DefaultScenario()
	sc.World = name
	sc.Store = Profiles()[name]
	sc.Workflow.FlakySteps, sc.Workflow.FlakyTimes = 1, 1
	sc.Workflow.RetryDelay = delay
	return sc
}

// A queued step's retry is its own message again (core answers the queue
// with {timeoutSeconds}): the delivery that wrote step_retrying is settled
// for redelivery, nothing is published, and the message's next attempt
// comes no earlier than the delay and completes.
func TestQueuedRetryIsItsMessageAgainAfterItsDelay(t *testing.T) {
	const delay = 3 * time.Second
	for _, name := range ProfileNames() {
		t.Run(name, func(t *testing.T) {
			sc := flakyOn(name, delay)
			sc.Runs = 3
			sc.RunInterval = 50 * time.Millisecond
			for seed := uint64(0); seed < 10; seed++ {
				h := runScenario(t, &sc, seed)
				for _, p := range h.Publishes {
					if p.Site == SiteDelayedRetry {
						t.Fatalf("seed %d: a queued step's retry published a message (run %d step %d)", seed, p.Run, p.Step)
					}
				}
				byMsg := deliveriesByMsg(h)
				retries := 0
				for i, d := range h.Deliveries {
					if d.Outcome != OutcomeRetry {
						continue
					}
					retries++
					if d.Msg < 0 || d.Disposition != DispRedeliver {
						t.Fatalf("seed %d: retry in d%d (message %d) settled %v, want a queued step redelivered", seed, i, d.Msg, d.Disposition)
					}
					ds := byMsg[d.Msg]
					k := slices.Index(ds, int32(i))
					if k < 0 || k+1 >= len(ds) {
						t.Fatalf("seed %d: message %d never delivered after its retry in d%d", seed, d.Msg, i)
					}
					next := h.Deliveries[ds[k+1]]
					if next.Attempt != d.Attempt+1 || next.Start < d.End.Add(delay) || next.Outcome != OutcomeCompleted {
						t.Fatalf("seed %d: after the retry in d%d (attempt %d, ended %v): attempt %d at %v, %v; want attempt %d after %v, completed",
							seed, i, d.Attempt, d.End, next.Attempt, next.Start, next.Outcome, d.Attempt+1, d.End.Add(delay))
					}
				}
				if retries != sc.Runs {
					t.Fatalf("seed %d: %d retries, want one per run (%d)", seed, retries, sc.Runs)
				}
			}
		})
	}
}

// Same check with fixed latencies: the message is visible again the delay
// after the delivery settled, and delivered the queue's delivery latency
// later, exactly.
func TestQueuedRetryTimingIsExactWithFixedLatencies(t *testing.T) {
	const delay = 1500 * time.Millisecond
	sc := DefaultScenario()
	sc.Store = queueProfile(t, "world-local")
	sc.Workflow.Body = sim.Fixed(20 * time.Millisecond)
	sc.Workflow.FlakySteps, sc.Workflow.FlakyTimes = 2, 1
	sc.Workflow.RetryDelay = delay
	h := runScenario(t, &sc, 1)
	byMsg := deliveriesByMsg(h)
	n := 0
	for i, d := range h.Deliveries {
		if d.Outcome != OutcomeRetry {
			continue
		}
		n++
		ds := byMsg[d.Msg]
		next := h.Deliveries[ds[slices.Index(ds, int32(i))+1]]
		if want := d.End.Add(delay + qDeliver); next.Start != want {
			t.Fatalf("retry of step %d settled at %v redelivered at %v, want %v", d.Step, d.End, next.Start, want)
		}
	}
	if n != 2 {
		t.Fatalf("%d retries, want 2", n)
	}
}

// An inline step's retry is queued as a background step (dispatch site 2)
// under the step's dispatch key, due after the delay, and completes.
func TestInlineRetryIsQueuedUnderTheDispatchKey(t *testing.T) {
	const delay = 2 * time.Second
	for _, name := range ProfileNames() {
		t.Run(name, func(t *testing.T) {
			sc := flakyOn(name, delay)
			sc.Workflow.Fanouts = []int{1}
			sc.Workflow.MaxInline = 1
			for seed := uint64(0); seed < 10; seed++ {
				h := runScenario(t, &sc, seed)
				byMsg := deliveriesByMsg(h)
				retries := 0
				for _, p := range h.Publishes {
					if p.Site != SiteDelayedRetry {
						continue
					}
					retries++
					if p.Msg < 0 {
						t.Fatalf("seed %d: the inline retry of step %d was absorbed", seed, p.Step)
					}
					m := h.Messages[p.Msg]
					if m.Key != msgKey(p.Run, p.Step) || m.Delay != sim.Time(delay) {
						t.Fatalf("seed %d: inline retry message key %x delay %v, want the dispatch key %x and %v", seed, m.Key, m.Delay, msgKey(p.Run, p.Step), delay)
					}
					ds := byMsg[p.Msg]
					if len(ds) == 0 || h.Deliveries[ds[0]].Start < p.At.Add(delay) || h.Deliveries[ds[len(ds)-1]].Outcome != OutcomeCompleted {
						t.Fatalf("seed %d: inline retry message %d not delivered after its delay and completed", seed, p.Msg)
					}
				}
				if retries != 1 {
					t.Fatalf("seed %d: %d inline retries published, want 1", seed, retries)
				}
			}
		})
	}
}

// An idempotency key stays claimed for its TTL whatever happens to the
// message that claimed it: delivery and ack do not release it; only time
// does (a queue without idempotency_in_flight, as world-postgres's and
// world-vercel's are modelled).
func TestIdempotencyKeyHoldsForItsTTLDespiteDeliveryAndAck(t *testing.T) {
	sc := DefaultScenario()
	sc.Store = queueProfile(t, "world-local")
	sc.Store.IdempotencyInFlight = false
	ttl := sc.Store.IdempotencyTTL
	e := newQueueEngine(t, &sc, 1)
	run, fan := e.addTestRun()
	msg := Message{Kind: MsgStep, Run: run, Step: 0, Fanout: fan, HasInput: true, Target: 0, Origin: -1, Key: msgKey(run, 0)}

	e.publish(-1, msg, SiteNodeDispatchLoop, V1)
	if len(e.h.Messages) != 1 || e.h.Publishes[0].Deduped || e.h.Publishes[0].Msg != 0 {
		t.Fatalf("first publish: %d messages, %+v", len(e.h.Messages), e.h.Publishes[0])
	}
	// Delivered (the legacy read finds the run pending) and acked.
	runUntil(t, e, time.Second)
	if len(e.h.Deliveries) != 1 || e.h.Deliveries[0].Disposition != DispAck || e.q.msgs[0].state != msgDone {
		t.Fatalf("first message not delivered and acked: %+v", e.h.Deliveries)
	}

	e.publish(-1, msg, SiteNodeDispatchLoop, V1)
	runUntil(t, e, ttl-time.Millisecond)
	e.publish(-1, msg, SiteNodeDispatchLoop, V1)
	for i, p := range e.h.Publishes[1:] {
		if !p.Deduped || p.Msg != -1 {
			t.Fatalf("publish %d within the TTL after the ack: %+v, want deduplicated", i+2, p)
		}
	}
	if len(e.h.Messages) != 1 || e.counts.Deduped != 2 {
		t.Fatalf("%d messages, %d deduplicated; want 1 and 2", len(e.h.Messages), e.counts.Deduped)
	}

	// Past the TTL the key is free: a new message, which claims it anew.
	runUntil(t, e, ttl+time.Millisecond)
	e.publish(-1, msg, SiteNodeDispatchLoop, V1)
	e.publish(-1, msg, SiteNodeDispatchLoop, V1)
	p3, p4 := e.h.Publishes[3], e.h.Publishes[4]
	if p3.Deduped || p3.Msg != 1 || len(e.h.Messages) != 2 || e.h.Messages[1].ID != 1 {
		t.Fatalf("publish after the TTL: %+v with %d messages, want a second message", p3, len(e.h.Messages))
	}
	if !p4.Deduped {
		t.Fatalf("publish right after the re-claim: %+v, want deduplicated", p4)
	}
	// Another step's key is never absorbed.
	other := msg
	other.Step, other.Key = 1, msgKey(run, 1)
	e.publish(-1, other, SiteNodeDispatchLoop, V1)
	if len(e.h.Publishes) != 6 {
		t.Fatalf("%d publishes recorded, want 6", len(e.h.Publishes))
	}
	if p := e.h.Publishes[5]; p.Deduped || len(e.h.Messages) != 3 {
		t.Fatalf("publish for another step: %+v", p)
	}
	if _, err := e.k.Run(sim.Limits{MaxTime: sim.Time(ttl + time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if len(e.h.Deliveries) != 3 {
		t.Fatalf("%d deliveries, want one per message (3)", len(e.h.Deliveries))
	}
}

// Exhausting a message does not release its key either (TTL keys).
func TestIdempotencyKeyHoldsAfterExhaustion(t *testing.T) {
	e, run, msg := crashingUntilTheCap(t, 1, V1, func(p *Profile) { p.IdempotencyInFlight = false })
	// world-local's cap is the runtime's: the delivery past it is made,
	// writes run_failed and acks.
	if e.counts.Exhausted != 1 || e.q.msgs[0].state != msgDone || len(e.h.Deliveries) != 2 || e.h.Deliveries[0].Disposition != DispCrash || e.h.Deliveries[1].Disposition != DispAck {
		t.Fatalf("message not exhausted after one crashed delivery: exhausted %d, deliveries %+v", e.counts.Exhausted, e.h.Deliveries)
	}
	if st := e.store.Get(run).Status; st != world.RunFailed {
		t.Fatalf("run %v after its message was exhausted, want failed", st)
	}
	e.publish(-1, msg, SiteNodeDispatchLoop, V1)
	if p := e.h.Publishes[1]; !p.Deduped || len(e.h.Messages) != 1 {
		t.Fatalf("publish after exhaustion: %+v, %d messages; want deduplicated", p, len(e.h.Messages))
	}
}

// Attempt counts claims of one message id: 1, 2, 3, … in claim order, on
// every World, and Redeliveries counts the claims after the first.
func TestAttemptCountsClaimsOfOneMessageID(t *testing.T) {
	sc, _ := Builtin("faults")
	for _, name := range ProfileNames() {
		sc.World = name
		sc.Store = Profiles()[name]
		sc.Store.VisibilityTimeout = 10 * time.Second
		for seed := uint64(0); seed < 20; seed++ {
			r, err := Run(&sc, sim.NewPCG(seed), Options{Record: true})
			if err != nil {
				t.Fatal(err)
			}
			h := r.History
			redeliveries := 0
			for m, ds := range deliveriesByMsg(h) {
				if h.Messages[m].ID != m {
					t.Fatalf("%s seed %d: message %d has id %d", name, seed, m, h.Messages[m].ID)
				}
				for i, p := range ds {
					if a := h.Deliveries[p].Attempt; a != int32(i+1) {
						t.Fatalf("%s seed %d msg %d: delivery %d has attempt %d, want %d", name, seed, m, i, a, i+1)
					}
					if i > 0 {
						redeliveries++
					}
				}
				if limit := sc.Store.MaxDeliveries; limit > 0 && len(ds) > limit {
					t.Fatalf("%s seed %d msg %d: %d deliveries past the cap %d", name, seed, m, len(ds), limit)
				}
			}
			if redeliveries != r.Counts.Redeliveries {
				t.Fatalf("%s seed %d: %d redeliveries in the History, %d counted", name, seed, redeliveries, r.Counts.Redeliveries)
			}
		}
	}
}

// world-postgres: a message whose every delivery crashes is claimed three
// times, then retired, and the World fails its run.
func TestPostgresRetiresAMessageAfterThreeCrashedDeliveries(t *testing.T) {
	sc := DefaultScenario()
	sc.World = "world-postgres"
	sc.Store = PostgresProfile()
	sc.Faults.Crash = 1
	for seed := uint64(0); seed < 10; seed++ {
		r, err := Run(&sc, sim.NewPCG(seed), Options{Record: true})
		if err != nil {
			t.Fatal(err)
		}
		h := r.History
		if len(h.Messages) != 1 || h.Messages[0].Kind != MsgWorkflow {
			t.Fatalf("seed %d: %d messages, want only the workflow message", seed, len(h.Messages))
		}
		ds := deliveriesByMsg(h)[0]
		if len(ds) != 3 {
			t.Fatalf("seed %d: %d deliveries, want 3 and no 4th", seed, len(ds))
		}
		for i, p := range ds {
			d := h.Deliveries[p]
			if d.Attempt != int32(i+1) || d.Disposition != DispCrash {
				t.Fatalf("seed %d: delivery %d attempt %d %v, want attempt %d crash", seed, i, d.Attempt, d.Disposition, i+1)
			}
		}
		if r.Counts.Exhausted != 1 || r.Counts.Deliveries != 3 || r.Counts.Redeliveries != 2 || r.Counts.Crashes != 3 {
			t.Fatalf("seed %d: counts %+v", seed, r.Counts)
		}
		if h.FinalRuns[0].Status != world.RunFailed {
			t.Fatalf("seed %d: run ended %v, want failed by the World", seed, h.FinalRuns[0].Status)
		}
		byWorld := 0
		for _, a := range h.Accepted {
			if a.Type == world.EvRunFailed && a.Caller.Kind == CallerWorld {
				byWorld++
				if a.At < h.Deliveries[ds[2]].Start {
					t.Fatalf("seed %d: run failed at %v, before the 3rd delivery at %v", seed, a.At, h.Deliveries[ds[2]].Start)
				}
			}
		}
		if byWorld != 1 {
			t.Fatalf("seed %d: %d run_failed events by the World, want 1", seed, byWorld)
		}
	}
}

// world-vercel's failure path: a thrown message may come back as a fresh
// message (new id, Origin the old id) delivered as attempt 1, while the old
// message gets no further delivery.
func TestVercelThrowMayComeBackAsAFreshCopy(t *testing.T) {
	sc := DefaultScenario()
	sc.World = "world-vercel"
	sc.Store = VercelProfile()
	sc.Store.VisibilityTimeout = 30 * time.Second
	sc.Runs = 2
	sc.Workflow.Fanouts = []int{8}
	// Without in-band recovery a missing step makes the consumer throw.
	sc.Variants = []string{"attempt-gated-recovery"}
	sc.Faults.LostCreate = 0.3
	sc.Faults.Until = time.Minute
	found := 0
	for seed := uint64(0); seed < 200 && found < 3; seed++ {
		h := runScenario(t, &sc, seed)
		byMsg := deliveriesByMsg(h)
		for _, p := range h.Publishes {
			if p.Site != SiteFreshCopy {
				continue
			}
			cp := h.Messages[p.Msg]
			if cp.Origin < 0 || cp.Origin == cp.ID || cp.ID != p.Msg {
				t.Fatalf("seed %d: fresh copy %+v: want a new id and the old one as origin", seed, cp)
			}
			old := h.Messages[cp.Origin]
			if cp.Kind != old.Kind || cp.Run != old.Run || cp.Step != old.Step || cp.Target != old.Target || cp.HasInput != old.HasInput || cp.Ctx != old.Ctx {
				t.Fatalf("seed %d: fresh copy %+v differs from its origin %+v", seed, cp, old)
			}
			if cp.Key != 0 || cp.Delay != sim.Time(sc.Store.ThrowBackoff) {
				t.Fatalf("seed %d: fresh copy key %#x delay %v", seed, cp.Key, cp.Delay)
			}
			olds := byMsg[old.ID]
			last := h.Deliveries[olds[len(olds)-1]]
			if last.Disposition != DispThrow || last.End != p.At {
				t.Fatalf("seed %d: origin's last delivery %v at %v, want the throw that published the copy at %v", seed, last.Disposition, last.End, p.At)
			}
			cds := byMsg[cp.ID]
			if len(cds) == 0 {
				t.Fatalf("seed %d: fresh copy %d never delivered", seed, cp.ID)
			}
			first := h.Deliveries[cds[0]]
			if first.Attempt != 1 || first.Msg != cp.ID {
				t.Fatalf("seed %d: fresh copy's first delivery attempt %d, want 1", seed, first.Attempt)
			}
			if first.Start < p.At.Add(sc.Store.ThrowBackoff) {
				t.Fatalf("seed %d: fresh copy delivered at %v, before the throw backoff from %v", seed, first.Start, p.At)
			}
			found++
		}
	}
	if found == 0 {
		t.Fatal("no seed below 200 produced a fresh copy on world-vercel")
	}
	// world-postgres never copies: a throw is redelivered under the same id.
	sc.World = "world-postgres"
	sc.Store = PostgresProfile()
	sc.Store.VisibilityTimeout = 30 * time.Second
	throws := 0
	for seed := uint64(0); seed < 50; seed++ {
		h := runScenario(t, &sc, seed)
		for _, p := range h.Publishes {
			if p.Site == SiteFreshCopy {
				t.Fatalf("seed %d: world-postgres published a fresh copy", seed)
			}
		}
		for _, d := range h.Deliveries {
			if d.Disposition == DispThrow {
				throws++
			}
		}
	}
	if throws == 0 {
		t.Fatal("no throw on world-postgres in 50 seeds: the comparison shows nothing")
	}
}

// The delivery cap bounds every message's deliveries; without it the same
// schedules redeliver past it.
func TestDeliveryCapBoundsEveryMessage(t *testing.T) {
	const limit = 2
	sc := DefaultScenario()
	sc.Runs = 3
	sc.Store.VisibilityTimeout = time.Second
	sc.Faults.Crash = 0.2
	sc.Faults.Until = time.Minute
	maxUncapped, exhausted := 0, 0
	for seed := uint64(0); seed < 30; seed++ {
		uncapped := runScenario(t, &sc, seed)
		for _, ds := range deliveriesByMsg(uncapped) {
			maxUncapped = max(maxUncapped, len(ds))
		}
		capped := sc
		capped.Store.MaxDeliveries = limit
		r, err := Run(&capped, sim.NewPCG(seed), Options{Record: true})
		if err != nil {
			t.Fatal(err)
		}
		for m, ds := range deliveriesByMsg(r.History) {
			// world-local's cap is the runtime's: one delivery past it,
			// which writes run_failed and acks.
			if len(ds) > limit+1 {
				t.Fatalf("seed %d: message %d delivered %d times, cap %d", seed, m, len(ds), limit)
			}
			if len(ds) == limit+1 {
				last := ds[limit]
				var calls []string
				for _, c := range r.History.Calls {
					if c.Caller.Delivery == last {
						calls = append(calls, c.Event.String())
					}
				}
				if d := r.History.Deliveries[last]; d.Disposition != DispAck || !slices.Equal(calls, []string{"run_failed"}) {
					t.Fatalf("seed %d: message %d's delivery past the cap: %v, calls %v; want run_failed, then ack", seed, m, d.Disposition, calls)
				}
			}
		}
		exhausted += r.Counts.Exhausted
	}
	if maxUncapped <= limit {
		t.Fatalf("without a cap no message was delivered more than %d times: the test shows nothing", maxUncapped)
	}
	if exhausted == 0 {
		t.Fatal("no message reached the cap")
	}
}

// Messages are pinned to their run's deployment. Misdelivered, a message
// lands on the other deployment's consumer, which re-routes it to the
// target; no step body ever runs off its run's deployment.
func TestMessagesArePinnedToTheirDeployment(t *testing.T) {
	base := DefaultScenario()
	base.Runs = 6
	base.RunInterval = 20 * time.Millisecond
	base.Workflow.Fanouts = []int{6}
	base.Deployments = []DeploymentConfig{
		{Name: "dpl-a", Producer: "v2", Consumer: "v2", Share: 0.5},
		{Name: "dpl-b", Producer: "v2", Consumer: "v2", Share: 0.5},
	}

	t.Run("misdeliver=1", func(t *testing.T) {
		sc := base
		sc.Faults.Misdeliver = 1
		for seed := uint64(0); seed < 10; seed++ {
			h := runScenario(t, &sc, seed)
			for m, ds := range deliveriesByMsg(h) {
				msg := h.Messages[m]
				if msg.Target != h.Runs[msg.Run].Deployment {
					t.Fatalf("seed %d: message %d targets %d, its run is on %d", seed, m, msg.Target, h.Runs[msg.Run].Deployment)
				}
				d := h.Deliveries[ds[0]]
				if d.Deployment == d.Target || !d.Rerouted {
					t.Fatalf("seed %d: message %d delivered on %d (target %d), rerouted %v", seed, m, d.Deployment, d.Target, d.Rerouted)
				}
				if msg.Reroutes >= maxReroutes {
					continue // the guard gives up and fails the run
				}
				var next *Message
				for i := range h.Messages {
					if h.Messages[i].Origin == msg.ID {
						next = &h.Messages[i]
					}
				}
				if next == nil || next.Target != msg.Target || next.Reroutes != msg.Reroutes+1 || next.Run != msg.Run || next.Kind != msg.Kind {
					t.Fatalf("seed %d: message %+v re-routed as %+v", seed, msg, next)
				}
			}
			for i, fr := range h.FinalRuns {
				if fr.Status != world.RunFailed {
					t.Fatalf("seed %d: run %d %v after every delivery was misdelivered, want failed after %d re-routes", seed, i, fr.Status, maxReroutes)
				}
			}
		}
	})

	t.Run("misdeliver=0.3", func(t *testing.T) {
		sc := base
		sc.Faults.Misdeliver = 0.3
		misdelivered, ran := 0, 0
		for seed := uint64(0); seed < 10; seed++ {
			h := runScenario(t, &sc, seed)
			for i, d := range h.Deliveries {
				if d.Msg < 0 {
					continue
				}
				pinned := h.Runs[d.Run].Deployment
				if d.Deployment != d.Target {
					misdelivered++
				}
				if d.Rerouted && d.Deployment == pinned {
					t.Fatalf("seed %d: delivery %d re-routed from the run's own deployment", seed, i)
				}
				if d.BodyRan {
					ran++
					if d.Deployment != pinned {
						t.Fatalf("seed %d: delivery %d ran step %d on deployment %d, run pinned to %d", seed, i, d.Step, d.Deployment, pinned)
					}
				}
				if d.Deployment != pinned && d.Outcome != OutcomeGone && !d.Rerouted {
					t.Fatalf("seed %d: delivery %d on the wrong deployment neither re-routed nor gone: %+v", seed, i, d)
				}
			}
		}
		if misdelivered == 0 || ran == 0 {
			t.Fatalf("%d misdeliveries, %d bodies: the test shows nothing", misdelivered, ran)
		}
	})

	t.Run("misdeliver=0", func(t *testing.T) {
		sc := base
		used := map[int32]bool{}
		for seed := uint64(0); seed < 10; seed++ {
			r, err := Run(&sc, sim.NewPCG(seed), Options{Record: true})
			if err != nil {
				t.Fatal(err)
			}
			h := r.History
			for i, d := range h.Deliveries {
				if d.Deployment != d.Target || d.Rerouted {
					t.Fatalf("seed %d: delivery %d on %d, target %d, rerouted %v", seed, i, d.Deployment, d.Target, d.Rerouted)
				}
			}
			if r.Counts.Reroutes != 0 {
				t.Fatalf("seed %d: %d re-routes", seed, r.Counts.Reroutes)
			}
			for i, fr := range h.FinalRuns {
				used[h.Runs[i].Deployment] = true
				if fr.Status != world.RunCompleted {
					t.Fatalf("seed %d: run %d %v", seed, i, fr.Status)
				}
			}
		}
		if len(used) != 2 {
			t.Fatalf("runs used %d deployment(s), want both", len(used))
		}
	})
}

// A message waiting for a free consumer is claimed only if it still waits:
// an older delivery may have acked it meanwhile (regression: it was
// delivered again after its ack).
func TestWaitingMessagesAreNotDeliveredAfterAnAck(t *testing.T) {
	for _, world := range []string{"world-vercel", "world-postgres"} {
		for seed := uint64(0); seed < 10; seed++ {
			sc := DefaultScenario()
			sc.World, sc.Store = world, Profiles()[world]
			sc.Store.VisibilityTimeout = time.Second
			sc.Store.Consumers = 1
			sc.Workflow.Fanouts = []int{6}
			sc.Workflow.MaxInline = 0
			sc.Workflow.Body = sim.Fixed(3 * time.Second)
			res, err := Run(&sc, sim.NewPCG(seed), Options{Record: true})
			if err != nil {
				t.Fatal(err)
			}
			h := res.History
			ackedAt := map[int32]sim.Time{}
			for _, d := range h.Deliveries {
				if d.Msg >= 0 && d.Disposition == DispAck {
					if at, ok := ackedAt[d.Msg]; !ok || d.End < at {
						ackedAt[d.Msg] = d.End
					}
				}
			}
			for i, d := range h.Deliveries {
				if at, ok := ackedAt[d.Msg]; ok && d.Msg >= 0 && d.Start > at {
					t.Fatalf("%s seed %d: delivery %d of message %d starts at %v, after the message was acked at %v", world, seed, i, d.Msg, d.Start, at)
				}
			}
		}
	}
}

// world-local's queue holds a key only while its message is in the queue
// (dist/queue.js inflightMessages, cleared when the delivery loop ends): a
// publish while the first message waits or runs is absorbed, one after its
// ack or its retirement is a new message, delivered.
func TestWorldLocalIdempotencyKeyLivesWhileItsMessageDoes(t *testing.T) {
	sc := DefaultScenario()
	sc.Store = queueProfile(t, "world-local")
	if !sc.Store.IdempotencyInFlight {
		t.Fatal("world-local's profile does not hold keys in flight")
	}
	e := newQueueEngine(t, &sc, 1)
	run, fan := e.addTestRun()
	msg := Message{Kind: MsgStep, Run: run, Step: 0, Fanout: fan, HasInput: true, Target: 0, Origin: -1, Key: msgKey(run, 0)}
	e.publish(-1, msg, SiteNodeDispatchLoop, V1)
	e.publish(-1, msg, SiteNodeDispatchLoop, V1) // the first is still being published
	if len(e.h.Messages) != 1 || !e.h.Publishes[1].Deduped {
		t.Fatalf("publish while the first is in the queue: %d messages, %+v; want absorbed", len(e.h.Messages), e.h.Publishes[1])
	}
	runUntil(t, e, time.Second)
	if len(e.h.Deliveries) != 1 || e.q.msgs[0].state != msgDone {
		t.Fatalf("first message not delivered and acked: %+v", e.h.Deliveries)
	}
	e.publish(-1, msg, SiteNodeDispatchLoop, V1)
	if p := e.h.Publishes[2]; p.Deduped || len(e.h.Messages) != 2 {
		t.Fatalf("publish after the ack: %+v, %d messages; want a new message", p, len(e.h.Messages))
	}
	runUntil(t, e, 2*time.Second)
	if len(e.h.Deliveries) != 2 {
		t.Fatalf("%d deliveries, want the new message delivered too", len(e.h.Deliveries))
	}

	// Retired at the delivery cap: the key is free as well.
	e2, _, m2 := crashingUntilTheCap(t, 1, V1, nil)
	if e2.counts.Exhausted != 1 {
		t.Fatalf("message not exhausted: %d", e2.counts.Exhausted)
	}
	e2.publish(-1, m2, SiteNodeDispatchLoop, V1)
	if p := e2.h.Publishes[1]; p.Deduped || len(e2.h.Messages) != 2 {
		t.Fatalf("publish after retirement: %+v, %d messages; want a new message", p, len(e2.h.Messages))
	}
}

// Every key a message carries is its step's one key (msgKey): the queue
// keeps a key's claim by run and step (queue.keyClaim), which is the key's
// claim only while no message carries another. Every built-in scenario,
// over seeds, with its crashes, retries, reroutes and fresh copies.
func TestEveryKeyIsItsStepsKey(t *testing.T) {
	keyed := 0
	for _, name := range BuiltinNames() {
		sc, _ := Builtin(name)
		for seed := uint64(1); seed <= 20; seed++ {
			h := runScenario(t, &sc, seed)
			for _, m := range h.Messages {
				if m.Key == 0 {
					continue
				}
				keyed++
				if m.Key != msgKey(m.Run, m.Step) {
					t.Fatalf("%s seed %d: message %d (run %d step %d) carries key %#x, not its step's %#x", name, seed, m.ID, m.Run, m.Step, m.Key, msgKey(m.Run, m.Step))
				}
			}
		}
	}
	if keyed == 0 {
		t.Fatal("no message carried a key: the check checked nothing")
	}
}

// On world-local the delivery cap is the runtime's (WORKFLOW_MAX_QUEUE_DELIVERIES):
// world-local delivers the message once more, 5 s after the last failed
// delivery (its queue's linear backoff), and the runtime's handler writes
// run_failed as that delivery's first and only call and acks. The write is
// the delivery's, not the World's own (simlab reproduce can hold it).
func TestTheRuntimeCapsWorldLocalDeliveries(t *testing.T) {
	// The run's World decides, not the name of the latency profile it was
	// given: world-local with another World's latencies (durabench's on
	// world-local, as reproduce's saved schedules run) has the runtime's cap.
	for _, name := range []string{"world-local", "world-vercel"} {
		t.Run("latencies of "+name, func(t *testing.T) {
			checkTheRuntimeCapsDeliveries(t, func(p *Profile) { p.Name = name })
		})
	}
}

func checkTheRuntimeCapsDeliveries(t *testing.T, tweak func(*Profile)) {
	e, run, _ := crashingUntilTheCap(t, 2, V2, tweak)
	ds := e.h.Deliveries
	if len(ds) != 3 || ds[0].Disposition != DispCrash || ds[1].Disposition != DispCrash || ds[2].Disposition != DispAck || ds[2].Attempt != 3 {
		t.Fatalf("deliveries %+v; want two crashed, then the third acked", ds)
	}
	var failed []Call
	for _, c := range e.calls {
		if c.Op == OpEventsCreate && c.Event == world.EvRunFailed {
			failed = append(failed, c)
		}
	}
	if len(failed) != 1 || failed[0].Caller.Kind != CallerConsumer || failed[0].Caller.Delivery != 2 || failed[0].Result != world.OK {
		t.Fatalf("run_failed calls %+v; want one, by the third delivery, accepted", failed)
	}
	if e.counts.Exhausted != 1 || !slices.Equal(e.h.Retired, []int32{0}) || e.store.Get(run).Status != world.RunFailed {
		t.Fatalf("exhausted %d, retired %v, run %v; want the message retired and the run failed", e.counts.Exhausted, e.h.Retired, e.store.Get(run).Status)
	}
}

// crashingUntilTheCap publishes one step message (by a producer of version
// v) on world-local with a delivery cap of limit and every delivery
// crashing, and runs the engine for a virtual minute: long enough for every
// delivery, 5 s apart, and the one past the cap. tweak, if any, changes
// the profile first.
func crashingUntilTheCap(t *testing.T, limit int, v Version, tweak func(*Profile)) (*engine, world.RunID, Message) {
	t.Helper()
	sc := DefaultScenario()
	sc.Store = queueProfile(t, "world-local")
	if tweak != nil {
		tweak(&sc.Store)
	}
	sc.Store.MaxDeliveries = limit
	sc.Faults.Crash = 1
	e := newQueueEngine(t, &sc, 1)
	run, fan := e.addTestRun()
	msg := Message{Kind: MsgStep, Run: run, Step: 0, Fanout: fan, HasInput: true, Target: 0, Origin: -1, Key: msgKey(run, 0)}
	e.publish(-1, msg, SiteNodeDispatchLoop, v)
	runUntil(t, e, time.Minute)
	return e, run, msg
}
