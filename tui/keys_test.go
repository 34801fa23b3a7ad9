package tui

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/simlab/simlab/traces"
)

func (h *harness) top() view { return h.app.top() }

func (h *harness) crumbs() string { return strings.Join(h.app.header.crumbs, " › ") }

func (h *harness) selectedRun() *Run {
	h.t.Helper()
	return h.app.runs.selected()
}

func (h *harness) timeline() *timelineView {
	h.t.Helper()
	tl, ok := h.top().(*timelineView)
	if !ok {
		h.t.Fatalf("top view is %s, not the timeline", h.top().kind())
	}
	return tl
}

func (h *harness) detail() *detailView {
	h.t.Helper()
	d, ok := h.top().(*detailView)
	if !ok {
		h.t.Fatalf("top view is %s, not a span", h.top().kind())
	}
	return d
}

func TestNavigationAndBreadcrumb(t *testing.T) {
	h := newHarness(t, defaultConfig())
	if r := h.selectedRun(); r.No != 1 {
		t.Fatalf("the runs view opens on #%d", r.No)
	}
	h.keys("jj")
	if r := h.selectedRun(); r.No != 3 {
		t.Fatalf("jj selects #%d, want #3", r.No)
	}
	h.keys("<Down><Up>k")
	if r := h.selectedRun(); r.No != 2 {
		t.Fatalf("↓↑k selects #%d, want #2", r.No)
	}
	h.keys("G")
	if r := h.selectedRun(); r.No != 8 {
		t.Fatalf("G selects #%d, want #8", r.No)
	}
	h.keys("jjj") // past the end stays at the end
	if r := h.selectedRun(); r.No != 8 {
		t.Fatalf("j past the end selects #%d", r.No)
	}
	h.keys("g")
	if r := h.selectedRun(); r.No != 1 {
		t.Fatalf("g selects #%d, want #1", r.No)
	}
	h.keys("j<Enter>")
	tl := h.timeline()
	if tl.run.Seed != 2 || !strings.Contains(h.crumbs(), "runs (8) › #2 wrun_0000 seed 2 timeline") {
		t.Fatalf("Enter opened seed %d; breadcrumb %q", tl.run.Seed, h.crumbs())
	}
	h.keys("jjj")
	span, _ := tl.selectedSpan()
	h.keys("<Enter>")
	if d := h.detail(); d.span != span {
		t.Fatalf("Enter opened span %d, want the selected %d", d.span, span)
	}
	if !strings.HasSuffix(h.crumbs(), "› span "+tl.run.Spans[span].Name) {
		t.Fatalf("breadcrumb %q", h.crumbs())
	}
	h.keys("<Esc>")
	if h.top() != tl {
		t.Fatal("Esc did not go back to the same timeline")
	}
	if s, _ := tl.selectedSpan(); s != span {
		t.Fatal("going back lost the timeline's selection")
	}
	h.keys("<Esc>")
	if h.top() != h.app.runs || h.selectedRun().No != 2 {
		t.Fatal("Esc did not go back to the runs view with #2 selected")
	}
	h.keys("<Esc>")
	if h.top() != h.app.runs || !strings.Contains(h.draw(), "this is the first view; q quits") {
		t.Fatal("Esc on the root view should stay and say how to quit")
	}
	if h.app.quitting {
		t.Fatal("Esc quit")
	}
	h.keys("q")
	if !h.app.quitting {
		t.Fatal("q did not quit")
	}
}

