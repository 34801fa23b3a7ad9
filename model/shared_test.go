package model

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// sharedScenario is the fanout run on an atomic World whose every write
// is 10 ms of work, served with a capacity of limit writes shared among
// those in flight.
func sharedScenario(limit int, shared bool) Scenario {
	sc, _ := Builtin("fanout")
	p := &sc.Store
	p.RunsGet, p.EventsList, p.EventsWrite = sim.Fixed(time.Millisecond), sim.Fixed(time.Millisecond), sim.Fixed(10*time.Millisecond)
	p.MaxConcurrentReads, p.MaxConcurrentWrites = 0, limit
	p.ListPerEvent, p.WritePerEvent = 0, 0
	p.SharedWrites = shared
	p.AtomicCalls = true // a write's answer is the end of its work
	return sc
}

// answeredWrites runs seed 1 of sc, recording, and returns it with its
// answered writes in issue order.
func answeredWrites(t *testing.T, sc Scenario) (*Result, []Call) {
	t.Helper()
	r, err := Run(&sc, sim.NewPCG(1), Options{Record: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var writes []Call
	for _, c := range r.History.Calls {
		if c.Op == OpEventsCreate && c.End > 0 {
			writes = append(writes, c)
		}
	}
	return r, writes
}

// processorSharing is when each job, all of work w and arriving at the
// given instants, ends when limit of them at a time share one server's
// rate: n jobs in service each advance at min(1, limit/n). It is computed
// here on its own, in floating point, from the arrivals alone.
func processorSharing(arrivals []float64, w float64, limit int) []float64 {
	order := make([]int, len(arrivals))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case arrivals[a] < arrivals[b]:
			return -1
		case arrivals[a] > arrivals[b]:
			return 1
		}
		return 0
	})
	end := make([]float64, len(arrivals))
	left := map[int]float64{}
	t, next := 0.0, 0
	for next < len(order) || len(left) > 0 {
		if len(left) == 0 {
			t = arrivals[order[next]]
		}
		for next < len(order) && arrivals[order[next]] <= t {
			left[order[next]] = w
			next++
		}
		n := float64(len(left))
		rate := min(1, float64(limit)/n)
		least := w
		for _, l := range left {
			least = min(least, l)
		}
		dt := least / rate
		if next < len(order) && arrivals[order[next]]-t < dt {
			dt = arrivals[order[next]] - t
		}
		t += dt
		for j, l := range left {
			if l -= dt * rate; l <= 1e-6 {
				end[j] = t
				delete(left, j)
			} else {
				left[j] = l
			}
		}
	}
	return end
}

