package conformance

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/realworld"
	"pgregory.net/rapid"
)

var hookSequencesFlag = flag.String("hooks.sequences", "", "TestHooks: replay the hook sequence file FILE (docs/CONFORMANCE.md, Hooks) instead of testdata/hooks.json and the generated sequences")

// hookWorlds are the Worlds of realWorlds whose hook rules world.Hooks
// claims; the others are logged as not checked.
func hookWorlds(t *testing.T) ([]realworld.World, *stopper) {
	t.Helper()
	worlds, st := realWorlds(t)
	var out []realworld.World
	for _, w := range worlds {
		if HookWorld(w) {
			out = append(out, w)
		} else {
			t.Logf("%s: hooks not checked (world.Hooks claims %s)", w.Package, strings.Join(HookWorlds, ", "))
		}
	}
	if len(out) == 0 {
		t.Skipf("-world %s: the hook tests check %s only", *worldFlag, strings.Join(HookWorlds, ", "))
	}
	return out, st
}

// TestHooks is the differential test of hook events (docs/CONFORMANCE.md,
// "Hooks"): the hand-written sequences of testdata/hooks.json, one or more
// per rule, then rapid-generated sequences of hook and run events over 1–3
// runs sharing three tokens, each call sent to the real World and to
// world.Hooks (HookModelRun), every answer and read-back compared: the
// World's answer, the event it logged, the hook (hooks.get), the token's
// owner (hooks.getByToken) and the hook's entries in the run's log.
func TestHooks(t *testing.T) {
	worlds, st := hookWorlds(t)
	path := "testdata/hooks.json"
	if *hookSequencesFlag != "" {
		path = *hookSequencesFlag
	}
	file, err := realworld.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range worlds {
		t.Run(w.Name, func(t *testing.T) {
			h := startWorld(t, w, st)
			began := time.Now()
			for i, s := range file.Sequences {
				cmp := compareHooks(t, w, h.driver(), s.Calls, fmt.Sprintf("hook sequence %d (%s)", i, s.Name))
				if testing.Verbose() {
					t.Logf("hook sequence %d (%s), real and model agree:\n%s", i, s.Name, realworld.Table(cmp.calls, cmp.reals, cmp.mods))
				}
			}
			if *hookSequencesFlag != "" {
				t.Logf("%s: %d hook sequences from %s agree, in %v", w.Package, len(file.Sequences), path, time.Since(began).Round(time.Millisecond))
				return
			}
			compared := 0
			rapid.Check(t, func(rt *rapid.T) {
				cmp := newHookComparison(rt, w, h.driver(), "generated hook sequence")
				genHookSequence(rt, cmp.apply)
				cmp.done()
				compared++
			})
			t.Logf("%s: %d hook sequences of %s and %d generated agree, in %v; %d situations met",
				w.Package, len(file.Sequences), path, compared, time.Since(began).Round(time.Millisecond), len(hookCov.m[w.Name]))
			if testing.Verbose() {
				t.Logf("situations met on %s:\n%s", w.Package, hookCov.report(w.Name))
			}
			if path := os.Getenv("SIMLAB_CONFORMANCE_COVERAGE"); path != "" {
				if err := os.WriteFile(path+".hooks."+w.Name, []byte(hookCov.report(w.Name)), 0o644); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// newHookComparison is a comparison against HookModelRun (world.Hooks).
func newHookComparison(t failer, w realworld.World, d *realworld.Driver, what string) *comparison {
	return &comparison{t: t, w: w, what: what, real: d.NewRun(), model: NewHookModelRun(w), hooks: true}
}

func compareHooks(t failer, w realworld.World, d *realworld.Driver, calls []realworld.Call, what string) *comparison {
	t.Helper()
	return newHookComparison(t, w, d, what).all(calls)
}

// hookCov counts the situations the compared hook sequences met.
var hookCov = &coverage{m: map[string]map[string]int{}}

// genHookSequence draws a sequence of hook and run events over 1–3 runs, up
// to three hooks a run and three tokens shared by the runs (each hook's
// token drawn once, at its first call), and hands each call to emit as it is
// drawn. Hook events weigh most (hook_created, hook_received and
// hook_disposed alike); the run's end, one draw in eleven, comes in all three
// kinds and repeats, so that hooks meet ended runs, released tokens and
// re-creations of disposed hooks.
func genHookSequence(t *rapid.T, emit func(realworld.Call)) {
	runs := rapid.IntRange(1, 3).Draw(t, "runs")
	for r := 0; r < runs; r++ {
		emit(realworld.Call{Op: "create_run", Run: r})
	}
	tokens := map[[2]int]int{}
	var used [][2]int // the (run, hook) pairs called so far, in order
	kinds := []string{
		"hook_created", "hook_received", "hook_disposed", "hook_created", "run_started",
		"hook_received", "hook_disposed", "hook_created", "run_end", "hook_received", "hook_disposed",
	}
	next := rapid.Custom(func(t *rapid.T) realworld.Call {
		kind := rapid.SampledFrom(kinds).Draw(t, "kind")
		run := rapid.IntRange(0, runs-1).Draw(t, "run")
		switch kind {
		case "run_started":
			return realworld.Call{Op: "event", Run: run, Type: kind}
		case "run_end":
			end := rapid.SampledFrom([]string{"run_completed", "run_cancelled", "run_failed"}).Draw(t, "end")
			return realworld.Call{Op: "event", Run: run, Type: end}
		}
		hook := rapid.IntRange(0, 2).Draw(t, "hook")
		// Three in four receives and disposes go to a hook called before
		// (of any run), so that most meet a hook that exists or did.
		if kind != "hook_created" && len(used) > 0 && rapid.IntRange(0, 3).Draw(t, "known") != 0 {
			k := rapid.SampledFrom(used).Draw(t, "which")
			run, hook = k[0], k[1]
		}
		token, ok := tokens[[2]int{run, hook}]
		if !ok {
			token = rapid.IntRange(0, 2).Draw(t, "token")
			tokens[[2]int{run, hook}] = token
			used = append(used, [2]int{run, hook})
		}
		return realworld.Call{Op: "event", Run: run, Type: kind, Hook: hook, Token: token}
	})
	// About 16 calls on average, at most 40.
	for i := 0; i < 40 && rapid.IntRange(0, 15).Draw(t, "more") != 0; i++ {
		emit(next.Draw(t, "next"))
	}
}