func TestTimelineFilter(t *testing.T) {
	h := newHarness(t, Config{Scenario: "golden-t2", Seeds: []uint64{1}})
	h.keys("<Enter>")
	tl := h.timeline()
	all := len(tl.rows)
	rows := func() []traces.Span {
		var out []traces.Span
		for _, i := range tl.rows {
			out = append(out, tl.run.Spans[i])
		}
		return out
	}

	// key=value: exactly the step executions that took the fetch-free prologue.
	h.keys("/workflow.step.dispatch_prologue=run_context<Enter>")
	got := rows()
	if len(got) != 2 {
		t.Fatalf("key=value kept %d spans, want the 2 workflow.execute of the queued step's deliveries", len(got))
	}
	for _, s := range got {
		if v, _ := s.Attr(highlightKey); v != "run_context" {
			t.Fatalf("kept %s with prologue %q", s.Name, v)
		}
	}
	// Enter opens the first match, whose prologue attribute is under the cursor.
	h.keys("<Enter>")
	d := h.detail()
	if d.run.Spans[d.span].SpanID != got[0].SpanID {
		t.Fatal("Enter did not open the first match")
	}
	row, _ := d.GetSelection()
	if k := strings.TrimSpace(d.rows[d.shown[row]].key); k != highlightKey {
		t.Fatalf("the span opens on %q, want %s", k, highlightKey)
	}
	h.keys("<Esc>")

	// ! inverts: every span but those two.
	h.keys("/!workflow.step.dispatch_prologue=run_context<Enter>")
	if n := len(tl.rows); n != len(tl.run.Spans)-2 {
		t.Fatalf("!key=value kept %d spans, want %d", n, len(tl.run.Spans)-2)
	}
	// Text matches names and attribute values, in any case.
	h.keys("<Esc>/RUNS.GET<Enter>")
	for _, s := range rows() {
		if s.Name != "world.runs.get" {
			t.Fatalf("text filter RUNS.GET kept %s", s.Name)
		}
	}
	// The lazy read only: the run's first delivery runs in turbo and
	// reads nothing before its run_started.
	if len(tl.rows) != 1 {
		t.Fatalf("text filter kept %d runs.get spans, want 1 (the lazy read)", len(tl.rows))
	}
	// Text matches values and keys: the lazy read (reason last_completer)
	// and the step whose simlab.step.last_completer is set.
	h.keys("/last_completer<Enter>")
	if got := rows(); len(got) != 2 || got[0].Name != "step.execute branch" || got[1].Name != "world.runs.get" {
		t.Fatalf("text filter last_completer kept %d spans: %v", len(got), got)
	}
	// Esc in the prompt abandons the edit and keeps the filter there was.
	h.keys("/queue<Esc>")
	if tl.filter.String() != "last_completer" || len(tl.rows) != 2 {
		t.Fatalf("Esc in the prompt left filter %q with %d rows", tl.filter.String(), len(tl.rows))
	}
	// Esc in the view clears the filter before it goes back.
	h.keys("<Esc>")
	if h.top() != tl || tl.filter.active() || len(tl.rows) != all {
		t.Fatalf("Esc: top %s, filter %q, %d rows of %d", h.top().kind(), tl.filter.String(), len(tl.rows), all)
	}
}

func TestRunsFilterAndSort(t *testing.T) {
	h := newHarness(t, defaultConfig())
	// The first run's time to its last step, and the seeds whose runs took
	// as long: a filter on that column must keep those and no others.
	ttls := ttlsText(h.app.runs.rows[0])
	var want []uint64
	for _, r := range h.app.runs.rows {
		if ttlsText(r) == ttls {
			want = append(want, r.Seed)
		}
	}
	if len(want) == len(h.app.runs.rows) {
		t.Fatalf("every run took %s: the filter would prove nothing", ttls)
	}
	h.keys(fmt.Sprintf("/ttls=%s<Enter>", ttls))
	var got []uint64
	for _, r := range h.app.runs.rows {
		got = append(got, r.Seed)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("/ttls=%s kept seeds %v, want %v", ttls, got, want)
	}
	h.keys("<Esc>/!workflow.run.status=completed<Enter>")
	if n := len(h.app.runs.rows); n != 0 {
		t.Fatalf("every fanout run completed, yet the inverted filter kept %d", n)
	}
	if !strings.Contains(h.crumbs(), "runs (0 of 8) /!workflow.run.status=completed") {
		t.Fatalf("breadcrumb %q does not show the filter", h.crumbs())
	}
	h.keys("<Esc>")
	// s cycles the sort column; S reverses.
	h.keys("s")
	if runColumns[h.app.runs.sortCol].title != "SEED" {
		t.Fatalf("s sorts by %s", runColumns[h.app.runs.sortCol].title)
	}
	h.keys("sssssss") // TTLS
	if runColumns[h.app.runs.sortCol].title != "TTLS" {
		t.Fatalf("sort column is %s", runColumns[h.app.runs.sortCol].title)
	}
	rows := h.app.runs.rows
	for i := 1; i < len(rows); i++ {
		if rows[i-1].TTLS > rows[i].TTLS {
			t.Fatalf("not sorted by TTLS: %v before %v", rows[i-1].TTLS, rows[i].TTLS)
		}
	}
	h.keys("S")
	if rows := h.app.runs.rows; rows[0].TTLS < rows[len(rows)-1].TTLS {
		t.Fatal("S did not reverse the order")
	}
}

