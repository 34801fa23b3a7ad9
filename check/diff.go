package check

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/properties"
	"github.com/simlab/simlab/sim"
)

// A differential check compares a change with its base seed by seed: the
// same scenario and seeds, once with the change (variants and/or --set
// knobs) and once without it. It reports only what the change does: a
// (seed, property) that fails with the change and holds without it is new,
// the reverse is fixed, and one that fails in both is the base's own
// finding, counted apart. Each new property's first seed is shrunk keeping
// the difference: the shrunk schedule fails with the change and holds
// without it, so its story shows the change's own cause (a plain shrink
// may drift to a cause the base has too).

// DiffConfig is a differential check.
type DiffConfig struct {
	Change, Base         model.Scenario
	Seeds                []uint64
	Props                []properties.Property
	ChangeSpec, BaseSpec model.Spec
	ScheduleDir          string
	Progress             func(done int)
	Each                 func(n int, do func(i int))
}

// DiffReport is `simlab check --diff --json`.
type DiffReport struct {
	Scenario     string   `json:"scenario"`
	Change       string   `json:"change"`
	Base         string   `json:"base"`
	Variants     []string `json:"variants"`
	BaseVariants []string `json:"base_variants"`
	Seeds        int      `json:"seeds"`
	// New counts, per property, the seeds that fail with the change and
	// hold without it; Fixed the reverse; Both the seeds failing either way.
	New        map[string]int    `json:"new"`
	Fixed      map[string]int    `json:"fixed"`
	Both       map[string]int    `json:"both"`
	NewSeeds   map[string]string `json:"new_seeds,omitempty"`
	FixedSeeds map[string]string `json:"fixed_seeds,omitempty"`
	// First is each new property's first seed, its story with the change,
	// and a schedule shrunk keeping the difference.
	First      map[string]*DiffFirst `json:"first"`
	FirstFixed map[string]*First     `json:"first_fixed,omitempty"`
	Coverage   map[string]int        `json:"coverage"`
	Declared   []string              `json:"declared"`
	Missing    []string              `json:"coverage_missing"`
}

// DiffFirst is a new property's first counterexample.
type DiffFirst struct {
	First
	BaseReplay string `json:"base_replay"`
	// Kept says the shrunk schedule fails with the change and holds
	// without it; false only when no schedule searched kept the difference
	// (then the schedule is the seed's own, unshrunk).
	Kept bool `json:"kept"`
}

// Failed: the change breaks a property the base holds, or a declared
// outcome never happened with it.
func (r *DiffReport) Failed() bool {
	for _, n := range r.New {
		if n > 0 {
			return true
		}
	}
	return len(r.Missing) > 0
}

type diffSeed struct {
	coverage     map[string]int
	change, base []properties.Violation
	err          error
}

