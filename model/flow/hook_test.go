package flow

import (
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/model/program"
)

func approvals(rounds int) []program.Node { return HookLoop(rounds, 300*time.Millisecond) }

func count(log []Entry, t program.EventType) int {
	n := 0
	for _, e := range log {
		if e.Type == t {
			n++
		}
	}
	return n
}

// With no one outside, a hook never fires: every race goes to the sleep,
// the hook is created once and disposed once, and the run completes.
func TestAHookNobodyResumesIsCreatedAndDisposed(t *testing.T) {
	cfg := config(t, approvals(3), ViewPrefix)
	for seed := range uint64(20) {
		res := runSeed(t, cfg, seed+1)
		if res.End != Completed || res.Fresh.Status != program.Completed {
			t.Fatalf("seed %d: %s, fresh %s\n%s", seed+1, res.End, res.Fresh, strings.Join(res.Story(cfg.Program), "\n"))
		}
		if c, r, d := count(res.Log, program.HookCreated), count(res.Log, program.HookReceived), count(res.Log, program.HookDisposed); c != 1 || r != 0 || d != 1 {
			t.Fatalf("seed %d: %d hook_created, %d hook_received, %d hook_disposed; want 1, 0, 1", seed+1, c, r, d)
		}
		if n := count(res.Log, program.StepCreated); n != 1 {
			t.Fatalf("seed %d: %d steps created; with no payload only final runs", seed+1, n)
		}
	}
}

// An outside system resuming the hook: each accepted hook_received wakes
// one invocation, whose replay hands the payload to the race; the payloads
// that won add their extra steps.
func TestResumesWakeTheRun(t *testing.T) {
	cfg := config(t, approvals(3), ViewPrefix)
	cfg.Resumes = Resumes{Every: 100 * time.Millisecond, Count: 10}
	extras := 0
	for seed := range uint64(20) {
		res := runSeed(t, cfg, seed+1)
		received := count(res.Log, program.HookReceived)
		if received == 0 {
			t.Fatalf("seed %d: a hook resumed every 100ms for 1s received nothing\n%s", seed+1, strings.Join(res.Story(cfg.Program), "\n"))
		}
		wakes := 0
		for _, a := range res.Actors {
			if a.Kind == ActorWorkflow && a.Cause == CauseResume {
				wakes++
			}
		}
		if wakes != received {
			t.Fatalf("seed %d: %d hook_received, %d invocations woken by a resume: want one each", seed+1, received, wakes)
		}
		for _, e := range res.Log {
			if e.Type == program.HookReceived && res.Actors[e.By].Kind != ActorResume {
				t.Fatalf("seed %d: hook_received written by a %s", seed+1, res.Actors[e.By].Kind)
			}
		}
		extras += count(res.Log, program.StepCreated) - 1
	}
	if extras == 0 {
		t.Fatal("no payload ever won a race against its 300ms watchdog")
	}
}

// A hook's tokens are positional, and the World gives a token to one live
// hook: two hooks of one run created from replays that drew the same token
// for different hooks meet as hook_conflict. The World's rules alone.
func TestTheWorldGivesAHooksTokenToOneLiveHook(t *testing.T) {
	var w world
	created := func(ord, token int32) bool {
		ev := program.E(program.HookCreated, ord)
		ev.Token = token
		return w.apply(0, &Entry{Event: ev}, false, 0, false)
	}
	if !created(0, 0) || !created(1, 0) || w.log[1].Type != program.HookConflict {
		t.Fatalf("a second live hook with token 0: %v", w.log)
	}
	if created(0, 1) {
		t.Fatal("a second hook_created for one id was accepted")
	}
	if !w.apply(0, &Entry{Event: program.E(program.HookReceived, 0)}, false, 0, false) || w.apply(0, &Entry{Event: program.E(program.HookReceived, 1)}, false, 0, false) {
		t.Fatal("hook_received: want accepted for the live hook, refused for the conflicted one")
	}
	if !w.apply(0, &Entry{Event: program.E(program.HookDisposed, 0)}, false, 0, false) || w.apply(0, &Entry{Event: program.E(program.HookDisposed, 0)}, false, 0, false) {
		t.Fatal("hook_disposed: want the first accepted, the second refused")
	}
	if w.apply(0, &Entry{Event: program.E(program.HookReceived, 0)}, false, 0, false) {
		t.Fatal("hook_received after hook_disposed was accepted")
	}
	if !created(2, 0) || w.log[len(w.log)-1].Type != program.HookCreated {
		t.Fatal("a disposed hook's token is free again")
	}
}

// The search over programs with hooks (DrawHookCase) on the pinned
// release's view: every case whose log no replay consumes reads Date.now()
// (the known clock class); no program whose only choice is a hook's
// corrupts. Not vacuous: about half the cases create a hook, and some
// clock case corrupts.
func TestTheHookSearchCorruptsOnlyClockProgramsOnThePinnedView(t *testing.T) {
	var x Runner
	hooked, corrupted := 0, 0
	for s := uint64(1); s <= 2000; s++ {
		k := DrawHookCase(s)
		c := program.MustCompile(k.Program)
		if c.UsesHooks() {
			hooked++
		}
		res, err := x.Run(k.Config(Defaults(c)), s)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Unconsumable() {
			continue
		}
		corrupted++
		if !c.ReadsClock() {
			t.Errorf("case %d corrupts its log with no Date.now() read (hooks: %v): simlab replays --search --hooks --seed %d --view prefix --sequential off", s, c.UsesHooks(), s)
		}
	}
	if hooked < 600 || corrupted == 0 {
		t.Errorf("%d of 2000 cases create a hook, %d corrupt: want about half, and some", hooked, corrupted)
	}
}