func TestSeedAndScenarioCommands(t *testing.T) {
	h := newHarness(t, defaultConfig())
	h.command("seed 42")
	r := h.selectedRun()
	if h.top() != h.app.runs || r.Seed != 42 || r.No != 9 || len(h.app.sess.runs) != 9 {
		t.Fatalf(":seed 42 selected seed %d #%d of %d runs", r.Seed, r.No, len(h.app.sess.runs))
	}
	if got := r.Replay(); got != "simlab run --scenario fanout --seed 42" {
		t.Fatalf("replay %q", got)
	}
	// The seed joins the session's seeds, and the header says so.
	if seeds := h.app.sess.cfg.Seeds; !slices.Equal(seeds, append(slices.Clone(DefaultSeeds), 42)) {
		t.Fatalf(":seed 42 made the session's seeds %v", seeds)
	}
	if header := strings.SplitN(h.draw(), "\n", 2)[0]; !strings.Contains(header, "seeds 1–8,42") {
		t.Fatalf("the header does not follow :seed 42: %q", header)
	}
	// The same seed again adds no row.
	h.command("seed 42")
	if len(h.app.sess.runs) != 9 || h.selectedRun() != r {
		t.Fatal(":seed 42 twice added a duplicate")
	}
	// From deeper in the stack, a command comes back to the runs view.
	h.keys("<Enter><Enter>")
	h.command("scenario golden-t2")
	if h.top() != h.app.runs || h.selectedRun().Scenario != "golden-t2" || len(h.app.sess.runs) != 18 {
		t.Fatalf(":scenario: top %s, selected %s, %d runs", h.top().kind(), h.selectedRun().Scenario, len(h.app.sess.runs))
	}
	h.command("variant pre-fix-fence")
	if r := h.selectedRun(); !slices.Equal(r.Variants, []string{"pre-fix-fence"}) || !strings.Contains(r.Replay(), "--variant pre-fix-fence") {
		t.Fatalf(":variant ran %v, replay %q", r.Variants, r.Replay())
	}
	h.command("set workflow.fanouts=4")
	if r := h.selectedRun(); !strings.Contains(r.Replay(), "--set workflow.fanouts=4 --variant pre-fix-fence") || len(r.Spans) < 40 {
		t.Fatalf(":set ran %q with %d spans", r.Replay(), len(r.Spans))
	}
	before := len(h.app.sess.runs)
	for _, bad := range []string{"seed x", "scenario nope", "variant bogus", "set nonsense", "frobnicate", "compare 1 999"} {
		h.command(bad)
		s := h.draw()
		if len(h.app.sess.runs) != before || !strings.Contains(s, strings.Fields(bad)[0]) {
			t.Fatalf(":%s did not fail cleanly:\n%s", bad, s)
		}
		st, _ := h.styleAt(":" + strings.Fields(bad)[0])
		if fg, _, _ := st.Decompose(); fg != tcell.ColorRed {
			t.Fatalf(":%s's error is not shown as an error (colour %v)", bad, fg)
		}
	}
	// ↑ in the prompt walks the command history.
	h.keys(":<Up><Up><Enter>")
	if len(h.app.sess.runs) != before {
		t.Fatal("history replayed a command that should have failed")
	}
	h.command("q")
	if !h.app.quitting {
		t.Fatal(":q did not quit")
	}
}

