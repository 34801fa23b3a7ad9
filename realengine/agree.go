package realengine

import "math"

// Agreement is whether one simlab row agrees with the real row of its
// width and prologue on the two counts the protocol's headline rests on,
// on the corruption both sides count (runs that ended more than once,
// runs whose log could not be replayed), and on who ends the run (a queued
// last completer or the orchestrator):
// lazy reads per fan-out, simlab's mean inside the real runs' range (their
// fan-outs' fewest to most), and the share of fan-outs with concurrent
// last completers, simlab's share inside the real share's 95 % interval
// (Clopper-Pearson, from the real fan-outs counted): a handful of real runs
// that all had none still admit a share that is small but not zero.
type Agreement struct {
	Branches int    `json:"branches"`
	Prologue string `json:"prologue"`
	Core     string `json:"core"`
	// Lazy is simlab's mean, LazyMin..LazyMax the real runs' range.
	Lazy       float64 `json:"lazy_per_fanout"`
	LazyMin    float64 `json:"real_lazy_min"`
	LazyMax    float64 `json:"real_lazy_max"`
	LazyAgrees bool    `json:"lazy_agrees"`
	// Concurrent is simlab's share, ConcurrentLow..ConcurrentHigh the real
	// share's interval, from RealConcurrent of RealFanouts.
	Concurrent       float64 `json:"concurrent_share"`
	ConcurrentLow    float64 `json:"real_concurrent_low"`
	ConcurrentHigh   float64 `json:"real_concurrent_high"`
	RealConcurrent   int     `json:"real_concurrent_fanouts"`
	RealFanouts      int     `json:"real_fanouts"`
	ConcurrentAgrees bool    `json:"concurrent_agrees"`
	// Ended is simlab's share of runs whose log holds more than one
	// accepted terminal event, EndedLow..EndedHigh the real share's
	// interval, from RealEnded of RealRuns; Corrupted likewise for runs
	// failed CORRUPTED_EVENT_LOG or REPLAY_DIVERGENCE, or whose log
	// simlab's replay cannot consume.
	Ended          float64 `json:"ended_twice_share"`
	EndedLow       float64 `json:"real_ended_twice_low"`
	EndedHigh      float64 `json:"real_ended_twice_high"`
	RealEnded      int     `json:"real_ended_twice"`
	RealRuns       int     `json:"real_runs"`
	EndedAgrees    bool    `json:"ended_twice_agrees"`
	Corrupted      float64 `json:"corrupted_share"`
	CorruptedLow   float64 `json:"real_corrupted_low"`
	CorruptedHigh  float64 `json:"real_corrupted_high"`
	RealCorrupted  int     `json:"real_corrupted"`
	CorruptedAgree bool    `json:"corrupted_agrees"`
	// EndedByStep is simlab's share of runs whose first accepted end a
	// step message's delivery wrote (a queued last completer, not the
	// orchestrator), EndedByStepLow..High the real share's interval, from
	// RealEndedByStep of RealRuns.
	EndedByStep       float64 `json:"ended_by_step_share"`
	EndedByStepLow    float64 `json:"real_ended_by_step_low"`
	EndedByStepHigh   float64 `json:"real_ended_by_step_high"`
	RealEndedByStep   int     `json:"real_ended_by_step"`
	EndedByStepAgrees bool    `json:"ended_by_step_agrees"`
}

// corrupted counts a row's runs that failed for their log or whose log
// simlab's replay cannot consume.
func corrupted(r Row) int { return max(r.RunsCorrupted, r.RunsUnreplayable) }

