package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/simlab/simlab/check"
	"github.com/simlab/simlab/model/seeds"
	"github.com/simlab/simlab/model/sweep"
)

// writeShards runs args once per shard of n with --shard i/n and --json,
// writes each output to a file and returns the files.
func writeShards(t *testing.T, n int, args ...string) []string {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for i := 0; i < n; i++ {
		out, _, err := runCLI(t, append(args, "--shard", fmt.Sprintf("%d/%d", i, n))...)
		if code := exitCode(err); code > 1 {
			t.Fatalf("%v --shard %d/%d: %v", args, i, n, err)
		}
		f := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		if err := os.WriteFile(f, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

var sweepArgs = []string{"sweep", "--json", "--branches", "8,32", "--seeds", "4"}

func TestSweepJSONIsDeterministicAndCarriesTheContract(t *testing.T) {
	a, _, err := runCLI(t, append(sweepArgs, "--jobs", "1")...)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := runCLI(t, append(sweepArgs, "--jobs", "4")...)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatal("the same sweep printed two different results")
	}
	var doc struct {
		Base *float64                     `json:"runs_get_base_p50_ms"`
		Rows []map[string]json.RawMessage `json:"rows"`
	}
	if err := json.Unmarshal([]byte(a), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Base == nil || len(doc.Rows) != 2*2 {
		t.Fatalf("want runs_get_base_p50_ms and 4 rows (2 widths × 2 prologues):\n%s", a)
	}
	for _, key := range []string{"branches", "prologue", "seeds", "ttfs_p50_ms", "ttfs_p90_ms", "ttls_p50_ms", "ttls_p90_ms",
		"runs_get_count", "runs_get_p50_ms", "runs_get_p90_ms", "reads_per_fanout", "lazy_per_fanout", "concurrent_last_completers"} {
		if _, ok := doc.Rows[0][key]; !ok {
			t.Errorf("a row lacks %s:\n%s", key, a)
		}
	}
	if strings.Contains(a, `"samples"`) {
		t.Error("an unsharded sweep printed its samples")
	}
	table, _, err := runCLI(t, "sweep", "--branches", "8", "--seeds", "2")
	if err != nil || !strings.Contains(table, "legacy") || !strings.Contains(table, "run_context") || !strings.Contains(table, "durabench-256") {
		t.Fatalf("sweep table (default scenario durabench-256): %v\n%s", err, table)
	}
}

func TestSweepShardsMergeToTheUnshardedRun(t *testing.T) {
	whole, _, err := runCLI(t, sweepArgs...)
	if err != nil {
		t.Fatal(err)
	}
	files := writeShards(t, 3, sweepArgs...)
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if !bytes.Contains(data, []byte(`"samples"`)) {
			t.Fatalf("shard output %s carries no samples to merge", f)
		}
	}
	chart := filepath.Join(t.TempDir(), "merged.svg")
	merged, _, err := runCLI(t, append([]string{"merge", "--chart", chart}, files...)...)
	if err != nil {
		t.Fatal(err)
	}
	if merged != whole {
		t.Fatalf("merged shards differ from the unsharded sweep:\n%s\n---\n%s", merged, whole)
	}
	if data, err := os.ReadFile(chart); err != nil || !bytes.Contains(data, []byte("<svg")) {
		t.Errorf("merge --chart wrote no SVG: %v", err)
	}
	// A missing shard cannot merge into a whole sweep.
	if _, _, err := runCLI(t, append([]string{"merge"}, files[:2]...)...); exitCode(err) != 2 {
		t.Errorf("merge of 2 of 3 shards: exit %d (%v), want 2", exitCode(err), err)
	}
}

func TestCheckShardsMergeToTheUnshardedRun(t *testing.T) {
	schedules := t.TempDir()
	// The faults scenario declares outcomes ("sometimes" coverage) and, over
	// these seeds, violates a property in more than one shard, so the
	// merged first counterexample has to be chosen.
	args := []string{"check", "--json", "--scenario", "faults", "--seeds", "30", "--schedules", schedules}
	whole, _, err := runCLI(t, args...)
	if exitCode(err) > 1 {
		t.Fatal(err)
	}
	files := writeShards(t, 3, args...)
	withFirst := 0
	for _, f := range files {
		data, _ := os.ReadFile(f)
		var rep check.Report
		if err := json.Unmarshal(data, &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.First) > 0 {
			withFirst++
		}
	}
	if withFirst < 2 {
		t.Fatalf("precondition: %d shards found a counterexample; pick seeds where at least 2 do", withFirst)
	}
	merged, _, mergeErr := runCLI(t, append([]string{"merge"}, files...)...)
	if merged != whole {
		t.Fatalf("merged shards differ from the unsharded check:\n%s\n---\n%s", merged, whole)
	}
	if exitCode(mergeErr) != exitCode(err) {
		t.Errorf("merge exit %d, unsharded check exit %d", exitCode(mergeErr), exitCode(err))
	}
	// Check reports and sweep results do not mix.
	sweepFiles := writeShards(t, 1, sweepArgs...)
	if _, _, err := runCLI(t, "merge", files[0], sweepFiles[0]); exitCode(err) != 2 {
		t.Errorf("merge of a check report with a sweep result: exit %d (%v), want 2", exitCode(err), err)
	}
}

// TestMergeReports covers what a small real check may not: an outcome one
// shard misses and another sees, and the first counterexample coming from
// a later part.
func TestMergeReports(t *testing.T) {
	// Seeds 1..5 in two shards: 0/2 checks 1, 3 and 5; 1/2 checks 2 and 4.
	a := &check.Report{Scenario: "s", Variants: []string{}, Seeds: 3, Declared: []string{"crash", "gone"},
		Violations: map[string]int{"p": 1, "q": 0}, Coverage: map[string]int{"crash": 3},
		First: map[string]*check.First{"p": {Seed: 5}}, Missing: []string{"gone"},
		SeedList: "1..5", Shard: &seeds.Shard{Index: 0, Count: 2}, Config: "c"}
	b := &check.Report{Scenario: "s", Variants: []string{}, Seeds: 2, Declared: []string{"crash", "gone"},
		Violations: map[string]int{"p": 2, "q": 0}, Coverage: map[string]int{"gone": 1, "crash": 1},
		First: map[string]*check.First{"p": {Seed: 2}}, Missing: nil,
		SeedList: "1..5", Shard: &seeds.Shard{Index: 1, Count: 2}, Config: "c"}
	m, err := check.MergeReports([]*check.Report{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if m.Seeds != 5 || m.Violations["p"] != 3 || m.Coverage["crash"] != 4 || m.Coverage["gone"] != 1 {
		t.Errorf("merged seeds %d, violations %v, coverage %v: want sums", m.Seeds, m.Violations, m.Coverage)
	}
	if m.First["p"] == nil || m.First["p"].Seed != 2 {
		t.Errorf("merged first counterexample %+v, want the lowest seed's (2)", m.First["p"])
	}
	if len(m.Missing) != 0 {
		t.Errorf("coverage_missing %v after merge, want none: the second shard saw gone", m.Missing)
	}
	c := *b
	c.Declared = []string{"crash"}
	if _, err := check.MergeReports([]*check.Report{a, &c}); err == nil {
		t.Error("reports declaring different outcomes merged")
	}
}

func TestSweepChartFormats(t *testing.T) {
	dir := t.TempDir()
	for ext, magic := range map[string][]byte{".svg": []byte("<svg"), ".png": []byte("\x89PNG\r\n\x1a\n")} {
		path := filepath.Join(dir, "chart"+ext)
		if _, _, err := runCLI(t, "sweep", "--branches", "8,16", "--seeds", "2", "--chart", path); err != nil {
			t.Fatalf("--chart %s: %v", path, err)
		}
		data, err := os.ReadFile(path)
		if err != nil || !bytes.Contains(data[:min(len(data), 512)], magic) {
			t.Errorf("--chart %s did not write a %s file (%v)", path, ext, err)
		}
	}
	gif := filepath.Join(dir, "chart.gif")
	if _, _, err := runCLI(t, "sweep", "--seeds", "1", "--chart", gif); exitCode(err) != 2 {
		t.Errorf("--chart .gif: exit %d (%v), want 2", exitCode(err), err)
	}
	if _, err := os.Stat(gif); err == nil {
		t.Error("a refused chart format still wrote a file")
	}
}

func TestSweepBadInput(t *testing.T) {
	unsharded := filepath.Join(t.TempDir(), "whole.json")
	out, _, err := runCLI(t, sweepArgs...)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(unsharded, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"sweep", "--shard", "3/3"}, {"sweep", "--shard", "x"}, {"sweep", "--prologue", "runs_get"},
		{"sweep", "--branches", "0"}, {"sweep", "--seeds", "0"}, {"sweep", "--variant", "legacy-producers"},
		{"merge", unsharded}, {"merge", filepath.Join(t.TempDir(), "none.json")},
	} {
		if _, _, err := runCLI(t, args...); exitCode(err) != 2 {
			t.Errorf("%v: exit %d (%v), want 2", args, exitCode(err), err)
		}
	}
}

func TestSweepShardsCoverEveryCellOnce(t *testing.T) {
	files := writeShards(t, 4, sweepArgs...)
	seen := map[string]int{}
	for _, f := range files {
		data, _ := os.ReadFile(f)
		var part struct {
			Samples []struct {
				Branches int    `json:"branches"`
				Prologue string `json:"prologue"`
				Seed     int    `json:"seed"`
			} `json:"samples"`
		}
		if err := json.Unmarshal(data, &part); err != nil {
			t.Fatal(err)
		}
		for _, s := range part.Samples {
			seen[fmt.Sprintf("%d/%s/%d", s.Branches, s.Prologue, s.Seed)]++
		}
	}
	if want := 2 * 2 * 4; len(seen) != want {
		t.Fatalf("4 shards ran %d distinct cells, want %d", len(seen), want)
	}
	for cell, n := range seen {
		if n != 1 {
			t.Errorf("cell %s ran %d times", cell, n)
		}
	}
}

// merge combines only the shards of one whole check: each shard once, all
// of one split, of the same seeds and the same scenario configuration. Any
// other set of reports is refused (exit 2), naming what does not fit.
func TestMergeRefusesWhatIsNotOneWholeCheck(t *testing.T) {
	base := []string{"check", "--json", "--scenario", "golden-t1", "--schedules", t.TempDir()}
	with := func(extra ...string) []string { return append(slices.Clone(base), extra...) }
	of3 := writeShards(t, 3, with("--seeds", "6")...)
	of4 := writeShards(t, 4, with("--seeds", "6")...)
	nine := writeShards(t, 3, with("--seeds", "9")...)
	low := writeShards(t, 2, with("--seed-range", "1..6")...)
	high := writeShards(t, 2, with("--seed-range", "4..9")...)
	set := writeShards(t, 3, with("--seeds", "6", "--set", "workflow.max_inline=1")...)
	if _, _, err := runCLI(t, append([]string{"merge"}, of3...)...); err != nil {
		t.Fatalf("merge of one whole check: %v", err)
	}
	for _, c := range []struct {
		name  string
		files []string
		want  []string
	}{
		{"a shard missing", of3[:2], []string{"shard 2/3", "missing"}},
		{"a shard twice", []string{of3[0], of3[1], of3[1], of3[2]}, []string{"shard 1/3", "twice"}},
		{"shards of two splits", []string{of3[0], of4[1], of4[2], of4[3]}, []string{"1/4", "0/3"}},
		{"different --seeds", []string{of3[0], nine[1], nine[2]}, []string{"1..9", "1..6"}},
		{"overlapping --seed-range", []string{low[0], high[1]}, []string{"4..9", "1..6"}},
		{"a different --set", []string{of3[0], set[1], set[2]}, []string{"workflow.max_inline=1", "configuration"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, _, err := runCLI(t, append([]string{"merge"}, c.files...)...)
			if exitCode(err) != 2 {
				t.Fatalf("merge: exit %d (%v), want 2; printed\n%s", exitCode(err), err, out)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// sweep --sensitivity: a row per knob and factor with the figures and
// their change against the base on the same seeds; the JSON carries the
// same; what it cannot combine or measure is refused before it simulates.
func TestSweepSensitivity(t *testing.T) {
	args := []string{"sweep", "--branches", "16", "--prologue", "run_context", "--seeds", "3", "--sensitivity", "0.5"}
	table, _, err := runCLI(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"(base)", "store.runs_get", "store.events_create", "store.events_list", "store.publish", "store.deliver", "workflow.body"} {
		if !strings.Contains(table, k) {
			t.Errorf("table lacks %s:\n%s", k, table)
		}
	}
	out, _, err := runCLI(t, append(args, "--json")...)
	if err != nil {
		t.Fatal(err)
	}
	var s sweep.Sensitivity
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Base) != 1 || len(s.Rows) != 2*len(sweep.Knobs) {
		t.Fatalf("%d base rows and %d rows, want 1 and %d", len(s.Base), len(s.Rows), 2*len(sweep.Knobs))
	}
	// A slower queue (deliveries ×1.5) ends the last step later than a
	// faster one (×0.5), on the same seeds. (Not the step bodies: they are
	// a small share of durabench's TTLS, and over 30 seeds ×0.5 and ×1.5
	// both moved it by under 5 %, either way; the delivery delay moves it
	// by 10-30 %.)
	var slow, fast float64
	for _, r := range s.Rows {
		if r.Knob == "store.deliver" {
			if r.Factor > 1 {
				slow = r.TTLSP50MS
			} else {
				fast = r.TTLSP50MS
			}
		}
	}
	if !(slow > fast) {
		t.Errorf("store.deliver ×1.5 gives TTLS p50 %v ms, ×0.5 %v ms: want the slower queue later", slow, fast)
	}
	for _, bad := range [][]string{
		{"--sensitivity", "0"}, {"--sensitivity", "1"}, {"--sensitivity", "-0.2"},
		{"--sensitivity", "0.2", "--chart", filepath.Join(t.TempDir(), "c.svg")},
		{"--sensitivity", "0.2", "--shard", "1/2"},
	} {
		if _, _, err := runCLI(t, append([]string{"sweep", "--branches", "8", "--seeds", "1"}, bad...)...); exitCode(err) != 2 {
			t.Errorf("sweep %v: exit %d, want 2", bad, exitCode(err))
		}
	}
}

// A sweep row of runs stopped at a limit says so under the table.
func TestSweepMarksUndrainedRows(t *testing.T) {
	out, _, err := runCLI(t, "sweep", "--branches", "16", "--seeds", "2", "--prologue", "run_context", "--set", "limits.max_time=50ms")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "UNDRAINED: 16 branches, run_context: 2 of 2 runs stopped at a limit") {
		t.Errorf("no UNDRAINED line:\n%s", out)
	}
	if out, _, _ := runCLI(t, "sweep", "--branches", "16", "--seeds", "2", "--prologue", "run_context"); strings.Contains(out, "UNDRAINED") {
		t.Errorf("an UNDRAINED line for drained runs:\n%s", out)
	}
}
