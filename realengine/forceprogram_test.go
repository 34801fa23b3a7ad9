package realengine

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/model"
)

// shrunkClockStorm is simlab check's shrunk replayable-log counterexample
// of clock-storm (testdata/force/clock-storm-shrunk.yaml, seed 34): the
// start invocation reads 991 ms at a 1 s deadline and mints an extra step;
// its own inline claims, stamped past 1 s, land below that write.
func shrunkClockStorm(t *testing.T) model.Scenario {
	t.Helper()
	sc, err := model.LoadScenario("testdata/force/clock-storm-shrunk.yaml", os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// The forcing is derived from simlab's own run, not written by hand: the
// stale write's call (an inline step's lazy claim: one step_started call)
// from its statement and entity, held until the claim whose stamp a fresh
// replay reads is answered, that one held until the run's clock is past
// the dilated deadline; the dilation the least that puts the writer's
// read 150 ms short of it.
func TestPrepareProgramForceDerivesTheHolds(t *testing.T) {
	core, err := CoreByVersion(Pinned.DefaultCore)
	if err != nil {
		t.Fatal(err)
	}
	f, err := PrepareProgramForce(shrunkClockStorm(t), 34, core, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	c := f.Forcing.Clock
	if c == nil || c.Deadline != time.Second || c.Stale >= c.Deadline || c.Fresh < c.Deadline {
		t.Fatalf("clock %+v: want the writer short of 1s and a fresh replay past it", c)
	}
	if want := int((forceMargin + c.StaleGap() - 1) / c.StaleGap()); f.Dilation != want {
		t.Errorf("dilation %d, want %d (150ms over a %v gap)", f.Dilation, want, c.StaleGap())
	}
	if len(f.Holds) != 2 {
		t.Fatalf("holds %v: want the clock's and the stale write's", f.Holds)
	}
	clock, stale := f.Holds[0], f.Holds[1]
	fresh := f.Forcing.Clock.FreshAt
	if clock.Until.Kind != "elapsed" || clock.Until.MS != (time.Duration(f.Dilation)*time.Second+forceMargin/5).Milliseconds() {
		t.Errorf("clock hold %v: want it held past the dilated deadline", clock)
	}
	if stale.What.Event != "step_started" || stale.What.Statement == nil || *stale.What.Statement != f.Forcing.StaleNode ||
		stale.What.Ordinal == nil || *stale.What.Ordinal != f.Forcing.Stale.Ordinal {
		t.Errorf("stale hold %v: want the lazy claim of entity #%d from statement %d", stale, f.Forcing.Stale.Ordinal, f.Forcing.StaleNode)
	}
	if stale.Until.Kind != "answer" || stale.Until.Ordinal == nil || clock.What.Ordinal == nil || *stale.Until.Ordinal != *clock.What.Ordinal || fresh < 0 {
		t.Errorf("stale hold waits for %v, clock hold holds %v: want the same entity", stale.Until, clock.What)
	}
	for _, bad := range []struct {
		seed     uint64
		dilation int
		want     string
	}{{3, 0, "consumes it"}, {34, 41, "--dilate 41"}} {
		if _, err := PrepareProgramForce(shrunkClockStorm(t), bad.seed, core, bad.dilation, 1); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("seed %d, dilation %d: %v, want an error naming %q", bad.seed, bad.dilation, err, bad.want)
		}
	}
}

// Forced on core beta.52, simlab's shrunk clock-storm story happens as
// simlab tells it: core's own replay of the real log stops at the same
// write, and the run completes, its writer going on in its retained VM.
// With the retained VM off on both sides (workflow.cold_replays, core's
// WORKFLOW_RETAINED_VM=0), simlab says the run fails CORRUPTED_EVENT_LOG,
// and the real run does.
func TestForcedClockStormStoryHappensOnTheRealCore(t *testing.T) {
	r := prepared(t)
	core := pinnedCore(t, Pinned.DefaultCore)
	for _, cold := range []bool{false, true} {
		sc := shrunkClockStorm(t)
		sc.Workflow.ColdReplays = cold
		f, err := PrepareProgramForce(sc, 34, core, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		err = r.ForceProgram(ctx, f, []Core{core}, 3*time.Minute)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		oc := f.Cores[0]
		want := "completed"
		if cold {
			want = "corrupted"
		}
		if !oc.Expect || oc.ExpectEnd != want {
			t.Errorf("cold replays %v: simlab expects divergence %v, end %s; want the divergence, end %s", cold, oc.Expect, oc.ExpectEnd, want)
		}
		for i, run := range oc.Runs {
			if !run.Reproduced || run.End != want {
				t.Errorf("cold replays %v, run %d: ended %s, core's replay %s, held %s: want %s at simlab's write", cold, i+1, run.End, run.Divergence, run.Held, want)
			}
		}
	}
}