func TestCompare(t *testing.T) {
	h := newHarness(t, Config{Scenario: "golden-t2", Seeds: []uint64{1}})
	h.command("variant legacy-producers")
	// Mark #1, select #2, c.
	h.keys("gmjc")
	cv, ok := h.top().(*compareView)
	if !ok {
		t.Fatalf("m, j, c opened %s", h.top().kind())
	}
	if cv.a.No != 1 || cv.b.No != 2 {
		t.Fatalf("compare #%d ↔ #%d", cv.a.No, cv.b.No)
	}
	s := h.draw()
	for _, want := range []string{"prologue runs.get", "workflow.execute fanout dispatch_prologue=runs_get", "world.runs.get reason=prologue"} {
		found := false
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, want) && strings.HasPrefix(l, "≠") {
				found = true
			}
		}
		if !found {
			t.Errorf("compare does not flag %q as differing:\n%s", want, s)
		}
	}
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, " status ") && strings.Contains(l, "≠") {
			t.Errorf("equal statuses flagged: %s", l)
		}
	}
	h.keys("<Esc>")
	h.command("compare 2 1")
	if cv := h.top().(*compareView); cv.a.No != 2 || cv.b.No != 1 {
		t.Fatal(":compare 2 1 compared the wrong runs")
	}
	h.keys("<Esc>gc")
	if h.top() != h.app.runs || !strings.Contains(h.draw(), "select a run other than the marked one") {
		t.Fatal("c on the marked run itself should refuse")
	}
}

func TestLinkJumpsToLinkedSpan(t *testing.T) {
	h := newHarness(t, Config{Scenario: "golden-t2", Seeds: []uint64{1}})
	h.keys("<Enter>/messaging.operation.type=process<Enter>j<Enter>")
	d := h.detail()
	from := d.run.Spans[d.span]
	if len(from.Links) != 1 {
		t.Fatalf("%s has %d links", from.Name, len(from.Links))
	}
	// Walk down to the link row and press Enter.
	for i := 0; i < 40; i++ {
		if _, ok := d.selectedLink(); ok {
			break
		}
		h.keys("j")
	}
	h.keys("<Enter>")
	to := h.detail()
	if to == d || to.run.Spans[to.span].SpanID != from.Links[0].SpanID || to.run.Spans[to.span].Name != "queue.publish" {
		t.Fatalf("Enter on the link opened %s", to.run.Spans[to.span].Name)
	}
	h.keys("<Esc>")
	if h.top() != d {
		t.Fatal("Esc after a jump does not return to the span the link was on")
	}
}

func TestSpanDetailHighlightsPrologueAndHidesWallClock(t *testing.T) {
	h := newHarness(t, Config{Scenario: "golden-t2", Seeds: []uint64{1}})
	h.keys("<Enter>/workflow.step.dispatch_prologue=run_context<Enter><Enter>k")
	st, ok := h.styleAt(highlightKey)
	if !ok {
		t.Fatal("the prologue attribute is not on screen")
	}
	if _, bg, _ := st.Decompose(); bg != tcell.ColorYellow {
		t.Fatalf("%s is not highlighted (background %v)", highlightKey, bg)
	}
	other, _ := h.styleAt("simlab.step.outcome")
	if _, bg, _ := other.Decompose(); bg == tcell.ColorYellow {
		t.Fatal("an ordinary attribute is highlighted too")
	}

	// An instant given as unix nanoseconds is shown as an offset.
	r := h.detail().run
	at := r.Start.Add(1500 * time.Millisecond)
	d := &detailView{run: r}
	got := d.attrValue(traces.Attr{Key: "simlab.event.retry_after_unix_nano", Value: fmt.Sprint(at.UnixNano())})
	if !strings.HasPrefix(got, "+1.5s") {
		t.Fatalf("retry_after shown as %q, want +1.5s", got)
	}
}

