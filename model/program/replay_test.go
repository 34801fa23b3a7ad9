package program

import (
	"strings"
	"testing"
	"time"
)

// raceflow is the offline study's workflow: three parts at once, a step
// raced against a sleep, one extra step when the step won, a final step.
// Ordinals: 0-2 part, 3 stepX, 4 the sleep's wait, then extraStep and
// finalStep, or finalStep alone.
func raceflow() *Compiled {
	return MustCompile([]Node{
		{All: []Node{{Step: "part"}, {Step: "part"}, {Step: "part"}}},
		{Race: []Node{{Step: "stepX"}, {Sleep: time.Hour}}, As: "winner"},
		{If: "winner", Then: []Node{{Step: "extraStep"}}},
		{Step: "finalStep"},
	})
}

func created(k int32, name string) Event { return E(StepCreated, k).Named(name) }
func started(k int32, name string) Event { return E(StepStarted, k).Named(name) }
func completed(k int32, name string, r int64) Event {
	e := E(StepCompleted, k).Named(name)
	e.Result = r
	return e
}

func waitCreated(k int32) Event { e := E(WaitCreated, k); e.ResumeAt = 3_600_000; return e }
func waitCompleted(k int32) Event {
	e := E(WaitCompleted, k)
	e.ResumeAt = 3_600_000
	return e
}

var (
	runEvents = []Event{E(RunCreated, -1), E(RunStarted, -1)}
	parts     = []Event{created(0, "part"), created(1, "part"), created(2, "part"),
		started(0, "part"), completed(0, "part", 0), started(1, "part"), completed(1, "part", 10), started(2, "part"), completed(2, "part", 20)}
	raceStart = []Event{created(3, "stepX"), waitCreated(4), started(3, "stepX")}
)

