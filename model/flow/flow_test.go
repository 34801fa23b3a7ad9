package flow

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/model/program"
)

func config(t *testing.T, prog []program.Node, view View) Config {
	t.Helper()
	p, err := program.Compile(prog)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Defaults(p)
	cfg.View = view
	return cfg
}

func runSeed(t *testing.T, cfg Config, seed uint64) *Result {
	t.Helper()
	res, err := Run(cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.Reason.String() != "drained" {
		t.Fatalf("seed %d: the run did not drain: %s at %v", seed, res.Stats.Reason, res.Stats.Now)
	}
	return res
}

// On the pinned release's World (every write's answer brings the events
// below it, so each invocation's log is a prefix of the run's) concurrent
// replays of the storm never corrupt its log, at any width: what the real
// core beta.52 over world-local beta.45 showed on the same shape (issue
// 33: 100 of 100 runs completed). Every run completes, and a fresh replay
// of its log consumes it.
func TestPrefixViewsNeverCorruptTheStorm(t *testing.T) {
	concurrent := 0
	for _, branches := range []int{1, 4, 16, 48} {
		for _, rounds := range []int{1, 3} {
			cfg := config(t, Storm(branches, rounds, 300*time.Millisecond), ViewPrefix)
			for seed := range uint64(50) {
				res := runSeed(t, cfg, seed+1)
				if res.End != Completed || res.Fresh.Status != program.Completed || res.Divergences > 0 {
					t.Fatalf("%d branches, %d rounds, seed %d: %s, fresh replay %s, %d divergences\n%s", branches, rounds, seed+1, res.End, res.Fresh, res.Divergences, strings.Join(res.Story(cfg.Program), "\n"))
				}
				if res.MaxConcurrentReplays > 1 {
					concurrent++
				}
			}
		}
	}
	// Not vacuous: the runs had concurrent replays to corrupt with.
	if concurrent == 0 {
		t.Error("no run replayed concurrently")
	}
}

// On a World that answers a writer without the events below its write
// (the runtime before slot ids), an invocation goes on with the log it
// loaded and its own writes: the wake's invocation completes the due
// sleeps, replays without the step completions that landed meanwhile,
// takes the sleep's side of those races and names the next round's
// entities where the log has the step's side's. Most storms corrupt (the
// team's lane: 554-583 of 600 before slot ids), each corrupted log is one
// no replay consumes, and the story shows the writer, its view and what
// it missed, down to the first race its replay settled otherwise than the
// log does (mostly: the sleep it completed itself, where the log has the
// step first).
func TestOwnWritesViewsCorruptTheStorm(t *testing.T) {
	cfg := config(t, Storm(16, 3, 300*time.Millisecond), ViewOwnWrites)
	corrupted := 0
	const seeds = 100
	for seed := range uint64(seeds) {
		res := runSeed(t, cfg, seed+1)
		if (res.End == Corrupted) != (res.Fresh.Status == program.Diverged) {
			t.Errorf("seed %d: ended %s, fresh replay %s: a log no replay consumes is the one the runtime fails", seed+1, res.End, res.Fresh)
		}
		if res.End != Corrupted {
			continue
		}
		corrupted++
		ev := res.Log[res.Fresh.At]
		story := strings.Join(res.Story(cfg.Program), "\n")
		if ev.Saw <= ev.Loaded || !strings.Contains(story, "of its own writes after them") || !strings.Contains(story, "it had not seen") ||
			!strings.Contains(story, "the race of statement") {
			t.Errorf("seed %d: the divergent event's writer saw %d events, %d of them the log's; want a view of its own writes past a stale load, told:\n%s", seed+1, ev.Saw, ev.Loaded, story)
		}
	}
	if corrupted < seeds/2 {
		t.Errorf("%d of %d storms corrupted, want most", corrupted, seeds)
	}
}

// The same World with the tail fence (the team's append-tail-fence
// experiment, #3177): every replay's write that lands was decided from the
// run's tail (nothing but its writer's own writes and its inline steps'
// landed after the log it loaded), checked here from the log itself; the
// fence refuses the others and their replays restart from a fresh list.
// In this model that leaves no storm corrupted, where the own-writes view
// corrupts most: upstream's experiment measured 553 of 600 with its fence,
// a difference docs/FINDINGS.md records.
func TestTailFenceTakesOnlyWritesFromTheTail(t *testing.T) {
	cfg := config(t, Storm(16, 3, 300*time.Millisecond), ViewTailFence)
	restarts := 0
	for seed := range uint64(50) {
		res := runSeed(t, cfg, seed+1)
		if res.End != Completed || res.Fresh.Status != program.Completed {
			t.Errorf("seed %d: %s, fresh replay %s", seed+1, res.End, res.Fresh)
		}
		restarts += res.FenceRestarts
		fenced := 0
		for _, w := range res.Writes {
			if w.Fenced {
				fenced++
			}
		}
		if fenced != res.FenceRestarts {
			t.Errorf("seed %d: %d writes fenced, %d restarts counted", seed+1, fenced, res.FenceRestarts)
		}
		decider := func(a int32) int32 {
			if ac := res.Actors[a]; ac.Kind == ActorInline {
				return ac.Parent
			}
			return a
		}
		for i, e := range res.Log {
			if e.Saw < 0 {
				continue // a step's own claim or result: not fenced
			}
			for j := int(e.Loaded); j < i; j++ {
				if by := res.Log[j].By; by < 0 || decider(by) != decider(e.By) {
					t.Fatalf("seed %d: event %d (%s, by %s) was decided from the log's first %d events, but event %d (by %s) landed before it",
						seed+1, i, e.Event, res.ActorName(e.By), e.Loaded, j, res.ActorName(res.Log[j].By))
				}
			}
		}
	}
	if restarts == 0 {
		t.Error("the fence refused nothing: the storm's replays never wrote from a stale log")
	}
}

// The same World with the team's event-count guard (#3145, with #3172's
// complete index): checked from the history alone, a replay's write is
// refused exactly when, as it lands, the log holds an event another
// invocation wrote that is stamped at or before the latest stamp of the
// writer's loaded log and committed after its read (a hole below its
// watermark). A log that is complete but old passes, so the guard leaves
// the hook storm's corruptions as they are without it, as upstream
// measured (#3172: 177 of 600 with it, 115 on main).
func TestCountGuardRefusesOnlyWritesFromALogWithAHole(t *testing.T) {
	cfg := config(t, HookStorm(16, 3, 300*time.Millisecond), ViewCountGuard)
	cfg.Resumes = HookStormResumes
	plain := cfg
	plain.View = ViewOwnWrites
	refused, guarded, unguarded := 0, 0, 0
	for seed := range uint64(40) {
		res := runSeed(t, cfg, seed+1)
		if res.End == Corrupted {
			guarded++
		}
		if runSeed(t, plain, seed+1).End == Corrupted {
			unguarded++
		}
		// The log as each write landed: the events committed before it.
		for _, w := range res.Writes {
			if w.Saw < 0 || w.Loaded <= 0 || (!w.Fenced && !w.Accepted) {
				continue
			}
			watermark := int64(-1)
			for _, e := range res.Log[:w.Loaded] {
				watermark = max(watermark, e.CreatedMS)
			}
			writer := res.Actors[w.By]
			decider := w.By
			if writer.Kind == ActorInline {
				decider = writer.Parent
			}
			hole := false
			for _, e := range res.Log[w.Loaded:] {
				if e.At < w.At && e.CreatedMS <= watermark && e.By != decider && (e.By < 0 || res.Actors[e.By].Parent != decider || res.Actors[e.By].Kind != ActorInline) {
					hole = true
				}
			}
			if hole != w.Fenced {
				t.Fatalf("seed %d: %s by %s, loaded %d events up to stamp %dms: refused %v, but a hole below the watermark: %v",
					seed+1, w.Event, res.ActorName(w.By), w.Loaded, watermark, w.Fenced, hole)
			}
			if w.Fenced {
				refused++
			}
		}
	}
	if refused == 0 {
		t.Error("the guard refused nothing: no replay's log had a hole below its watermark")
	}
	if unguarded == 0 || 2*guarded < unguarded {
		t.Errorf("hook storm without slot ids: %d of 40 corrupted with the count guard, %d without; want it to leave most", guarded, unguarded)
	}
}

// A storm that branches on Date.now() corrupts the pinned release's logs,
// slot ids and all: a replay whose log ended at the step it awaited reads
// that step's time, another branch's step starts or ends before its write
// lands, and every later replay's pass takes that event before the
// program runs on, reads the later time, takes the other branch and
// diverges on what the first wrote. The story names the clock each read.
// Core beta.55's clock (moved only by deliveries) reads the same time
// either way: no run corrupts.
func TestClockStormCorruptsThePinnedRelease(t *testing.T) {
	cfg := config(t, ClockStorm(16, 3, time.Second), ViewPrefix)
	corrupted := 0
	for seed := range uint64(100) {
		res := runSeed(t, cfg, seed+1)
		if res.End != Corrupted {
			continue
		}
		corrupted++
		if story := strings.Join(res.Story(cfg.Program), "\n"); !strings.Contains(story, "Date.now() at statement") {
			t.Errorf("seed %d: the story does not name the clock reads:\n%s", seed+1, story)
		}
	}
	if corrupted == 0 {
		t.Error("no clock storm corrupted on the pinned release's clock")
	}
	cfg.Clock = program.ClockPerDelivery
	for seed := range uint64(100) {
		if res := runSeed(t, cfg, seed+1); res.End != Completed || res.Fresh.Status != program.Completed {
			t.Errorf("seed %d on beta.55's clock: %s, fresh replay %s", seed+1, res.End, res.Fresh)
		}
	}
}

// The control mints entities by what a replay saw too, but one waker at a
// time: no view corrupts it.
func TestControlNeverCorrupts(t *testing.T) {
	for _, v := range []View{ViewPrefix, ViewOwnWrites} {
		cfg := config(t, Control(4, 200*time.Millisecond), v)
		for seed := range uint64(100) {
			if res := runSeed(t, cfg, seed+1); res.End != Completed || res.Divergences > 0 {
				t.Fatalf("%s, seed %d: %s with %d divergences\n%s", v, seed+1, res.End, res.Divergences, strings.Join(res.Story(cfg.Program), "\n"))
			}
		}
	}
}

// A divergence queues a fresh replay, up to the recovery budget; the one
// after fails the run: the invocation that writes CORRUPTED_EVENT_LOG is
// the budget's last recovery replay, and with no budget the first
// divergence ends the run.
func TestRecoveryBudget(t *testing.T) {
	for _, budget := range []int{0, 3} {
		cfg := config(t, Storm(16, 3, 300*time.Millisecond), ViewOwnWrites)
		cfg.RecoveryReplays = budget
		found := false
		for seed := range uint64(20) {
			res := runSeed(t, cfg, seed+1)
			if res.End != Corrupted {
				continue
			}
			found = true
			writer := res.Actors[res.Log[res.EndAt()].By]
			if writer.Attempt != int32(budget) || res.Divergences < budget+1 {
				t.Errorf("budget %d, seed %d: CORRUPTED_EVENT_LOG written on attempt %d after %d divergences", budget, seed+1, writer.Attempt, res.Divergences)
			}
		}
		if !found {
			t.Errorf("budget %d: no corrupted run in 20 seeds", budget)
		}
	}
}

// Sequential replays let one invocation of the run replay at a time.
func TestSequentialReplaysReplayOneAtATime(t *testing.T) {
	for _, seq := range []bool{false, true} {
		cfg := config(t, Storm(16, 3, 300*time.Millisecond), ViewOwnWrites)
		cfg.SequentialReplays = seq
		most := 0
		for seed := range uint64(50) {
			most = max(most, runSeed(t, cfg, seed+1).MaxConcurrentReplays)
		}
		if seq && most != 1 || !seq && most < 2 {
			t.Errorf("sequential replays %v: at most %d replays at once", seq, most)
		}
	}
}

func TestRunsAreDeterministic(t *testing.T) {
	cfg := config(t, Storm(16, 3, 300*time.Millisecond), ViewOwnWrites)
	a, b := runSeed(t, cfg, 7), runSeed(t, cfg, 7)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed gave two results")
	}
	c := runSeed(t, cfg, 8)
	if reflect.DeepEqual(a.Log, c.Log) {
		t.Fatal("two seeds gave the same log")
	}
}

