package conformance

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/realworld"
	"pgregory.net/rapid"
)

// hookRace is a racing batch of hook (and run) events and its set-up, each
// set-up call a batch of its own.
type hookRace struct {
	name  string
	runs  int
	setup []realworld.Call
	race  []realworld.Call
}

func hc(run, hook, token int, typ string) realworld.Call {
	return realworld.Call{Op: "event", Run: run, Type: typ, Hook: hook, Token: token}
}

func re(run int, typ string) realworld.Call { return realworld.Call{Op: "event", Run: run, Type: typ} }

var hookRaces = []hookRace{
	{"two hooks of one run race for one token", 1,
		[]realworld.Call{re(0, "run_started")},
		[]realworld.Call{hc(0, 0, 0, "hook_created"), hc(0, 1, 0, "hook_created")}},
	{"two runs' hooks race for one token", 2,
		[]realworld.Call{re(0, "run_started"), re(1, "run_started")},
		[]realworld.Call{hc(0, 0, 0, "hook_created"), hc(1, 0, 0, "hook_created")}},
	{"one hook created twice at once (two replays)", 1,
		[]realworld.Call{re(0, "run_started")},
		[]realworld.Call{hc(0, 0, 0, "hook_created"), hc(0, 0, 0, "hook_created")}},
	{"hook_received racing hook_disposed", 1,
		[]realworld.Call{re(0, "run_started"), hc(0, 0, 0, "hook_created")},
		[]realworld.Call{hc(0, 0, 0, "hook_received"), hc(0, 0, 0, "hook_disposed")}},
	{"hook_received racing run_completed", 1,
		[]realworld.Call{re(0, "run_started"), hc(0, 0, 0, "hook_created")},
		[]realworld.Call{hc(0, 0, 0, "hook_received"), re(0, "run_completed")}},
	{"two hook_disposed", 1,
		[]realworld.Call{re(0, "run_started"), hc(0, 0, 0, "hook_created")},
		[]realworld.Call{hc(0, 0, 0, "hook_disposed"), hc(0, 0, 0, "hook_disposed")}},
	{"two hook_received", 1,
		[]realworld.Call{re(0, "run_started"), hc(0, 0, 0, "hook_created")},
		[]realworld.Call{hc(0, 0, 0, "hook_received"), hc(0, 0, 0, "hook_received")}},
	{"hook_created racing run_completed", 1,
		[]realworld.Call{re(0, "run_started")},
		[]realworld.Call{hc(0, 0, 0, "hook_created"), re(0, "run_completed")}},
	{"hook_disposed racing run_cancelled", 1,
		[]realworld.Call{re(0, "run_started"), hc(0, 0, 0, "hook_created")},
		[]realworld.Call{hc(0, 0, 0, "hook_disposed"), re(0, "run_cancelled")}},
	{"hook_disposed racing another hook's hook_created on its token", 1,
		[]realworld.Call{re(0, "run_started"), hc(0, 0, 0, "hook_created")},
		[]realworld.Call{hc(0, 0, 0, "hook_disposed"), hc(0, 1, 0, "hook_created")}},
	{"a disposed hook re-created racing another hook on its token", 1,
		[]realworld.Call{re(0, "run_started"), hc(0, 0, 0, "hook_created"), hc(0, 0, 0, "hook_disposed")},
		[]realworld.Call{hc(0, 0, 0, "hook_created"), hc(0, 1, 0, "hook_created")}},
}

// history is the race as a concurrent history, the racing calls held back
// as delays says (microseconds each; 0: with the batch).
func (r hookRace) history(delays []int) realworld.History {
	h := realworld.History{Name: r.name, Runs: r.runs}
	for _, c := range r.setup {
		h.Batches = append(h.Batches, realworld.Batch{Calls: []realworld.ConcCall{{Call: c}}})
	}
	var b realworld.Batch
	for i, c := range r.race {
		cc := realworld.ConcCall{Call: c}
		if i < len(delays) {
			cc.DelayUS = delays[i]
		}
		b.Calls = append(b.Calls, cc)
	}
	h.Batches = append(h.Batches, b)
	return h
}

