package findings

import (
	"context"
	"testing"
	"time"

	"github.com/simlab/simlab/realengine"
)

// A run cancelled while its first (turbo) delivery suspends on a fan-out
// still runs its inline step's body, after the cancel: the queued step's
// step_created is refused (the run is terminal), which the suspension
// tolerates as "already exists"; the inline step then starts optimistically
// (core forces optimisticStart in turbo: the body runs while its lazy
// step_started is in flight), the claim is refused, and the body's result is
// thrown away. no-start-on-terminal's body clause: simlab finds it by search
// since the model has the optimistic start (docs/MODEL.md), and this forces
// it on the real core, every run.
func TestTurboRunsAnInlineBodyOnACancelledRun(t *testing.T) {
	r := prepared(t)
	const runs = 10
	for _, core := range []realengine.Core{pinnedCore(t, "5.0.0-beta.52"), pinnedCore(t, "5.0.0-beta.55")} {
		out, err := r.Run(context.Background(), core, cancelBeforeTheFanOut(runs), 2*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if out.Gate == nil || len(out.Gate.Escapes) > 0 {
			t.Fatalf("core %s: the gate escaped (the interleaving was not forced): %+v", core.Version, out.Gate)
		}
		forced := 0
		for i, run := range out.Runs {
			if err := judgeBodyAfterCancel(out, i); err != nil {
				t.Errorf("core %s, run %s: %v", core.Version, run.RunID, err)
				continue
			}
			forced++
		}
		t.Logf("core %s: an inline body began after the run's cancel in %d of %d runs", core.Version, forced, len(out.Runs))
		if len(out.Runs) != runs {
			t.Errorf("core %s: %d runs, want %d", core.Version, len(out.Runs), runs)
		}
	}
	// The runtime's explicit opt-out (workflow.await_inline_claims): the
	// inline step awaits its claim, which is refused, and no body runs.
	cfg := cancelBeforeTheFanOut(3)
	cfg.AwaitInlineClaims = true
	out, err := r.Run(context.Background(), pinnedCore(t, "5.0.0-beta.52"), cfg, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if out.Gate == nil || len(out.Gate.Escapes) > 0 {
		t.Fatalf("with WORKFLOW_OPTIMISTIC_INLINE_START=0: the gate escaped (the interleaving was not forced): %+v", out.Gate)
	}
	for _, b := range out.Bodies {
		t.Errorf("with WORKFLOW_OPTIMISTIC_INLINE_START=0, a body of run %s began: %+v", b.Run, b)
	}
}