// The World refuses a second create of an id, a wait completed twice and
// anything after the run's end; a lazy claim logs its step's create. An id
// is its kind's prefix and its ordinal: a wait at a step's ordinal is
// another entity, and lands (vercel/workflow #3696: "one correlation id
// bound to a step_ and a wait_").
func TestWorldRules(t *testing.T) {
	var w world
	ok := func(e program.Event, lazy bool) bool { return w.apply(1, &Entry{Event: e}, lazy, 0, w.ended) }
	created := program.E(program.StepCreated, 0).Named("a")
	if !ok(created, false) || ok(program.E(program.StepCreated, 0).Named("b"), false) {
		t.Error("a second create of step #0 was accepted")
	}
	if !ok(program.E(program.WaitCreated, 0), false) || ok(program.E(program.WaitCreated, 0), false) {
		t.Error("wait #0 beside step #0: want the first create accepted, the second refused")
	}
	if !ok(program.E(program.StepStarted, 1).Named("c"), true) || len(w.log) != 4 || w.log[2].Type != program.StepCreated || w.log[2].Name != "c" {
		t.Errorf("a lazy claim of #1: log %v", w.log)
	}
	if ok(program.E(program.StepStarted, 2), false) {
		t.Error("a plain claim of a step that does not exist was accepted")
	}
	wait := program.E(program.WaitCreated, 2)
	if !ok(wait, false) || !ok(program.E(program.WaitCompleted, 2), false) || ok(program.E(program.WaitCompleted, 2), false) {
		t.Error("a wait was completed twice")
	}
	if !ok(program.E(program.RunCompleted, -1), false) || ok(program.E(program.StepCompleted, 0), false) || ok(program.E(program.RunFailed, -1), false) {
		t.Error("a write after the run's end was accepted")
	}
	if got, _ := w.pendingSteps(len(w.log), 0); !got {
		t.Error("steps #0 and #1 are created and not finished, pendingSteps says none")
	}
	if i := slices.IndexFunc(w.log, func(e Entry) bool { return e.Type == program.RunCompleted }); i != len(w.log)-1 {
		t.Errorf("the run's end is event %d of %d", i, len(w.log))
	}
	// Two ends whose calls began before either landed are both accepted
	// (world-local checks, then writes); a running step may still finish.
	var v world
	v.apply(1, &Entry{Event: program.E(program.StepStarted, 0).Named("a")}, true, 1, false)
	if !v.apply(2, &Entry{Event: program.E(program.RunCompleted, -1)}, false, 0, false) ||
		!v.apply(3, &Entry{Event: program.E(program.RunCompleted, -1)}, false, 0, false) || v.ends != 2 {
		t.Errorf("two overlapping ends: %d accepted", v.ends)
	}
	if v.apply(4, &Entry{Event: program.E(program.RunFailed, -1)}, false, 0, true) {
		t.Error("an end whose call began after the run ended was accepted")
	}
	if !v.apply(5, &Entry{Event: program.E(program.StepCompleted, 0)}, false, 0, true) {
		t.Error("a running step could not finish after the run's end")
	}
}