func cat(parts ...[]Event) []Event {
	var out []Event
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// The cases the offline study replayed through core 5.0.0-beta.52 (and .50,
// .53, .55, which agreed), with what core answered.
func TestReplayAnswersAsCoreDidOnTheStudysLogs(t *testing.T) {
	stepWon := cat(runEvents, parts, raceStart, []Event{completed(3, "stepX", 1),
		created(5, "extraStep"), started(5, "extraStep"), completed(5, "extraStep", 1),
		created(6, "finalStep"), started(6, "finalStep"), completed(6, "finalStep", 1)})
	sleepWon := cat(runEvents, parts, raceStart, []Event{waitCompleted(4),
		created(5, "finalStep"), completed(3, "stepX", 1), started(5, "finalStep"), completed(5, "finalStep", 1)})
	cases := []struct {
		name string
		log  []Event
		want string
	}{
		{"empty", nil, "suspended on step#0 part, step#1 part, step#2 part"},
		{"run only", runEvents, "suspended on step#0 part, step#1 part, step#2 part"},
		{"parts done", cat(runEvents, parts), "suspended on step#3 stepX, wait#4"},
		{"sleep won, suspended", cat(runEvents, parts, raceStart, []Event{waitCompleted(4)}), "suspended on step#3 stepX (created), step#5 finalStep"},
		{"sleep won", sleepWon, "completed"},
		{"step won, suspended", cat(runEvents, parts, raceStart, []Event{completed(3, "stepX", 1)}), "suspended on wait#4 (created), step#5 extraStep"},
		{"step won", stepWon, "completed"},
		{"a step-won log replayed with the wait first", cat(runEvents, parts, raceStart, []Event{waitCompleted(4)}, stepWon[len(runEvents)+len(parts)+len(raceStart):]),
			"diverged at event 16 (name-mismatch)"},
		{"completed before minted", cat(runEvents, parts[:3], []Event{completed(3, "stepX", 1)}, parts[3:]), "diverged at event 5 (unconsumable)"},
		{"a second step_created while live", cat(runEvents, parts[:1], parts), "suspended on step#3 stepX, wait#4"},
		{"a second step_created after it finished", cat(runEvents, parts, parts[:1]), "suspended on step#3 stepX, wait#4"},
		{"completed before created", cat(runEvents, []Event{completed(0, "part", 0), created(0, "part")}, parts[1:3], parts[5:]), "diverged at event 3 (unconsumable)"},
		{"run_completed mid-log", cat(runEvents, parts[:5], []Event{E(RunCompleted, -1)}, parts[5:]), "diverged at event 7 (unconsumable)"},
		{"run_completed after the end", cat(stepWon, []Event{E(RunCompleted, -1)}), "completed"},
		{"a wait event at a step's ordinal", cat(runEvents, parts, []Event{waitCreated(3)}), "diverged at event 11 (unconsumable)"},
		{"a wait event under a step's id", cat(runEvents, parts, []Event{{Type: WaitCreated, Kind: EntityStep, Ordinal: 3}}), "diverged at event 11 (unexpected-type)"},
		{"two run_started", cat(runEvents, []Event{E(RunStarted, -1)}, parts), "suspended on step#3 stepX, wait#4"},
		{"another step's name", cat(runEvents, []Event{created(0, "stepX")}), "diverged at event 2 (name-mismatch)"},
		{"retried, then failed", cat(runEvents, parts[:4], []Event{E(StepRetrying, 0), started(0, "part"), E(StepFailed, 0)}), "failed at event 8"},
		{"wait completed before created", cat(runEvents, parts, []Event{created(3, "stepX"), E(WaitCompleted, 4), waitCreated(4)}), "diverged at event 13 (unconsumable)"},
		{"wait completed with its resumeAt before created", cat(runEvents, parts, []Event{created(3, "stepX"), waitCompleted(4), waitCreated(4)}), "diverged at event 12 (resume-at-mismatch)"},
		{"a wait completed before it is minted", cat(runEvents, []Event{{Type: WaitCompleted, Kind: EntityWait, Ordinal: 4}}, parts), "suspended on step#3 stepX, step#5 finalStep"},
		{"both race results, the wait's first", cat(runEvents, parts, raceStart, []Event{waitCompleted(4), completed(3, "stepX", 1)}), "suspended on step#5 finalStep"},
		{"both race results, the step's first", cat(runEvents, parts, raceStart, []Event{completed(3, "stepX", 1), waitCompleted(4)}), "suspended on step#5 extraStep"},
		{"a step created beyond the program's reach", cat(runEvents, parts[:3], []Event{created(7, "finalStep")}), "diverged at event 5 (unconsumable)"},
		{"a trailing step_created", cat(stepWon, []Event{created(7, "finalStep")}), "completed"},
		{"a trailing wait_completed", cat(stepWon, []Event{{Type: WaitCompleted, Kind: EntityWait, Ordinal: 9}}), "completed"},
		{"a wait_completed parked and never claimed", cat(runEvents, []Event{{Type: WaitCompleted, Kind: EntityWait, Ordinal: 9}}, stepWon[2:]), "diverged at event 2 (finished-with-parked)"},
		{"parked, then suspended", cat(runEvents, []Event{{Type: WaitCompleted, Kind: EntityWait, Ordinal: 9}}, parts), "suspended on step#3 stepX, wait#4"},
		{"a step at the wait's ordinal", cat(runEvents, parts, []Event{created(3, "stepX"), created(4, "stepX")}), "diverged at event 12 (unconsumable)"},
		{"the losing wait completed late", cat(stepWon[:len(stepWon)-1], []Event{waitCompleted(4)}, stepWon[len(stepWon)-1:]), "completed"},
		{"a resumeAt that is not the wait's", cat(runEvents, parts, []Event{created(3, "stepX"), waitCreated(4), {Type: WaitCompleted, Kind: EntityWait, Ordinal: 4, ResumeAt: 7_200_000}}), "diverged at event 13 (resume-at-mismatch)"},
		{"completed, never created", cat(runEvents, parts, []Event{completed(3, "stepX", 1)}), "suspended on wait#4, step#5 extraStep"},
		{"lazy starts", cat(runEvents, []Event{started(0, "part"), completed(0, "part", 0), started(1, "part"), completed(1, "part", 10), started(2, "part"), completed(2, "part", 20)}), "suspended on step#3 stepX, wait#4"},
	}
	p := raceflow()
	for _, c := range cases {
		if got := Replay(p, c.log).String(); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// The fan-out list is the program of one Promise.all per fan-out: its
// ordinals are the steps' global indexes, and a stale replay of it can
// never diverge (it mints the same entities whatever it saw).
func TestFanoutsProgramNumbersStepsInOrder(t *testing.T) {
	p := MustCompile(FromFanouts([]int{3, 2}, "step"))
	o := Replay(p, runEvents)
	if o.String() != "suspended on step#0 step, step#1 step, step#2 step" {
		t.Fatal(o)
	}
	log := cat(runEvents, []Event{created(0, "step"), created(1, "step"), created(2, "step"),
		completed(2, "step", 1), completed(0, "step", 1), completed(1, "step", 1)})
	if o := Replay(p, log); o.String() != "suspended on step#3 step, step#4 step" {
		t.Fatal(o)
	}
	log = append(log, completed(4, "step", 1), completed(3, "step", 1))
	if o := Replay(p, log); o.Status != Completed || o.Minted != 5 {
		t.Fatal(o)
	}
}

// A pool starts the next call when one finishes, so which ordinal the next
// call takes depends on the order calls finished in.
func TestPoolMintsOnEachCompletion(t *testing.T) {
	p := MustCompile([]Node{{Pool: 2, N: 4, Step: "work"}, {Step: "done"}})
	if o := Replay(p, runEvents); o.String() != "suspended on step#0 work, step#1 work" {
		t.Fatal(o)
	}
	log := cat(runEvents, []Event{completed(1, "work", 1)})
	if o := Replay(p, log); o.String() != "suspended on step#0 work, step#2 work" {
		t.Fatal(o)
	}
	log = append(log, completed(0, "work", 1), completed(2, "work", 1), completed(3, "work", 1))
	if o := Replay(p, log); o.String() != "suspended on step#4 done" {
		t.Fatal(o)
	}
}

// A loop runs its body until its label is truthy: the number of entities
// depends on the results the replay saw.
func TestLoopStopsOnItsLabel(t *testing.T) {
	p := MustCompile([]Node{{Loop: 3, Do: []Node{{Step: "poll", Results: 2, As: "ready"}}, Until: "ready"}, {Step: "after"}})
	log := cat(runEvents, []Event{completed(0, "poll", 0), completed(1, "poll", 1)})
	if o := Replay(p, log); o.String() != "suspended on step#2 after" {
		t.Fatal(o)
	}
	log = cat(runEvents, []Event{completed(0, "poll", 0), completed(1, "poll", 0), completed(2, "poll", 0)})
	if o := Replay(p, log); o.String() != "suspended on step#3 after" {
		t.Fatal(o)
	}
}

// A pool whose call failed after its race was settled rejects, unheard;
// its other workers go on starting calls, as JavaScript's async workers do.
func TestPoolWorkersGoOnAfterACallFailed(t *testing.T) {
	p := MustCompile([]Node{
		{Race: []Node{{Pool: 2, N: 4, Step: "work"}, {Seq: []Node{{Step: "watch"}, {Sleep: time.Second}}}}, As: "first"},
		{If: "first", Then: []Node{{Step: "a"}}, Else: []Node{{Step: "c"}}},
	})
	log := cat(runEvents, []Event{created(0, "work"), created(1, "work"), created(2, "watch"), completed(2, "watch", 1),
		waitCreated(3), waitCompleted(3), E(StepFailed, 0).Named("work"), completed(1, "work", 1)})
	if o := Replay(p, log); o.String() != "suspended on step#4 c, step#5 work" {
		t.Fatal(o)
	}
}

// An explaining replay names each race it settles: the branch that won and
// the event that settled it.
func TestExplainNamesEachRacesWinner(t *testing.T) {
	p := MustCompile([]Node{{Race: []Node{{Step: "a"}, {Sleep: time.Second}}, As: "w"}, {Step: "b"}})
	log := []Event{E(RunCreated, -1), E(RunStarted, -1), E(StepCreated, 0).Named("a"), E(WaitCreated, 1),
		E(WaitCompleted, 1), E(StepCompleted, 0)}
	r := Replayer{Explain: true}
	r.Replay(p, log)
	if len(r.Wins) != 1 || r.Wins[0].Branch != 1 || r.Wins[0].At != 4 || r.Wins[0].Node != 0 {
		t.Fatalf("wins %+v: want the race (statement 0) won by branch 1 at event 4", r.Wins)
	}
	var plain Replayer
	plain.Replay(p, log)
	if len(plain.Wins) != 0 {
		t.Errorf("a replay without Explain recorded %v", plain.Wins)
	}
}

// The clock statement reads the replay's clock: up to core beta.53 the
// time of the last event of the pass that resolved what the program
// awaited (the walk consumes, in one pass, every event in a row a
// registered consumer takes), from beta.55 the time of the events handed
// to the program so far. So before beta.55 a replay whose log goes on past
// the awaited event reads a later time, picks the other branch, and cannot
// consume the log an earlier replay wrote (realengine's
// TestDateNowReadsTheWholePassBeforeBeta55 holds these to the real cores).
func TestClockReadsThePassOrTheDelivery(t *testing.T) {
	p := MustCompile([]Node{{All: []Node{
		{Seq: []Node{{Step: "a"}, {Clock: 2500 * time.Millisecond, As: "late"}, {If: "late", Then: []Node{{Step: "x"}}, Else: []Node{{Step: "y"}}}}},
		{Step: "b"},
	}}})
	ev := stamped
	base := []Event{ev(RunCreated, -1, "", 1), ev(RunStarted, -1, "", 1), ev(StepCreated, 0, "a", 100), ev(StepCreated, 1, "b", 100),
		ev(StepStarted, 0, "", 200), ev(StepStarted, 1, "", 200), ev(StepCompleted, 0, "", 2000)}
	with := func(more ...Event) []Event { return append(append([]Event{}, base...), more...) }
	bDone := ev(StepCompleted, 1, "", 3000)
	for _, c := range []struct {
		log             []Event
		pass, delivered string
	}{
		{with(), "suspended on step#1 b (created), step#2 y", "suspended on step#1 b (created), step#2 y"},
		{with(bDone), "suspended on step#2 x", "suspended on step#2 y"},
		{with(bDone, ev(StepCreated, 2, "y", 3100)), "diverged at event 8 (name-mismatch)", "suspended on step#2 y (created)"},
	} {
		for _, mode := range []ClockMode{ClockPerPass, ClockPerDelivery} {
			r := Replayer{Clock: mode}
			want := c.pass
			if mode == ClockPerDelivery {
				want = c.delivered
			}
			if got := r.Replay(p, c.log).String(); got != want {
				t.Errorf("%s, a log of %d events: %s, want %s", mode, len(c.log), got, want)
			}
		}
	}
	// Past the threshold at the awaited event itself, both read it.
	late := append(append([]Event{}, base[:6]...), ev(StepCompleted, 0, "", 2600))
	for _, mode := range []ClockMode{ClockPerPass, ClockPerDelivery} {
		r := Replayer{Clock: mode}
		if got := r.Replay(p, late).String(); got != "suspended on step#1 b (created), step#2 x" {
			t.Errorf("%s, a's end at 2.6 s: %s", mode, got)
		}
	}
}

// stamped is the event of type tp for entity ord (-1 for a run event)
// carrying step name name, written at ms since the run was created.
func stamped(tp EventType, ord int32, name string, at int64) Event {
	e := E(tp, ord)
	if e.Kind == EntityNone {
		e.Ordinal = -1
	}
	e.Name, e.CreatedMS = name, at
	return e
}

// A replay resumed in a retained VM (core's WORKFLOW_RETAINED_VM) keeps
// the Date.now() reads its VM made: the log that a fresh per-pass replay
// cannot consume (y written from a's time, b's end below it) it consumes,
// since its clock statement answers as it did, and only a statement it has
// not run yet reads the clock.
func TestRetainedClockReadsStand(t *testing.T) {
	p := MustCompile([]Node{{All: []Node{
		{Seq: []Node{{Step: "a"}, {Clock: 2500 * time.Millisecond, As: "late"}, {If: "late", Then: []Node{{Step: "x"}}, Else: []Node{{Step: "y"}}}}},
		{Step: "b"},
	}}})
	ev := stamped
	first := []Event{ev(RunCreated, -1, "", 1), ev(RunStarted, -1, "", 1), ev(StepCreated, 0, "a", 100), ev(StepCreated, 1, "b", 100),
		ev(StepStarted, 0, "", 200), ev(StepStarted, 1, "", 200), ev(StepCompleted, 0, "", 2000)}
	r := Replayer{Explain: true}
	if got := r.Replay(p, first).String(); got != "suspended on step#1 b (created), step#2 y" {
		t.Fatalf("the first pass: %s", got)
	}
	parked := append([]ClockRead{}, r.Clocks...)
	later := append(append([]Event{}, first...), ev(StepCompleted, 1, "", 3000), ev(StepCreated, 2, "y", 3100))
	if got := r.Replay(p, later).String(); got != "diverged at event 8 (name-mismatch)" {
		t.Errorf("afresh: %s, want the divergence", got)
	}
	r.Retained = parked
	if got := r.Replay(p, later).String(); got != "suspended on step#2 y (created)" {
		t.Errorf("resumed: %s, want y awaited", got)
	}
	if len(r.Clocks) != 1 || r.Clocks[0] != parked[0] {
		t.Errorf("resumed reads %+v, want the parked %+v", r.Clocks, parked)
	}
	// A read the VM did not make (another statement) reads the clock.
	r.Retained = []ClockRead{{Node: 99, Truthy: true}}
	if got := r.Replay(p, later).String(); got != "diverged at event 8 (name-mismatch)" {
		t.Errorf("a retained read of another statement: %s, want the divergence", got)
	}
}

// A clock statement is a statement like the others: validated, written
// back as the file writes it, and never a branch of all or race on its own
// (it awaits nothing).
func TestClockStatement(t *testing.T) {
	prog := []Node{{Step: "a"}, {Clock: 1500 * time.Millisecond, As: "late"}, {If: "late", Then: []Node{{Step: "x"}}}}
	if err := Validate(prog, "program"); err != nil {
		t.Fatal(err)
	}
	if got := Format(prog); !strings.Contains(got, "  - clock: 1.5s\n    as: late\n") {
		t.Errorf("Format:\n%s", got)
	}
	for _, c := range []struct {
		prog []Node
		want string
	}{
		{[]Node{{Clock: 1500 * time.Microsecond}}, "whole number of milliseconds"},
		{[]Node{{Clock: -time.Second}}, "positive"},
		{[]Node{{Race: []Node{{Step: "a"}, {Clock: time.Second}}}}, "must await"},
		{[]Node{{Clock: time.Second, Step: "a"}}, "one statement has one kind"},
	} {
		if err := Validate(c.prog, "program"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.prog, err, c.want)
		}
	}
}
