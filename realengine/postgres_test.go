package realengine

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/internal/testreal"
	"github.com/simlab/simlab/realworld"
)

// TestNoPinnedCoreRunsOnWorldPostgres runs every pinned core over the newest
// published world-postgres (its real queue: graphile-worker on a real
// PostgreSQL, delivering each message to the harness's flow route over
// HTTP), and holds that each refuses it at the run's start: the runtime
// needs a World of spec version 6 or 7 (event ids numbered by slot), and
// world-postgres declares 5. This is why reproduce has no SQL gate on the
// engine (Reproducible, docs/VALIDATION.md): the day a pinned core runs on
// a pinned world-postgres, this test fails and says so.
func TestNoPinnedCoreRunsOnWorldPostgres(t *testing.T) {
	r := prepared(t)
	testreal.Need(t, testreal.Worlds)
	if len(r.Catalog.WorldPostgreses) == 0 {
		t.Fatalf("%s/package.json pins no @workflow/world-postgres", r.Dir)
	}
	pg, err := realworld.StartPostgres()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Stop)
	for _, w := range r.Catalog.WorldPostgreses {
		if err := realworld.MigrateWith(pg, filepath.Join(r.Dir, "node_modules", w.Package()), t.TempDir()); err != nil {
			t.Fatal(err)
		}
		for _, core := range r.Catalog.Cores {
			cfg := HarnessConfig{Seed: 1, Fanouts: []int{2}, MaxInline: 1, Runs: 1, DefaultDispatch: true,
				WorldPostgres: &postgresWorld{Package: w.Package(), URL: pg.URL()}}
			out, err := r.Run(context.Background(), core, cfg, 60*time.Second)
			var re *RunError
			switch {
			case err == nil:
				t.Errorf("core %s ran a run over world-postgres %s (%d World calls): reproduce can gate its SQL now; pin the pair and drop the refusal", core.Version, w.Version, len(out.Calls))
			case !errors.As(err, &re):
				t.Errorf("core %s over world-postgres %s: %v", core.Version, w.Version, err)
			case !strings.Contains(re.Stderr, "supports Worlds with spec version 6 through 7, but the configured World declares spec version 5"):
				t.Errorf("core %s over world-postgres %s failed, but not by refusing its spec version: %v", core.Version, w.Version, err)
			}
		}
	}
}
