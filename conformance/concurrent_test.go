package conformance

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/simlab/simlab/realworld"
	"pgregory.net/rapid"
)

var concurrentSeed = flag.Uint64("concurrent.seed", 0, "draw TestConcurrent's generated histories from this seed (0: a fresh one, logged)")

// linTimeout bounds porcupine on one history; a check that runs out is
// Unknown, never a pass.
const linTimeout = 20 * time.Second

// TestConcurrent is the concurrent differential test (issue 18,
// docs/CONFORMANCE.md). Against every real World:
//
//  1. The known races (testdata/races.json): each racing batch is forced
//     on the real World in the model's interleaving that produces it; the
//     real World must end it as the model says, every time, and porcupine
//     must find it not linearizable against model/world taken one call at a
//     time (a race is what no sequential order explains).
//  2. Direction 2: every outcome the model's split calls can produce for a
//     pair of writes, from four set-ups, forced on the real World, must be
//     what the real World does.
//  3. Direction 1: generated concurrent histories (batches of 1–8 calls at
//     once, reads among them, some held back) run free on the real World;
//     every real outcome must be one the model can produce. Each history is
//     also checked for linearizability (porcupine; counted, not failed: the
//     real Worlds are not linearizable).
//
// -sequences FILE replays a concurrent sequence file instead (direction 1
// on each history; a batch with a schedule is forced).
func TestConcurrent(t *testing.T) {
	if *sequencesFlag != "" && realworld.FileKind(*sequencesFlag) == "sequences" {
		t.Skip("-sequences names a sequential sequence file: TestConformance replays it")
	}
	worlds, st := realWorlds(t)
	var file *realworld.ConcurrentFile
	if *sequencesFlag != "" {
		var err error
		if file, err = realworld.ReadConcurrentFile(*sequencesFlag); err != nil {
			t.Fatalf("-sequences: %v", err)
		}
	}
	races, err := realworld.ReadRaces(realworld.RacesFile())
	if err != nil {
		t.Fatal(err)
	}
	seed := *concurrentSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	histories := 100
	if v := os.Getenv("SIMLAB_CONCURRENT_HISTORIES"); v != "" {
		if histories, err = strconv.Atoi(v); err != nil || histories < 0 {
			t.Fatalf("SIMLAB_CONCURRENT_HISTORIES=%q: want a number of histories per World", v)
		}
	}
	for _, w := range worlds {
		t.Run(w.Name, func(t *testing.T) {
			h := startWorld(t, w, st)
			began := time.Now()
			if file != nil {
				for i, fh := range file.Histories {
					what := fmt.Sprintf("history %d (%s)", i, fh.Name)
					res := explained(t, w, h.driver(), fh.History, what)
					for bi, br := range res {
						if len(br.Broken) > 0 {
							t.Errorf("%s, batch %d: the real World could not take the schedule's steps in its order: %v", what, bi, br.Broken)
						}
					}
					if testing.Verbose() {
						t.Logf("%s on %s:\n%s", what, w.Package, realworld.HistoryTable(fh.History, res, nil))
					}
				}
				t.Logf("%s: %d histories from %s, every real outcome explained, in %v", w.Package, len(file.Histories), *sequencesFlag, time.Since(began).Round(time.Millisecond))
				return
			}
			n := checkRaces(t, w, h, races)
			forced := checkForcedPairs(t, w, h)
			counts := checkGenerated(t, w, h, seed, histories)
			t.Logf("%s: %d known races forced, %d model outcomes of pairs forced, %d generated histories (seed %d; linearizable %d, not %d, unknown %d) all explained, in %v",
				w.Package, n, forced, histories, seed, counts[porcupine.Ok], counts[porcupine.Illegal], counts[porcupine.Unknown], time.Since(began).Round(time.Millisecond))
		})
	}
}