func TestFoldAndTimeCursor(t *testing.T) {
	h := newHarness(t, Config{Scenario: "golden-t2", Seeds: []uint64{1}})
	h.keys("<Enter>")
	tl := h.timeline()
	all := len(tl.rows)
	h.keys("<Space>")
	if len(tl.rows) != 1 {
		t.Fatalf("folding the root leaves %d rows", len(tl.rows))
	}
	h.keys("<Space>")
	if len(tl.rows) != all {
		t.Fatalf("unfolding the root gives %d rows of %d", len(tl.rows), all)
	}
	h.keys("jj<Space>") // a leaf: nothing to fold
	if len(tl.rows) != all || !strings.Contains(h.draw(), "nothing to fold here") {
		t.Fatal("folding a leaf changed the rows or said nothing")
	}

	// Step through the log: the state panel follows the accepted events.
	n := len(tl.tm.moments)
	if n == 0 {
		t.Fatal("no moments")
	}
	if st := tl.tm.stateAt(tl.panel.cursor); st.Status != "pending" || st.NotCreated != 2 {
		t.Fatalf("at the first event the run is %+v", st)
	}
	h.keys("]")
	if tl.panel.cursor != 1 || !strings.Contains(h.draw(), "event 2/") {
		t.Fatalf("] moved the cursor to %d", tl.panel.cursor)
	}
	h.keys("[[[")
	if tl.panel.cursor != 0 {
		t.Fatalf("[ past the start left the cursor at %d", tl.panel.cursor)
	}
	for i := 0; i < n+3; i++ {
		h.keys("]")
	}
	if tl.panel.cursor != n-1 {
		t.Fatalf("] past the end left the cursor at %d of %d", tl.panel.cursor, n)
	}
	st := tl.tm.stateAt(tl.panel.cursor)
	if st.Status != "completed" || st.Completed != 2 || st.Pending+st.Running+st.NotCreated != 0 {
		t.Fatalf("at the last event the run is %+v", st)
	}
	if s := h.draw(); !strings.Contains(s, "run completed · steps 2: 0 not created, 0 pending, 0 running, 2 completed") {
		t.Fatalf("the state panel does not show the final state:\n%s", s)
	}
	// Halfway, something is running or pending.
	mid := tl.tm.stateAt(n / 2)
	if mid.Status != "running" || mid.Completed == 2 {
		t.Fatalf("halfway the run is %+v", mid)
	}
}

func TestPropertiesViewAndEvidenceJump(t *testing.T) {
	h := newHarness(t, Config{Scenario: "golden-t5", Variants: []string{"pre-fix-fence"}, Seeds: []uint64{1}})
	h.keys("p")
	pv, ok := h.top().(*propertiesView)
	if !ok {
		t.Fatalf("p opened %s", h.top().kind())
	}
	if p, _ := pv.selected(); p.Name != "no-start-on-terminal" {
		t.Fatalf("the view opens on %s, not the first violated property", p.Name)
	}
	story := pv.story.GetText(false)
	for _, want := range []string{"no-start-on-terminal violated in wrun_0000", "run_cancelled",
		"simlab run --scenario golden-t5 --seed 1 --variant pre-fix-fence"} {
		if !strings.Contains(story, want) {
			t.Errorf("story lacks %q:\n%s", want, story)
		}
	}
	h.keys("jj")
	if p, _ := pv.selected(); !strings.Contains(pv.story.GetText(false), p.Name+" holds") {
		t.Fatalf("moving to %s did not update the story: %q", p.Name, pv.story.GetText(false))
	}
	h.keys("g<Enter>")
	tl := h.timeline()
	if m := tl.tm.moments[tl.panel.cursor]; m.Event != "run_cancelled" {
		t.Fatalf("Enter on the violation put the cursor on %+v, want the run_cancelled the story starts with", m)
	}
}

