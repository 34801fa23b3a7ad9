package sweep

import (
	"fmt"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/sim"
)

// Knob is one latency a sensitivity analysis moves: a distribution of the
// scenario, named by its --set path.
type Knob struct {
	Name string
	dist func(*model.Scenario) *sim.Dist
}

// Knobs are every latency the protocol's counts can depend on: the World's
// calls, the queue's publish and delivery, and the step bodies.
var Knobs = []Knob{
	{"store.runs_get", func(sc *model.Scenario) *sim.Dist { return &sc.Store.RunsGet }},
	{"store.events_create", func(sc *model.Scenario) *sim.Dist { return &sc.Store.EventsWrite }},
	{"store.events_list", func(sc *model.Scenario) *sim.Dist { return &sc.Store.EventsList }},
	{"store.publish", func(sc *model.Scenario) *sim.Dist { return &sc.Store.Publish }},
	{"store.deliver", func(sc *model.Scenario) *sim.Dist { return &sc.Store.Deliver }},
	{"workflow.body", func(sc *model.Scenario) *sim.Dist { return &sc.Workflow.Body }},
}

// MaxChange bounds a sensitivity's relative change: at 1 a knob would be
// scaled to zero.
const MaxChange = 0.9

// SensitivityRow is one knob scaled by Factor at one (branches, prologue):
// the figures the headline rests on, and their change against the
// unscaled scenario's row on the same seeds (a fraction; 0.25 is +25 %).
type SensitivityRow struct {
	Knob          string  `json:"knob"`
	Factor        float64 `json:"factor"`
	Branches      int     `json:"branches"`
	Prologue      string  `json:"prologue"`
	LazyPerFanout float64 `json:"lazy_per_fanout"`
	TTLSP50MS     float64 `json:"ttls_p50_ms"`
	// The changes are absent where the base is 0 and the moved row is not.
	LazyChange    *float64 `json:"lazy_change,omitempty"`
	TTLSP50Change *float64 `json:"ttls_p50_change,omitempty"`
}

// Sensitivity is how much each knob moves lazy reads per fan-out and TTLS:
// the base rows, then a row per knob, factor (1−change and 1+change) and
// (branches, prologue).
type Sensitivity struct {
	Scenario string           `json:"scenario"`
	Seeds    int              `json:"seeds"`
	Change   float64          `json:"change"`
	Base     []Row            `json:"base"`
	Rows     []SensitivityRow `json:"rows"`
	Partial  bool             `json:"partial,omitempty"`
}

// RunSensitivity runs the sweep opts describes on sc, then again with each
// knob's distribution scaled by 1−change and by 1+change, every quantile
// alike, on the same seeds (common random numbers: each difference is the
// knob's, not the draw's). A shard is refused: the rows compare whole cells.
func RunSensitivity(sc model.Scenario, opts Options, change float64) (*Sensitivity, error) {
	if !(change > 0 && change <= MaxChange) {
		return nil, fmt.Errorf("sensitivity change = %v: want a fraction in (0, %v]", change, MaxChange)
	}
	if opts.Shard != nil {
		return nil, fmt.Errorf("a sensitivity analysis runs whole: --shard does not apply")
	}
	base, err := Run(sc, opts)
	if err != nil {
		return nil, err
	}
	out := &Sensitivity{Scenario: sc.Name, Seeds: opts.Seeds, Change: change, Base: base.Rows, Partial: base.Partial}
	for _, k := range Knobs {
		for _, f := range []float64{1 - change, 1 + change} {
			if out.Partial {
				return out, nil
			}
			moved := sc
			d := k.dist(&moved)
			*d = d.Scaled(f)
			res, err := Run(moved, opts)
			if err != nil {
				return nil, fmt.Errorf("%s ×%v: %w", k.Name, f, err)
			}
			out.Partial = res.Partial
			if len(res.Rows) != len(base.Rows) {
				return out, nil // stopped part-way: no row to compare
			}
			for i, r := range res.Rows {
				b := base.Rows[i]
				out.Rows = append(out.Rows, SensitivityRow{Knob: k.Name, Factor: f, Branches: r.Branches, Prologue: r.Prologue,
					LazyPerFanout: r.LazyPerFanout, TTLSP50MS: r.TTLSP50MS,
					LazyChange: relative(r.LazyPerFanout, b.LazyPerFanout), TTLSP50Change: relative(r.TTLSP50MS, b.TTLSP50MS)})
			}
		}
	}
	return out, nil
}

// relative is (x−base)/base, 0 when both are equal, nil from a zero base.
func relative(x, base float64) *float64 {
	var r float64
	switch {
	case x == base:
	case base == 0:
		return nil
	default:
		r = (x - base) / base
	}
	return &r
}
