package sweep_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/sweep"
)

func durabench(t testing.TB) model.Scenario {
	t.Helper()
	sc, ok := model.Builtin("durabench-256")
	if !ok {
		t.Fatal("no built-in durabench-256")
	}
	return sc
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func row(t *testing.T, res *sweep.Result, b int, p string) sweep.Row {
	t.Helper()
	for _, r := range res.Rows {
		if r.Branches == b && r.Prologue == p {
			return r
		}
	}
	t.Fatalf("no row for %d branches, %s", b, p)
	return sweep.Row{}
}

func ExamplePercentile() {
	latencies := []int64{50, 15, 40, 35, 20} // any order
	fmt.Println(sweep.Percentile(latencies, 30), sweep.Percentile(latencies, 50), sweep.Percentile(latencies, 90))
	// Output: 20 35 50
}

func TestPercentileIsNearestRank(t *testing.T) {
	xs := []int64{40, 10, 30, 20}
	for _, c := range []struct {
		p    float64
		want int64
	}{{1, 10}, {25, 10}, {26, 20}, {50, 20}, {51, 30}, {75, 30}, {90, 40}, {100, 40}} {
		if got := sweep.Percentile(xs, c.p); got != c.want {
			t.Errorf("p%g of %v = %d, want %d", c.p, xs, got, c.want)
		}
	}
	if !slices.Equal(xs, []int64{40, 10, 30, 20}) {
		t.Errorf("Percentile reordered its input: %v", xs)
	}
	if got := sweep.Percentile(nil, 50); got != 0 {
		t.Errorf("p50 of nothing = %d, want 0", got)
	}
}

// TestDurabenchShape checks, on the model's own output, the shape DOMAIN §7
// and §10 describe: the legacy prologue pays one read per queued branch and
// its burst of reads queues far behind the uncontended latency; the
// fetch-free prologue reads only at last completers and ends sooner once
// the fan-out is wide enough for reads to contend.
func TestDurabenchShape(t *testing.T) {
	sc := durabench(t)
	widths := []int{16, 64, 128, 256}
	// Shard 0/1 is the whole grid, but keeps the per-cell samples.
	res, err := sweep.Run(sc, sweep.Options{Branches: widths, Prologues: sweep.Prologues(), Seeds: 10,
		Shard: &sweep.Shard{Index: 0, Count: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Samples) != len(widths)*2*10 {
		t.Fatalf("%d samples, want one per cell (%d)", len(res.Samples), len(widths)*2*10)
	}
	if len(sc.Workflow.Fanouts) != 1 {
		t.Fatalf("durabench-256 has %d fan-outs; this test reads a sample as one fan-out", len(sc.Workflow.Fanouts))
	}
	for _, s := range res.Samples {
		where := fmt.Sprintf("%d branches, %s, seed %d", s.Branches, s.Prologue, s.Seed)
		queued := s.Branches - min(s.Branches, sc.Workflow.MaxInline)
		if s.QueuedBranches != queued {
			t.Fatalf("%s: %d queued branches recorded, want %d", where, s.QueuedBranches, queued)
		}
		if len(s.TTFSNS) != sc.Runs || len(s.TTLSNS) != sc.Runs {
			t.Errorf("%s: %d TTFS and %d TTLS samples, want one per run (%d)", where, len(s.TTFSNS), len(s.TTLSNS), sc.Runs)
		}
		for i := range s.TTFSNS {
			if s.TTFSNS[i] <= 0 || s.TTFSNS[i] > s.TTLSNS[i] {
				t.Errorf("%s: TTFS %d ns, TTLS %d ns: want 0 < TTFS ≤ TTLS", where, s.TTFSNS[i], s.TTLSNS[i])
			}
		}
		switch s.Prologue {
		case sweep.Legacy:
			if s.StepReads != queued || s.LazyReads != 0 {
				t.Errorf("%s: %d step reads (%d lazy), want exactly one prologue read per queued branch (%d)", where, s.StepReads, s.LazyReads, queued)
			}
		case sweep.RunContext:
			if s.StepReads != s.LazyReads {
				t.Errorf("%s: %d step reads but %d lazy: a fetch-free delivery read before its claim", where, s.StepReads, s.LazyReads)
			}
			if s.StepReads > s.LastCompleters {
				t.Errorf("%s: %d lazy reads for %d last completers: want at most one per last completer", where, s.StepReads, s.LastCompleters)
			}
		}
	}
	for _, b := range widths {
		legacy, rc := row(t, res, b, sweep.Legacy), row(t, res, b, sweep.RunContext)
		if want := float64(b - sc.Workflow.MaxInline); legacy.ReadsPerFanout != want {
			t.Errorf("%d branches: legacy reads per fan-out %v, want the queued branches %v", b, legacy.ReadsPerFanout, want)
		}
		if rc.ReadsPerFanout > rc.LastCompletersPerFanout {
			t.Errorf("%d branches: fetch-free reads per fan-out %v above last completers per fan-out %v", b, rc.ReadsPerFanout, rc.LastCompletersPerFanout)
		}
		if rc.RunsGetCount >= legacy.RunsGetCount {
			t.Errorf("%d branches: fetch-free made %d runs.get, legacy %d: want fewer", b, rc.RunsGetCount, legacy.RunsGetCount)
		}
		if b >= 64 && rc.TTLSP50MS >= legacy.TTLSP50MS {
			t.Errorf("%d branches: fetch-free TTLS p50 %v ms, legacy %v ms: want fetch-free below", b, rc.TTLSP50MS, legacy.TTLSP50MS)
		}
	}
	widest := row(t, res, 256, sweep.Legacy)
	if base := res.RunsGetBaseP50MS; base <= 0 || widest.RunsGetP90MS < 10*base {
		t.Errorf("legacy runs.get p90 at 256 branches %v ms, uncontended p50 %v ms: want at least 10×", widest.RunsGetP90MS, base)
	}
	if base, want := res.RunsGetBaseP50MS, float64(sc.Store.RunsGet.P50.Microseconds())/1000; base != want {
		t.Errorf("runs_get_base_p50_ms = %v, want the scenario's store.runs_get.p50 (%v)", base, want)
	}
}

// smallGrid is quick but has several widths, both prologues and enough
// seeds for shards to split each row's seeds.
func smallGrid() sweep.Options {
	return sweep.Options{Branches: []int{32, 8}, Prologues: []string{sweep.RunContext, sweep.Legacy}, Seeds: 5}
}

func TestUnshardedResultCarriesNoSamples(t *testing.T) {
	res, err := sweep.Run(durabench(t), smallGrid())
	if err != nil {
		t.Fatal(err)
	}
	if out := mustJSON(t, res); strings.Contains(out, `"samples"`) || strings.Contains(out, `"shard"`) {
		t.Errorf("an unsharded result carries samples or a shard:\n%s", out)
	}
}

func TestRunDoesNotChangeTheCallersScenario(t *testing.T) {
	sc := durabench(t)
	// Spare capacity, so an append to the variants in place would land in
	// the caller's array.
	sc.Variants = make([]string, 0, 4)
	backing := sc.Variants[:cap(sc.Variants)]
	fans := slices.Clone(sc.Workflow.Fanouts)
	if _, err := sweep.Run(sc, smallGrid()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sc.Workflow.Fanouts, fans) {
		t.Errorf("Run changed the caller's fan-outs: %v, was %v", sc.Workflow.Fanouts, fans)
	}
	if backing[0] != "" {
		t.Errorf("Run appended %q to the caller's variants", backing[0])
	}
}

func TestShardsMergeToTheUnshardedResult(t *testing.T) {
	sc := durabench(t)
	whole, err := sweep.Run(sc, smallGrid())
	if err != nil {
		t.Fatal(err)
	}
	const n = 3
	var parts []*sweep.Result
	cells := 0
	for i := n - 1; i >= 0; i-- { // merge must not depend on the parts' order
		opts := smallGrid()
		opts.Shard = &sweep.Shard{Index: i, Count: n}
		part, err := sweep.Run(sc, opts)
		if err != nil {
			t.Fatal(err)
		}
		cells += len(part.Samples)
		// Round-trip through JSON, as the shards' files are.
		var back sweep.Result
		if err := json.Unmarshal([]byte(mustJSON(t, part)), &back); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, &back)
	}
	o := smallGrid()
	if total := len(o.Branches) * len(o.Prologues) * o.Seeds; cells != total {
		t.Fatalf("the shards ran %d cells, want each of the %d once", cells, total)
	}
	merged, err := sweep.Merge(parts)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := mustJSON(t, whole), mustJSON(t, merged); a != b {
		t.Fatalf("merged shards differ from the unsharded run:\n%s\n---\n%s", a, b)
	}

	// Every way of not being one sweep's shards is refused.
	bad := map[string][]*sweep.Result{
		"a shard missing":      parts[:n-1],
		"a shard twice":        {parts[0], parts[1], parts[1]},
		"an unsharded result":  {whole},
		"nothing":              nil,
		"another sweep's part": {parts[0], parts[1], withSeeds(parts[2], 6)},
		"a stray cell":         {parts[0], parts[1], withStrayCell(parts[2])},
	}
	for name, ps := range bad {
		if _, err := sweep.Merge(ps); err == nil {
			t.Errorf("Merge of %s: no error", name)
		}
	}
}

func withSeeds(r *sweep.Result, seeds int) *sweep.Result {
	c := *r
	c.Seeds = seeds
	return &c
}

func withStrayCell(r *sweep.Result) *sweep.Result {
	c := *r
	c.Samples = slices.Clone(r.Samples)
	c.Samples[0].Seed = 99
	return &c
}

func TestRunRefusesBadOptions(t *testing.T) {
	sc := durabench(t)
	legacyOnly := sc
	legacyOnly.Variants = []string{"legacy-producers"}
	cases := map[string]struct {
		sc   model.Scenario
		opts sweep.Options
		want string
	}{
		"no widths":        {sc, sweep.Options{Prologues: sweep.Prologues(), Seeds: 1}, "branches"},
		"zero width":       {sc, sweep.Options{Branches: []int{0}, Prologues: sweep.Prologues(), Seeds: 1}, "branches[0]"},
		"width twice":      {sc, sweep.Options{Branches: []int{8, 8}, Prologues: sweep.Prologues(), Seeds: 1}, "branches[1]"},
		"unknown prologue": {sc, sweep.Options{Branches: []int{8}, Prologues: []string{"runs_get"}, Seeds: 1}, "prologues[0]"},
		"no seeds":         {sc, sweep.Options{Branches: []int{8}, Prologues: sweep.Prologues(), Seeds: 0}, "seeds"},
		"shard out of range": {sc, sweep.Options{Branches: []int{8}, Prologues: sweep.Prologues(), Seeds: 1,
			Shard: &sweep.Shard{Index: 2, Count: 2}}, "shard"},
		"fetch-free on legacy producers": {legacyOnly, sweep.Options{Branches: []int{8}, Prologues: sweep.Prologues(), Seeds: 1}, "legacy-producers"},
	}
	for name, c := range cases {
		if _, err := sweep.Run(c.sc, c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", name, err, c.want)
		}
	}
}

// BenchmarkSweep runs the default grid (4 widths × 2 prologues) with two
// seeds per pair on durabench-256, recording on, one cell after another, and
// reports cells (one seeded simulation plus its reduction) per wall second.
// BenchmarkSweepWorkers in cmd/simlab measures the parallel runner.
func BenchmarkSweep(b *testing.B) {
	sc := durabench(b)
	opts := sweep.Options{Branches: []int{16, 64, 128, 256}, Prologues: sweep.Prologues(), Seeds: 2}
	cells := 0
	b.ReportAllocs()
	for b.Loop() {
		res, err := sweep.Run(sc, opts)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res.Rows {
			cells += r.Seeds
		}
	}
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(cells)/s, "cells/s")
	}
}

// A run stopped at a limit with work left is counted in its row (it was
// printed as a row like any other, with no warning); a drained one is not.
func TestARowCountsItsUndrainedRuns(t *testing.T) {
	sc := durabench(t)
	short := sc
	short.Limits.MaxTime = 50 * time.Millisecond
	for _, c := range []struct {
		sc   model.Scenario
		want int
	}{{sc, 0}, {short, 2}} {
		res, err := sweep.Run(c.sc, sweep.Options{Branches: []int{16}, Prologues: []string{sweep.RunContext}, Seeds: 2})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Rows[0].Undrained; got != c.want {
			t.Errorf("max_time %v: %d undrained runs, want %d", c.sc.Limits.MaxTime, got, c.want)
		}
	}
}