// Every keymap entry is in the help screen and, in each view it applies
// to, in the footer drawn on screen; so neither can drift from the keys.
func TestHelpAndFooterComeFromTheKeymap(t *testing.T) {
	h := newHarness(t, Config{Scenario: "golden-t2", Seeds: []uint64{1}})
	h.keys("?")
	hv, ok := h.top().(*helpView)
	if !ok {
		t.Fatalf("? opened %s", h.top().kind())
	}
	help := hv.GetText(false)
	for _, b := range Keymap {
		line := ""
		for _, l := range strings.Split(help, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), b.Label+" ") && strings.Contains(l, " "+string(b.Action)+" ") {
				line = l
			}
		}
		if line == "" || !strings.Contains(line, b.Help) {
			t.Errorf("help lacks %s %s: %s", b.Label, b.Action, b.Help)
		}
	}
	for _, c := range commandHelp {
		if !strings.Contains(help, c[0]) {
			t.Errorf("help lacks the command %s", c[0])
		}
	}

	// Open every view, read its footer off the screen.
	open := map[ViewKind]string{
		ViewRuns: "", ViewTimeline: "<Enter>", ViewDetail: "<Enter><Enter>", ViewProperties: "p",
		ViewCompare: ":compare 1 1<Enter>", ViewHelp: "?",
	}
	for _, v := range allViews {
		h := newHarness(t, Config{Scenario: "golden-t2", Seeds: []uint64{1}})
		h.keys(open[v])
		if h.top().kind() != v {
			t.Fatalf("%q opened %s, not %s", open[v], h.top().kind(), v)
		}
		lines := strings.Split(strings.TrimRight(h.draw(), "\n"), "\n")
		footer := strings.Join(lines[len(lines)-2:], "\n")
		for _, b := range Keymap {
			hint := b.Label + " " + string(b.Action)
			if slices.Contains(b.Views, v) != strings.Contains(footer, hint) {
				t.Errorf("%s view: binding %q applies=%v but the footer shows it=%v:\n%s",
					v, hint, slices.Contains(b.Views, v), !slices.Contains(b.Views, v), footer)
			}
		}
	}
}

// A key bound only in other views does nothing here; the keymap decides.
func TestKeysOnlyActWhereTheKeymapSays(t *testing.T) {
	h := newHarness(t, Config{Scenario: "golden-t2", Seeds: []uint64{1}})
	h.keys("<Enter>")
	h.keys("s") // sort is a runs-view key
	if h.app.runs.sortCol != 0 {
		t.Fatal("s sorted the runs from the timeline")
	}
	h.keys("<Esc>")
	h.keys("<Space>]") // fold and time keys belong to the timeline
	if h.top() != h.app.runs {
		t.Fatal("timeline keys acted on the runs view")
	}
}

func TestKnobsFormReruns(t *testing.T) {
	h := newHarness(t, Config{Scenario: "fanout", Seeds: []uint64{1, 2}})
	h.keys("e")
	f, ok := h.top().(*knobsForm)
	if !ok {
		t.Fatalf("e opened %s", h.top().kind())
	}
	// Keys typed into the form are the form's: q does not quit.
	h.keys("q")
	if h.app.quitting {
		t.Fatal("q in the form quit the app")
	}
	f.GetFormItemByLabel(knobs[0].label).(*tview.InputField).SetText("4")
	f.GetFormItemByLabel(labelSkew).(*tview.InputField).SetText("0.5")
	f.GetFormItemByLabel(labelSeeds).(*tview.InputField).SetText("3..4")
	run := f.GetButton(f.GetButtonIndex("Run"))
	run.InputHandler()(tcell.NewEventKey(tcell.KeyEnter, 0, tcell.ModNone), func(tview.Primitive) {})
	h.settle() // Run simulates off the UI goroutine
	if h.top() != h.app.runs {
		t.Fatalf("Run left %s on top: %s", h.top().kind(), f.GetTitle())
	}
	r := h.selectedRun()
	want := "simlab run --scenario fanout --seed 3 --set workflow.fanouts=4 --set 'deployments[1].name=dpl-v1'"
	if r.Seed != 3 || !strings.HasPrefix(r.Replay(), want) || len(h.app.sess.runs) != 4 {
		t.Fatalf("Run made %q (#%d of %d)", r.Replay(), r.No, len(h.app.sess.runs))
	}
	if !strings.Contains(r.Replay(), "'deployments[1].share=0.5'") || !strings.Contains(r.Replay(), "'deployments[0].share=0.5'") {
		t.Fatalf("the skew knob did not set both shares: %q", r.Replay())
	}
	// A bad value stays on the form with the error.
	h.keys("e")
	f = h.top().(*knobsForm)
	f.GetFormItemByLabel(labelSkew).(*tview.InputField).SetText("2")
	f.GetButton(0).InputHandler()(tcell.NewEventKey(tcell.KeyEnter, 0, tcell.ModNone), func(tview.Primitive) {})
	if h.top() != f || !strings.Contains(f.GetTitle(), "want a share between 0 and 1") {
		t.Fatalf("a skew of 2 was accepted: %q", f.GetTitle())
	}
	h.keys("<Esc>")
	if h.top() != h.app.runs {
		t.Fatal("Esc did not cancel the form")
	}
}

