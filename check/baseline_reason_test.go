package check

import (
	"strings"
	"testing"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/seeds"
	"github.com/simlab/simlab/properties"
)

// A baseline's reason comes from the finding's own signature: a program's
// run ended twice by two invocations is recorded as that, not as the
// fan-out engine's concurrent last completers; a fan-out scenario's double
// end keeps the fan-out engine's reason.
func TestBaselineReasonsComeFromTheFindingsSignature(t *testing.T) {
	const stte = "single-terminal-event"
	reasonOf := func(sc model.Scenario, n int) string {
		t.Helper()
		rep, err := Sweep(SweepConfig{Scenario: sc, Seeds: seeds.Count(uint64(n)), Props: properties.All()})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Violations[stte] == 0 {
			t.Fatalf("scenario %s: no run of %d ended twice; the test needs one", sc.Name, n)
		}
		var b Baseline
		var checked []uint64
		for s := range seeds.Count(uint64(n)).Seeds(seeds.Shard{}) {
			checked = append(checked, s)
		}
		if err := b.Record(sc.Name, nil, nil, checked, rep); err != nil {
			t.Fatal(err)
		}
		for _, f := range b.Entries[0].Findings {
			if f.Property == stte {
				return f.Reason
			}
		}
		t.Fatalf("scenario %s: no single-terminal-event finding recorded", sc.Name)
		return ""
	}
	if r := reasonOf(builtin(t, "hook-storm"), 200); !strings.HasPrefix(r, "two invocations of one run") {
		t.Errorf("hook-storm's double end recorded as %q; want the program's two invocations", r)
	}
	// swarm's seed 293: a client's cancel and the World's run_failed.
	if r := reasonOf(builtin(t, "swarm"), 300); r != KnownReason(stte) {
		t.Errorf("swarm's double end recorded as %q; want the fan-out engine's own reason %q", r, KnownReason(stte))
	}
}
