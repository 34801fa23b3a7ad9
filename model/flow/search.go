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
}

// caseStream separates a case's draws from its run's.
const caseStream = 0x5eed_ca5e

// DrawCase is seed's case: a program up to 3 deep (program.Random), and
// about half the time a time limit, half the time crashes.
func DrawCase(seed uint64) Case {
	c := sim.NewPCG(seed ^ caseStream)
	k := Case{Program: program.Random(c, 3)}
	k.MaxDuration = []time.Duration{0, 500 * time.Millisecond, 2 * time.Second}[c.Choose(3)]
	k.Crash = []float64{0, 0.05, 0.2}[c.Choose(3)]
	return k
}

// Config is cfg for the case: its program compiled (it is valid by
// construction) and its faults.
func (k Case) Config(cfg Config) Config {
	cfg.Program = program.MustCompile(k.Program)
	cfg.MaxDuration, cfg.Crash = k.MaxDuration, k.Crash
	if cfg.MaxDuration > 0 {
		// Room for the kills and redeliveries a time limit makes.
		cfg.MaxTime = max(cfg.MaxTime, time.Duration(cfg.MaxDeliveries)*(cfg.MaxDuration+cfg.Redeliver))
	}
	return cfg
}
