package realengine

import (
	"fmt"
	"testing"

	"github.com/simlab/simlab/model/flow"
	"github.com/simlab/simlab/model/program"
)

// The logs model/flow's runs write, replayed by the real core: each run's
// log before its end (what a fresh invocation would load) must end the
// same way on every pinned core as in simlab, consumed whole or diverged
// at the same event for the same reason. So a run simlab counts corrupted
// is one whose log the real runtime cannot replay either, and a clean one
// is clean for it too. Both views of the storm (the pinned release's
// prefix and the own-writes view before slot ids) and the control; the
// own-writes storms must include corrupted logs, or the test proves
// nothing about them. SIMLAB_REPLAY_CORPUS sets the seeds per shape
// (default 25).
func TestFlowLogsReplayAsTheRealCoreReplays(t *testing.T) {
	replayers := offlineReplayers(t)
	seeds := corpusSize(t)
	for _, c := range []struct {
		program string
		view    flow.View
	}{{"flowstorm", flow.ViewPrefix}, {"flowstorm", flow.ViewOwnWrites}, {"flowcontrol", flow.ViewOwnWrites}} {
		p := program.MustCompile(corpusPrograms[c.program])
		cfg := flow.Defaults(p)
		cfg.View = c.view
		diverged := 0
		for seed := range uint64(seeds) {
			res, err := flow.Run(cfg, seed+1)
			if err != nil {
				t.Fatal(err)
			}
			log := make([]program.Event, len(res.Log))
			for i := range res.Log {
				log[i] = res.Log[i].Event
			}
			log = program.BeforeEnd(log)
			if res.Fresh.Status == program.Diverged {
				diverged++
			}
			for _, o := range replayers {
				compareReplay(t, o, c.program, p, log, fmt.Sprintf("%s, %s view, seed %d", c.program, c.view, seed+1))
			}
		}
		t.Logf("%s, %s view: %d of %d logs diverge", c.program, c.view, diverged, seeds)
		if c.program == "flowstorm" && c.view == flow.ViewOwnWrites && diverged == 0 {
			t.Errorf("%s, own-writes view: no log of %d diverged", c.program, seeds)
		}
	}
}