func TestParseSeeds(t *testing.T) {
	for in, want := range map[string][]uint64{"1..3": {1, 2, 3}, "4-5": {4, 5}, "7": {7}, "1,4,9": {1, 4, 9}, " 2 .. 2 ": {2},
		"1..3,42": {1, 2, 3, 42}} {
		got, err := parseSeeds(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("parseSeeds(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "3..1", "1..20000", "1,,2", "1..9000,1..2000"} {
		if _, err := parseSeeds(bad); err == nil {
			t.Errorf("parseSeeds(%q) accepted", bad)
		}
	}
	// What the knobs form shows after :seed 42 reads back as those seeds.
	seeds := append(slices.Clone(DefaultSeeds), 42)
	if got, err := parseSeeds(seedRange(seeds)); err != nil || !slices.Equal(got, seeds) {
		t.Errorf("parseSeeds(seedRange(%v)) = %v, %v", seeds, got, err)
	}
}

// The verdict story scrolls: at 120×40 the stories of golden-t5's fence bug
// run past the pane, and d (PgDn) brings the replay command into view, u
// (PgUp) back to the story's start.
func TestPropertiesStoryScrolls(t *testing.T) {
	h := newHarness(t, Config{Scenario: "golden-t5", Variants: []string{"pre-fix-fence"}, Seeds: []uint64{1}})
	h.keys("p")
	replay := "simlab run --scenario golden-t5 --seed 1 --variant pre-fix-fence"
	first := h.draw()
	if strings.Contains(first, replay) {
		t.Fatalf("precondition: the story fits the pane, nothing to scroll:\n%s", first)
	}
	seen := false
	for i := 0; i < 10 && !seen; i++ {
		h.keys("d")
		seen = strings.Contains(h.draw(), replay)
	}
	if !seen {
		t.Fatalf("d never scrolled the replay command into view:\n%s", h.draw())
	}
	h.keys("<PgDn><PgDn><PgDn>")
	if s := h.draw(); !strings.Contains(s, replay) {
		t.Fatalf("scrolling past the end lost the story's last line:\n%s", s)
	}
	h.keys("u<PgUp>uuuuuuuu")
	if got := h.draw(); got != first {
		t.Fatalf("u did not scroll back to the story's start:\n%s", diffLines(first, got))
	}
	// The help, longer than 40 rows, pages the same way to its end.
	h.keys("?")
	if strings.Contains(h.draw(), "the state panel replays") {
		t.Fatal("precondition: the help fits at 120×40")
	}
	h.keys("dddd")
	if s := h.draw(); !strings.Contains(s, "the state panel replays") {
		t.Fatalf("d did not page the help to its end:\n%s", s)
	}
}

// A simulation runs off the UI goroutine: while it runs the screen draws
// and says how far it got, keys work, esc cancels it between seeds and the
// seeds it finished are kept; q quits at once. (It ran on the key's
// goroutine: `:set workflow.fanouts=20000` froze the screen, q, esc and
// Ctrl-C included, for a minute.)
func TestSimulationRunsOffTheUIGoroutine(t *testing.T) {
	h := newHarness(t, Config{Scenario: "fanout", Seeds: []uint64{1, 2, 3, 4}})
	before := len(h.app.sess.runs)
	h.keysAsync(":set workflow.fanouts=64<Enter>")
	if h.app.job == nil {
		t.Fatal("the simulation ran to its end inside the key press")
	}
	h.step() // its first progress: seed 1 begins
	if s := h.draw(); !strings.Contains(s, "simulating fanout, seeds 1–4: 0 of 4 seeds done… esc cancels") {
		t.Fatalf("the screen does not say a simulation runs:\n%s", s)
	}
	h.keysAsync("j")
	if r := h.selectedRun(); r == nil || r.No != 2 {
		t.Fatalf("j did not move while the simulation ran: %+v", r)
	}
	if err := h.app.execute("seed 9"); err == nil || !strings.Contains(err.Error(), "a simulation is running") {
		t.Fatalf("a second simulation while one runs: %v", err)
	}
	h.keysAsync("<Esc>")
	if s := h.draw(); !strings.Contains(s, "cancelling the simulation") {
		t.Fatalf("esc did not cancel:\n%s", s)
	}
	h.settle()
	added := len(h.app.sess.runs) - before
	if h.app.job != nil || added > 1 {
		t.Fatalf("after esc: job %v, %d runs added (seed 1 at most, begun before esc)", h.app.job, added)
	}
	if s := h.draw(); !strings.Contains(s, "cancel") {
		t.Fatalf("the outcome is not said:\n%s", s)
	}
	// Not cancelled, it ends with every seed.
	h.keys(":set workflow.fanouts=8<Enter>")
	if h.app.job != nil || !strings.Contains(h.draw(), "4 runs of fanout, seeds 1–4") {
		t.Fatalf("a whole simulation:\n%s", h.draw())
	}
	// q quits at once, the simulation cancelled.
	h.keysAsync(":set workflow.fanouts=16<Enter>")
	h.step()
	h.keysAsync("q")
	if !h.app.quitting || !h.app.job.cancel.Load() {
		t.Fatal("q did not quit and cancel the simulation")
	}
	h.settle()
}

// The spans a session holds are bounded: seeds past MaxSessionSpans are
// not simulated, the ones done are kept, and the message says why.
func TestSessionSpansAreBounded(t *testing.T) {
	cfg := Config{Scenario: "fanout", Sets: []string{"workflow.fanouts=400"}, Seeds: []uint64{1, 2, 3, 4, 5, 6, 7, 8}}
	runs, err := SimulateWith(cfg, SimOptions{Spans: 5000})
	var limit *SpanLimitError
	if !errors.As(err, &limit) || len(runs) == 0 || len(runs) == 8 || limit.Done != len(runs) {
		t.Fatalf("%d runs, %v; want a few seeds, then the limit", len(runs), err)
	}
	if !strings.Contains(err.Error(), "the most a session keeps is 5000") {
		t.Fatalf("the message does not name the limit: %v", err)
	}
}

// Ctrl-C is the user's interrupt wherever the focus is (the runs view, the
// `:` prompt, the knobs form): with OnInterrupt set (simlab tui raises
// SIGINT there, to exit 130) it calls that and does not quit by itself;
// without, it quits as q does.
func TestCtrlCInterruptsEverywhere(t *testing.T) {
	h := newHarness(t, Config{Scenario: "fanout", Seeds: []uint64{1}})
	interrupts := 0
	h.app.onInterrupt = func() { interrupts++ }
	h.keys("<CtrlC>")
	h.keys(":")
	h.keys("<CtrlC>")
	h.keys("<Esc>")
	h.keys("e")
	if h.top().kind() != ViewForm {
		t.Fatalf("e did not open the knobs form: %s", h.top().kind())
	}
	h.keys("<CtrlC>")
	if interrupts != 3 || h.app.quitting {
		t.Fatalf("Ctrl-C in the runs view, the prompt and the form: %d interrupts, quitting %v; want 3 and the app left to the signal", interrupts, h.app.quitting)
	}
	plain := newHarness(t, Config{Scenario: "fanout", Seeds: []uint64{1}})
	plain.keys("<CtrlC>")
	if !plain.app.quitting {
		t.Fatal("Ctrl-C with no OnInterrupt did not quit")
	}
}
