package tui

import (
	"regexp"
	"strings"
	"testing"
)

// Each view at 120×40 and at the smallest size, 80×24, compared with
// testdata/<name>.golden and testdata/<name>-80x24.golden. The goldens are
// written by `go test ./tui -update`, never by hand.
func TestGoldenViews(t *testing.T) {
	t2 := Config{Scenario: "golden-t2", Seeds: []uint64{1}}
	cases := []struct {
		name string
		cfg  Config
		keys string
	}{
		{"runs", defaultConfig(), ""},
		{"runs-sorted-by-ttls", defaultConfig(), "ssssssssS"},
		{"timeline", t2, "<Enter>"},
		{"timeline-cursor", t2, "<Enter>]]]]]]"},
		{"timeline-folded", t2, "<Enter>jjj<Space>"},
		{"timeline-filtered", t2, "<Enter>/workflow.step.dispatch_prologue=run_context<Enter>"},
		{"span", t2, "<Enter>/workflow.step.dispatch_prologue=run_context<Enter>j<Enter>"},
		{"span-link", t2, "<Enter>/queue.process<Enter>j<Enter>"},
		{"properties", Config{Scenario: "golden-t5", Variants: []string{"pre-fix-fence"}, Seeds: []uint64{1}}, "p"},
		{"compare", t2, ":variant legacy-producers<Enter>:compare 1 2<Enter>"},
		{"help", t2, "?"},
		{"knobs", t2, "e"},
		{"skew-timeline", Config{Scenario: "skew-rollout", Seeds: []uint64{2}}, "<Enter>"},
		{"compare-knobs", t2, ":set workflow.max_inline=0<Enter>:compare 1 2<Enter>"},
		{"runs-knobs", t2, ":set workflow.max_inline=0<Enter>"},
		{"runs-scrolled", defaultConfig(), "ll"},
		{"runs-seed-added", defaultConfig(), ":seed 42<Enter>"},
		{"runs-filter-empty", defaultConfig(), "/no-such-run<Enter>"},
		{"timeline-filter-empty", t2, "<Enter>/no-such-span<Enter>"},
	}
	for _, c := range cases {
		for _, size := range []struct {
			suffix string
			w, h   int
		}{{"", 120, 40}, {"-80x24", 80, 24}} {
			t.Run(c.name+size.suffix, func(t *testing.T) {
				h := newHarness(t, c.cfg)
				h.screen.SetSize(size.w, size.h)
				h.draw() // as on a terminal: drawn once before the first key
				h.keys(c.keys)
				h.golden(c.name + size.suffix)
			})
		}
	}
}

// Below 80×24 the screen says so instead of drawing a broken layout; it
// comes back when the terminal grows, with the same view.
func TestSmallTerminal(t *testing.T) {
	h := newHarness(t, Config{Scenario: "golden-t2", Seeds: []uint64{1}})
	h.keys("<Enter>")
	h.screen.SetSize(70, 20)
	h.golden("small-terminal")
	s := h.draw()
	if !strings.Contains(s, "at least") || !strings.Contains(s, "80×24; this one is 70×20") {
		t.Fatalf("no size message:\n%s", s)
	}
	// Keys other than q do nothing while the terminal is too small.
	h.keys("<Esc>")
	h.screen.SetSize(120, 40)
	if s := h.draw(); !strings.Contains(s, "DEPLOY/VER") || strings.Contains(s, "this one is") {
		t.Fatalf("the timeline did not come back after enlarging:\n%s", s)
	}
	h.screen.SetSize(79, 40)
	if s := h.draw(); !strings.Contains(s, "this one is 79×40") {
		t.Fatalf("79 columns is below the minimum but drew:\n%s", s)
	}
	// The message itself fits a small terminal: every line whole.
	h.screen.SetSize(40, 10)
	h.golden("small-terminal-40x10")
	s = h.draw()
	for _, want := range []string{"simlab tui needs at least", "80×24; this one is 40×10.", "Enlarge it to go on,", "or press q to quit."} {
		if !strings.Contains(s, want) {
			t.Errorf("at 40×10 the message lacks %q:\n%s", want, s)
		}
	}
	h.keys("q")
	if !h.app.quitting {
		t.Fatal("q does not quit while the terminal is small")
	}
}