// DiffSweep runs the differential check.
func DiffSweep(cfg DiffConfig) (*DiffReport, error) {
	rep := &DiffReport{Scenario: cfg.Change.Name, Change: EntryName(cfg.ChangeSpec.Scenario, cfg.ChangeSpec.Sets, cfg.ChangeSpec.Variants),
		Base:     EntryName(cfg.BaseSpec.Scenario, cfg.BaseSpec.Sets, cfg.BaseSpec.Variants),
		Variants: append([]string{}, cfg.Change.Variants...), BaseVariants: append([]string{}, cfg.Base.Variants...),
		New: map[string]int{}, Fixed: map[string]int{}, Both: map[string]int{}, First: map[string]*DiffFirst{},
		Coverage: map[string]int{}}
	for _, p := range cfg.Props {
		rep.New[p.Name], rep.Fixed[p.Name], rep.Both[p.Name] = 0, 0, 0
	}
	each := cfg.Each
	if each == nil {
		each = func(n int, do func(i int)) {
			for i := range n {
				do(i)
			}
		}
	}
	newSeeds, fixedSeeds := map[string][]uint64{}, map[string][]uint64{}
	results := make([]diffSeed, min(sweepChunk, len(cfg.Seeds)))
	for lo := 0; lo < len(cfg.Seeds); lo += sweepChunk {
		chunk := cfg.Seeds[lo:min(lo+sweepChunk, len(cfg.Seeds))]
		each(len(chunk), func(i int) {
			c, b := cfg.Change, cfg.Base
			rc, err := model.Run(&c, sim.NewPCG(chunk[i]), model.Options{Record: true, Seed: chunk[i]})
			if err != nil {
				results[i] = diffSeed{err: err}
				return
			}
			rb, err := model.Run(&b, sim.NewPCG(chunk[i]), model.Options{Record: true, Seed: chunk[i]})
			if err != nil {
				results[i] = diffSeed{err: err}
				return
			}
			cov := map[string]int{}
			countCoverage(cov, rc, nil)
			results[i] = diffSeed{coverage: cov, change: properties.Check(rc.History, cfg.Props), base: properties.Check(rb.History, cfg.Props)}
		})
		for i, seed := range chunk {
			r := results[i]
			results[i] = diffSeed{}
			if r.err != nil {
				return nil, r.err
			}
			for k, n := range r.coverage {
				rep.Coverage[k] += n
			}
			withChange, without := byProperty(r.change), byProperty(r.base)
			for _, p := range cfg.Props {
				vc, vb := withChange[p.Name], without[p.Name]
				switch {
				case vc != nil && vb != nil:
					rep.Both[p.Name]++
				case vc != nil:
					rep.New[p.Name]++
					newSeeds[p.Name] = append(newSeeds[p.Name], seed)
					if rep.First[p.Name] == nil {
						f, err := cfg.firstNew(seed, p, *vc)
						if err != nil {
							return nil, err
						}
						rep.First[p.Name] = f
					}
				case vb != nil:
					rep.Fixed[p.Name]++
					fixedSeeds[p.Name] = append(fixedSeeds[p.Name], seed)
					if rep.FirstFixed == nil {
						rep.FirstFixed = map[string]*First{}
					}
					if rep.FirstFixed[p.Name] == nil {
						rep.FirstFixed[p.Name] = &First{Seed: seed, Run: model.RunName(vb.Run), Message: vb.Message, Story: properties.Story(*vb),
							Replay: cfg.BaseSpec.RunCommand(seed)}
					}
				}
			}
			rep.Seeds++
			if cfg.Progress != nil {
				cfg.Progress(lo + i + 1)
			}
		}
	}
	rep.NewSeeds, rep.FixedSeeds = formatSeedLists(newSeeds), formatSeedLists(fixedSeeds)
	rep.Declared = Declared(&cfg.Change)
	rep.Missing = missing(rep.Declared, rep.Coverage)
	return rep, nil
}

// byProperty keeps each property's first violation.
func byProperty(vs []properties.Violation) map[string]*properties.Violation {
	out := map[string]*properties.Violation{}
	for i := range vs {
		if out[vs[i].Property] == nil {
			out[vs[i].Property] = &vs[i]
		}
	}
	return out
}

func (cfg *DiffConfig) firstNew(seed uint64, p properties.Property, v properties.Violation) (*DiffFirst, error) {
	f := &DiffFirst{First: First{Seed: seed, Run: model.RunName(v.Run), Message: v.Message, Story: properties.Story(v),
		Replay: cfg.ChangeSpec.RunCommand(seed)}, BaseReplay: cfg.BaseSpec.RunCommand(seed)}
	if cfg.ScheduleDir == "" {
		return f, nil
	}
	s, kept, err := MinimizeDifference(cfg.Change, cfg.Base, seed, p)
	if err != nil {
		return nil, err
	}
	f.Kept = kept
	if err := os.MkdirAll(cfg.ScheduleDir, 0o755); err != nil {
		return nil, fmt.Errorf("schedules directory %s: %w", cfg.ScheduleDir, err)
	}
	path := filepath.Join(cfg.ScheduleDir, "diff-"+ScheduleFileName(cfg.Change, p.Name, seed))
	if err := SaveSchedule(path, s); err != nil {
		return nil, err
	}
	// The story told is the shrunk schedule's: the change's own cause.
	if res, _, err := s.Replay(); err == nil {
		if vs := properties.Check(res.History, []properties.Property{p}); len(vs) > 0 {
			f.Run, f.Message, f.Story = model.RunName(vs[0].Run), vs[0].Message, properties.Story(vs[0])
		}
	}
	f.ScheduleFile = path
	f.Replay += "   (shrunk, fails with the change and holds without it: simlab replay " + path + ")"
	return f, nil
}

