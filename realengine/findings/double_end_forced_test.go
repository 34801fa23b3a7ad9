package findings

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/realengine"
)

// TestGatedLastCompletersCorruptTheRealLog: concurrent last completers of
// one fan-out each replay the workflow and each write run_completed, and
// world-local 5.0.0-beta.45 and beta.46 accept every one of them (their
// events.create reads the run, validates and writes with no lock across the
// check and the write for run-level events): the run's log holds more than
// one accepted terminal event, in every run, on every pinned core over every
// pinned world-local, core beta.52 on (fetch-free prologue, lazy
// last-completer read) and beta.50 (legacy prologue) alike. It also pins
// down what the runtime does afterwards: the client's returnValue resolves,
// the run row and every step row read back, and a late redelivery of the
// run's message or of a step's is refused (RunExpired / EntityConflict)
// and acked: nothing more is written.
func TestGatedLastCompletersCorruptTheRealLog(t *testing.T) {
	r := prepared(t)
	const branches, runs = 4, 10
	for _, rel := range realengine.PinnedReleases() {
		core := rel.Core
		t.Run(rel.String(), func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			out, err := r.Run(context.Background(), core, rel.On(gatedRace(branches, runs)), 2*time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if out.Gate == nil {
				t.Fatal("the harness reports no gate: it did not run gated")
			}
			for _, e := range out.Gate.Escapes {
				t.Errorf("gate %s of run %s escaped: %d calls held, %d of %d arrived before nothing more could; the race was not forced",
					e.Gate, e.Run, e.Held, e.Have, e.Want)
			}
			released := map[string]int{}
			for _, rel := range out.Gate.Releases {
				if rel.Gate == "run_completed" && rel.Why == "count" {
					released[rel.Run] = rel.Calls
				}
			}
			if len(out.Runs) != runs || len(out.ReadBack) != runs {
				t.Fatalf("%d runs, %d read back, want %d", len(out.Runs), len(out.ReadBack), runs)
			}
			corrupt, accepted := 0, []int{}
			for i, run := range out.Runs {
				b := out.ReadBack[i]
				if b.RunID != run.RunID {
					t.Fatalf("read back %s in place of %s", b.RunID, run.RunID)
				}
				if released[run.RunID] != branches {
					t.Errorf("run %s: %d run_completed released together, want %d (one per last completer)", run.RunID, released[run.RunID], branches)
				}
				n := b.TerminalByType["run_completed"]
				accepted = append(accepted, n)
				if n > 1 {
					corrupt++
				}
				if b.TerminalEvents != n {
					t.Errorf("run %s: terminal events %v, want only run_completed", run.RunID, b.TerminalByType)
				}
				if len(b.Unreadable) != 0 {
					t.Errorf("run %s: rows that do not read back: %+v", run.RunID, b.Unreadable)
				}
				if b.StepTerminalMax != 1 || b.Steps != branches {
					t.Errorf("run %s: %d steps, at most %d terminal events per step, want %d steps with one each", run.RunID, b.Steps, b.StepTerminalMax, branches)
				}
				if run.Status != "completed" || strings.TrimSpace(string(run.Output)) != fmt.Sprint(branches) {
					t.Errorf("run %s: the client's returnValue: %s %s, want completed with %d", run.RunID, run.Status, run.Output, branches)
				}
			}
			if corrupt != runs {
				t.Errorf("core %s: %d of %d runs have more than one accepted run_completed in their log (accepted per run: %v), want all", rel, corrupt, runs, accepted)
			}
			// Late redeliveries after the double end: refused, acked, and
			// nothing more accepted.
			kinds := map[string]int{}
			for _, p := range out.Probes {
				kinds[p.Kind]++
				if p.Status != 200 {
					t.Errorf("probe %s of run %s: HTTP %d, want 200 (acked)", p.Kind, p.RunID, p.Status)
				}
				for _, c := range p.Calls {
					if c.Op == "events.create" && c.Result == "ok" {
						t.Errorf("probe %s of run %s: %s accepted after the run ended", p.Kind, p.RunID, c.Event)
					}
				}
			}
			if kinds["run"] != runs || kinds["step"] != runs {
				t.Errorf("probes: %v, want %d of each kind", kinds, runs)
			}
			var story []string
			for _, p := range out.Probes[:min(2, len(out.Probes))] {
				story = append(story, p.Kind+" probe: "+p.Story())
			}
			t.Logf("core %s: %d/%d runs with >1 run_completed accepted (per run: %v); runtime log: %d errors, %d warnings; %s; %s",
				rel, corrupt, runs, accepted, out.RuntimeLog.Error, out.RuntimeLog.Warn, strings.Join(story, "; "), time.Since(start).Round(100*time.Millisecond))
		})
	}
}