// No view shows wall-clock time: the spans carry real-looking timestamps
// (virtual time plus an epoch in 2026), and none of it may reach the screen.
func TestNoWallClockOnScreen(t *testing.T) {
	wall := regexp.MustCompile(`20[0-9]{2}-[01][0-9]|[0-2][0-9]:[0-5][0-9]:[0-5][0-9]|\bUTC\b|176[0-9]{16}`)
	flows := []struct {
		cfg  Config
		keys string
	}{
		{defaultConfig(), ""},
		{Config{Scenario: "faults", Seeds: []uint64{3}}, "<Enter>G"},
		{Config{Scenario: "faults", Seeds: []uint64{3}}, "<Enter>]]]]]]]]]]]]]]]]]]]]]]"},
		{Config{Scenario: "skew-rollout", Seeds: []uint64{3}}, "G<Enter>/last_completer<Enter><Enter>"},
		{Config{Scenario: "faults", Seeds: []uint64{3}}, "p"},
		{Config{Scenario: "golden-t2", Seeds: []uint64{1}}, "<Enter>jjjjjjjjjjjjjjjj<Enter>"},
	}
	for _, f := range flows {
		h := newHarness(t, f.cfg)
		h.keys(f.keys)
		if s := h.draw(); wall.MatchString(s) {
			t.Errorf("%s %q shows something like wall-clock time %q:\n%s", f.cfg.Scenario, f.keys, wall.FindString(s), s)
		}
	}
}

// At the smallest size, 80×24, the properties view still tells the story:
// the table gives up rows to it and scrolls to its selection, so the
// selected property's first violation is on screen, for the last
// violated property too (below the rows the table keeps).
func TestPropertiesStoryAt80x24(t *testing.T) {
	h := newHarness(t, Config{Scenario: "golden-t5", Variants: []string{"pre-fix-fence"}, Seeds: []uint64{1}})
	h.screen.SetSize(80, 24)
	h.keys("p")
	if s := h.draw(); !strings.Contains(s, "no-start-on-terminal violated in wrun_0000") {
		t.Fatalf("80×24: the selected property's story is not on screen:\n%s", s)
	}
	h.keys("G")
	s := h.draw()
	if !strings.Contains(s, "recovery-in-band") || !strings.Contains(s, "recovery-in-band holds for wrun_0000") {
		t.Errorf("80×24, the last property selected: its row or its story is not on screen:\n%s", s)
	}
}

// At 80×24 every field of the knobs form and its Run button are on screen.
func TestKnobsFormFitsAt80x24(t *testing.T) {
	h := newHarness(t, Config{Scenario: "golden-t2", Seeds: []uint64{1}})
	h.screen.SetSize(80, 24)
	h.keys("e")
	s := h.draw()
	for _, want := range []string{"Scenario", "Seeds", "Body failure rate", "Skew: share of runs on v1", "Variant", "Run", "Cancel"} {
		if !strings.Contains(s, want) {
			t.Errorf("80×24: %q is not on screen:\n%s", want, s)
		}
	}
}

// The runs view's PROPS counts what simlab check counts: properties
// violated, not violations. golden-t5's seed 1 under pre-fix-fence breaks
// four properties, one of them four times.
func TestRunsCountPropertiesAsCheckDoes(t *testing.T) {
	h := newHarness(t, Config{Scenario: "golden-t5", Variants: []string{"pre-fix-fence"}, Seeds: []uint64{1}})
	runs := h.app.runs.rows
	if len(runs) != 1 || !runs[0].Checked {
		t.Fatalf("%d runs", len(runs))
	}
	props := map[string]bool{}
	for _, v := range runs[0].Violations {
		props[v.Property] = true
	}
	if len(props) == len(runs[0].Violations) {
		t.Fatalf("%d violations of %d properties: the seed no longer tells the two counts apart", len(runs[0].Violations), len(props))
	}
	if got, want := verdictText(runs[0]), "✗ "+itoa(len(props)); got != want {
		t.Errorf("PROPS %q, want %q (%d violations of %d properties)", got, want, len(runs[0].Violations), len(props))
	}
}

// Going to and fro between a run's verdicts (p) and its timeline (⏎ on a
// violation) goes back to the view already open instead of stacking a new
// one: the breadcrumb stays runs › timeline › properties.
func TestVerdictsAndTimelineKeepTheBackStack(t *testing.T) {
	h := newHarness(t, Config{Scenario: "golden-t5", Variants: []string{"pre-fix-fence"}, Seeds: []uint64{1}})
	h.keys("<Enter>p")
	if n := len(h.app.stack); n != 3 {
		t.Fatalf("runs, timeline, properties: %d views", n)
	}
	for range 4 {
		h.keys("<Enter>p")
	}
	if n := len(h.app.stack); n != 3 {
		t.Errorf("after four trips between verdicts and timeline the stack holds %d views, want 3", n)
	}
	h.keys("<Enter>")
	if _, ok := h.app.top().(*timelineView); !ok || len(h.app.stack) != 2 {
		t.Errorf("⏎ on a violation: top %T, %d views; want the timeline below, 2 views", h.app.top(), len(h.app.stack))
	}
}
