package flow

import (
	"time"

	"github.com/simlab/simlab/model/program"
	"github.com/simlab/simlab/sim"
)

// Case is one case of a search over workflow shapes and faults: a program,
// the faults its runs meet and the runtime's knobs they run under, drawn
// from a seed (DrawCase). The run that follows draws its own schedule from
// the same seed; the case's draws come from a stream of their own, so
// changing the model's draws leaves the programs a search visits as they
// were.
type Case struct {
	Program []program.Node
	// MaxDuration is the platform's time limit (0: none), Crash the chance
	// a process dies between a claim and its body.
	MaxDuration time.Duration
	Crash       float64
	// Resumes is the outside driver of the program's hooks (DrawHookCase).
	Resumes Resumes
	// MaxInline is core's MAX_INLINE_STEPS for the case's runs (0: the
	// config's own), SequentialReplays the runtime's
	// WORKFLOW_SEQUENTIAL_REPLAYS.
	MaxInline         int
	SequentialReplays bool
}

// caseStream separates a case's draws from its run's.
const caseStream = 0x5eed_ca5e

// DrawCase is seed's case: a program up to 3 deep (program.Random), about
// half the time a time limit, half the time crashes, and the runtime's
// knobs (drawKnobs).
func DrawCase(seed uint64) Case {
	c := sim.NewPCG(seed ^ caseStream)
	k := Case{Program: program.Random(c, 3)}
	k.drawFaults(c)
	k.drawKnobs(c)
	return k
}

// drawFaults draws the case's time limit (none, 500ms or 2s) and crash
// rate (0, 5 % or 20 %).
func (k *Case) drawFaults(c sim.Chooser) {
	k.MaxDuration = []time.Duration{0, 500 * time.Millisecond, 2 * time.Second}[c.Choose(3)]
	k.Crash = []float64{0, 0.05, 0.2}[c.Choose(3)]
}

// SearchMaxInline are the max_inline values a case draws from, uniformly:
// core's default (3) three times in ten, 1 or 2 four times, 4, 8 or 16
// (the top of core's range) once each.
var SearchMaxInline = []int{1, 1, 2, 2, 3, 3, 3, 4, 8, 16}

// drawKnobs draws the runtime's knobs: max_inline (SearchMaxInline) and,
// one case in four, sequential replays. They are drawn after the program,
// faults and driver, so those stay what they were before the knobs were.
func (k *Case) drawKnobs(c sim.Chooser) {
	k.MaxInline = SearchMaxInline[c.Choose(len(SearchMaxInline))]
	k.SequentialReplays = c.Choose(4) == 0
}

// hookStream separates a hook case's draws from DrawCase's, so the cases
// of one seed differ between the two searches but each stays as it was.
const hookStream = 0x5eed_400c

// DrawHookCase is seed's case of the search over programs with hooks:
// program.RandomWithHooks (about half of them create a hook), DrawCase's
// faults, a driver for the hooks and the runtime's knobs (drawKnobs). The
// driver, half the time: a tick every 20, 50 or 150 ms for 3 s resuming
// one hook, drawn, or every one, in bursts of 1 to 3 over 0 or 5 ms, and
// half the time at each wait's deadline too. The other half it is one of
// drawDriver's other patterns: a single burst, a single resume, the
// deadlines alone, or another count and cadence.
func DrawHookCase(seed uint64) Case {
	c := sim.NewPCG(seed ^ hookStream)
	k := Case{Program: program.RandomWithHooks(c, 3)}
	k.drawFaults(c)
	every := []time.Duration{20, 50, 150}[c.Choose(3)] * time.Millisecond
	k.Resumes = Resumes{Every: every, Count: int(3 * time.Second / every), One: c.Choose(2) == 1, Burst: 1 + c.Choose(3),
		Spread: []time.Duration{0, 5 * time.Millisecond}[c.Choose(2)], AtDeadlines: c.Choose(2) == 1}
	k.drawDriver(c)
	k.drawKnobs(c)
	if !program.MustCompile(k.Program).UsesHooks() {
		k.Resumes = Resumes{}
	}
	return k
}

// drawDriver turns the cadence driver DrawHookCase drew into another
// pattern half the time, each one case in eight: a single tick 100ms, 500ms
// or 1.5s in, a burst of 4, 8 or 16 resumes of every live hook (over the
// spread drawn); a single resume of one hook at such a tick; resumes at
// each wait's deadline only; or 2, 5 or 20 ticks every 5, 300 or 1000 ms.
// The other half keeps the cadence.
func (k *Case) drawDriver(c sim.Chooser) {
	r := &k.Resumes
	switch c.Choose(8) {
	case 0: // a burst and nothing else
		r.Every = []time.Duration{100, 500, 1500}[c.Choose(3)] * time.Millisecond
		r.Count, r.Burst, r.One, r.AtDeadlines = 1, []int{4, 8, 16}[c.Choose(3)], false, false
	case 1: // a single resume
		*r = Resumes{Every: []time.Duration{100, 500, 1500}[c.Choose(3)] * time.Millisecond, Count: 1, One: true}
	case 2: // at the deadlines only
		r.Every, r.Count, r.AtDeadlines = 0, 0, true
	case 3: // another count and cadence
		r.Every = []time.Duration{5, 300, 1000}[c.Choose(3)] * time.Millisecond
		r.Count = []int{2, 5, 20}[c.Choose(3)]
	}
}

// Config is cfg for the case: its program compiled (it is valid by
// construction), its faults, its driver and its knobs (a case's MaxInline
// of 0 keeps cfg's; sequential replays retry after cfg's SequentialRetry,
// or Defaults' when cfg sets none).
func (k Case) Config(cfg Config) Config {
	cfg.Program = program.MustCompile(k.Program)
	cfg.MaxDuration, cfg.Crash, cfg.Resumes = k.MaxDuration, k.Crash, k.Resumes
	if k.MaxInline > 0 {
		cfg.MaxInline = k.MaxInline
	}
	cfg.SequentialReplays = k.SequentialReplays
	if cfg.SequentialReplays && cfg.SequentialRetry == 0 {
		cfg.SequentialRetry = Defaults(nil).SequentialRetry
	}
	if cfg.MaxDuration > 0 {
		// Room for the kills and redeliveries a time limit makes.
		cfg.MaxTime = max(cfg.MaxTime, time.Duration(cfg.MaxDeliveries)*(cfg.MaxDuration+cfg.Redeliver))
	}
	return cfg
}
