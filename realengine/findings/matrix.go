package findings

import (
	"context"
	"fmt"
	"time"

	"github.com/simlab/simlab/realengine"
)

// MatrixOptions are the matrix's knobs.
type MatrixOptions struct {
	// Branches, Repetitions and TimeScale are the unforced check's real
	// runs (durabench-256's store); 0 is 48, 5 and 5.
	Branches, Repetitions int
	TimeScale             float64
	// Timeout bounds one real run; 0 is 3 minutes.
	Timeout time.Duration
	// Findings picks findings by id; none is all.
	Findings []string
	// Progress is called after each cell.
	Progress func(done, total int)
}

func (o MatrixOptions) withDefaults() MatrixOptions {
	if o.Branches == 0 {
		o.Branches = 48
	}
	if o.Repetitions == 0 {
		o.Repetitions = 5
	}
	if o.TimeScale == 0 {
		o.TimeScale = 5
	}
	if o.Timeout == 0 {
		o.Timeout = 3 * time.Minute
	}
	return o
}

// Cell is one finding on one release.
type Cell struct {
	Finding    string `json:"finding"`
	Core       string `json:"core"`
	WorldLocal string `json:"world_local"`
	Judgement
	Seconds float64 `json:"seconds"`
}

// MatrixResult is the whole matrix: its releases (columns), findings
// (rows) and cells, findings outer.
type MatrixResult struct {
	Releases []struct {
		Core       string `json:"core"`
		WorldLocal string `json:"world_local"`
	} `json:"releases"`
	Findings []Finding `json:"findings"`
	Cells    []Cell    `json:"cells"`
	Seconds  float64   `json:"seconds"`
}

// Matrix judges every finding on every release, one real run (or a few) at a
// time, r prepared.
func Matrix(ctx context.Context, r *realengine.Runner, rels []realengine.Release, o MatrixOptions) (*MatrixResult, error) {
	o = o.withDefaults()
	findings := Findings
	if len(o.Findings) > 0 {
		findings = nil
		for _, id := range o.Findings {
			f, err := FindingByID(id)
			if err != nil {
				return nil, err
			}
			findings = append(findings, f)
		}
	}
	start := time.Now()
	res := &MatrixResult{Findings: findings}
	for _, rel := range rels {
		res.Releases = append(res.Releases, struct {
			Core       string `json:"core"`
			WorldLocal string `json:"world_local"`
		}{rel.Core.Version, rel.WorldLocal.Version})
	}
	total, done := len(findings)*len(rels), 0
	// A run that serves two findings runs once per release.
	ctx = context.WithValue(ctx, cacheKey{}, map[string]any{})
	for _, f := range findings {
		for _, rel := range rels {
			t0 := time.Now()
			j, err := f.judge(ctx, r, rel, o)
			if err != nil {
				res.Seconds = time.Since(start).Seconds()
				return res, fmt.Errorf("%s on %s: %w", f.ID, rel, err)
			}
			res.Cells = append(res.Cells, Cell{Finding: f.ID, Core: rel.Core.Version, WorldLocal: rel.WorldLocal.Version, Judgement: j,
				Seconds: time.Since(t0).Round(100 * time.Millisecond).Seconds()})
			done++
			if o.Progress != nil {
				o.Progress(done, total)
			}
		}
	}
	res.Seconds = time.Since(start).Round(100 * time.Millisecond).Seconds()
	return res, nil
}

type cacheKey struct{}

// cached runs f once per key and matrix (Matrix puts the cache in ctx).
func cached[T any](ctx context.Context, key string, f func() (T, error)) (T, error) {
	cache, _ := ctx.Value(cacheKey{}).(map[string]any)
	if v, ok := cache[key].(T); ok {
		return v, nil
	}
	v, err := f()
	if err == nil && cache != nil {
		cache[key] = v
	}
	return v, err
}

// Cell finds a cell.
func (m *MatrixResult) Cell(finding, core, wl string) (Cell, bool) {
	for _, c := range m.Cells {
		if c.Finding == finding && c.Core == core && c.WorldLocal == wl {
			return c, true
		}
	}
	return Cell{}, false
}