// With shared writes, every write's answer is where processor sharing puts
// it, given when the writes arrived: computed apart from the model, for a
// capacity of one and of three. The FIFO pool the profile has otherwise
// serves one write at a time, whole, in arrival order.
func TestSharedWritesAnswerWhereProcessorSharingPutsThem(t *testing.T) {
	const work = float64(10 * time.Millisecond)
	for _, limit := range []int{1, 3} {
		sc := sharedScenario(limit, true)
		r, writes := answeredWrites(t, sc)
		arrivals := make([]float64, len(writes))
		for i, c := range writes {
			if c.Served != c.Start {
				t.Fatalf("limit %d: a write waited %v for a slot; shared writes wait for none", limit, time.Duration(c.Served-c.Start))
			}
			arrivals[i] = float64(c.Start)
		}
		want := processorSharing(arrivals, work, limit)
		longest := time.Duration(0)
		for i, c := range writes {
			if d := float64(c.End) - want[i]; d > 1000 || d < -1000 {
				t.Fatalf("limit %d: write %d (%v) answered at %v, processor sharing says %v",
					limit, i, c.Event, time.Duration(c.End), time.Duration(want[i]))
			}
			longest = max(longest, time.Duration(c.End-c.Start))
		}
		// The burst must have been shared for the check to mean anything.
		if longest < 3*time.Duration(work) {
			t.Fatalf("limit %d: the longest write took %v: no burst shared the capacity", limit, longest)
		}
		if !r.History.Drained || r.History.FinalRuns[0].Status != world.RunCompleted {
			t.Fatalf("limit %d: run ended %v (drained %v)", limit, r.History.FinalRuns[0].Status, r.History.Drained)
		}
	}

	fifo := sharedScenario(1, false)
	r, err := Run(&fifo, sim.NewPCG(1), Options{Record: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var last sim.Time
	for _, c := range r.History.Calls {
		if c.Op != OpEventsCreate || c.End == 0 {
			continue
		}
		if took := time.Duration(c.End - c.Served); took != time.Duration(work) {
			t.Fatalf("FIFO: a write took %v in service, want its whole 10ms", took)
		}
		if c.Served < last {
			t.Fatalf("FIFO: a write was served at %v, before the previous one answered (%v)", time.Duration(c.Served), time.Duration(last))
		}
		last = c.End
	}
}

// On the Worlds whose writes are their adapters' steps (world-local,
// world-postgres), shared writes take those steps at their share of the
// work (shared continuously or round robin), wait for each other's locks,
// and every run still ends: over seeds,
// with and without faults, every run drains, and one seed gives one
// history.
func TestSharedWritesOnTheAdaptersSteps(t *testing.T) {
	for _, world := range []string{"world-local", "world-postgres"} {
		for _, name := range []string{"fanout", "faults"} {
			sc, _ := Builtin(name)
			sc.World = world
			sc.Store = Profiles()[world]
			sc.Store.SharedWrites, sc.Store.MaxConcurrentWrites = true, 2
			for seed := uint64(1); seed <= 20; seed++ {
				sc.Store.WriteSlices = int(seed % 3) // processor sharing, or 1 or 2 slices round robin
				a, err := Run(&sc, sim.NewPCG(seed), Options{Record: true, Seed: seed})
				if err != nil {
					t.Fatal(err)
				}
				if !a.History.Drained {
					t.Fatalf("%s on %s, seed %d: did not drain", name, world, seed)
				}
				b, err := Run(&sc, sim.NewPCG(seed), Options{Seed: seed})
				if err != nil {
					t.Fatal(err)
				}
				if a.History.Hash != b.History.Hash {
					t.Fatalf("%s on %s, seed %d: hash %x recording, %x not", name, world, seed, a.History.Hash, b.History.Hash)
				}
			}
		}
	}
}

// A shared write's cost per logged event counts the run's writes already in
// flight when it arrives, not only those logged: it does its work while
// they land. With one write's capacity the World is busy exactly while
// some write is in flight, so the writes' whole work is the length of
// those busy periods; less the fixed part, it is per times a count of
// events, at least each write's log at its arrival plus the writes in
// flight then, and no more than that with every tie at an instant counted.
func TestSharedWritesChargeTheWritesInFlight(t *testing.T) {
	const base, per = 10 * time.Millisecond, 100 * time.Microsecond
	sc := sharedScenario(1, true)
	sc.Store.WritePerEvent = per
	_, writes := answeredWrites(t, sc)
	slices.SortStableFunc(writes, func(a, b Call) int { return int(a.Start - b.Start) })
	var busy, from, to sim.Time
	for i, c := range writes {
		if i == 0 || c.Start > to {
			busy += to - from
			from, to = c.Start, c.End
		} else {
			to = max(to, c.End)
		}
	}
	busy += to - from
	counted := float64(time.Duration(busy)-time.Duration(len(writes))*base) / float64(per)
	var least, most int
	for i, c := range writes {
		for j, o := range writes {
			if i == j {
				continue
			}
			logged := o.Result == world.OK && (o.Event == world.EvRunCreated || o.LogPos >= 0)
			switch {
			case o.End < c.Start && logged:
				least++
				most++
			case o.Start < c.Start && o.End > c.Start:
				least++
				most++
			case o.Start == c.Start || o.End == c.Start:
				most++ // a tie: it may or may not be ahead
			}
		}
	}
	if counted < float64(least)-0.01 || counted > float64(most)+0.01 {
		t.Fatalf("the writes were charged for %.2f events; want between %d and %d (their logs and the writes in flight at arrival)", counted, least, most)
	}
	// Without the writes in flight the charge would be the logs alone,
	// which is less: the check above can fail.
	logs := 0
	for _, c := range writes {
		for _, o := range writes {
			if o.End < c.Start && o.Result == world.OK && (o.Event == world.EvRunCreated || o.LogPos >= 0) {
				logs++
			}
		}
	}
	if logs >= least {
		t.Fatalf("no write arrived while another of its run was in flight (%d logged, %d with those in flight)", logs, least)
	}
}

// roundRobin is when each job, all of work w cut into n slices and
// arriving at the given instants, ends when limit servers take one slice
// at a time from the front of one queue, a job going to the back after
// each of its slices (at an instant where slices end and jobs arrive, the
// ends queue first). Computed here on its own.
func roundRobin(arrivals []int64, w int64, n, limit int) []int64 {
	order := make([]int, len(arrivals))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(arrivals[a] - arrivals[b]) })
	end := make([]int64, len(arrivals))
	done := make([]int, len(arrivals))
	var queue []int
	type run struct {
		job int
		at  int64
	}
	var running []run
	next := 0
	slice := func(j int) int64 { return w*int64(done[j]+1)/int64(n) - w*int64(done[j])/int64(n) }
	for next < len(order) || len(queue) > 0 || len(running) > 0 {
		// The next instant: an arrival or a slice's end.
		t := int64(math.MaxInt64)
		if next < len(order) {
			t = arrivals[order[next]]
		}
		for _, r := range running {
			t = min(t, r.at)
		}
		// Slices ending at t first, then arrivals at t.
		var still []run
		for _, r := range running {
			if r.at != t {
				still = append(still, r)
				continue
			}
			done[r.job]++
			if done[r.job] == n {
				end[r.job] = t
			} else {
				queue = append(queue, r.job)
			}
		}
		running = still
		for next < len(order) && arrivals[order[next]] == t {
			queue = append(queue, order[next])
			next++
		}
		for len(queue) > 0 && len(running) < limit {
			j := queue[0]
			queue = queue[1:]
			running = append(running, run{j, t + slice(j)})
		}
	}
	return end
}

