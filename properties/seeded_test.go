package properties

import (
	"strings"
	"testing"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/world"
)

// Properties on seeded histories of the shipped protocol and its variants:
// what a history shows, judged property by property (the rapid searches
// that find and shrink the same are package check's).

// named is the properties named, in order.
func named(t *testing.T, names ...string) []Property {
	t.Helper()
	var out []Property
	for _, n := range names {
		p, ok := ByName(n)
		if !ok {
			t.Fatalf("no property %s", n)
		}
		out = append(out, p)
	}
	return out
}

func TestReplayIgnoresTerminalLogFindsWorkAfterEnd(t *testing.T) {
	// The window is the few milliseconds between a last completer's lazy
	// read and its replay's reload of the log, with a cancel landing in it:
	// rapid's short search rarely draws it, the seeded faults scenario
	// (three runs, cancels, crashes) meets it within 200 seeds.
	// The first seed's witness is a last completer whose list held the
	// run's end and whose replay went on to publish (with a replay's cost,
	// the default; before it, a write the World refused).
	h := firstFailing(t, "no-work-after-visible-end", "faults", 200, "replay-ignores-terminal-log")
	violates(t, "no-work-after-visible-end", h, "was told the run had ended", "events.list\n")
	violates(t, "no-work-after-visible-end", h, "did 1 more things", "publish (inline_backstop)")
	for seed := uint64(1); seed <= 200; seed++ {
		holdsOn(t, "no-work-after-visible-end", history(t, "faults", seed))
	}
}

// A finding (docs/MODEL.md): core beta.52 builds a last completer's
// workflowRun from its lazy read's row and stamps the next fan-out's
// messages with runDispatchContext(workflowRun). A stale pending row has no
// startedAt, so neither has that runContext: it no longer equals the run's
// immutable identity. As published, the replay fails the run before it
// publishes anything (no startedAt: RUNTIME_ERROR, docs/VALIDATION.md), so
// the wrong stamp shows only where the replay goes on, as DOMAIN §7 says it
// does (replay-on-stale-pending): there every producer still stamps what it
// read, and run-context-matches-run finds the stamp.
func TestStaleLazyReadStampsARunContextWithoutStartedAt(t *testing.T) {
	check := func(variants ...string) (*model.History, []Violation) {
		h := recorded(t, model.Spec{Scenario: "golden-t3", Sets: []string{"workflow.fanouts=2,2"}, Variants: variants}, 1)
		return h, Check(h, named(t, "run-context-matches-run", "producer-stamps-run-context"))
	}
	h, vs := check("replay-on-stale-pending")
	if len(vs) != 1 || vs[0].Property != "run-context-matches-run" || !strings.Contains(vs[0].Message, "StartedAt:+0s") {
		t.Fatalf("replay-on-stale-pending: want one run-context-matches-run violation with no startedAt, got %v", vs)
	}
	if h.FinalRuns[0].Status != world.RunCompleted {
		t.Fatalf("replay-on-stale-pending: run %v, want completed", h.FinalRuns[0].Status)
	}
	h, vs = check()
	if len(vs) != 0 || h.FinalRuns[0].Status != world.RunFailed {
		t.Fatalf("as published: run %v and %v; want the run failed before its second fan-out, no stamp to judge", h.FinalRuns[0].Status, vs)
	}
}

// A fetch-free last completer whose lazy read answers a stale pending row
// of a run that has already ended (cancelled, or failed) takes the row for
// a live run and replays: the replay's log load is a third piece of work
// after the end (after the fan-in listing and the lazy read), and the
// replay then sees the terminal log and stops. Counted by the new property
// bounded-work-after-end (issue 19); docs/MODEL.md finding 11.
func TestShippedStaleLazyReadReplaysAnEndedRun(t *testing.T) {
	p, _ := ByName("bounded-work-after-end")
	// golden-t4: the run is cancelled before the lazy read, which sees it
	// and stops: two pieces of work after the end.
	if vs := Check(history(t, "golden-t4", 1), []Property{p}); len(vs) > 0 {
		t.Fatalf("golden-t4 as declared: %s", strings.Join(Story(vs[0]), "\n"))
	}
	// The same lazy read answered a running row from before the cancel: the
	// completer replays the cancelled run. (The read is about 1 s after the
	// cancel; a stale read's lag is drawn in eighths of stale_lag, so 10 s
	// makes every draw reach back before it, whatever the seed's draws.)
	h := recorded(t, model.Spec{Scenario: "golden-t4", Sets: []string{"faults.stale_read=1", "store.stale_lag=10s"}}, 1)
	vs := Check(h, []Property{p})
	if len(vs) == 0 {
		t.Fatal("a stale lazy read of a cancelled run: bounded-work-after-end holds")
	}
	story := strings.Join(Story(vs[0]), "\n")
	for _, want := range []string{"began 3 reads, listings, replays and bodies after the run's run_cancelled", "runs.get → running (stale) (begun after the end)",
		"events.list (begun after the end)"} {
		if !strings.Contains(story, want) {
			t.Errorf("story lacks %q:\n%s", want, story)
		}
	}
}