// artifacts is where failure reports and race visualizations go:
// SIMLAB_CONFORMANCE_ARTIFACTS, or the test's temporary directory.
func artifacts(t *testing.T) string {
	if d := os.Getenv("SIMLAB_CONFORMANCE_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// checkRaces forces every known race of w and returns how many it forced.
func checkRaces(t *testing.T, w realworld.World, h *host, races []realworld.Race) int {
	t.Helper()
	n := 0
	for _, r := range races {
		if !r.On(w) {
			continue
		}
		hist, err := forced(r, w)
		if err != nil {
			t.Fatal(err)
		}
		res, err := h.driver().RunHistory(hist)
		if err != nil {
			t.Fatal(err)
		}
		last := res[len(res)-1]
		if got := OutcomeKey(r.Batch, last.Replies, last.Readbacks); got != r.Outcome || len(last.Broken) > 0 {
			t.Errorf("race %s forced on %s: ended %s (schedule broken at %v), the model says %s\n%s", r.Name, w.Package, got, last.Broken, r.Outcome, realworld.HistoryTable(hist, res, nil))
			continue
		}
		lin := CheckLinearizable(w, hist, res, linTimeout)
		if lin.Result != porcupine.Illegal {
			t.Errorf("race %s forced on %s: porcupine says %s, want not linearizable (a race)\n%s", r.Name, w.Package, lin.Result, realworld.HistoryTable(hist, res, nil))
			continue
		}
		if v, _, _ := Explains(w, hist, res); v != Explained {
			t.Errorf("race %s on %s: the model's own interleaving is %v", r.Name, w.Package, v)
		}
		if dir := os.Getenv("SIMLAB_CONFORMANCE_ARTIFACTS"); dir != "" {
			if err := lin.Visualize(filepath.Join(artifacts(t), fmt.Sprintf("race-%s-%s.html", r.Name, w.Name))); err != nil {
				t.Error(err)
			}
		}
		n++
	}
	return n
}

// setups are the set-ups direction 2 starts pairs of writes from.
var setups = []struct {
	name  string
	calls []realworld.ConcCall
}{
	{"run pending", nil},
	{"run running", []realworld.ConcCall{ev("run_started", 0, false)}},
	{"step pending", []realworld.ConcCall{ev("run_started", 0, false), ev("step_created", 0, false)}},
	{"step running", []realworld.ConcCall{ev("run_started", 0, false), ev("step_created", 0, false), ev("step_started", 0, false)}},
}

// pairKinds are the writes direction 2 pairs: every event type, a lazy
// start, a retry two hours ahead.
var pairKinds = []realworld.ConcCall{
	ev("run_started", 0, false), ev("run_completed", 0, false), ev("run_cancelled", 0, false), ev("run_failed", 0, false),
	ev("step_created", 0, false), ev("step_started", 0, false), ev("step_started", 0, true), ev("step_completed", 0, false),
	ev("step_failed", 0, false), ev("step_retrying", 0, false),
}

func ev(typ string, step int, lazy bool) realworld.ConcCall {
	c := realworld.ConcCall{Call: realworld.Call{Op: "event", Run: 0, Type: typ, Lazy: lazy}}
	if realworld.StepEvent(typ) {
		c.Step = step
	}
	if typ == "step_retrying" {
		c.RetryAfterHours = 2
	}
	return c
}

// checkForcedPairs is direction 2 on pairs: every model outcome of every
// pair of writes, from every set-up, forced on the real World. It returns
// how many outcomes it forced.
func checkForcedPairs(t *testing.T, w realworld.World, h *host) int {
	t.Helper()
	n := 0
	for _, su := range setups {
		for i := range pairKinds {
			for j := i; j < len(pairKinds); j++ {
				pair := []realworld.ConcCall{pairKinds[i], pairKinds[j]}
				base := realworld.History{Runs: 1}
				for _, c := range su.calls {
					base.Batches = append(base.Batches, realworld.Batch{Calls: []realworld.ConcCall{c}})
				}
				full := base
				full.Batches = append(slices.Clone(base.Batches), realworld.Batch{Calls: pair})
				s := newModelStore(w, 1)
				for _, c := range su.calls {
					s.Apply(modelNow, eventOn(c.Call, 0))
				}
				for _, wit := range Witnesses(w, s, pair, full.Steps(), 0) {
					forced := base
					forced.Batches = append(slices.Clone(base.Batches), realworld.Batch{Calls: pair, Schedule: Schedule(w, pair, wit.Steps)})
					res, err := h.driver().RunHistory(forced)
					if err != nil {
						t.Fatal(err)
					}
					last := res[len(res)-1]
					n++
					if got := OutcomeKey(pair, last.Replies, last.Readbacks); got != wit.Outcome || len(last.Broken) > 0 {
						t.Errorf("%s, %s ‖ %s forced in the model's order %v on %s:\n  model: %s\n  real:  %s (schedule broken at %v)",
							su.name, pair[0], pair[1], Schedule(w, pair, wit.Steps), w.Package, wit.Outcome, got, last.Broken)
					}
				}
			}
		}
	}
	return n
}

// genDelays draws, for some calls of a batch, a hold-back of 50µs–6.4ms, so
// that generated batches also meet interleavings a start at once rarely
// gives.
func genDelays(t *rapid.T, h *realworld.History) {
	for bi := range h.Batches {
		for ci := range h.Batches[bi].Calls {
			if rapid.IntRange(0, 3).Draw(t, "held back") == 3 {
				h.Batches[bi].Calls[ci].DelayUS = 50 << rapid.IntRange(0, 7).Draw(t, "by")
			}
		}
	}
}

// checkGenerated is direction 1: n generated histories, each run free on the
// real World and explained by the model. It returns porcupine's verdicts.
func checkGenerated(t *testing.T, w realworld.World, h *host, seed uint64, n int) map[porcupine.CheckResult]int {
	t.Helper()
	counts := map[porcupine.CheckResult]int{}
	gen := rapid.Custom(func(rt *rapid.T) realworld.History {
		hist := genHistory(rt)
		genDelays(rt, &hist)
		return hist
	})
	for i := 0; i < n; i++ {
		hist := gen.Example(int(seed%(1<<31)) + i)
		hist.Name = fmt.Sprintf("generated %d of seed %d", i, seed)
		res := explained(t, w, h.driver(), hist, hist.Name)
		counts[CheckLinearizable(w, hist, res, linTimeout).Result]++
	}
	return counts
}

// explained runs a history on the real World and fails the test, with the
// history shrunk, printed as a table, saved as a concurrent sequence file
// and visualized by porcupine, unless the model can produce every batch's
// outcome.
func explained(t *testing.T, w realworld.World, d *realworld.Driver, hist realworld.History, what string) []realworld.BatchResult {
	t.Helper()
	res, err := d.RunHistory(hist)
	if err != nil {
		t.Fatal(err)
	}
	v, bi, run := Explains(w, hist, res)
	if v == Explained {
		return res
	}
	small, smallRes, rate := shrinkUnexplained(w, d, hist, res)
	dir := artifacts(t)
	name := fmt.Sprintf("unexplained-%s-%d", w.Name, time.Now().UnixNano())
	js, _ := json.MarshalIndent(realworld.ConcurrentFile{Histories: []realworld.FileHistory{{History: small, Seen: smallRes}}}, "", " ")
	file := filepath.Join(dir, name+".json")
	if err := os.WriteFile(file, js, 0o644); err != nil {
		t.Error(err)
	}
	html := filepath.Join(dir, name+".html")
	if err := CheckLinearizable(w, small, smallRes, linTimeout).Visualize(html); err != nil {
		t.Error(err)
	}
	kept := "(the test's temporary directory goes with it: SIMLAB_CONFORMANCE_ARTIFACTS=DIR keeps the files; the file's contents follow)"
	if os.Getenv("SIMLAB_CONFORMANCE_ARTIFACTS") != "" {
		kept = ""
	}
	t.Fatalf("%s on %s: %v at batch %d, run %d; shrunk from %d to %d calls (the shrunk history did so in %s of its trials):\n%s\nreplay: go test ./conformance/ -run Concurrent -args -world %s -sequences %s\nporcupine's timeline: %s\n%s",
		what, w.Package, v, bi, run, hist.Calls(), small.Calls(), rate, realworld.HistoryTable(small, smallRes, nil), w.Name, file, html, keptFile(kept, js))
	return nil
}

// shrinkTrials is how often a smaller history is tried on the real World
// before it is taken not to show the difference: races come and go.
const shrinkTrials = 4

// shrinkUnexplained removes batches and calls, and holds-back, for as long
// as some trial of the smaller history still ends in an outcome the model
// cannot produce; it returns the smallest, a real result of it that shows the
// difference, and how often of 20 fresh trials it did.
func shrinkUnexplained(w realworld.World, d *realworld.Driver, hist realworld.History, res []realworld.BatchResult) (realworld.History, []realworld.BatchResult, string) {
	fails := func(h realworld.History) ([]realworld.BatchResult, bool) {
		if h.Validate() != nil {
			return nil, false
		}
		for try := 0; try < shrinkTrials; try++ {
			r, err := d.RunHistory(h)
			if err != nil {
				return nil, false
			}
			if v, _, _ := Explains(w, h, r); v != Explained {
				return r, true
			}
		}
		return nil, false
	}
	best, bestRes := hist, res
	for changed := true; changed; {
		changed = false
		for bi := len(best.Batches) - 1; bi >= 0; bi-- {
			cands := []realworld.History{withoutBatch(best, bi)}
			for ci := len(best.Batches[bi].Calls) - 1; ci >= 0; ci-- {
				cands = append(cands, withoutCall(best, bi, ci))
				if c := best.Batches[bi].Calls[ci]; c.Delayed() {
					cands = append(cands, undelayed(best, bi, ci))
				}
			}
			for _, c := range cands {
				if r, ok := fails(c); ok {
					best, bestRes, changed = c, r, true
					break
				}
			}
			if changed {
				break
			}
		}
	}
	shown := 0
	for try := 0; try < 20; try++ {
		if r, err := d.RunHistory(best); err == nil {
			if v, _, _ := Explains(w, best, r); v != Explained {
				shown++
			}
		}
	}
	return best, bestRes, fmt.Sprintf("%d of 20", shown)
}

func withoutBatch(h realworld.History, bi int) realworld.History {
	out := h
	out.Batches = slices.Delete(slices.Clone(h.Batches), bi, bi+1)
	return out
}

func withoutCall(h realworld.History, bi, ci int) realworld.History {
	out := h
	out.Batches = slices.Clone(h.Batches)
	out.Batches[bi] = realworld.Batch{Calls: slices.Delete(slices.Clone(h.Batches[bi].Calls), ci, ci+1)}
	if len(out.Batches[bi].Calls) == 0 {
		return withoutBatch(h, bi)
	}
	return out
}

func undelayed(h realworld.History, bi, ci int) realworld.History {
	out := h
	out.Batches = slices.Clone(h.Batches)
	calls := slices.Clone(h.Batches[bi].Calls)
	calls[ci].DelayTicks, calls[ci].DelayUS, calls[ci].After = 0, 0, nil
	out.Batches[bi] = realworld.Batch{Calls: calls}
	return out
}

// keptFile is the note on a failure's files and, when they will not outlive
// the test, the sequence file itself, so that a CI log alone can replay it.
func keptFile(note string, js []byte) string {
	if note == "" {
		return ""
	}
	return note + "\n" + string(js)
}
