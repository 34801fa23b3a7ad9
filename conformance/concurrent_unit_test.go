package conformance

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/simlab/simlab/realworld"
)

// modelResult is what the model says a batch ends as, in one interleaving,
// dressed as a real result: every call in flight over the same interval.
func modelResult(t *testing.T, w realworld.World, h realworld.History, steps []Step) []realworld.BatchResult {
	t.Helper()
	s := newModelStore(w, h.Runs)
	var out []realworld.BatchResult
	for bi, b := range h.Batches {
		n := start(s, b.Calls)
		order := steps
		if bi < len(h.Batches)-1 {
			order = nil
			for i := range b.Calls {
				for k := 0; k < 8; k++ {
					order = append(order, Step{Call: i})
				}
			}
		}
		for _, st := range order {
			if !n.done[st.Call] && n.ready(b.Calls, st.Call) {
				n.advance(b.Calls, st.Call)
			}
		}
		for i := range b.Calls {
			for k := 0; !n.done[i] && k < 8; k++ {
				n.advance(b.Calls, i)
			}
		}
		base := int64(bi) * 1000
		res := realworld.BatchResult{Readbacks: readbacks(n.s, h.Steps())}
		for i := range b.Calls {
			r := n.replies[i]
			r.T0, r.T1 = base+1, base+100
			res.Replies = append(res.Replies, r)
		}
		for i := range res.Readbacks {
			res.Readbacks[i].T0, res.Readbacks[i].T1 = base+200, base+300
		}
		out = append(out, res)
		s = n.s
	}
	return out
}

// Every known race is an outcome the model's split calls produce on each
// World it names, and none that model/world taken one call at a time
// produces: porcupine finds it not linearizable.
func TestRacesAreModelOutcomesNoSequentialOrderGives(t *testing.T) {
	races, err := realworld.ReadRaces(realworld.RacesFile())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range races {
		for _, w := range realworld.Worlds {
			if !r.On(w) {
				continue
			}
			h, err := forced(r, w)
			if err != nil {
				t.Fatal(err)
			}
			s := newModelStore(w, 1)
			for _, c := range r.Setup {
				s.Apply(modelNow, eventOn(c.Call, 0))
			}
			var steps []Step
			for _, wit := range Witnesses(w, s, r.Batch, h.Steps(), 0) {
				if wit.Outcome == r.Outcome {
					steps = wit.Steps
				}
			}
			res := modelResult(t, w, h, steps)
			last := res[len(res)-1]
			if got := OutcomeKey(r.Batch, last.Replies, last.Readbacks); got != r.Outcome {
				t.Fatalf("%s on %s: replaying the witness ends %s, want %s", r.Name, w.Name, got, r.Outcome)
			}
			lin := CheckLinearizable(w, h, res, linTimeout)
			if lin.Result != porcupine.Illegal {
				t.Errorf("%s on %s: porcupine says %s: a sequential order explains it, it is no race", r.Name, w.Name, lin.Result)
			}
			// The visualization TestConcurrent writes for each race
			// (SIMLAB_CONFORMANCE_ARTIFACTS) names every racing call with
			// its answer and the read-back that no order explains.
			page := filepath.Join(t.TempDir(), "race.html")
			if err := lin.Visualize(page); err != nil {
				t.Fatalf("%s on %s: %v", r.Name, w.Name, err)
			}
			html, err := os.ReadFile(page)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range r.Batch {
				want := describeOperation(linInput{Batch: len(h.Batches) - 1, Index: i, Call: c, Run: c.Run}, linOutput{Reply: last.Replies[i]})
				if !strings.Contains(string(html), jsonString(want)) {
					t.Errorf("%s on %s: the visualization does not show %q", r.Name, w.Name, want)
				}
			}
			if v, _, _ := Explains(w, h, res); v != Explained {
				t.Errorf("%s on %s: %v", r.Name, w.Name, v)
			}
		}
	}
}