// The inline-hang shape in the pinned release's view: the invocation that
// runs the whole batch inline is killed at the time limit while its hang
// runs, twice, each redelivery finds the step its own message claimed and
// runs it again (another step_started, no retry), and the run completes
// once an attempt returns: every run completes after two kills, none keeps
// the production marker (a step started more than once and never
// finished), and none corrupts, as the team found locally ("the shape
// alone does NOT corrupt").
func TestInlineHangKillsAndRerunsButDoesNotCorrupt(t *testing.T) {
	cfg := config(t, InlineHang(3, 2), ViewPrefix)
	cfg.MaxDuration, cfg.MaxTime = 800*time.Second, 24*time.Hour
	killed, marked, completed := 0, 0, 0
	for seed := range uint64(100) {
		res := runSeed(t, cfg, seed+1)
		if res.End == Corrupted || res.Fresh.Status == program.Diverged {
			t.Fatalf("seed %d: %s, fresh replay %s\n%s", seed+1, res.End, res.Fresh, strings.Join(res.Story(cfg.Program), "\n"))
		}
		if res.Killed != 2 {
			t.Errorf("seed %d: %d killed, want 2 (the hang's two hanging attempts)", seed+1, res.Killed)
		}
		if res.Killed > 0 {
			killed++
			hang := slices.IndexFunc(res.Actors, func(a Actor) bool { return a.Name == "hang" && a.Killed })
			rerun := slices.IndexFunc(res.Actors, func(a Actor) bool { return a.Name == "hang" && a.Parent >= 0 && res.Actors[a.Parent].Delivery > 1 })
			if hang < 0 || rerun < 0 {
				t.Errorf("seed %d: %d killed, but no killed hang (%d) or no re-run by a redelivery (%d)", seed+1, res.Killed, hang, rerun)
			}
		}
		if res.Killed > 0 && res.DuplicateStarts == 0 {
			t.Errorf("seed %d: %d killed and no step started twice", seed+1, res.Killed)
		}
		if res.HungSteps > 0 {
			marked++
		}
		if res.End == Completed {
			completed++
		}
	}
	if killed == 0 || completed != 100 || marked != 0 {
		t.Errorf("of 100 runs %d had a kill, %d completed, %d kept a hung step: want kills, all completed, none marked", killed, completed, marked)
	}
}

