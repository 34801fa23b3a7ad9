package realengine

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/internal/procgroup"
	"github.com/simlab/simlab/internal/testreal"
)

// TestGateReleasesByCountAndEscapes runs gate.mjs's and store.mjs's own
// tests (node:test, no packages needed): calls are held until their count is
// reached and released in one tick in arrival order, and a gate whose count
// can no longer be reached escapes (releases and reports) once nothing can
// arrive, never while a delivery is still between calls; the store wrapper
// has a read reach the World as it is served and a write after its latency,
// as simlab's store does.
func TestGateReleasesByCountAndEscapes(t *testing.T) {
	testreal.Need(t, testreal.Engine)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "--test", "gate.test.mjs", "store.test.mjs")
	cmd.Dir = "."
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	procgroup.Set(cmd)
	err := cmd.Run()
	procgroup.Kill(cmd)
	if err != nil {
		t.Fatalf("node --test gate.test.mjs store.test.mjs: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "# fail 0") || strings.Contains(out.String(), "# pass 0\n") {
		t.Fatalf("node --test gate.test.mjs store.test.mjs ran no passing test:\n%s", out.String())
	}
}
