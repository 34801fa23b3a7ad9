package traces

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/model/flow"
	"github.com/simlab/simlab/model/program"
)

// flowRun is seed's run of the 16×3 storm in view v, sequential off.
func flowRun(t *testing.T, seed uint64, v flow.View) FlowRun {
	t.Helper()
	cfg := flow.Defaults(program.MustCompile(flow.Storm(16, 3, 300*time.Millisecond)))
	cfg.View = v
	res, err := flow.Run(cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	return FlowRun{Result: res, Config: cfg, Seed: seed, Workflow: "storm", Story: res.Story(cfg.Program)}
}

func flowJSONL(t *testing.T, r FlowRun) []byte {
	t.Helper()
	spans, _, err := BuildFlow(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteJSONL(&b, spans); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A program's run traces as docs/TRACE_SCHEMA.md ("Programs") says, the
// same bytes every time: seed 2 of the storm without slot ids, the run
// corrupted, is the golden file.
func TestFlowGolden(t *testing.T) {
	got := flowJSONL(t, flowRun(t, 2, flow.ViewOwnWrites))
	if again := flowJSONL(t, flowRun(t, 2, flow.ViewOwnWrites)); !bytes.Equal(got, again) {
		t.Fatalf("two builds of one run differ: %s", firstDiff(got, again))
	}
	compareGolden(t, "the storm's seed 2", "flow-storm-2-own-writes.jsonl", got)
}

// Every actor, write, list, read and replay of the run is a span under the
// right parent, named and keyed as the fan-out traces are where they mean
// the same; the invocation that failed the run CORRUPTED_EVENT_LOG says so
// in core's key, and each refused write says why.
func TestFlowSpansTellTheRun(t *testing.T) {
	r := flowRun(t, 2, flow.ViewOwnWrites)
	if r.Result.End != flow.Corrupted {
		t.Fatalf("seed 2 without slot ids: %s, want corrupted (the golden run)", r.Result.End)
	}
	spans, tid, err := BuildFlow(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Result
	replays := 0
	for _, a := range res.Actors {
		replays += len(a.Replays)
	}
	if want := 1 + len(res.Actors) + len(res.Writes) + len(res.Calls) + replays; len(spans) != want {
		t.Fatalf("%d spans, want %d (the root, %d actors, %d writes, %d calls, %d replays)", len(spans), want, len(res.Actors), len(res.Writes), len(res.Calls), replays)
	}
	ss := FromReadOnly(spans)
	byID := map[string]*Span{}
	for i := range ss {
		byID[ss[i].SpanID] = &ss[i]
		if ss[i].TraceID != tid.String() {
			t.Fatalf("span %s in trace %s, want %s", ss[i].Name, ss[i].TraceID, tid)
		}
	}
	codes, diverged, refused := 0, 0, map[string]int{}
	for i := range ss {
		s := &ss[i]
		switch {
		case s.Name == RunSpanName:
			if id, _ := s.Attr(KeyRunID); id != FlowRunName(2) || s.ParentID != "" {
				t.Errorf("root: run id %q, parent %q", id, s.ParentID)
			}
			if st, _ := s.Attr(KeyRunStatus); st != "failed" {
				t.Errorf("root status %q, want failed", st)
			}
			if story, _ := s.Attr(KeyFlowStory); !strings.Contains(story, "a fresh replay of the log diverges") {
				t.Errorf("root story %q lacks the divergence", story)
			}
		case strings.HasPrefix(s.Name, EventsCreateSpanName+" "):
			p := byID[s.ParentID]
			if p == nil || !(strings.HasPrefix(p.Name, ExecuteSpanPrefix) || strings.HasPrefix(p.Name, StepSpanPrefix)) {
				t.Errorf("%s's parent is %v, want its writer", s.Name, p)
			}
			if r, _ := s.Attr(KeyEventResult); r != "ok" {
				refused[r]++
			}
		case s.Name == ReplaySpanName:
			if o, _ := s.Attr(KeyFlowOutcome); o == "diverged" {
				diverged++
				if s.StatusCode != "error" {
					t.Errorf("a diverged replay's span is %q, want error", s.StatusCode)
				}
			}
		}
		if c, ok := s.Attr(KeyErrorCode); ok {
			codes++
			if c != "CORRUPTED_EVENT_LOG" || !strings.HasPrefix(s.Name, ExecuteSpanPrefix+" storm") {
				t.Errorf("%s carries %s=%s, want the failing invocation CORRUPTED_EVENT_LOG", s.Name, KeyErrorCode, c)
			}
		}
	}
	if codes != 1 || diverged != res.Divergences {
		t.Errorf("%d spans with an error code (want 1), %d diverged replays (want %d)", codes, diverged, res.Divergences)
	}
	for r := range refused {
		if r != "run_expired" && r != "entity_conflict" {
			t.Errorf("a refused write says %q", r)
		}
	}
	if _, _, err := BuildFlow(r, Options{MaxSpans: 10}); err == nil {
		t.Error("MaxSpans taken: a program's run is traced whole")
	}
}
