package tui

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/flow"
	"github.com/simlab/simlab/model/program"
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
	"github.com/simlab/simlab/traces"
)

// The runs view's columns, read off spans, agree with what the History says
// directly: TTLS with the step deliveries, the read counts with the fan-outs.
func TestRunColumnsAgreeWithTheHistory(t *testing.T) {
	for _, name := range []string{"fanout", "skew-rollout", "faults", "golden-t5"} {
		runs, err := Simulate(Config{Scenario: name, Seeds: []uint64{1, 2, 3}})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			h := r.hist
			info := &h.Runs[r.runIndex]
			var pro, lazy int32
			for _, f := range info.Fanouts {
				pro += h.Fanouts[f].PrologueFetches
				lazy += h.Fanouts[f].LazyFetches
			}
			if r.PrologueFetches != int(pro) || r.LazyFetches != int(lazy) {
				t.Errorf("%s seed %d %s: spans say %d prologue and %d lazy reads, the History %d and %d",
					name, r.Seed, r.RunID, r.PrologueFetches, r.LazyFetches, pro, lazy)
			}
			var ttls time.Duration
			has := false
			for _, c := range h.Calls {
				if int(c.Run) == r.runIndex && c.Op == model.OpEventsCreate && c.Result == world.OK && c.Event.EndsStep() {
					ttls, has = max(ttls, time.Duration(c.End-info.StartAt)), true
				}
			}
			if has != r.HasTTLS || ttls != r.TTLS {
				t.Errorf("%s seed %d %s: TTLS %v (%v), the History says %v (%v)", name, r.Seed, r.RunID, r.TTLS, r.HasTTLS, ttls, has)
			}
			if want := h.FinalRuns[r.runIndex].Status.String(); r.Status != want {
				t.Errorf("%s seed %d: status %s, the History says %s", name, r.Seed, r.Status, want)
			}
			sum := model.Summarize(&model.Result{History: h})
			if want := sum.Runs[r.runIndex].Prologue; r.Prologue != want {
				t.Errorf("%s seed %d %s: prologue %s, model.Summarize says %s", name, r.Seed, r.RunID, r.Prologue, want)
			}
		}
	}
}

// A run read back from its trace file shows the same columns and the same
// states over time as the simulated run it was written from; only what
// needs the History (verdicts) is missing.
func TestTraceFileRunsMatchSimulatedRuns(t *testing.T) {
	sc, _ := model.Builtin("skew-rollout")
	sc.Variants = []string{"legacy-producers"}
	res, buf := traceFile(t, sc, 4)
	path := filepath.Join(t.TempDir(), "skew.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	fromFile, err := LoadTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	simulated, err := runsOf(res.History, Config{Scenario: "skew-rollout", Variants: sc.Variants, Seeds: []uint64{4}}, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(fromFile) != len(simulated) || len(fromFile) != sc.Runs {
		t.Fatalf("%d runs from the file, %d simulated, want %d", len(fromFile), len(simulated), sc.Runs)
	}
	byID := map[string]*Run{}
	for _, r := range simulated {
		byID[r.RunID] = r
	}
	for _, f := range fromFile {
		s := byID[f.RunID]
		if s == nil {
			t.Fatalf("the file has run %s the simulation does not", f.RunID)
		}
		for _, c := range runColumns {
			if c.title == "#" || c.title == "PROPS" {
				continue
			}
			if a, b := c.value(f), c.value(s); a != b {
				t.Errorf("%s %s: %q from the file, %q simulated", f.RunID, c.title, a, b)
			}
		}
		// A file's run is judged by its spans, never claims a History.
		if f.Checked || f.Judged == nil || !strings.HasPrefix(verdictText(f), "✓") && !strings.HasPrefix(verdictText(f), "✗") {
			t.Errorf("%s: checked %v, judged by spans %v, PROPS %q", f.RunID, f.Checked, f.Judged != nil, verdictText(f))
		}
		if got, want := f.Replay(), "simlab run --scenario skew-rollout --seed 4 --variant legacy-producers"; got != want {
			t.Errorf("replay from the file %q, want %q", got, want)
		}
		// Both clocks of moments end in the same state, and pass through the
		// same sequence of accepted events.
		fm, sm := newTimeModel(f), newTimeModel(s)
		if len(fm.moments) != len(sm.moments) {
			t.Fatalf("%s: %d moments from spans, %d from the History", f.RunID, len(fm.moments), len(sm.moments))
		}
		evs := func(tm *timeModel) []string {
			var out []string
			for _, m := range tm.moments {
				out = append(out, m.text(tm.stepNames))
			}
			slices.Sort(out)
			return out
		}
		if !slices.Equal(evs(fm), evs(sm)) {
			t.Errorf("%s: the events differ:\n%v\n%v", f.RunID, evs(fm), evs(sm))
		}
		last := len(fm.moments) - 1
		if a, b := fm.stateAt(last), sm.stateAt(last); a != b {
			t.Errorf("%s: final state from spans %+v, from the History %+v", f.RunID, a, b)
		}
	}
}

func TestLoadTraceErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o644)
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"resourceSpans\":[]}\n{nope\n"), 0o644)
	for path, want := range map[string]string{
		filepath.Join(dir, "missing.jsonl"): "no such file",
		empty:                               "no spans",
		bad:                                 "line 2",
	} {
		if _, err := LoadTrace(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadTrace(%s) = %v, want an error with %q", filepath.Base(path), err, want)
		}
	}
}

func TestConfigCheckAndReplay(t *testing.T) {
	for _, bad := range []Config{
		{Scenario: "nope"}, {Scenario: "fanout", Variants: []string{"bogus"}},
		{Scenario: "fanout", Sets: []string{"workflow.max_inline=-1"}}, {Scenario: "fanout", Sets: []string{"nokey"}},
	} {
		if err := bad.Check(); err == nil {
			t.Errorf("%+v passed the check", bad)
		}
	}
	c := Config{Scenario: "fanout", Sets: []string{"faults.crash=0.1", "workflow.fanouts=4,4"}, Variants: []string{"atomic-fan-in"}}
	if got, want := c.ReplayCommand(9), "simlab run --scenario fanout --seed 9 --set faults.crash=0.1 --set workflow.fanouts=4,4 --variant atomic-fan-in"; got != want {
		t.Fatalf("replay %q, want %q", got, want)
	}
	// The skew knob makes valid scenarios with the asked share on v1.
	for _, name := range []string{"fanout", "skew-rollout"} {
		base, _ := model.Builtin(name)
		cfg := Config{Scenario: name, Sets: skewSets(&base, 0.25)}
		sc, err := cfg.scenario()
		if err != nil {
			t.Fatalf("%s with skew 0.25: %v", name, err)
		}
		if got := skewShare(&sc); got != 0.25 {
			t.Fatalf("%s: skew share %v after setting 0.25", name, got)
		}
	}
}

func TestFormatting(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0", 999: "999ns", 1500: "1.5µs", 2_500_000: "2.5ms", 5_036_000_000: "5.036s",
		-3 * time.Millisecond: "-3ms", 125 * time.Second: "2m5s",
	} {
		if got := fmtDur(d); got != want {
			t.Errorf("fmtDur(%d) = %q, want %q", d, got, want)
		}
	}
	if got := fit("abcdef", 4); got != "abc…" {
		t.Errorf("fit = %q", got)
	}
	if got := fit("ab", 4); got != "ab  " {
		t.Errorf("fit pads to %q", got)
	}
	if got := seedList([]uint64{1, 2, 3, 4}); got != "1–4" {
		t.Errorf("seedList = %q", got)
	}
}

