package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"
)

// TestConcurrentExplore (SIMLAB_EXPLORE=N) runs N generated histories per
// World and prints the non-linearizable ones: a scratch tool.
func TestConcurrentExplore(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SIMLAB_EXPLORE"))
	if n == 0 {
		t.Skip("SIMLAB_EXPLORE=N")
	}
	if err := EnsurePackages(WorldsDir(), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	worlds := Worlds
	if *worldFlag != "" {
		w, _ := WorldByName(*worldFlag)
		worlds = []World{w}
	}
	st := &stopper{}
	defer st.stopAll()
	for _, w := range worlds {
		t.Run(w.Name, func(t *testing.T) {
			h := startWorld(t, w, st)
			counts := map[porcupine.CheckResult]int{}
			shown, unexplained := 0, 0
			for i := 0; i < n; i++ {
				hist := rapid.Custom(genHistory).Example(i)
				res, err := h.driver().RunHistory(hist)
				if err != nil {
					t.Fatal(err)
				}
				lin := CheckLinearizable(w, hist, res, 5*time.Second)
				counts[lin.Result]++
				began := time.Now()
				v, bi, br := Explains(w, hist, res)
				if d := time.Since(began); d > time.Second {
					fmt.Printf("history %d: %v in %v\n", i, v, d)
				}
				ok := v == Explained
				if !ok {
					unexplained++
				}
				if !ok && shown < 6 {
					shown++
					js, _ := json.Marshal(FileHistory{History: hist, Seen: res})
					fmt.Printf("json: %s\n", js)
					fmt.Printf("=== %s history %d: %s, %v at batch %d run %d\n%s\n", w.Name, i, lin.Result, v, bi, br, HistoryTable(hist, res, nil))
				}
			}
			fmt.Printf("### %s: %v, %d not explained by the split calls\n", w.Name, counts, unexplained)
		})
	}
}

// TestExplainsOffline (SIMLAB_OFFLINE=FILE -args -world W) re-checks saved
// real histories (json: lines of the explore tool) against the model alone.
func TestExplainsOffline(t *testing.T) {
	path := os.Getenv("SIMLAB_OFFLINE")
	if path == "" {
		t.Skip("SIMLAB_OFFLINE=FILE")
	}
	w, err := WorldByName(*worldFlag)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := strconv.Atoi(os.Getenv("SIMLAB_BUDGET")); n > 0 {
		SearchBudget = n
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		js, ok := strings.CutPrefix(line, "json: ")
		if !ok {
			continue
		}
		var fh FileHistory
		if err := json.Unmarshal([]byte(js), &fh); err != nil {
			t.Fatal(err)
		}
		v, bi, br := Explains(w, fh.History, fh.Seen)
		fmt.Printf("%v batch=%d run=%d\n", v, bi, br)
		if v != Explained {
			fmt.Println(HistoryTable(fh.History, fh.Seen, nil))
		}
	}
}

// TestCoverageExplore (SIMLAB_COVER=trials -args -world W): direction 2 on
// pairs of writes from a few set-ups: the model's outcomes for each pair and
// which of them the real World produced over trials with staggered starts.
func TestCoverageExplore(t *testing.T) {
	trials, _ := strconv.Atoi(os.Getenv("SIMLAB_COVER"))
	if trials == 0 {
		t.Skip("SIMLAB_COVER=trials")
	}
	if err := EnsurePackages(WorldsDir(), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	w, err := WorldByName(*worldFlag)
	if err != nil {
		t.Fatal(err)
	}
	st := &stopper{}
	defer st.stopAll()
	h := startWorld(t, w, st)
	ev := func(typ string, step int, lazy bool) ConcCall {
		c := ConcCall{Call: Call{Op: "event", Run: 0, Type: typ}}
		if stepEvent(typ) {
			c.Step = step
		}
		c.Lazy = lazy
		if typ == "step_retrying" {
			c.RetryAfterHours = 2
		}
		return c
	}
	setups := map[string][]ConcCall{
		"pending":      nil,
		"running":      {ev("run_started", 0, false)},
		"step pending": {ev("run_started", 0, false), ev("step_created", 0, false)},
		"step running": {ev("run_started", 0, false), ev("step_created", 0, false), ev("step_started", 0, false)},
	}
	kinds := []ConcCall{ev("run_started", 0, false), ev("run_completed", 0, false), ev("run_cancelled", 0, false), ev("run_failed", 0, false),
		ev("step_created", 0, false), ev("step_started", 0, false), ev("step_started", 0, true), ev("step_completed", 0, false), ev("step_failed", 0, false), ev("step_retrying", 0, false)}
	names := []string{"pending", "running", "step pending", "step running"}
	totalModel, totalMissing, totalUnexplained := 0, 0, 0
	for _, sname := range names {
		setup := setups[sname]
		for i := range kinds {
			for j := i; j < len(kinds); j++ {
				pair := []ConcCall{kinds[i], kinds[j]}
				hist := History{Runs: 1}
				for _, c := range setup {
					hist.Batches = append(hist.Batches, Batch{Calls: []ConcCall{c}})
				}
				// The model's state after the set-up, and its outcomes.
				s := newModelStore(w, 1)
				for _, c := range setup {
					ev := eventOn(c.Call, 0)
					s.Apply(modelNow, ev)
				}
				full := hist
				full.Batches = append(append([]Batch(nil), hist.Batches...), Batch{Calls: pair})
				steps := full.Steps()
				// Either call may arrive first (a delay puts it behind).
				set := map[string]bool{}
				for k := 0; k < 2; k++ {
					p := append([]ConcCall(nil), pair...)
					p[k].DelayUS = 1
					o, _ := Outcomes(w, s, p, steps, 0)
					for _, x := range o {
						set[x] = true
					}
				}
				var outs []string
				for o := range set {
					outs = append(outs, o)
				}
				slices.Sort(outs)
				seen := map[string]int{}
				for trial := 0; trial < trials; trial++ {
					p := append([]ConcCall(nil), pair...)
					// Either call held back by 0..6.4 ms, or until the other answered.
					ds := []int{0, 50, 100, 200, 400, 800, 1600, 3200, 6400, -1}
					d := ds[trial%len(ds)]
					k := trial / len(ds) % 2
					switch {
					case d < 0:
						other := 1 - k
						p[k].After = &other
					default:
						p[k].DelayUS = d
					}
					hh := hist
					hh.Batches = append(append([]Batch(nil), hist.Batches...), Batch{Calls: p})
					res, err := h.driver().RunHistory(hh)
					if err != nil {
						t.Fatal(err)
					}
					last := res[len(res)-1]
					key := OutcomeKey(pair, last.Replies, last.Readbacks)
					seen[key]++
				}
				var missing []string
				for _, o := range outs {
					if seen[o] == 0 {
						missing = append(missing, o)
					}
				}
				var unexplained []string
				for o := range seen {
					if !slices.Contains(outs, o) {
						unexplained = append(unexplained, o)
					}
				}
				totalModel += len(outs)
				totalMissing += len(missing)
				totalUnexplained += len(unexplained)
				if len(missing) > 0 || len(unexplained) > 0 {
					fmt.Printf("[%s] %s ‖ %s: model %d outcomes, real %d distinct\n", sname, pair[0], pair[1], len(outs), len(seen))
					for _, m := range missing {
						fmt.Printf("    model only: %s\n", m)
					}
					for _, u := range unexplained {
						fmt.Printf("    REAL ONLY:  %s (%d)\n", u, seen[u])
					}
				}
			}
		}
	}
	fmt.Printf("### %s: %d model outcomes, %d never seen, %d real outcomes not in the model\n", w.Name, totalModel, totalMissing, totalUnexplained)
}

// TestForceExplore (SIMLAB_FORCE=1 -args -world W): direction 2 by forcing:
// each model outcome of a pair of writes replayed on the real World.
func TestForceExplore(t *testing.T) {
	if os.Getenv("SIMLAB_FORCE") == "" {
		t.Skip("SIMLAB_FORCE=1")
	}
	if err := EnsurePackages(WorldsDir(), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	w, err := WorldByName(*worldFlag)
	if err != nil {
		t.Fatal(err)
	}
	st := &stopper{}
	defer st.stopAll()
	h := startWorld(t, w, st)
	ev := func(typ string, step int, lazy bool) ConcCall {
		c := ConcCall{Call: Call{Op: "event", Run: 0, Type: typ}}
		if stepEvent(typ) {
			c.Step = step
		}
		c.Lazy = lazy
		if typ == "step_retrying" {
			c.RetryAfterHours = 2
		}
		return c
	}
	setups := map[string][]ConcCall{
		"pending":      nil,
		"running":      {ev("run_started", 0, false)},
		"step pending": {ev("run_started", 0, false), ev("step_created", 0, false)},
		"step running": {ev("run_started", 0, false), ev("step_created", 0, false), ev("step_started", 0, false)},
	}
	kinds := []ConcCall{ev("run_started", 0, false), ev("run_completed", 0, false), ev("run_cancelled", 0, false), ev("run_failed", 0, false),
		ev("step_created", 0, false), ev("step_started", 0, false), ev("step_started", 0, true), ev("step_completed", 0, false), ev("step_failed", 0, false), ev("step_retrying", 0, false)}
	total, bad, broken := 0, 0, 0
	for _, sname := range []string{"pending", "running", "step pending", "step running"} {
		setup := setups[sname]
		for i := range kinds {
			for j := i; j < len(kinds); j++ {
				pair := []ConcCall{kinds[i], kinds[j]}
				hist := History{Runs: 1}
				for _, c := range setup {
					hist.Batches = append(hist.Batches, Batch{Calls: []ConcCall{c}})
				}
				full := hist
				full.Batches = append(append([]Batch(nil), hist.Batches...), Batch{Calls: pair})
				steps := full.Steps()
				s := newModelStore(w, 1)
				for _, c := range setup {
					s.Apply(modelNow, eventOn(c.Call, 0))
				}
				for _, wit := range Witnesses(w, s, pair, steps, 0) {
					total++
					hh := hist
					hh.Batches = append(append([]Batch(nil), hist.Batches...), Batch{Calls: pair, Schedule: Schedule(w, pair, wit.Steps)})
					res, err := h.driver().RunHistory(hh)
					if err != nil {
						t.Fatal(err)
					}
					last := res[len(res)-1]
					got := OutcomeKey(pair, last.Replies, last.Readbacks)
					if len(last.Broken) > 0 {
						broken++
					}
					if got != wit.Outcome || len(last.Broken) > 0 {
						bad++
						fmt.Printf("[%s] %s ‖ %s: schedule %v %v\n    model: %s\n    real:  %s\n    broken: %v\n", sname, pair[0], pair[1], wit.Steps, Schedule(w, pair, wit.Steps), wit.Outcome, got, last.Broken)
					}
				}
			}
		}
	}
	fmt.Printf("### %s: %d model outcomes forced, %d differ, %d schedules broken\n", w.Name, total, bad, broken)
}
