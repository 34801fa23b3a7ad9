package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"
)

// TestConcurrentExplore (SIMLAB_EXPLORE=N) runs N generated histories per
// World and prints the non-linearizable ones: a scratch tool.
func TestConcurrentExplore(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SIMLAB_EXPLORE"))
	if n == 0 {
		t.Skip("SIMLAB_EXPLORE=N")
	}
	if err := EnsurePackages(WorldsDir(), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	worlds := Worlds
	if *worldFlag != "" {
		w, _ := WorldByName(*worldFlag)
		worlds = []World{w}
	}
	st := &stopper{}
	defer st.stopAll()
	for _, w := range worlds {
		t.Run(w.Name, func(t *testing.T) {
			h := startWorld(t, w, st)
			counts := map[porcupine.CheckResult]int{}
			shown, unexplained := 0, 0
			for i := 0; i < n; i++ {
				hist := rapid.Custom(genHistory).Example(i)
				res, err := h.driver().RunHistory(hist)
				if err != nil {
					t.Fatal(err)
				}
				lin := CheckLinearizable(w, hist, res, 5*time.Second)
				counts[lin.Result]++
				began := time.Now()
				v, bi, br := Explains(w, hist, res)
				if d := time.Since(began); d > time.Second {
					fmt.Printf("history %d: %v in %v\n", i, v, d)
				}
				ok := v == Explained
				if !ok {
					unexplained++
				}
				if !ok && shown < 6 {
					shown++
					js, _ := json.Marshal(FileHistory{History: hist, Seen: res})
					fmt.Printf("json: %s\n", js)
					fmt.Printf("=== %s history %d: %s, %v at batch %d run %d\n%s\n", w.Name, i, lin.Result, v, bi, br, HistoryTable(hist, res, nil))
				}
			}
			fmt.Printf("### %s: %v, %d not explained by the split calls\n", w.Name, counts, unexplained)
		})
	}
}

// TestExplainsOffline (SIMLAB_OFFLINE=FILE -args -world W) re-checks saved
// real histories (json: lines of the explore tool) against the model alone.
func TestExplainsOffline(t *testing.T) {
	path := os.Getenv("SIMLAB_OFFLINE")
	if path == "" {
		t.Skip("SIMLAB_OFFLINE=FILE")
	}
	w, err := WorldByName(*worldFlag)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		js, ok := strings.CutPrefix(line, "json: ")
		if !ok {
			continue
		}
		var fh FileHistory
		if err := json.Unmarshal([]byte(js), &fh); err != nil {
			t.Fatal(err)
		}
		v, bi, br := Explains(w, fh.History, fh.Seen)
		fmt.Printf("%v batch=%d run=%d\n", v, bi, br)
		if v != Explained {
			fmt.Println(HistoryTable(fh.History, fh.Seen, nil))
		}
	}
}
