package program

import (
	"testing"
	"time"
)

// A dispose that drops a receive still awaiting (here the read the sleep
// beat in the race) schedules core's suspension at once: the replay
// suspends at the walk's next stall instead of parking or diverging on
// the event nobody takes there, and reads nothing past it. Found by
// realengine's offline corpus (TestOfflineReplayCorpus, program hookeach):
// a run_completed in the middle of the log.
func TestADisposeOfAnAwaitedHookSuspendsAtTheNextStall(t *testing.T) {
	sleepWon := cat(runEvents, []Event{hookCreated(0, 0), waitCreated(1), waitCompleted(1)})
	for _, c := range []struct {
		name string
		log  []Event
		want string
	}{
		{"the log runs out", sleepWon, "suspended on hook#0 (created) (disposed), step#2 final"},
		{"a run_completed mid-log", cat(sleepWon, []Event{E(RunCompleted, -1), created(2, "final")}),
			"suspended on hook#0 (created) (disposed), step#2 final"},
		{"a payload of a hook past the program's, then final", cat(sleepWon, []Event{hookReceived(7), created(2, "final"), completed(2, "final", 1)}),
			"suspended on hook#0 (created) (disposed), step#2 final"},
		{"final runs, nothing stalls", cat(sleepWon, []Event{created(2, "final"), completed(2, "final", 1)}), "completed"},
		// The log's hook_disposed read first: the dispose is a replay's
		// no-op, and the walk goes on to park the stray payload.
		{"hook_disposed read first", cat(sleepWon, []Event{E(HookDisposed, 0), hookReceived(7), created(2, "final"), completed(2, "final", 1)}),
			"diverged at event 6 (finished-with-parked)"},
	} {
		if got := Replay(approval(), c.log).String(); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	// The hook won: no receive awaits at the dispose, so the stall
	// diverges as ever.
	won := cat(runEvents, []Event{hookCreated(0, 0), waitCreated(1), hookReceived(0), E(RunCompleted, -1)})
	if got := Replay(approval(), won).String(); got != "diverged at event 5 (unconsumable)" {
		t.Errorf("the hook won, then a run_completed: %s", got)
	}
}

// A hook_conflict taken in the pass that completed the race's sleep: up to
// core beta.53 its rejection reaches the lost read ahead of the sleep's
// completion (ConflictAtOnce), so the race rejects and the run fails; from
// beta.55 it is delivered in log order, after the race was settled.
func TestAConflictIsDeliveredAtOnceBeforeBeta55(t *testing.T) {
	prog := MustCompile([]Node{
		{Hook: "h"},
		{Race: []Node{{Receive: "h"}, {Sleep: time.Hour}}},
		{Step: "final"},
	})
	log := cat(runEvents, []Event{waitCreated(1), waitCompleted(1), hookConflict(0, 0)})
	for _, c := range []struct {
		mode ConflictMode
		want string
	}{{ConflictAtOnce, "failed at event 4"}, {ConflictInLogOrder, "suspended on step#2 final"}} {
		r := Replayer{Conflicts: c.mode}
		if got := r.Replay(prog, log).String(); got != c.want {
			t.Errorf("%s: %s, want %s", c.mode, got, c.want)
		}
	}
	// The conflict in a later pass than the sleep's completion: the race
	// was settled before it, on every release.
	later := cat(runEvents, []Event{waitCreated(1), waitCompleted(1), created(2, "final"), hookConflict(0, 0)})
	for _, mode := range []ConflictMode{ConflictAtOnce, ConflictInLogOrder} {
		r := Replayer{Conflicts: mode}
		if got := r.Replay(prog, later).String(); got != "suspended on step#2 final (created)" {
			t.Errorf("%s, the conflict after final's step_created: %s", mode, got)
		}
	}
}
