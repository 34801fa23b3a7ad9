package testreal

import (
	"os"
	"testing"
)

// Component is a real program a test starts.
type Component struct {
	Name string // what it is, for the skip message
	Var  string // its opt-out variable
}

var (
	Engine  = Component{"the real engine (Node.js and the pinned @workflow/core)", "SIMLAB_SKIP_REAL_ENGINE"}
	Worlds  = Component{"the real Worlds (Node.js, the pinned Worlds, PostgreSQL)", "SIMLAB_NO_REAL_WORLDS"}
	Browser = Component{"the headless browser (Chromium)", "SIMLAB_NO_BROWSER"}
	Jaeger  = Component{"a real Jaeger", "SIMLAB_NO_JAEGER"}
	Tmux    = Component{"tmux", "SIMLAB_NO_TMUX"}
)

// Need skips t when c is switched off: by go test -short, or by its
// variable set to 1.
func Need(t testing.TB, c Component) {
	t.Helper()
	if testing.Short() {
		t.Skipf("go test -short: %s is not started", c.Name)
	}
	if os.Getenv(c.Var) == "1" {
		t.Skipf("%s=1: %s is switched off explicitly", c.Var, c.Name)
	}
}
