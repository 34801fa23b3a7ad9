package model

import (
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// Tests of the World as a service (DOMAIN §2): bounded read and write pools
// that make a burst of calls queue, and stale reads within a lag.

const fixedRunsGet = 10 * time.Millisecond

// prologueBurst is a single legacy fan-out of width n with no inline step:
// every branch's delivery starts with a runs.get, all at about once.
func prologueBurst(n, readBound int) Scenario {
	sc := DefaultScenario()
	sc.Name = "prologue-burst"
	sc.Variants = []string{"legacy-producers"}
	sc.Workflow.Fanouts = []int{n}
	sc.Workflow.MaxInline = 0
	sc.Store.RunsGet = sim.Fixed(fixedRunsGet)
	sc.Store.MaxConcurrentReads = readBound
	return sc
}

// p90 is the nearest-rank 90th percentile.
func p90(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*9+9)/10 - 1
	return s[i]
}

// prologueLatencies returns End − Start of the prologue's runs.get calls.
func prologueLatencies(t *testing.T, h *History, want int) []time.Duration {
	t.Helper()
	var out []time.Duration
	for _, c := range h.Calls {
		if c.Op == OpRunsGet && c.Reason == ReasonPrologue {
			out = append(out, c.End.Sub(c.Start))
		}
	}
	if len(out) != want {
		t.Fatalf("%d prologue reads, want one per branch (%d)", len(out), want)
	}
	return out
}

// With a bound of 2 concurrent reads, the p90 latency of the prologue's
// runs.get grows with the burst; unbounded, every read takes its service time.
func TestReadBurstQueuesBehindTheReadBound(t *testing.T) {
	widths := []int{4, 16, 64}
	for seed := uint64(0); seed < 5; seed++ {
		var bounded []time.Duration
		for _, n := range widths {
			sc := prologueBurst(n, 2)
			h := runScenario(t, &sc, seed)
			bounded = append(bounded, p90(prologueLatencies(t, h, n)))
			if h.FinalRuns[0].Status != world.RunCompleted {
				t.Fatalf("seed %d width %d: run %v", seed, n, h.FinalRuns[0].Status)
			}

			sc = prologueBurst(n, 0)
			h = runScenario(t, &sc, seed)
			lat := prologueLatencies(t, h, n)
			if p := p90(lat); p != fixedRunsGet {
				t.Fatalf("seed %d width %d unbounded: p90 %v, want the service time %v", seed, n, p, fixedRunsGet)
			}
			for _, c := range h.Calls {
				if c.Op == OpRunsGet && (c.Served != c.Start || c.End.Sub(c.Served) != fixedRunsGet) {
					t.Fatalf("seed %d width %d unbounded: runs.get start %v served %v end %v", seed, n, c.Start, c.Served, c.End)
				}
			}
		}
		if !(bounded[0] < bounded[1] && bounded[1] < bounded[2]) {
			t.Fatalf("seed %d: p90 of widths %v = %v, want strictly growing", seed, widths, bounded)
		}
		if bounded[2] < 10*fixedRunsGet {
			t.Fatalf("seed %d: p90 of 64 reads through 2 slots is %v; they did not queue", seed, bounded[2])
		}
	}
}

// poolOf says which pool a call waits in.
func poolOf(op Op) string {
	if op == OpEventsCreate {
		return "writes"
	}
	return "reads"
}

// Each pool serves at most its bound at once, in arrival order, and a call's
// service takes its drawn latency from when it is served.
func TestPoolsServeAtMostTheirBoundInArrivalOrder(t *testing.T) {
	sc := prologueBurst(64, 3)
	sc.Store.MaxConcurrentWrites = 2
	sc.Store.EventsWrite = sim.Fixed(3 * time.Millisecond)
	sc.Runs = 3
	sc.RunInterval = 5 * time.Millisecond
	bounds := map[string]int{"reads": 3, "writes": 2}
	for seed := uint64(0); seed < 5; seed++ {
		h := runScenario(t, &sc, seed)
		type edge struct {
			at    sim.Time
			delta int
		}
		edges := map[string][]edge{}
		lastServed := map[string]sim.Time{}
		waited := map[string]int{}
		for i, c := range h.Calls {
			pl := poolOf(c.Op)
			if c.Served < c.Start || c.End < c.Served {
				t.Fatalf("seed %d call %d: start %v served %v end %v", seed, i, c.Start, c.Served, c.End)
			}
			if c.Served > c.Start {
				waited[pl]++
			}
			// Calls are recorded in issue order; a pool serves them in it.
			if c.Served < lastServed[pl] {
				t.Fatalf("seed %d call %d (%v): served at %v, before an earlier arrival served at %v", seed, i, c.Op, c.Served, lastServed[pl])
			}
			lastServed[pl] = c.Served
			if c.Op == OpRunsGet && c.End.Sub(c.Served) != fixedRunsGet {
				t.Fatalf("seed %d call %d: runs.get service %v, want %v", seed, i, c.End.Sub(c.Served), fixedRunsGet)
			}
			edges[pl] = append(edges[pl], edge{c.Served, +1}, edge{c.End, -1})
		}
		for pl, es := range edges {
			// An answer frees its slot before the next call is served at
			// the same instant.
			sort.Slice(es, func(i, j int) bool {
				if es[i].at != es[j].at {
					return es[i].at < es[j].at
				}
				return es[i].delta < es[j].delta
			})
			busy, peak := 0, 0
			for _, e := range es {
				busy += e.delta
				peak = max(peak, busy)
			}
			if peak > bounds[pl] {
				t.Fatalf("seed %d: %s pool served %d calls at once, bound %d", seed, pl, peak, bounds[pl])
			}
			if peak < bounds[pl] || waited[pl] == 0 {
				t.Fatalf("seed %d: %s pool peaked at %d with %d waits: the burst never filled it", seed, pl, peak, waited[pl])
			}
		}
	}
}