// A session opened on a trace file names the file in the header until it
// simulates something, whatever config :seed would use.
func TestHeaderNamesTheTraceFile(t *testing.T) {
	sc, _ := model.Builtin("golden-t2")
	_, buf := traceFile(t, sc, 1)
	runs, err := ReadTrace(buf, "t2.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	h := harnessFor(t, Config{Scenario: "golden-t2", Seeds: []uint64{1, 2}}, runs, "t2.jsonl")
	if screen := h.draw(); !strings.Contains(screen, "file t2.jsonl") || strings.Contains(screen, "seeds 1–2") {
		t.Fatalf("header does not name the file:\n%s", screen)
	}
	h.command("seed 3")
	if screen := h.draw(); strings.Contains(screen, "file t2.jsonl") || !strings.Contains(screen, "golden-t2 · seeds") {
		t.Fatalf("after :seed the header still names the file:\n%s", screen)
	}
}

// traceFile simulates one seed of sc and writes its trace as OTLP JSON Lines.
func traceFile(t *testing.T, sc model.Scenario, seed uint64) (*model.Result, *bytes.Buffer) {
	t.Helper()
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
	return res, &buf
}

// A trace file with every line twice opens as the file once: each span is
// shown once (traces.Dedup), not as a second child of its parent.
func TestTraceFileWithDuplicatedSpansOpensOnce(t *testing.T) {
	sc, _ := model.Builtin("golden-t2")
	_, buf := traceFile(t, sc, 1)
	var twice bytes.Buffer
	for _, l := range strings.SplitAfter(buf.String(), "\n") {
		twice.WriteString(l + l)
	}
	once, err := ReadTrace(bytes.NewReader(buf.Bytes()), "once")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadTrace(&twice, "twice")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(once) || len(got[0].Spans) != len(once[0].Spans) || got[0].Deliveries != once[0].Deliveries {
		t.Fatalf("twice: %d runs, %d spans, %d deliveries; once: %d runs, %d spans, %d deliveries",
			len(got), len(got[0].Spans), got[0].Deliveries, len(once), len(once[0].Spans), once[0].Deliveries)
	}
}

// A program's run traced by simlab replays (traces.BuildFlow) opens in the
// lab as any trace does: its row says how the run ended and that its spans
// violate replayable-log, and its clock of moments steps through the log
// the model wrote: every accepted step event, the steps' final states, and
// invocations and queued steps in flight at once.
func TestProgramTraceOpensInTheLab(t *testing.T) {
	cfg := flow.Defaults(program.MustCompile(flow.Storm(16, 3, 300*time.Millisecond)))
	cfg.View = flow.ViewOwnWrites
	res, err := flow.Run(cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	spans, _, err := traces.BuildFlow(traces.FlowRun{Result: res, Config: cfg, Seed: 2, Workflow: "storm"}, traces.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := traces.WriteJSONL(&buf, spans); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "storm.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	runs, err := LoadTrace(path)
	if err != nil || len(runs) != 1 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	r := runs[0]
	if r.Status != "failed" || !strings.HasPrefix(verdictText(r), "✗") {
		t.Errorf("row: status %q, PROPS %q; want failed and a violation", r.Status, verdictText(r))
	}
	completed, started := map[int32]bool{}, 0
	for _, e := range res.Log {
		switch e.Type {
		case program.StepCompleted, program.StepFailed:
			completed[e.Ordinal] = true
		case program.StepStarted:
			started++
		}
	}
	tm := newTimeModel(r)
	moments := map[string]int{}
	maxInFlight := 0
	for k, m := range tm.moments {
		moments[m.Event]++
		maxInFlight = max(maxInFlight, tm.stateAt(k).InFlight)
	}
	if moments["step_started"] != started || moments["step_completed"]+moments["step_failed"] != len(completed) {
		t.Errorf("moments %v; the log has %d step_started and %d steps finished", moments, started, len(completed))
	}
	last := tm.stateAt(len(tm.moments) - 1)
	if last.Completed+last.Failed != len(completed) || maxInFlight < 2 {
		t.Errorf("final state %+v, most deliveries in flight %d; want %d steps finished and concurrent deliveries", last, maxInFlight, len(completed))
	}
}

// SimulateWith's last progress report says every seed is done: a bar that
// is never filled stays on the terminal (TestQuitLeavesNoProgressBar sees
// it there when the bar drew its last step before the lab opened).
func TestSimulateReportsAllSeedsDone(t *testing.T) {
	var last [2]int
	calls := 0
	if _, err := SimulateWith(Config{Scenario: "fanout", Seeds: []uint64{1, 2, 3}}, SimOptions{Progress: func(done, total int) {
		last, calls = [2]int{done, total}, calls+1
	}}); err != nil {
		t.Fatal(err)
	}
	if last != [2]int{3, 3} || calls != 4 {
		t.Errorf("last report %v after %d reports, want [3 3] after 4 (before each seed, then all done)", last, calls)
	}
}

// The lab runs a program's scenario as check does (model/flow, judged on
// each run's spans): a clock storm's corrupted seed shows replayable-log
// violated with its story, and its replay line is simlab run's.
func TestSimulateRunsAProgramsScenario(t *testing.T) {
	cfg := Config{Scenario: "clock-storm", Seeds: []uint64{10, 20}}
	if err := cfg.Check(); err != nil {
		t.Fatal(err)
	}
	runs, err := Simulate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].Seed != 10 || runs[0].Scenario != "clock-storm" {
		t.Fatalf("runs %+v: want one per seed", runs)
	}
	judged, violations, _ := runs[0].verdictOf("replayable-log")
	if !judged || len(violations) == 0 || !strings.Contains(strings.Join(violations[0], "\n"), "CORRUPTED_EVENT_LOG") {
		t.Errorf("seed 10: replayable-log judged %v, %v; want it violated (the run failed CORRUPTED_EVENT_LOG)", judged, violations)
	}
	if got := runs[0].Replay(); got != "simlab run --scenario clock-storm --seed 10" {
		t.Errorf("replay %q", got)
	}
	if n, judged := runs[1].violationCount(); !judged || n != 0 {
		t.Errorf("seed 20: %d properties violated (judged %v); want none", n, judged)
	}
}