// A Runner's results are Run's, seed after seed, whatever ran on it
// before (a wide storm, then narrower runs and another view).
func TestRunnerGivesRunsResults(t *testing.T) {
	var x Runner
	for _, c := range []struct {
		branches int
		view     View
	}{{48, ViewPrefix}, {4, ViewOwnWrites}, {16, ViewOwnWrites}, {1, ViewPrefix}} {
		cfg := config(t, Storm(c.branches, 3, 300*time.Millisecond), c.view)
		for seed := range uint64(5) {
			want := runSeed(t, cfg, seed+1)
			got, err := x.Run(cfg, seed+1)
			if err != nil {
				t.Fatal(err)
			}
			// (An empty table may be empty on a Runner where Run's is nil.)
			if fmt.Sprintf("%+v", *got) != fmt.Sprintf("%+v", *want) {
				t.Fatalf("%d branches, %s, seed %d: the Runner's result differs from Run's", c.branches, c.view, seed+1)
			}
		}
	}
}

// A crash between a claim and its body kills the process that claimed (a
// queued step's delivery, or the invocation running the step inline), and
// its message comes back: the storm still completes in the pinned
// release's view, with crashes and re-run steps, and never corrupts.
func TestCrashesBetweenClaimAndBodyDoNotCorruptThePrefixView(t *testing.T) {
	cfg := config(t, Storm(16, 3, 300*time.Millisecond), ViewPrefix)
	cfg.Crash = 0.1
	crashes, reruns := 0, 0
	for seed := range uint64(50) {
		res := runSeed(t, cfg, seed+1)
		if res.End == Corrupted || res.Fresh.Status == program.Diverged {
			t.Fatalf("seed %d: %s, fresh %s\n%s", seed+1, res.End, res.Fresh, strings.Join(res.Story(cfg.Program), "\n"))
		}
		crashes += res.Crashes
		reruns += res.DuplicateStarts
	}
	if crashes == 0 || reruns == 0 {
		t.Errorf("%d crashes and %d steps started twice in 50 storms: want both", crashes, reruns)
	}
}