// statusAt is the run's status as the log says it was at t: with inclusive,
// counting changes made at t itself.
func statusAt(h *History, run world.RunID, t sim.Time, inclusive bool) world.RunStatus {
	st := world.RunPending
	var at sim.Time = -1
	for _, a := range h.Accepted {
		if a.Run != run || a.Step != world.NoStep || a.At > t || (!inclusive && a.At == t) || a.At < at {
			continue
		}
		switch a.Type {
		case world.EvRunCreated:
			st = world.RunPending
		case world.EvRunStarted:
			st = world.RunRunning
		case world.EvRunCompleted:
			st = world.RunCompleted
		case world.EvRunFailed:
			st = world.RunFailed
		case world.EvRunCancelled:
			st = world.RunCancelled
		default:
			continue
		}
		at = a.At
	}
	return st
}

// statusesWithin lists the statuses the run had at some instant of [from, to].
func statusesWithin(h *History, run world.RunID, from, to sim.Time) []world.RunStatus {
	out := []world.RunStatus{statusAt(h, run, from, true)}
	for _, a := range h.Accepted {
		if a.Run == run && a.Step == world.NoStep && a.At > from && a.At <= to {
			out = append(out, statusAt(h, run, a.At, true))
		}
	}
	return out
}

// older orders run statuses along their only path: pending, running, terminal.
func older(a, b world.RunStatus) bool {
	rank := func(s world.RunStatus) int { return min(int(s), int(world.RunCompleted)) }
	return rank(a) < rank(b)
}

func staleScenario(world string, lag time.Duration, rate float64) Scenario {
	sc := DefaultScenario()
	sc.Name = "stale"
	sc.World = world
	sc.Store = Profiles()[world]
	sc.Store.StaleLag = lag
	sc.Runs = 4
	sc.RunInterval = 30 * time.Millisecond
	sc.Workflow.Fanouts = []int{8, 4}
	// Each fan-out takes about a second, so the first fan-out's lazy read
	// comes within the lag of run_started and the second's beyond it.
	sc.Workflow.Body = sim.Fixed(time.Second)
	sc.Faults.StaleRead = rate
	return sc
}

// A stale runs.get returns a status older than the run's at the read, but
// one the run had within the lag (so a read long after run_started is
// fresh); with the fault off no read is stale.
func TestStaleReadsReturnAnOlderStatusWithinTheLag(t *testing.T) {
	for _, name := range []string{"world-local", "world-vercel"} {
		t.Run(name, func(t *testing.T) {
			const lag = 1500 * time.Millisecond
			sc := staleScenario(name, lag, 1)
			stale := 0
			for seed := uint64(0); seed < 20; seed++ {
				r, err := Run(&sc, sim.NewPCG(seed), Options{Record: true})
				if err != nil {
					t.Fatal(err)
				}
				h := r.History
				n := 0
				for i, c := range h.Calls {
					if c.Op != OpRunsGet {
						continue
					}
					before, at := statusAt(h, c.Run, c.Served, false), statusAt(h, c.Run, c.Served, true)
					if c.Stale {
						n++
						if !older(c.StatusRead, before) && !older(c.StatusRead, at) {
							t.Fatalf("seed %d call %d: stale read %v, run was %v at %v", seed, i, c.StatusRead, at, c.Served)
						}
					} else if c.StatusRead != before && c.StatusRead != at {
						t.Fatalf("seed %d call %d: fresh read %v, run was %v at %v", seed, i, c.StatusRead, at, c.Served)
					}
					if !slices.Contains(statusesWithin(h, c.Run, c.Served-sim.Time(lag), c.Served), c.StatusRead) {
						t.Fatalf("seed %d call %d: read %v at %v, a status the run did not have within the lag %v", seed, i, c.StatusRead, c.Served, lag)
					}
				}
				if n != r.Counts.StaleReads {
					t.Fatalf("seed %d: %d stale calls, %d counted", seed, n, r.Counts.StaleReads)
				}
				stale += n
			}
			if stale == 0 {
				t.Fatal("no stale read in 20 seeds with stale_read = 1")
			}
		})
	}
	for _, name := range []string{"world-local", "world-vercel"} {
		sc := staleScenario(name, time.Hour, 0)
		for seed := uint64(0); seed < 20; seed++ {
			r, err := Run(&sc, sim.NewPCG(seed), Options{Record: true})
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range r.History.Calls {
				if c.Stale {
					t.Fatalf("%s seed %d: call %d stale with stale_read = 0", name, seed, i)
				}
			}
			for _, f := range r.History.Faults {
				if f.Kind == FaultStaleRead {
					t.Fatalf("%s seed %d: stale-read fault with stale_read = 0", name, seed)
				}
			}
			if r.Counts.StaleReads != 0 {
				t.Fatalf("%s seed %d: %d stale reads counted", name, seed, r.Counts.StaleReads)
			}
		}
	}
}

// A lag of 0 never serves an old status, whatever the fault's rate.
func TestZeroStaleLagNeverServesAnOldStatus(t *testing.T) {
	sc := staleScenario("world-local", 0, 1)
	for seed := uint64(0); seed < 20; seed++ {
		r, err := Run(&sc, sim.NewPCG(seed), Options{Record: true})
		if err != nil {
			t.Fatal(err)
		}
		if r.Counts.StaleReads != 0 {
			t.Fatalf("seed %d: %d stale reads with stale_lag 0", seed, r.Counts.StaleReads)
		}
	}
}