// MinimizeDifference records the change's run at seed and shrinks it while
// the property fails with the change and holds without it, both replaying
// the same choices. The schedule carries both scenarios; kept is false
// when no schedule tried kept the difference.
func MinimizeDifference(change, base model.Scenario, seed uint64, p properties.Property) (Schedule, bool, error) {
	_, choices, err := Record(&change, sim.NewPCG(seed), seed)
	if err != nil {
		return Schedule{}, false, err
	}
	c, rest := materializeSwarm(change, choices)
	b, _ := materializeSwarm(base, choices)
	b.Name = c.Name
	toBase, err := scenarioDelta(c, b)
	if err != nil {
		return Schedule{}, false, err
	}
	holdsWithout := func(cand model.Scenario, used []sim.Choice) bool {
		bs := toBase(cand)
		res, err := model.Run(&bs, sim.NewReplayer(used), model.Options{Record: true})
		return err == nil && len(p.Check(res.History)) == 0
	}
	msc, mc, h, kept := minimizeWhile(c, rest, func(cand model.Scenario, used []sim.Choice, h *model.History) bool {
		return len(p.Check(h)) > 0 && holdsWithout(cand, used)
	}, nil)
	bsc := toBase(msc)
	s := Schedule{Property: p.Name, Seed: seed, HistoryHash: fmt.Sprintf("%016x", h.Hash), Scenario: msc, Choices: mc, Base: &bsc}
	if res, err := model.Run(&bsc, sim.NewReplayer(mc), model.Options{Record: true}); err == nil {
		s.BaseHistoryHash = fmt.Sprintf("%016x", res.History.Hash)
	}
	return s, kept, nil
}

// scenarioDelta returns the function that takes a scenario shaped like
// change (shrunk, say) to its base: every field in which change and base
// differ is set to base's value, the rest is kept. Fields are compared as
// the scenario file writes them (JSON paths; lists are one field).
func scenarioDelta(change, base model.Scenario) (func(model.Scenario) model.Scenario, error) {
	asMap := func(sc model.Scenario) (map[string]any, error) {
		raw, err := json.Marshal(sc)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		return m, json.Unmarshal(raw, &m)
	}
	mc, err := asMap(change)
	if err != nil {
		return nil, err
	}
	mb, err := asMap(base)
	if err != nil {
		return nil, err
	}
	type field struct {
		path []string
		v    any
	}
	var delta []field
	var walk func(path []string, a, b map[string]any)
	walk = func(path []string, a, b map[string]any) {
		keys := sortedKeys(a)
		for _, k := range sortedKeys(b) {
			if _, ok := a[k]; !ok {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			p := append(slices.Clone(path), k)
			am, aok := a[k].(map[string]any)
			bm, bok := b[k].(map[string]any)
			if aok && bok {
				walk(p, am, bm)
				continue
			}
			if !reflect.DeepEqual(a[k], b[k]) {
				delta = append(delta, field{p, b[k]})
			}
		}
	}
	walk(nil, mc, mb)
	return func(sc model.Scenario) model.Scenario {
		m, err := asMap(sc)
		if err != nil {
			return base
		}
		for _, f := range delta {
			at := m
			for _, k := range f.path[:len(f.path)-1] {
				next, ok := at[k].(map[string]any)
				if !ok {
					next = map[string]any{}
					at[k] = next
				}
				at = next
			}
			at[f.path[len(f.path)-1]] = f.v
		}
		raw, _ := json.Marshal(m)
		var out model.Scenario
		if err := json.Unmarshal(raw, &out); err != nil {
			return base
		}
		return out
	}, nil
}
