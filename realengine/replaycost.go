package realengine

import (
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/mat"
)

// ReplaySample is one workflow.replay.execute span of a calibration's
// fan-out runs: its time, the entities its workflow code minted (a one
// fan-out run's every replay mints all its steps: turbo's first one before
// it suspends, a last completer's before the run ends) and the events of
// the log it loaded, and how many other replays overlapped it in the
// harness's one Node process.
type ReplaySample struct {
	MS       float64 `json:"ms"`
	Entities int     `json:"entities"`
	Events   int     `json:"events"`
	Overlap  int     `json:"overlap"`
}

// replaySamples are the replay spans of one-fan-out runs of the given width.
func replaySamples(branches int, runs []*RealRun) []ReplaySample {
	var out []ReplaySample
	for _, run := range runs {
		for _, r := range run.Replays {
			out = append(out, ReplaySample{MS: r.MS, Entities: branches, Events: r.Events, Overlap: r.Overlap})
		}
	}
	return out
}

// ReplayCost is what a replay costs the real core, fitted on the replays
// that overlapped no other (the harness runs every delivery in one Node
// process, so overlapping replays share its one thread and each looks
// slower than it is): ms = base + per entity × entities + per event ×
// events, by least squares, each coefficient at least 0 (model.Workflow's
// ReplayBase, ReplayPerEntity, ReplayPerEvent). Solo of Samples overlapped
// none; R2 is the share of the solo times' variance the fit explains;
// OverlappedRatio the median of an overlapped replay's time over what the
// fit gives it (1: sharing cost nothing).
type ReplayCost struct {
	BaseMS      float64 `json:"base_ms"`
	PerEntityMS float64 `json:"per_entity_ms"`
	PerEventMS  float64 `json:"per_event_ms"`
	// Unfitted names the parts the solo replays could not tell apart from
	// the base (every one minted as many entities, or loaded as many
	// events): held at 0.
	Unfitted        []string `json:"unfitted,omitempty"`
	Samples         int      `json:"samples"`
	Solo            int      `json:"solo"`
	R2              float64  `json:"r2"`
	OverlappedRatio float64  `json:"overlapped_ratio,omitempty"`
}

// Durations are the fitted costs as model.Workflow takes them.
func (c ReplayCost) Durations() (base, perEntity, perEvent time.Duration) {
	d := func(ms float64) time.Duration { return time.Duration(math.Round(ms * float64(time.Millisecond))) }
	return d(c.BaseMS), d(c.PerEntityMS), d(c.PerEventMS)
}

// At is the fitted cost of a replay, in ms.
func (c ReplayCost) At(entities, events int) float64 {
	return c.BaseMS + c.PerEntityMS*float64(entities) + c.PerEventMS*float64(events)
}

// FitReplayCost fits the samples' solo replays (ReplayCost).
func FitReplayCost(samples []ReplaySample) ReplayCost {
	out := ReplayCost{Samples: len(samples)}
	var solo []ReplaySample
	for _, s := range samples {
		if s.Overlap == 0 {
			solo = append(solo, s)
		}
	}
	out.Solo = len(solo)
	if len(solo) == 0 {
		return out
	}
	x := func(s ReplaySample) [3]float64 { return [3]float64{1, float64(s.Entities), float64(s.Events)} }
	// Least squares over the regressors still in the fit; one whose
	// coefficient comes out negative is dropped (held at 0) and the rest
	// fitted again, so the costs stay what a replay could cost.
	in := [3]bool{true, true, true}
	for i, name := range [3]string{"", "per_entity", "per_event"} {
		if i > 0 && !varies(solo, func(s ReplaySample) float64 { return x(s)[i] }) {
			in[i] = false
			out.Unfitted = append(out.Unfitted, name)
		}
	}
	var beta [3]float64
	for range 3 {
		beta = leastSquares(solo, x, in)
		neg := -1
		for i := range beta {
			if in[i] && beta[i] < 0 && (neg < 0 || beta[i] < beta[neg]) {
				neg = i
			}
		}
		if neg < 0 {
			break
		}
		in[neg], beta[neg] = false, 0
	}
	out.BaseMS, out.PerEntityMS, out.PerEventMS = beta[0], beta[1], beta[2]
	var mean float64
	for _, s := range solo {
		mean += s.MS
	}
	mean /= float64(len(solo))
	var res, tot float64
	for _, s := range solo {
		d := s.MS - out.At(s.Entities, s.Events)
		res, tot = res+d*d, tot+(s.MS-mean)*(s.MS-mean)
	}
	if tot > 0 {
		out.R2 = 1 - res/tot
	}
	var ratios []float64
	for _, s := range samples {
		if fit := out.At(s.Entities, s.Events); s.Overlap > 0 && fit > 0 {
			ratios = append(ratios, s.MS/fit)
		}
	}
	if len(ratios) > 0 {
		slices.Sort(ratios)
		out.OverlappedRatio = ratios[len(ratios)/2]
	}
	return out
}

// varies reports whether f takes more than one value over the samples.
func varies(samples []ReplaySample, f func(ReplaySample) float64) bool {
	for _, s := range samples[1:] {
		if f(s) != f(samples[0]) {
			return true
		}
	}
	return false
}

// leastSquares fits the samples' times on the regressors in use (gonum's
// QR least squares); a rank-deficient design leaves the fit at 0.
func leastSquares(samples []ReplaySample, x func(ReplaySample) [3]float64, in [3]bool) [3]float64 {
	var idx []int
	for i, ok := range in {
		if ok {
			idx = append(idx, i)
		}
	}
	var beta [3]float64
	if len(idx) == 0 || len(samples) < len(idx) {
		return beta
	}
	a := mat.NewDense(len(samples), len(idx), nil)
	y := mat.NewVecDense(len(samples), nil)
	for r, s := range samples {
		v := x(s)
		for c, i := range idx {
			a.Set(r, c, v[i])
		}
		y.SetVec(r, s.MS)
	}
	var b mat.VecDense
	if err := b.SolveVec(a, y); err != nil {
		return beta
	}
	for c, i := range idx {
		beta[i] = b.AtVec(c)
	}
	return beta
}