// A search over shapes and faults: DrawCase gives the same case for the
// same seed, valid programs with time limits and crashes across seeds,
// and the pinned release's view corrupts none of them but programs that
// read Date.now() (the pinned release's clock class; the claim a real run
// could contradict: simlab replays --search).
func TestSearchCasesCorruptThePrefixViewOnlyByTheClock(t *testing.T) {
	limits, crashes := 0, 0
	for seed := uint64(1); seed <= 200; seed++ {
		k := DrawCase(seed)
		if fmt.Sprint(k) != fmt.Sprint(DrawCase(seed)) {
			t.Fatalf("seed %d drew two cases", seed)
		}
		if k.MaxDuration > 0 {
			limits++
		}
		if k.Crash > 0 {
			crashes++
		}
		res, err := Run(k.Config(Defaults(nil)), seed)
		if err != nil {
			t.Fatal(err)
		}
		if (res.End == Corrupted || res.Fresh.Status == program.Diverged) && !program.MustCompile(k.Program).ReadsClock() {
			t.Fatalf("seed %d: %s, fresh %s\n%s\n%s", seed, res.End, res.Fresh, program.Format(k.Program), strings.Join(res.Story(program.MustCompile(k.Program)), "\n"))
		}
	}
	if limits == 0 || crashes == 0 {
		t.Errorf("200 cases drew %d time limits and %d crash rates: want both", limits, crashes)
	}
}

