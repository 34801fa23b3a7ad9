package conformance

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/simlab/simlab/realworld"
)

// TestExplainsOffline (SIMLAB_OFFLINE=FILE -args -world W) re-checks real
// histories saved in a concurrent sequence file (its "seen" results, as a
// failing TestConcurrent writes them) against the model alone, without a
// real World: for working on the model of a World (SIMLAB_BUDGET=N widens
// the search).
func TestExplainsOffline(t *testing.T) {
	path := os.Getenv("SIMLAB_OFFLINE")
	if path == "" {
		t.Skip("SIMLAB_OFFLINE=FILE")
	}
	w, err := realworld.WorldByName(*worldFlag)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := strconv.Atoi(os.Getenv("SIMLAB_BUDGET")); n > 0 {
		SearchBudget = n
	}
	explainsFile(t, w, path)
}

// TestSavedRealHistoriesAreExplained re-checks, without a real World, the
// real histories a failing TestConcurrent once reported and a model fix
// explained since, each file on the World it was seen on.
func TestSavedRealHistoriesAreExplained(t *testing.T) {
	for _, c := range []struct{ world, path string }{
		// step_started's id minted at its guarded UPDATE, its INSERT
		// committed after a run_completed that a list saw first
		// (model/world: TestTxnPostgresStartCommitsAfterItsMint).
		{"wpg-b29", "testdata/real-wpg-b29.json"},
	} {
		w, err := realworld.WorldByName(c.world)
		if err != nil {
			t.Fatal(err)
		}
		explainsFile(t, w, c.path)
	}
}

// explainsFile checks every history of a concurrent sequence file against
// the model of w, from the real results the file saved.
func explainsFile(t *testing.T, w realworld.World, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f realworld.ConcurrentFile
	if err := json.NewDecoder(strings.NewReader(string(b))).Decode(&f); err != nil {
		t.Fatal(err)
	}
	for _, fh := range f.Histories {
		if len(fh.Seen) != len(fh.Batches) {
			t.Fatalf("%s: %d batches, %d seen results", fh.Name, len(fh.Batches), len(fh.Seen))
		}
		if v, bi, br := Explains(w, fh.History, fh.Seen); v != Explained {
			t.Errorf("%s: %v at batch %d, run %d:\n%s", fh.Name, v, bi, br, realworld.HistoryTable(fh.History, fh.Seen, nil))
		}
	}
}