// Explains answers what the real adapters could do and refuses what they
// could not: two run_completed of one run both accepted, with two terminal
// events logged, is world-local (no lock across the check and the write),
// never world-postgres (a guarded UPDATE).
func TestExplainsFollowsEachAdaptersAtomicity(t *testing.T) {
	h := realworld.History{Runs: 1, Batches: []realworld.Batch{
		{Calls: []realworld.ConcCall{ev("run_started", 0, false)}},
		{Calls: []realworld.ConcCall{ev("run_completed", 0, false), ev("run_completed", 0, false)}},
	}}
	mk := func(res ...string) []realworld.BatchResult {
		rb := func(log ...string) []realworld.Readback {
			return []realworld.Readback{{Run: "x", Log: log, T0: 10, T1: 11}}
		}
		first := realworld.BatchResult{Replies: []realworld.Reply{{Res: "ok", T0: 1, T1: 2}}, Readbacks: rb("run_created", "run_started")}
		first.Readbacks[0].Run = "running"
		second := realworld.BatchResult{Replies: []realworld.Reply{{Res: res[0], T0: 20, T1: 30}, {Res: res[1], T0: 21, T1: 29}}, Readbacks: rb(res[2:]...)}
		second.Readbacks[0].Run, second.Readbacks[0].T0, second.Readbacks[0].T1 = "completed", 40, 41
		return []realworld.BatchResult{first, second}
	}
	twice := mk("ok", "ok", "run_created", "run_started", "run_completed", "run_completed")
	once := mk("ok", "entity_conflict", "run_created", "run_started", "run_completed")
	for _, c := range []struct {
		world string
		res   []realworld.BatchResult
		want  Verdict
	}{
		{"wl-fixed", twice, Explained}, {"wl-fixed", once, Explained},
		{"wpg-pre", twice, NotExplained}, {"wpg-pre", once, Explained},
	} {
		w, _ := realworld.WorldByName(c.world)
		if v, _, _ := Explains(w, h, c.res); v != c.want {
			t.Errorf("%s, %s: %v, want %v", c.world, c.res[1].Replies[1].Res, v, c.want)
		}
	}
	// A call answered before another was invoked takes every step first:
	// then the second completion must be refused, on world-local too.
	seq := mk("ok", "ok", "run_created", "run_started", "run_completed", "run_completed")
	seq[1].Replies[0].T1, seq[1].Replies[1].T0 = 21, 25
	w, _ := realworld.WorldByName("wl-fixed")
	if v, _, _ := Explains(w, h, seq); v != NotExplained {
		t.Errorf("one after the other, both accepted: %v, want %v", v, NotExplained)
	}
}

// A forced schedule counts only steps that are the adapter's own I/O: a
// step_completed takes no run read, though its Txn passes that phase.
func TestScheduleDropsStepsWithoutIO(t *testing.T) {
	w, _ := realworld.WorldByName("wl-fixed")
	calls := []realworld.ConcCall{ev("step_completed", 0, false), ev("run_completed", 0, false)}
	got := Schedule(w, calls, []Step{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {1, 2}})
	want := [][2]int{{1, 0}, {0, 0}, {1, 1}, {1, 2}}
	if len(got) != len(want) {
		t.Fatalf("schedule %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("schedule %v, want %v", got, want)
		}
	}
}

// jsonString is s as porcupine's page embeds it: a JSON string's contents.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// A hold-back only aims a call: two calls held back by 200µs and 100µs may
// reach world-local the other way round (Node's timers fire in whole
// milliseconds), and the first to arrive queues first on the step's lock. The
// real outcome of that order is explained from the invocation times, not
// from the hold-backs (a CI failure on wl-fixed and wl-b46 before).
func TestExplainsQueuesLocksInTheOrderCallsArrived(t *testing.T) {
	h := realworld.History{Runs: 1, Batches: []realworld.Batch{{Calls: []realworld.ConcCall{
		{Call: realworld.Call{Op: "event", Type: "step_created"}, DelayUS: 200},
		{Call: realworld.Call{Op: "event", Type: "step_created"}, DelayUS: 100},
	}}}}
	res := []realworld.BatchResult{{
		Replies: []realworld.Reply{{Res: "ok", T0: 2079, T1: 10586}, {Res: "entity_conflict", T0: 2169, T1: 12993}},
		Readbacks: []realworld.Readback{{Run: "pending", Steps: []realworld.StepRow{{Step: "pending"}},
			Log: []string{"run_created", "step_created:s0"}, T0: 20000, T1: 21000}},
	}}
	wl, _ := realworld.WorldByName("wl-fixed")
	if v, _, _ := Explains(wl, h, res); v != Explained {
		t.Errorf("the call held back longer arrived first and won the create: %v", v)
	}
	// The same answers with the arrivals swapped are no interleaving of
	// world-local's: the first in the lock's queue creates the step.
	res[0].Replies[0].T0, res[0].Replies[1].T0 = 2169, 2079
	if v, _, _ := Explains(wl, h, res); v != NotExplained {
		t.Errorf("the call that arrived second won world-local's step lock: %v, want not explained", v)
	}
}
