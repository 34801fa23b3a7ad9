package model

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/simlab/simlab/sim"
)

var updateHashes = flag.Bool("update-hashes", false, "rewrite testdata/history-hashes*.golden from the current code")

// TestHistoryHashesAreUnchanged pins the history hash of every built-in
// scenario for seeds 1..50, and under each variant for seeds 1..10. A refactoring must leave every line as it is; a
// change that means to alter behaviour (a truer store rule, a new protocol
// step) regenerates the file with -update-hashes, and the diff shows which
// scenarios it touched.
//
// The same runs with store.atomic_calls (every write validated and applied
// at once, as before the World's calls were split into their adapters'
// steps) are pinned apart: they were the pins of the atomic model, and keep
// it reproducible.
func TestHistoryHashesAreUnchanged(t *testing.T) {
	t.Run("split", func(t *testing.T) { checkHashes(t, "testdata/history-hashes.golden", false) })
	t.Run("atomic", func(t *testing.T) { checkHashes(t, "testdata/history-hashes-atomic.golden", true) })
}

func checkHashes(t *testing.T, path string, atomic bool) {
	var b strings.Builder
	for _, name := range BuiltinNames() {
		sc, _ := Builtin(name)
		sc.Store.AtomicCalls = atomic
		for seed := uint64(1); seed <= 50; seed++ {
			s := sc
			r, err := Run(&s, sim.NewPCG(seed), Options{Seed: seed})
			if err != nil {
				t.Fatalf("%s seed %d: %v", name, seed, err)
			}
			fmt.Fprintf(&b, "%s %d %016x\n", name, seed, r.History.Hash)
		}
		for _, v := range VariantNames() {
			for seed := uint64(1); seed <= 10; seed++ {
				s := sc
				s.Variants = append(append([]string(nil), sc.Variants...), v)
				r, err := Run(&s, sim.NewPCG(seed), Options{Seed: seed})
				if err != nil {
					t.Fatalf("%s +%s seed %d: %v", name, v, seed, err)
				}
				fmt.Fprintf(&b, "%s+%s %d %016x\n", name, v, seed, r.History.Hash)
			}
		}
	}
	if *updateHashes {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (create it with go test ./model -run HistoryHashes -update-hashes)", err)
	}
	got := strings.Split(b.String(), "\n")
	for i, w := range strings.Split(string(want), "\n") {
		if i >= len(got) || got[i] != w {
			g := "(missing)"
			if i < len(got) {
				g = got[i]
			}
			t.Fatalf("line %d: got %q, want %q (behaviour changed; if on purpose, rerun with -update-hashes)", i+1, g, w)
		}
	}
	if len(got) != len(strings.Split(string(want), "\n")) {
		t.Fatalf("%d lines, want %d", len(got), len(strings.Split(string(want), "\n")))
	}
}