// A replay's cost passes between its start and its act: the run's first
// replay (its start invocation's) ends exactly the replay's cost later than
// a free replay does, base plus per entity and per event of what it loaded.
func TestReplayCostDelaysTheFirstReplay(t *testing.T) {
	free := Defaults(program.MustCompile(Storm(4, 1, 300*time.Millisecond)))
	free.Replay = program.ReplayCost{}
	costly := free
	costly.Replay = program.ReplayCost{Base: time.Second, PerEntity: 100 * time.Millisecond, PerEvent: 10 * time.Millisecond}
	a, err := Run(free, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(costly, 1)
	if err != nil {
		t.Fatal(err)
	}
	first := func(r *Result) Replay {
		for _, ac := range r.Actors {
			if len(ac.Replays) > 0 {
				return ac.Replays[0]
			}
		}
		t.Fatal("no replay")
		return Replay{}
	}
	fa, fb := first(a), first(b)
	// The start's log names no entity yet: base and its events only.
	want := time.Second + 10*time.Millisecond*time.Duration(fb.Saw)
	if got := time.Duration(fb.At - fa.At); fa.Saw != fb.Saw || got != want {
		t.Fatalf("first replay at %v (saw %d) free, %v (saw %d) with the cost: %v later, want %v", fa.At, fa.Saw, fb.At, fb.Saw, got, want)
	}
}

// A step whose first attempts hang (hangs: N) ends only by its
// invocation's time limit: with one, each hanging attempt is killed and
// the redelivery recovers the step it owns, until an attempt finishes;
// without one the run never ends.
func TestHangingStepEndsOnlyByItsTimeLimit(t *testing.T) {
	cfg := Defaults(program.MustCompile([]program.Node{{Step: "h", Hangs: 2}, {Step: "final"}}))
	cfg.MaxDuration = time.Second
	res, err := Run(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	starts := 0
	for _, e := range res.Log {
		if e.Type == program.StepStarted && e.Ordinal == 0 {
			starts++
		}
	}
	if res.End != Completed || res.Killed != 2 || starts != 3 {
		t.Errorf("with a 1s limit: %s, %d killed, h started %d times; want completed, 2, 3", res.End, res.Killed, starts)
	}
	cfg.MaxDuration = 0
	if res, err = Run(cfg, 1); err != nil || res.End != Stuck || res.Killed != 0 {
		t.Errorf("without a limit: %v, %v; want stuck, none killed", res.End, err)
	}
}

// A story replays as the run did: with call-site ids, the fresh replay of
// the log before the event it stops at consumes that prefix (it diverged
// at its first hook event when the story replayed with positional ids).
func TestStoriesReplayWithTheRunsCorrelationIDs(t *testing.T) {
	cfg := config(t, HookStorm(16, 3, 300*time.Millisecond), ViewOwnWrites)
	cfg.Resumes, cfg.CallSiteIDs = HookStormResumes, true
	told := 0
	for seed := range uint64(30) {
		res := runSeed(t, cfg, seed+1)
		if res.End != Corrupted {
			continue
		}
		told++
		story := strings.Join(res.Story(cfg.Program), "\n")
		if strings.Contains(story, "events before it: diverged") {
			t.Fatalf("seed %d: the story's replay of the log before the divergence diverged itself:\n%s", seed+1, story)
		}
	}
	if told == 0 {
		t.Error("no hook storm with call-site ids corrupted in 30 seeds: nothing told")
	}
}

// Cause names each corrupted run's story by its writer's first wrong act:
// the clock storm's by a Date.now() read, a storm without slot ids' by a
// race decided on a stale log (or another entity minted there), and the
// story says the same in words.
func TestCauseNamesTheStorysWrongAct(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want []string
	}{
		{config(t, ClockStorm(16, 3, time.Second), ViewPrefix), []string{CauseClockAhead}},
		{config(t, Storm(16, 3, 300*time.Millisecond), ViewOwnWrites), []string{CauseStaleRace, CauseStaleMint, CauseUnsettledRace}},
	} {
		named := 0
		for seed := range uint64(100) {
			res := runSeed(t, c.cfg, seed+1)
			cause := res.Cause(c.cfg.Program)
			if (cause == "") != (res.End != Corrupted && res.Fresh.Status != program.Diverged) {
				t.Fatalf("seed %d: %s, fresh %s, cause %q", seed+1, res.End, res.Fresh.Status, cause)
			}
			if cause == "" || cause == CauseOwnViews {
				continue
			}
			named++
			if !slices.Contains(c.want, cause) {
				t.Errorf("seed %d: cause %q, want one of %q", seed+1, cause, c.want)
			}
			story := strings.Join(res.Story(c.cfg.Program), "\n")
			words := map[string]string{CauseClockAhead: "Date.now() at statement", CauseStaleRace: "its replay saw branch", CauseUnsettledRace: "its replay saw it unsettled", CauseStaleMint: "it had not seen"}[cause]
			if !strings.Contains(story, words) {
				t.Errorf("seed %d: cause %q but the story does not say %q:\n%s", seed+1, cause, words, story)
			}
		}
		if named == 0 {
			t.Errorf("%s: no cause named in 100 seeds", c.want)
		}
	}
}

// Core bounds a refused replay's restarts: at most StaleRestarts in one
// delivery, then the run is invoked again StaleReinvokeDelay later (a
// stale replay's re-invocation), at most StaleReinvocations times, then it
// fails. Checked from the history: no invocation replays more than
// 1 + StaleRestarts times after refused writes of its own, the storm's
// fence re-invokes some runs, and with no restarts and no re-invocations
// the first refusal fails the run.
func TestStaleRestartsAreBoundedAsCoresAre(t *testing.T) {
	cfg := config(t, HookStorm(16, 3, 300*time.Millisecond), ViewTailFence)
	cfg.Resumes = HookStormResumes
	reinvoked := 0
	for seed := range uint64(20) {
		res := runSeed(t, cfg, seed+1)
		refused := make([]int, len(res.Actors))
		for _, w := range res.Writes {
			if w.Fenced {
				refused[w.By]++
			}
		}
		for a, rec := range res.Actors {
			if rec.Kind == ActorWorkflow && refused[a] > cfg.StaleRestarts+1 {
				t.Fatalf("seed %d: %s had %d writes refused in one delivery: want at most %d (its restarts, and the refusal that re-invokes)", seed+1, res.ActorName(int32(a)), refused[a], cfg.StaleRestarts+1)
			}
			if rec.Cause == CauseStale {
				reinvoked++
			}
		}
		if res.StaleFailures > 0 {
			t.Errorf("seed %d: %d runs failed past their re-invocations", seed+1, res.StaleFailures)
		}
	}
	if reinvoked == 0 {
		t.Error("no hook storm behind the fence was re-invoked: no delivery spent its restarts")
	}
	cfg.StaleRestarts, cfg.StaleReinvocations = 0, 0
	failed := 0
	for seed := range uint64(20) {
		if res := runSeed(t, cfg, seed+1); res.StaleFailures > 0 {
			failed++
			if res.End != Failed {
				t.Errorf("seed %d: a run failed past its re-invocations ended %s", seed+1, res.End)
			}
		}
	}
	if failed == 0 {
		t.Error("with no restarts and no re-invocations, no refusal failed a run")
	}
}

// A search case is never left stuck: an invocation killed (or restarted)
// after its creates landed and before it published their messages leaves
// the steps created and unqueued, and the next replay that reaches them
// queues them, as core's "a later handler queues it" does.
func TestSearchCasesAreNeverLeftStuck(t *testing.T) {
	for seed := uint64(1); seed <= 1000; seed++ {
		k := DrawCase(seed)
		cfg := k.Config(Defaults(nil))
		res := runSeed(t, cfg, seed)
		if res.End == Stuck {
			t.Fatalf("seed %d (max_inline %d, limit %v, crash %v): stuck, fresh replay %s", seed, k.MaxInline, k.MaxDuration, k.Crash, res.Fresh)
		}
	}
}