// With shared writes served round robin, every write's answer is where
// round robin puts it, given when the writes arrived (computed apart from
// the model), for one server and for three, each write's work in three
// slices; a burst's writes answer one after another, not together.
func TestSlicedWritesAnswerWhereRoundRobinPutsThem(t *testing.T) {
	const work = int64(10 * time.Millisecond)
	for _, limit := range []int{1, 3} {
		sc := sharedScenario(limit, true)
		sc.Store.WriteSlices = 3
		r, writes := answeredWrites(t, sc)
		arrivals := make([]int64, len(writes))
		for i, c := range writes {
			arrivals[i] = int64(c.Start)
		}
		want := roundRobin(arrivals, work, 3, limit)
		together := 0
		for i, c := range writes {
			// Within a microsecond: at an instant where a slice ends and
			// a write arrives, which queues first is the kernel's order of
			// the two, and slices differ by a nanosecond of rounding.
			if d := int64(c.End) - want[i]; d > 1000 || d < -1000 {
				t.Fatalf("limit %d: write %d (%v) answered at %v, round robin says %v", limit, i, c.Event, time.Duration(c.End), time.Duration(want[i]))
			}
			for j := range i {
				if writes[j].End == c.End {
					together++
				}
			}
		}
		if limit == 1 && together > 0 {
			t.Fatalf("one server: %d pairs of writes answered at the same instant", together)
		}
		if !r.History.Drained || r.History.FinalRuns[0].Status != world.RunCompleted {
			t.Fatalf("limit %d: run ended %v (drained %v)", limit, r.History.FinalRuns[0].Status, r.History.Drained)
		}
	}
}

// write_slices says how a shared capacity is served; without
// shared_writes it would say nothing, so the scenario is refused, naming it.
func TestWriteSlicesNeedSharedWrites(t *testing.T) {
	sc := DefaultScenario()
	sc.Store.WriteSlices = 2
	if err := sc.Validate(); err == nil || !strings.Contains(err.Error(), "write_slices = 2 needs shared_writes") {
		t.Fatalf("err %v, want write_slices refused without shared_writes", err)
	}
	sc.Store.SharedWrites = true
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
}
