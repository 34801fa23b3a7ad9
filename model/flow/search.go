package flow

import (
	"time"

	"github.com/simlab/simlab/model/program"
	"github.com/simlab/simlab/sim"
)

// Case is one case of a search over workflow shapes and faults: a program
// and the faults its runs meet, drawn from a seed (DrawCase). The run that
// follows draws its own schedule from the same seed; the case's draws come
// from a stream of their own, so changing the model's draws leaves the
// programs a search visits as they were.
type Case struct {
	Program []program.Node
	// MaxDuration is the platform's time limit (0: none), Crash the chance
	// a process dies between a claim and its body.
	MaxDuration time.Duration
	Crash       float64
	// Resumes is the outside driver of the program's hooks (DrawHookCase).
	Resumes Resumes
}

// caseStream separates a case's draws from its run's.
const caseStream = 0x5eed_ca5e

// DrawCase is seed's case: a program up to 3 deep (program.Random), and
// about half the time a time limit, half the time crashes.
func DrawCase(seed uint64) Case {
	c := sim.NewPCG(seed ^ caseStream)
	k := Case{Program: program.Random(c, 3)}
	k.drawFaults(c)
	return k
}

// drawFaults draws the case's time limit (none, 500ms or 2s) and crash
// rate (0, 5 % or 20 %).
func (k *Case) drawFaults(c sim.Chooser) {
	k.MaxDuration = []time.Duration{0, 500 * time.Millisecond, 2 * time.Second}[c.Choose(3)]
	k.Crash = []float64{0, 0.05, 0.2}[c.Choose(3)]
}

// hookStream separates a hook case's draws from DrawCase's, so the cases
// of one seed differ between the two searches but each stays as it was.
const hookStream = 0x5eed_400c

// DrawHookCase is seed's case of the search over programs with hooks:
// program.RandomWithHooks (about half of them create a hook), DrawCase's
// faults, and a driver for the hooks: a tick every 20, 50 or 150 ms for
// 3 s resuming one hook, drawn, or every one, in bursts of 1 to 3 over 0 or
// 5 ms, and half the time at each wait's deadline too.
func DrawHookCase(seed uint64) Case {
	c := sim.NewPCG(seed ^ hookStream)
	k := Case{Program: program.RandomWithHooks(c, 3)}
	k.drawFaults(c)
	every := []time.Duration{20, 50, 150}[c.Choose(3)] * time.Millisecond
	k.Resumes = Resumes{Every: every, Count: int(3 * time.Second / every), One: c.Choose(2) == 1, Burst: 1 + c.Choose(3),
		Spread: []time.Duration{0, 5 * time.Millisecond}[c.Choose(2)], AtDeadlines: c.Choose(2) == 1}
	if !program.MustCompile(k.Program).UsesHooks() {
		k.Resumes = Resumes{}
	}
	return k
}

// Config is cfg for the case: its program compiled (it is valid by
// construction) and its faults.
func (k Case) Config(cfg Config) Config {
	cfg.Program = program.MustCompile(k.Program)
	cfg.MaxDuration, cfg.Crash, cfg.Resumes = k.MaxDuration, k.Crash, k.Resumes
	if cfg.MaxDuration > 0 {
		// Room for the kills and redeliveries a time limit makes.
		cfg.MaxTime = max(cfg.MaxTime, time.Duration(cfg.MaxDeliveries)*(cfg.MaxDuration+cfg.Redeliver))
	}
	return cfg
}
