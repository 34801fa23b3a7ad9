package findings

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/simlab/simlab/internal/testreal"
	"github.com/simlab/simlab/realengine"
)

// optOut is the explicit opt-out of the tests that run the real engine, as
// in package realengine; .ci/run never sets it.
const optOut = "SIMLAB_SKIP_REAL_ENGINE"

// shared is the package's one prepared Runner over the real-engine harness
// (the parent directory): the pinned packages installed once and each
// pinned core's workflow compiled once; TestMain removes what it built.
var shared struct {
	once sync.Once
	r    *realengine.Runner
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.r != nil {
		if err := shared.r.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "removing the build dir: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// prepared returns the Runner, prepared on first use; it fails, never
// skips, when Node is missing, unless the opt-out is set.
func prepared(t *testing.T) *realengine.Runner {
	t.Helper()
	testreal.Need(t, testreal.Engine)
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is not on PATH: the real-engine findings need Node.js ≥ 20 and npm (set %s=1 to opt out explicitly)", optOut)
	}
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		shared.r = &realengine.Runner{Dir: ".."}
		shared.err = shared.r.Prepare(ctx, true, realengine.Cores...)
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.r
}

// pinnedCore is the pinned core of version v.
func pinnedCore(t *testing.T, v string) realengine.Core {
	t.Helper()
	c, err := realengine.CoreByVersion(v)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
