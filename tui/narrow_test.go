package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simlab/simlab/model"
)

// At 80×24 what a row and the header say stays readable: the breadcrumb
// never runs into the status at the right, an events.create row keeps its
// event type (world.events.create ste… said which call but not which
// event), and the marks of one span are words apart (↻2ctx was one word).
func TestNarrowTimelineStaysReadable(t *testing.T) {
	h := at80x24(t, Config{Scenario: "golden-t2", Seeds: []uint64{1}})
	h.keys("<Enter>")
	screen := h.draw()
	lines := strings.Split(screen, "\n")
	if !strings.Contains(lines[0], "timeline  ") || !strings.Contains(lines[0], "  golden-t2 · seeds 1") {
		t.Errorf("the breadcrumb and the status touch:\n%s", lines[0])
	}
	for _, ev := range []string{"create run_created", "step_started", "step_completed"} {
		if !strings.Contains(screen, ev) {
			t.Errorf("no row names the event %s:\n%s", ev, screen)
		}
	}
	if strings.Contains(screen, "ste…") {
		t.Errorf("an event is cut:\n%s", screen)
	}
	// A filter too long for the breadcrumb is still shown, whole, on the
	// prompt line until a message takes it.
	f := "workflow.step.dispatch_prologue=run_context"
	h.keys("/" + f + "<Enter>")
	s := h.draw()
	if !strings.Contains(s, "/"+f) {
		t.Errorf("the active filter /%s is not shown whole:\n%s", f, s)
	}
	if top := strings.Split(s, "\n")[0]; !strings.Contains(top, "  golden-t2 · seeds 1") {
		t.Errorf("the breadcrumb of a filtered timeline runs into the status:\n%s", top)
	}
	if strings.Contains(s, "↻2ctx") || !strings.Contains(s, "↻2 ctx") {
		t.Errorf("marks run together:\n%s", s)
	}
}

// A long error keeps its reason at 80 columns: the prompt wraps it over up
// to three lines instead of cutting its end, where the reason is.
func TestLongErrorKeepsItsReason(t *testing.T) {
	h := at80x24(t, Config{Scenario: "golden-t2", Seeds: []uint64{1}})
	dir := t.TempDir()
	file := filepath.Join(dir, "a-scenario-file-with-a-long-name-to-push-the-reason-out.yaml")
	if err := os.WriteFile(file, []byte("runs: 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.command("scenario " + file)
	s := h.draw()
	if !strings.Contains(strings.ReplaceAll(s, "\n", ""), "want 1 to 100000") {
		t.Fatalf("the reason of the error is cut off:\n%s", s)
	}
}

// The text filter finds what the rows show: /lazy lists the lazy runs.get
// its MARKS column marks lazy (the filter looked at names and attributes
// only, where the word is last_completer).
func TestFilterFindsMarks(t *testing.T) {
	h := newHarness(t, Config{Scenario: "golden-t2", Seeds: []uint64{1}})
	h.keys("<Enter>/lazy<Enter>")
	tl := h.top().(*timelineView)
	if len(tl.rows) == 0 {
		t.Fatalf("/lazy matches no span:\n%s", h.draw())
	}
	for _, i := range tl.rows {
		if !strings.Contains(spanMarks(&tl.run.Spans[i]), "lazy") {
			t.Errorf("/lazy lists %s, which is not marked lazy", tl.run.Spans[i].Name)
		}
	}
}

// Filtered rows keep the tree's order: a parent above its children, also
// for an inverted filter (!queue listed a child above its parent).
func TestFilteredRowsKeepTheTreeOrder(t *testing.T) {
	for _, f := range []string{"!queue", "!world.events.create", "world"} {
		h := newHarness(t, Config{Scenario: "faults", Seeds: []uint64{1}})
		h.keys("<Enter>/" + f + "<Enter>")
		tl := h.top().(*timelineView)
		pos := map[int]int{}
		for k, i := range tl.rows {
			pos[i] = k
		}
		for k, i := range tl.rows {
			for p := tl.run.tree.Parent[i]; p >= 0; p = tl.run.tree.Parent[p] {
				if pk, ok := pos[p]; ok && pk > k {
					t.Fatalf("/%s: %s (row %d) above its ancestor %s (row %d)", f, tl.run.Spans[i].Name, k, tl.run.Spans[p].Name, pk)
				}
			}
		}
	}
}

// A run read from a trace file is judged by its spans, as check --trace
// judges it: the properties spans can judge get a verdict (the fence bug's
// no-start-on-terminal is found), the others say why not; every property
// was n/a.
func TestTraceFileRunsAreJudgedBySpans(t *testing.T) {
	sc, _ := model.Builtin("golden-t5")
	sc.Variants = []string{"pre-fix-fence"}
	_, buf := traceFile(t, sc, 1)
	runs, err := ReadTrace(buf, "t5.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	h := harnessFor(t, Config{Scenario: "golden-t5", Seeds: []uint64{1}}, runs, "t5.jsonl")
	if got := verdictText(runs[0]); !strings.HasPrefix(got, "✗") {
		t.Errorf("the PROPS column of the file's run says %q", got)
	}
	h.keys("p")
	s := h.draw()
	if !strings.Contains(s, "no-start-on-terminal") || !strings.Contains(s, "✗") || !strings.Contains(s, "✓ holds") {
		t.Fatalf("the properties view judges nothing from the spans:\n%s", s)
	}
	if !strings.Contains(s, "not judged") {
		t.Fatalf("the properties spans cannot judge are not said:\n%s", s)
	}
}
