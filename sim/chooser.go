package sim

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"time"
)

// Chooser is the only source of nondeterminism in a run. Choose returns a
// value in [0, n); n must be at least 1. Choice 0 always means the plain
// outcome (no fault, first in order, base latency) so that a shrinker that
// drives choices toward 0 drives a failing schedule toward its simplest story.
type Chooser interface {
	Choose(n int) int
}

// PCG is a Chooser seeded from one integer: one seed, one history.
type PCG struct {
	src rand.PCG
}

// NewPCG returns a Chooser whose whole sequence follows from seed.
func NewPCG(seed uint64) *PCG {
	p := &PCG{}
	p.src.Seed(seed, seed^0x9e3779b97f4a7c15)
	return p
}

// Reset restarts p on seed's sequence, as NewPCG(seed) would begin it: a
// worker reuses one chooser from seed to seed.
func (p *PCG) Reset(seed uint64) { p.src.Seed(seed, seed^0x9e3779b97f4a7c15) }

// Choose returns a uniformly distributed value in [0, n).
func (p *PCG) Choose(n int) int {
	if n <= 0 {
		panic(fmt.Sprintf("sim: Choose(%d): n must be at least 1", n))
	}
	if n == 1 {
		return 0
	}
	// Lemire's multiply-shift with rejection: unbiased and division-free in
	// the common case.
	bound := uint64(n)
	for {
		hi, lo := bits.Mul64(p.src.Uint64(), bound)
		if lo < bound {
			threshold := -bound % bound
			if lo < threshold {
				continue
			}
		}
		return int(hi)
	}
}

// Choice is one recorded decision: the range it was drawn from and the value.
type Choice struct {
	N int `json:"n"`
	V int `json:"v"`
}

// Recorder wraps a Chooser and keeps every decision, so a run can be saved
// and replayed later without its seed (a seed stops reproducing once the code
// changes; a recorded schedule degrades gracefully).
type Recorder struct {
	Inner   Chooser
	Choices []Choice
}

// Choose draws from the inner Chooser and records the draw.
func (r *Recorder) Choose(n int) int {
	v := r.Inner.Choose(n)
	r.Choices = append(r.Choices, Choice{N: n, V: v})
	return v
}

// Replayer plays a recorded sequence of choices back. Past the end of the
// recording it answers 0, the plain outcome. A recorded value that does not
// fit the range asked now (the code changed since the recording) also
// answers 0 and is counted in Mismatches.
type Replayer struct {
	choices    []Choice
	pos        int
	Mismatches int // draws whose range differed from the recording
	Exhausted  int // draws made after the recording ran out
}

// NewReplayer returns a Replayer over choices.
func NewReplayer(choices []Choice) *Replayer { return &Replayer{choices: choices} }

// Choose returns the next recorded value.
func (r *Replayer) Choose(n int) int {
	if n <= 0 {
		panic(fmt.Sprintf("sim: Choose(%d): n must be at least 1", n))
	}
	if r.pos >= len(r.choices) {
		r.Exhausted++
		return 0
	}
	c := r.choices[r.pos]
	r.pos++
	if c.N != n {
		r.Mismatches++
	}
	if c.V < 0 || c.V >= n {
		return 0
	}
	return c.V
}

// Used reports how many recorded choices have been consumed.
func (r *Replayer) Used() int { return r.pos }

// chanceResolution is the granularity of Chance: probabilities are rounded
// to multiples of 1/65536.
const chanceResolution = 1 << 16

// Chance reports true with probability p (under uniform choices). Choice 0
// is always false (the plain outcome: the fault does not fire). p ≤ 0 and p ≥ 1 make no
// draw at all, so switching a fault off does not shift the rest of the run's
// choices more than it must.
func Chance(c Chooser, p float64) bool {
	if p <= 0 {
		return false
	}
	if p >= 1 {
		return true
	}
	k := int(p*chanceResolution + 0.5)
	if k < 1 {
		k = 1
	}
	// The smallest non-zero choices fire. Uniform choices (PCG) fire with
	// probability k/65536 ≈ p; a searcher such as rapid, which favours small
	// values, fires faults more often than p, which is what a search for
	// bugs wants, and still shrinks every fault away by driving it to 0.
	x := c.Choose(chanceResolution)
	return x != 0 && x <= k
}

// PickTie picks one of n equally placed candidates (for example messages that
// became visible at the same instant). Choice 0 is the first candidate.
func PickTie(c Chooser, n int) int {
	if n <= 1 {
		return 0
	}
	return c.Choose(n)
}

// Dist is a latency distribution given by its quantiles; between them the
// inverse CDF is linear. Choice 0 draws Min, the base latency.
type Dist struct {
	Min time.Duration `json:"min" yaml:"min"`
	P50 time.Duration `json:"p50" yaml:"p50"`
	P90 time.Duration `json:"p90" yaml:"p90"`
	P99 time.Duration `json:"p99" yaml:"p99"`
	Max time.Duration `json:"max" yaml:"max"`
}

// Scaled returns d with every quantile multiplied by k, rounded to the
// nanosecond: the same shape, k times as slow.
func (d Dist) Scaled(k float64) Dist {
	s := func(x time.Duration) time.Duration { return time.Duration(math.Round(float64(x) * k)) }
	return Dist{Min: s(d.Min), P50: s(d.P50), P90: s(d.P90), P99: s(d.P99), Max: s(d.Max)}
}

// Fixed returns a distribution that always draws d (and makes no choice).
func Fixed(d time.Duration) Dist { return Dist{d, d, d, d, d} }

// Validate checks that the quantiles are non-negative and non-decreasing and
// names the first that is not.
func (d Dist) Validate() error {
	names := [...]string{"min", "p50", "p90", "p99", "max"}
	qs := [...]time.Duration{d.Min, d.P50, d.P90, d.P99, d.Max}
	if d.Min < 0 {
		return fmt.Errorf("min = %v: must not be negative", d.Min)
	}
	for i := 1; i < len(qs); i++ {
		if qs[i] < qs[i-1] {
			return fmt.Errorf("%s = %v: must be at least %s (%v)", names[i], qs[i], names[i-1], qs[i-1])
		}
	}
	return nil
}

// distResolution is the number of equally likely quantiles a draw picks from.
const distResolution = 1000

// Draw returns one duration from d.
func (d Dist) Draw(c Chooser) time.Duration {
	if d.Min == d.Max {
		return d.Min
	}
	return d.Quantile(float64(c.Choose(distResolution)) / distResolution)
}

// Quantile returns the duration at quantile q in [0, 1].
func (d Dist) Quantile(q float64) time.Duration {
	points := [...]struct {
		q float64
		v time.Duration
	}{{0, d.Min}, {0.5, d.P50}, {0.9, d.P90}, {0.99, d.P99}, {1, d.Max}}
	if q <= 0 {
		return d.Min
	}
	for i := 1; i < len(points); i++ {
		if q <= points[i].q {
			lo, hi := points[i-1], points[i]
			frac := (q - lo.q) / (hi.q - lo.q)
			return lo.v + time.Duration(math.Round(frac*float64(hi.v-lo.v)))
		}
	}
	return d.Max
}
