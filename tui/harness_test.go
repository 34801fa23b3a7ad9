package tui

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current code instead of comparing")

// TestMain pins the zone, though nothing on screen may depend on it: no
// view shows wall-clock time (TestNoWallClockOnScreen checks).
func TestMain(m *testing.M) {
	os.Setenv("TZ", "UTC")
	time.Local = time.UTC
	os.Exit(m.Run())
}

// harness drives an App synchronously: keys go through App.HandleKey as
// the event loop would send them, and draw renders the whole screen onto a
// simulation screen.
type harness struct {
	t      *testing.T
	app    *App
	screen tcell.SimulationScreen
	// posted carries what the app's simulations post to the UI goroutine;
	// the harness, being that goroutine, runs them in settle or step. It
	// is unbuffered: a simulation waits at each post until the test takes
	// it, so a test knows where a simulation is, without the clock.
	posted chan func()
	async  bool // keys leave a simulation running (keysAsync)
}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	runs, err := Simulate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return harnessFor(t, cfg, runs, cfg.Scenario)
}

func harnessFor(t *testing.T, cfg Config, runs []*Run, origin string) *harness {
	t.Helper()
	screen := tcell.NewSimulationScreen("UTF-8")
	if err := screen.Init(); err != nil {
		t.Fatal(err)
	}
	screen.SetSize(120, 40)
	// The app is given no screen: the harness draws it itself, and
	// tview.Application.SetScreen would Init the screen again (back to 80×25).
	app, err := New(Options{Config: cfg, Runs: runs, Origin: origin})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, app: app, screen: screen, posted: make(chan func())}
	app.post = func(f func()) { h.posted <- f }
	t.Cleanup(func() {
		// A test that leaves a simulation running ends it.
		if app.job != nil {
			app.cancelJob()
			h.settle()
		}
	})
	return h
}

// settle waits for the running simulation, if any, running on this (the
// UI) goroutine what it posts, until it has finished: after it, the screen
// shows the simulation's outcome, as after a synchronous one.
func (h *harness) settle() {
	for h.app.job != nil {
		(<-h.posted)()
	}
	for {
		select {
		case f := <-h.posted:
			f()
		default:
			return
		}
	}
}

// keysAsync sends keys without waiting for a simulation they start.
func (h *harness) keysAsync(seq string) {
	h.t.Helper()
	h.async = true
	defer func() { h.async = false }()
	h.keys(seq)
}

// step runs, on the UI goroutine, one thing the simulation posted (its
// progress or its end), waiting for it.
func (h *harness) step() { (<-h.posted)() }

// keys sends key presses: runes as themselves, and <Enter>, <Esc>, <Down>,
// <Up>, <Space>, <Tab> for special keys.
func (h *harness) keys(seq string) {
	h.t.Helper()
	for seq != "" {
		if strings.HasPrefix(seq, "<") {
			end := strings.Index(seq, ">")
			if end < 0 {
				h.t.Fatalf("unterminated key name in %q", seq)
			}
			name := seq[1:end]
			seq = seq[end+1:]
			k, ok := map[string]tcell.Key{"Enter": tcell.KeyEnter, "Esc": tcell.KeyEscape, "Down": tcell.KeyDown,
				"Up": tcell.KeyUp, "Left": tcell.KeyLeft, "Right": tcell.KeyRight, "Tab": tcell.KeyTab, "Backspace": tcell.KeyBackspace2, "CtrlC": tcell.KeyCtrlC,
				"PgDn": tcell.KeyPgDn, "PgUp": tcell.KeyPgUp}[name]
			if name == "Space" {
				h.app.HandleKey(tcell.NewEventKey(tcell.KeyRune, ' ', tcell.ModNone))
				h.settleUnlessAsync()
				continue
			}
			if !ok {
				h.t.Fatalf("unknown key <%s>", name)
			}
			h.app.HandleKey(tcell.NewEventKey(k, 0, tcell.ModNone))
			h.settleUnlessAsync()
			continue
		}
		r := []rune(seq)[0]
		seq = seq[len(string(r)):]
		h.app.HandleKey(tcell.NewEventKey(tcell.KeyRune, r, tcell.ModNone))
		h.settleUnlessAsync()
	}
}

func (h *harness) settleUnlessAsync() {
	if !h.async {
		h.settle()
	}
}

// typeText types a line into the prompt and presses Enter.
func (h *harness) command(line string) {
	h.t.Helper()
	h.keys(":" + line + "<Enter>")
}

// draw renders the app at the screen's size and returns the text, one line
// per row with trailing spaces trimmed. tcell ≥ 2.12's simulation screen
// shows 'X' in cells nobody wrote; Clear first writes a space into every
// cell (checked with v2.13.10), and the layout paints every cell anyway
// (tview boxes fill their background), so the goldens hold only drawn text.
func (h *harness) draw() string {
	h.t.Helper()
	h.screen.Clear()
	w, ht := h.screen.Size()
	root := h.app.Root()
	root.SetRect(0, 0, w, ht)
	root.Draw(h.screen)
	h.screen.Show()
	cells, cw, ch := h.screen.GetContents()
	var b strings.Builder
	for y := 0; y < ch; y++ {
		var line strings.Builder
		for x := 0; x < cw; x++ {
			c := cells[y*cw+x]
			if len(c.Runes) == 0 {
				line.WriteRune(' ')
				continue
			}
			line.WriteString(string(c.Runes))
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// styleAt is the style of the first cell below the header showing text.
func (h *harness) styleAt(text string) (tcell.Style, bool) {
	h.t.Helper()
	screen := h.draw()
	for y, line := range strings.Split(screen, "\n") {
		if y == 0 {
			continue // the breadcrumb may repeat a filter's text
		}
		if i := strings.Index(line, text); i >= 0 {
			x := len([]rune(line[:i]))
			cells, cw, _ := h.screen.GetContents()
			return cells[y*cw+x].Style, true
		}
	}
	return tcell.StyleDefault, false
}

// golden compares the screen with testdata/<name>.golden; -update rewrites it.
func (h *harness) golden(name string) {
	h.t.Helper()
	got := h.draw()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			h.t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			h.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		h.t.Fatalf("%v (run go test ./tui -update to create it)", err)
	}
	if got != string(want) {
		h.t.Errorf("screen differs from %s (go test ./tui -update rewrites it after a deliberate change):\n%s", path, diffLines(string(want), got))
	}
}

// diffLines names the first differing lines, enough to see what moved.
func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 6; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			b.WriteString("line " + itoa(i+1) + ":\n  want " + wl + "\n  got  " + gl + "\n")
			shown++
		}
	}
	return b.String()
}

func defaultConfig() Config {
	return Config{Scenario: "fanout", Seeds: DefaultSeeds}
}