// Agreements pairs every simlab row with each real row of its width and
// prologue, in the rows' order.
func Agreements(rows []Row) []Agreement {
	var out []Agreement
	for _, real := range rows {
		if real.Engine != "real" || real.Fanouts == 0 {
			continue
		}
		for _, sim := range rows {
			if sim.Engine != "simlab" || sim.Branches != real.Branches || sim.Prologue != real.Prologue {
				continue
			}
			lo, hi := ShareInterval(real.ConcurrentFanouts, real.Fanouts, 0.05)
			endLo, endHi := ShareInterval(real.RunsMultiTerminal, real.RunsCounted, 0.05)
			corLo, corHi := ShareInterval(corrupted(real), real.RunsCounted, 0.05)
			ended, corr := ratio(sim.RunsMultiTerminal, sim.RunsCounted), ratio(corrupted(sim), sim.RunsCounted)
			byLo, byHi := ShareInterval(real.RunsEndedByStep, real.RunsCounted, 0.05)
			bySim := ratio(sim.RunsEndedByStep, sim.RunsCounted)
			out = append(out, Agreement{
				EndedByStep: bySim, EndedByStepLow: byLo, EndedByStepHigh: byHi, RealEndedByStep: real.RunsEndedByStep,
				EndedByStepAgrees: bySim >= byLo && bySim <= byHi,
				Ended:             ended, EndedLow: endLo, EndedHigh: endHi, RealEnded: real.RunsMultiTerminal, RealRuns: real.RunsCounted,
				EndedAgrees: ended >= endLo && ended <= endHi,
				Corrupted:   corr, CorruptedLow: corLo, CorruptedHigh: corHi, RealCorrupted: corrupted(real),
				CorruptedAgree: corr >= corLo && corr <= corHi, Branches: real.Branches, Prologue: real.Prologue, Core: real.Core,
				Lazy: sim.LazyPerFanout, LazyMin: real.LazyPerFanoutMin, LazyMax: real.LazyPerFanoutMax,
				LazyAgrees: sim.LazyPerFanout >= real.LazyPerFanoutMin && sim.LazyPerFanout <= real.LazyPerFanoutMax,
				Concurrent: sim.ConcurrentLastCompleters, ConcurrentLow: lo, ConcurrentHigh: hi,
				RealConcurrent: real.ConcurrentFanouts, RealFanouts: real.Fanouts,
				ConcurrentAgrees: sim.ConcurrentLastCompleters >= lo && sim.ConcurrentLastCompleters <= hi})
		}
	}
	return out
}

// ShareInterval is the exact (Clopper-Pearson) interval of confidence
// 1 − alpha for a share seen k times in n: the shares p under which seeing
// k or fewer, and k or more, are each at least alpha/2 likely.
func ShareInterval(k, n int, alpha float64) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	lo, hi = 0, 1
	if k > 0 {
		// P(X ≥ k | p) grows with p: the p where it reaches alpha/2.
		lo = bisect(func(p float64) bool { return 1-binomCDF(k-1, n, p) < alpha/2 })
	}
	if k < n {
		// P(X ≤ k | p) falls with p: the p where it falls to alpha/2.
		hi = bisect(func(p float64) bool { return binomCDF(k, n, p) > alpha/2 })
	}
	return lo, hi
}

// bisect is the p in [0, 1] where below(p) turns from true to false.
func bisect(below func(float64) bool) float64 {
	a, b := 0.0, 1.0
	for range 60 {
		m := (a + b) / 2
		if below(m) {
			a = m
		} else {
			b = m
		}
	}
	return (a + b) / 2
}

// binomCDF is P(X ≤ k) for X binomial with n trials of chance p.
func binomCDF(k, n int, p float64) float64 {
	if k < 0 {
		return 0
	}
	if k >= n || p <= 0 {
		return 1
	}
	if p >= 1 {
		return 0
	}
	lgN, _ := math.Lgamma(float64(n + 1))
	var sum float64
	for i := 0; i <= k; i++ {
		lgI, _ := math.Lgamma(float64(i + 1))
		lgR, _ := math.Lgamma(float64(n - i + 1))
		sum += math.Exp(lgN - lgI - lgR + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
	}
	return math.Min(1, sum)
}