// hookTrialDelays are the hold-backs a race's trials cycle through: at once,
// then one call or the other held back, by 50µs to 3.2ms.
var hookTrialDelays = [][]int{{0, 0}, {0, 50}, {50, 0}, {0, 200}, {200, 0}, {0, 0}, {0, 800}, {800, 0}, {0, 3200}, {3200, 0}}

var hookSeed = flag.Uint64("hooks.seed", 0, "draw TestHooksConcurrent's generated hook histories from this seed (0: a fresh one, logged)")

// TestHooksConcurrent is the concurrent differential test of hook events
// (docs/CONFORMANCE.md, "Hooks"): each race of hookRaces, from its set-up,
// run SIMLAB_HOOK_RACE_TRIALS times (default 20) on the real World, the
// trials cycling through hookTrialDelays, then SIMLAB_HOOK_HISTORIES
// (default 30) generated histories (genHookHistory, seeded by -hooks.seed);
// every real outcome (each call's answer and logged event, then each run's
// status, hooks, tokens' owners and log) must be one the model allows over
// the interleavings of the calls' steps (hookconc.go: world.HookTxn and the
// run's end). The outcomes met of those allowed are logged per race. A
// concurrent sequence file replays with -hooks.sequences FILE.
func TestHooksConcurrent(t *testing.T) {
	worlds, st := hookWorlds(t)
	trials := 20
	if v := os.Getenv("SIMLAB_HOOK_RACE_TRIALS"); v != "" {
		var err error
		if trials, err = strconv.Atoi(v); err != nil || trials < 1 {
			t.Fatalf("SIMLAB_HOOK_RACE_TRIALS=%q: want a positive number of trials per race", v)
		}
	}
	histories := 30
	if v := os.Getenv("SIMLAB_HOOK_HISTORIES"); v != "" {
		var err error
		if histories, err = strconv.Atoi(v); err != nil || histories < 0 {
			t.Fatalf("SIMLAB_HOOK_HISTORIES=%q: want a number of generated hook histories per World", v)
		}
	}
	seed := *hookSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	var file *realworld.ConcurrentFile
	if *hookSequencesFlag != "" {
		if realworld.FileKind(*hookSequencesFlag) != "histories" {
			t.Skip("-hooks.sequences names a sequential file: TestHooks replays it")
		}
		var err error
		if file, err = realworld.ReadConcurrentFile(*hookSequencesFlag); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range worlds {
		t.Run(w.Name, func(t *testing.T) {
			h := startWorld(t, w, st)
			began := time.Now()
			if file != nil {
				for i, fh := range file.Histories {
					res := hookExplained(t, w, h.driver(), fh.History, fmt.Sprintf("history %d (%s)", i, fh.Name))
					if testing.Verbose() {
						t.Logf("history %d (%s) on %s:\n%s", i, fh.Name, w.Package, realworld.HistoryTable(fh.History, res, nil))
					}
				}
				return
			}
			var report strings.Builder
			for _, race := range hookRaces {
				seen := map[string]int{}
				for i := 0; i < trials; i++ {
					hist := race.history(hookTrialDelays[i%len(hookTrialDelays)])
					res := hookExplained(t, w, h.driver(), hist, fmt.Sprintf("%s, trial %d", race.name, i))
					last := len(hist.Batches) - 1
					seen[OutcomeKey(hist.Batches[last].Calls, res[last].Replies, res[last].Readbacks)]++
				}
				fmt.Fprintf(&report, "%s (%d trials):\n", race.name, trials)
				for _, o := range HookOutcomes(w, race.history(nil)) {
					fmt.Fprintf(&report, "  %3d  %s\n", seen[o], o)
				}
			}
			t.Logf("%s: %d races × %d trials, every real outcome one world.Hooks allows, in %v; outcomes met of those allowed:\n%s",
				w.Package, len(hookRaces), trials, time.Since(began).Round(time.Millisecond), report.String())
			began = time.Now()
			gen := rapid.Custom(genHookHistory)
			for i := 0; i < histories; i++ {
				hist := gen.Example(int(seed%(1<<31)) + i)
				hist.Name = fmt.Sprintf("generated hook history %d of seed %d", i, seed)
				hookExplained(t, w, h.driver(), hist, hist.Name)
			}
			t.Logf("%s: %d generated hook histories (seed %d), every real outcome one world.Hooks allows, in %v",
				w.Package, histories, seed, time.Since(began).Round(time.Millisecond))
		})
	}
}

// hookExplained runs a history on the real World and fails the test, with
// the history as a table and a concurrent sequence file, unless world.Hooks
// allows every batch's real outcome.
func hookExplained(t *testing.T, w realworld.World, d *realworld.Driver, hist realworld.History, what string) []realworld.BatchResult {
	t.Helper()
	res, err := d.RunHistory(hist)
	if err != nil {
		t.Fatal(err)
	}
	bi, allowed := ExplainHooks(w, hist, res)
	if bi < 0 {
		return res
	}
	js, _ := json.MarshalIndent(realworld.ConcurrentFile{Histories: []realworld.FileHistory{{History: hist, Seen: res}}}, "", " ")
	file := filepath.Join(artifacts(t), fmt.Sprintf("unexplained-hooks-%s-%d.json", w.Name, time.Now().UnixNano()))
	if err := os.WriteFile(file, js, 0o644); err != nil {
		t.Error(err)
	}
	real := OutcomeKey(hist.Batches[bi].Calls, res[bi].Replies, res[bi].Readbacks)
	sort.Strings(allowed)
	t.Fatalf("%s on %s: batch %d's outcome is none world.Hooks allows:\n  real:    %s\n  allowed: %s\n%s\nreplay: go test ./conformance/ -run HooksConcurrent -v -args -world %s -hooks.sequences %s\n%s",
		what, w.Package, bi, real, strings.Join(allowed, "\n           "), realworld.HistoryTable(hist, res, nil), w.Name, file, js)
	return nil
}

// genHookHistory draws a concurrent history of hook events: 1–2 runs, a
// set-up of 0–3 calls one at a time, then 1–2 batches of 2–3 calls at once
// over 2 hooks a run and 2 tokens, some held back 50µs–6.4ms. A batch holds
// at most one run event per run: racing run events are the step tests'
// (TestConcurrent), and the hook model takes a run's end whole.
func genHookHistory(t *rapid.T) realworld.History {
	h := realworld.History{Runs: rapid.IntRange(1, 2).Draw(t, "runs")}
	tokens := map[[2]int]int{}
	kinds := []string{"hook_created", "hook_received", "hook_disposed", "hook_created", "run_completed",
		"hook_received", "hook_disposed", "run_cancelled", "hook_created", "run_started"}
	call := func(runEvents map[int]bool) realworld.ConcCall {
		for {
			kind := rapid.SampledFrom(kinds).Draw(t, "kind")
			run := rapid.IntRange(0, h.Runs-1).Draw(t, "run")
			if !realworld.HookEvent(kind) {
				if runEvents[run] {
					continue
				}
				runEvents[run] = true
				return realworld.ConcCall{Call: re(run, kind)}
			}
			hook := rapid.IntRange(0, 1).Draw(t, "hook")
			tok, ok := tokens[[2]int{run, hook}]
			if !ok {
				tok = rapid.IntRange(0, 1).Draw(t, "token")
				tokens[[2]int{run, hook}] = tok
			}
			return realworld.ConcCall{Call: hc(run, hook, tok, kind)}
		}
	}
	for i, n := 0, rapid.IntRange(0, 3).Draw(t, "set-up"); i < n; i++ {
		h.Batches = append(h.Batches, realworld.Batch{Calls: []realworld.ConcCall{call(map[int]bool{})}})
	}
	for i, n := 0, rapid.IntRange(1, 2).Draw(t, "batches"); i < n; i++ {
		var b realworld.Batch
		runEvents := map[int]bool{}
		for j, m := 0, rapid.IntRange(2, 3).Draw(t, "calls"); j < m; j++ {
			c := call(runEvents)
			if rapid.IntRange(0, 3).Draw(t, "held back") == 3 {
				c.DelayUS = 50 << rapid.IntRange(0, 7).Draw(t, "by")
			}
			b.Calls = append(b.Calls, c)
		}
		h.Batches = append(h.Batches, b)
	}
	return h
}
