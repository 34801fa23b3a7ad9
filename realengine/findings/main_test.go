package findings

import (
	"fmt"
	"os"
	"testing"

	"github.com/simlab/simlab/internal/testreal"
	"github.com/simlab/simlab/realengine"
)

// shared is the package's one prepared Runner (realengine.Shared), for
// every test that runs the real engine; TestMain removes what it built.
var shared = realengine.Shared{Dir: ".."}

func TestMain(m *testing.M) {
	code := m.Run()
	if err := shared.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "removing the build dir: %v\n", err)
		code = 1
	}
	os.Exit(code)
}

// prepared returns the shared Runner; it fails, never skips, when Node is
// missing, unless the real engine is switched off (testreal).
func prepared(t *testing.T) *realengine.Runner {
	t.Helper()
	testreal.Need(t, testreal.Engine)
	r, err := shared.Runner()
	if err != nil {
		t.Fatal(err)
	}
	return r
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
