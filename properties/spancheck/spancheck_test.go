package spancheck

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/properties"
	"github.com/simlab/simlab/sim"
	"github.com/simlab/simlab/traces"
)

// export simulates a scenario and returns its History and its spans as read
// back from the OTLP JSON Lines file simlab writes.
func export(t *testing.T, scenario string, seed uint64, variants ...string) (*model.History, []traces.Span) {
	t.Helper()
	h, spans, _ := exportFile(t, scenario, seed, variants...)
	return h, spans
}

// exportFile is export with the file's bytes too.
func exportFile(t *testing.T, scenario string, seed uint64, variants ...string) (*model.History, []traces.Span, []byte) {
	t.Helper()
	return exportSpec(t, model.Spec{Scenario: scenario, Variants: variants}, seed)
}

// exportSpec is exportFile for any spec (--set assignments too).
func exportSpec(t *testing.T, spec model.Spec, seed uint64) (*model.History, []traces.Span, []byte) {
	t.Helper()
	sc, err := spec.Load()
	if err != nil {
		t.Fatal(err)
	}
	res, err := model.Run(&sc, sim.NewPCG(seed), model.Options{Record: true, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	ro, err := traces.Build(res.History, traces.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := traces.WriteJSONL(&buf, ro); err != nil {
		t.Fatal(err)
	}
	file := bytes.Clone(buf.Bytes())
	spans, err := traces.ReadJSONL(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return res.History, spans, file
}

func TestEveryPropertyGetsAVerdict(t *testing.T) {
	if !slices.Equal(Names(), properties.Names()) {
		t.Fatalf("spancheck judges %v, properties has %v", Names(), properties.Names())
	}
	// Every span rule is about a property that exists (a renamed property
	// must not leave its rule behind, judging nothing).
	for _, c := range checks {
		if !slices.Contains(properties.Names(), c.name) {
			t.Errorf("span rule %q names no property", c.name)
		}
	}
	_, spans := export(t, "golden-t2", 1)
	for _, v := range Check(spans).Verdicts {
		if v.Why == "" {
			t.Errorf("%s: no reason given (judged %v)", v.Property, v.Judged)
		}
	}
}

// On simlab's own exports, every property spans can judge agrees with the
// History's verdict, run by run: found where the History finds it, quiet
// where it holds.
func TestSpansAgreeWithTheHistory(t *testing.T) {
	// Seeds 1..15 of each, 1..30 of the variant whose work after the end
	// the spans must see (its first violation is seed 26).
	cases := []struct {
		scenario string
		variants []string
		seeds    uint64
	}{
		{"golden-t2", nil, 15}, {"golden-t5", nil, 15}, {"golden-t5", []string{"pre-fix-fence"}, 15}, {"faults", nil, 15},
		{"skew-rollout", nil, 15}, {"faults", []string{"replay-ignores-terminal-log"}, 30}, {"swarm", nil, 15},
		{"faults", []string{"attempt-gated-recovery"}, 15},
	}
	found := map[string]int{}
	for _, c := range cases {
		for seed := uint64(1); seed <= c.seeds; seed++ {
			h, spans := export(t, c.scenario, seed, c.variants...)
			want := map[string]map[string]bool{}
			for _, v := range properties.Check(h, properties.All()) {
				if want[v.Property] == nil {
					want[v.Property] = map[string]bool{}
				}
				if v.Run >= 0 {
					want[v.Property][model.RunName(v.Run)] = true
				}
			}
			for _, v := range Check(spans).Verdicts {
				if !v.Judged {
					continue
				}
				got := map[string]bool{}
				for _, x := range v.Violations {
					got[x.Run] = true
				}
				if !mapsEqual(got, want[v.Property]) {
					t.Errorf("%s %v seed %d %s: spans find runs %v, the History %v\n%v", c.scenario, c.variants, seed, v.Property, keys(got), keys(want[v.Property]), v.Violations)
				}
				found[v.Property] += len(got)
			}
		}
	}
	for _, p := range []string{"no-start-on-terminal", "one-lazy-fetch-per-fanout", "no-work-after-visible-end", "recovery-in-band", "one-body-at-a-time", "bounded-work-after-end"} {
		if found[p] == 0 {
			t.Errorf("%s: no case violated it, the agreement proves nothing for it", p)
		}
	}
}

func mapsEqual(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// testdata/core-shape.jsonl is a tiny hand-written trace in the shape of
// @workflow/core 5.0.0-beta.52's (span names, attribute keys and nesting
// copied from a real trace of a 6-branch fan-out on world-local; ids, times
// and values invented): a fetch-free consumer that read the run before its
// claim, and a step_started accepted after run_cancelled.
func TestCoreShapedTrace(t *testing.T) {
	f, err := os.Open("testdata/core-shape.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	spans, err := traces.ReadJSONL(f)
	if err != nil {
		t.Fatal(err)
	}
	rep := Check(spans)
	if !slices.Equal(rep.Runs, []string{"wrun_01TEST"}) {
		t.Fatalf("runs %v", rep.Runs)
	}
	verdict := map[string]Verdict{}
	for _, v := range rep.Verdicts {
		verdict[v.Property] = v
	}
	for _, p := range []string{"no-start-on-terminal", "no-prologue-fetch-with-run-context"} {
		if v := verdict[p]; !v.Judged || len(v.Violations) != 1 {
			t.Errorf("%s: judged %v, %d violations, want one: %+v", p, v.Judged, len(v.Violations), v)
		}
	}
	for _, p := range []string{"liveness", "single-terminal-event"} {
		if v := verdict[p]; !v.Judged || len(v.Violations) != 0 {
			t.Errorf("%s: judged %v, violations %v, want judged and holding", p, v.Judged, v.Violations)
		}
	}
	for _, p := range []string{"one-lazy-fetch-per-fanout", "run-context-matches-run", "producer-stamps-run-context", "unique-step-created"} {
		if v := verdict[p]; v.Judged || !strings.Contains(v.Why, "") || v.Why == "" {
			t.Errorf("%s: judged %v on a core trace, want not judged with a reason", p, v.Judged)
		}
	}
	if !rep.Failed() {
		t.Fatal("report with violations does not fail")
	}
}

// A story line is stamped with the instant it tells of: "a step body began"
// shows when the body began (its step.body.start event), not when the step
// span ended, which may be long after, or after the end of the story.
func TestBodyEvidenceIsStampedWhenTheBodyBegan(t *testing.T) {
	_, spans := export(t, "golden-t5", 1, "pre-fix-fence")
	rep := Check(spans)
	found := 0
	for _, v := range rep.Verdicts {
		for _, x := range v.Violations {
			if !strings.Contains(x.Message, "a step body began") {
				continue
			}
			found++
			line := x.Evidence[len(x.Evidence)-1]
			id := line[strings.LastIndex(line, "span ")+len("span "):]
			var body *traces.Span
			for i := range spans {
				if spans[i].SpanID == id {
					body = &spans[i]
				}
			}
			if body == nil {
				t.Fatalf("evidence %q names no span of the file", line)
			}
			b, _ := bodyStart(body)
			if want := b.UTC().Format("15:04:05.000000"); !strings.HasPrefix(line, want) || !strings.Contains(line, "body of") {
				t.Errorf("evidence %q: want it stamped %s, when the body began (the span ends %s)", line, want, body.End.UTC().Format("15:04:05.000000"))
			}
		}
	}
	if found == 0 {
		t.Fatal("precondition: no \"a step body began\" violation in golden-t5 with pre-fix-fence")
	}
}

// A run core failed for its log carries the failure's code on the span of
// the invocation that failed it: replayable-log is violated there. Spans
// naming no failure code cannot judge it.
func TestReplayableLogReadsCoresFailureCode(t *testing.T) {
	span := func(id string, attrs map[string]string) traces.Span {
		s := traces.Span{TraceID: "t1", SpanID: id, Name: "workflow.execute flow", Attrs: []traces.Attr{{Key: traces.KeyRunID, Value: "wrun_a"}}}
		for k, v := range attrs {
			s.Attrs = append(s.Attrs, traces.Attr{Key: k, Value: v})
		}
		return s
	}
	clean := Check([]traces.Span{span("s1", nil)})
	for _, v := range clean.Verdicts {
		if v.Property == "replayable-log" && v.Judged {
			t.Fatalf("judged without a failure code: %+v", v)
		}
	}
	failed := Check([]traces.Span{span("s1", nil), span("s2", map[string]string{traces.KeyErrorCode: "CORRUPTED_EVENT_LOG", traces.KeyErrorMessage: "Workflow replay diverged 4 times\nmore"})})
	if failed.Violations["replayable-log"] != 1 || !strings.Contains(failed.First["replayable-log"].Message, "CORRUPTED_EVENT_LOG") ||
		!strings.Contains(strings.Join(failed.First["replayable-log"].Story, "\n"), "Workflow replay diverged 4 times") {
		t.Fatalf("a CORRUPTED_EVENT_LOG failure: %+v %+v", failed.Violations, failed.First["replayable-log"])
	}
	other := Check([]traces.Span{span("s2", map[string]string{traces.KeyErrorCode: "USER_ERROR"})})
	if other.Violations["replayable-log"] != 0 {
		t.Fatalf("a user error judged a corrupted log: %+v", other.Violations)
	}
}

// A scenario's own budget.work_after_end travels on the run's root
// (simlab.budget.work_after_end), so the spans judge bounded-work-after-end
// against it, as the History does: with budget 0 more runs break it than
// with the default 2, and spans and History name the same ones.
func TestBoundedWorkUsesTheScenariosBudget(t *testing.T) {
	total := map[int]int{}
	for _, budget := range []int{0, 2} {
		for seed := uint64(1); seed <= 30; seed++ {
			h, spans, _ := exportSpec(t, model.Spec{Scenario: "faults", Variants: []string{"replay-ignores-terminal-log"}, Sets: []string{fmt.Sprintf("budget.work_after_end=%d", budget)}}, seed)
			p, _ := properties.ByName("bounded-work-after-end")
			want := map[string]bool{}
			for _, v := range properties.Check(h, []properties.Property{p}) {
				want[model.RunName(v.Run)] = true
			}
			got := map[string]bool{}
			for _, v := range Check(spans).Verdicts {
				if v.Property == p.Name {
					for _, x := range v.Violations {
						got[x.Run] = true
					}
				}
			}
			if !mapsEqual(got, want) {
				t.Errorf("budget %d seed %d: spans find %v, the History %v", budget, seed, keys(got), keys(want))
			}
			total[budget] += len(want)
		}
	}
	if total[0] <= total[2] {
		t.Errorf("runs over budget: %d at budget 0, %d at 2; want more at 0", total[0], total[2])
	}
}
