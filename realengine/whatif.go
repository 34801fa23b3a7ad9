package realengine

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/simlab/simlab/check"
	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/world"
)

// This file is reproduce's --what-if: instead of forcing a race group's
// interleaving inside the World's calls (the History's, through the file
// system gate), it releases the group's members together and lets the
// real World's own internals decide, run after run, and sets what each
// run's members answered beside every answer the model's World could give
// them in some interleaving of its own steps. An answer only the real
// World gives is what the model lacks; one only the model gives is an
// interleaving the real World's timing did not reach (the gate can force
// it: reproduce without --what-if).

// WhatIfOptions are a --what-if's settings.
type WhatIfOptions struct {
	Cores []string
	// Runs is how many real runs each core makes.
	Runs    int
	Timeout time.Duration
	// OutDir receives each run's spans; Base names them.
	OutDir, Base string
	// WorldLocal is the world-local package the runs are over (as
	// ReproduceOptions.WorldLocal).
	WorldLocal string
}

// WhatIf is a schedule's race groups released together on the real World.
type WhatIf struct {
	Schedule    string      `json:"schedule"`
	Property    string      `json:"property"`
	HistoryHash string      `json:"history_hash"`
	Runs        int         `json:"runs"`
	Groups      []RaceGroup `json:"groups"`
	plan        *Plan
}

// RaceGroup is one race group's outcomes: the History's, the model's, the
// real World's.
type RaceGroup struct {
	Group int `json:"group"`
	// First is the group's first plan entry; Members describe its
	// entries, in the plan's order (their answers are in that order too).
	First   int      `json:"first"`
	Members []string `json:"members"`
	// History is what the History's members answered.
	History string `json:"history"`
	// Model is every answer the model's World gives the members over every
	// interleaving of their steps from the state the History had when the
	// group began, each with the run's status after ("ok, ok → completed");
	// ModelNote says what the rebuilt state leaves out, if anything.
	Model     []ModelOutcome `json:"model"`
	ModelNote string         `json:"model_note,omitempty"`
	// Real is what the real World answered, per core and answer.
	Real []RealOutcome `json:"real"`
}

// ModelOutcome is one outcome of the model's World for a group: the
// members' answers and the run's status after.
type ModelOutcome struct {
	Answers   string `json:"answers"`
	RunStatus string `json:"run_status,omitempty"`
}

func (m ModelOutcome) String() string {
	if m.RunStatus == "" {
		return m.Answers
	}
	return m.Answers + " → " + m.RunStatus
}

// has says whether the model's World gives the members these answers.
func (g *RaceGroup) has(answers string) bool {
	return slices.ContainsFunc(g.Model, func(m ModelOutcome) bool { return m.Answers == answers })
}

// RealOutcome is one answer of the real World to a group, on one core.
type RealOutcome struct {
	Core    string `json:"core"`
	Answers string `json:"answers"`
	// Runs is how many runs answered so; Violated how many of them
	// violated the schedule's property (on their spans or call record).
	Runs     int `json:"runs"`
	Violated int `json:"violated"`
	// InModel says the model's World can give the same answers.
	InModel bool `json:"in_model"`
}

// OnlyReal lists the real outcomes the model's World cannot give.
func (w *WhatIf) OnlyReal() []string {
	var out []string
	for _, g := range w.Groups {
		for _, r := range g.Real {
			if !r.InModel && r.Released() {
				out = append(out, fmt.Sprintf("group %d on core %s: %s", g.Group, r.Core, r.Answers))
			}
		}
	}
	return out
}

// Released says the group was released in this run: its answers are the
// real World's, to compare with the model's (else they are notReleased).
func (r RealOutcome) Released() bool { return !strings.HasPrefix(r.Answers, notReleased) }

// notReleased marks a run in which the group was never released together
// (the plan broke before it).
const notReleased = "never released"

// raceGroups are the plan's race groups as [first, end) entry ranges.
func raceGroups(p *Plan) [][2]int {
	var out [][2]int
	for i := 0; i < len(p.Entries); {
		g := p.Entries[i].Group
		end := i + 1
		for g != 0 && end < len(p.Entries) && p.Entries[end].Group == g {
			end++
		}
		if g != 0 {
			out = append(out, [2]int{i, end})
		}
		i = end
	}
	return out
}

// whatIfGroups are the plan's race groups, refused when there is none.
func whatIfGroups(p *Plan) ([][2]int, error) {
	groups := raceGroups(p)
	if len(groups) == 0 {
		return nil, fmt.Errorf("%w: the plan has no race group (no writes of one run the History had in flight at once): --what-if has nothing to release together", ErrNotReproducible)
	}
	return groups, nil
}

// PrepareWhatIf is PrepareReproduction for --what-if: the plan, and the
// model's outcomes of each race group. A plan without a race group is
// refused (ErrNotReproducible): nothing in it is released together.
func PrepareWhatIf(s check.Schedule, file string) (*Reproduction, *WhatIf, error) {
	rp, err := PrepareReproduction(s, file)
	if err != nil {
		return nil, nil, err
	}
	res, _, err := s.Replay()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: replaying the schedule: %v", ErrNotReproducible, err)
	}
	// The plan whose race groups are every set of writes of one run the
	// History had in flight at once, step events included: released
	// together, nothing inside their calls is forced.
	if rp.Plan, err = planFrom(res.History, true); err != nil {
		return nil, nil, fmt.Errorf("%w: translating the history into a plan: %v", ErrNotReproducible, err)
	}
	groups, err := whatIfGroups(rp.Plan)
	if err != nil {
		return nil, nil, err
	}
	wi := &WhatIf{Schedule: file, Property: rp.Property, HistoryHash: rp.HistoryHash, plan: rp.Plan}
	for _, g := range groups {
		members := rp.Plan.Entries[g[0]:g[1]]
		rg := RaceGroup{Group: members[0].Group, First: g[0]}
		var hist []string
		for _, e := range members {
			rg.Members = append(rg.Members, e.Model)
			hist = append(hist, cmp.Or(e.Expect, "ok"))
		}
		rg.History = strings.Join(hist, ", ")
		rg.Model, rg.ModelNote, err = modelRaceOutcomes(res.History, rp.Plan, g[0], g[1])
		if err != nil {
			return nil, nil, fmt.Errorf("%w: race group %d: %v", ErrNotReproducible, rg.Group, err)
		}
		wi.Groups = append(wi.Groups, rg)
	}
	return rp, wi, nil
}

// modelRaceOutcomes is every answer the model's world-local gives a race
// group's members (entries [first, end) of the plan), with the run's status
// after, over every interleaving of their Txns' steps, from the store the
// real World holds when the plan releases them: every write of the plan's
// earlier entries applied one at a time in the plan's order, as plan.mjs
// releases them (an earlier group's members too, in its order: one of its
// outcomes), each answered as the model answers it then.
func modelRaceOutcomes(h *model.History, p *Plan, first, end int) (outcomes []ModelOutcome, note string, err error) {
	members := p.Entries[first:end]
	for i, e := range members {
		if e.Call < 0 {
			return nil, "", fmt.Errorf("member %d is not a World call", i)
		}
	}
	run := h.Calls[members[0].Call].Run
	s := world.NewFor(model.StoreRules(HarnessWorld), world.FenceFixed)
	refused := 0
	for _, e := range p.Entries[:first] {
		if e.Kind != "call" || e.Call < 0 {
			continue
		}
		c := h.Calls[e.Call]
		if c.Op != model.OpEventsCreate {
			continue
		}
		if c.Event == world.EvRunCreated {
			if id := s.CreateRun(c.Start, h.Runs[c.Run].Deployment, 1, -1); id != c.Run {
				return nil, "", fmt.Errorf("rebuilding the store: run %d created as %d", c.Run, id)
			}
			continue
		}
		res, _, _ := s.Apply(c.End, world.Event{Type: c.Event, Run: c.Run, Step: c.Step, RetryAfter: c.RetryAfter, Lazy: c.Lazy})
		if res != c.Result && c.Run == run {
			refused++
		}
	}
	if refused > 0 {
		note = fmt.Sprintf("%d earlier writes of the run, applied one at a time in the plan's order, are answered otherwise than the History had them", refused)
	}
	at := h.Calls[members[0].Call].Served
	// The members' Txns, begun in the order the store served them (the
	// order world-local queues its step locks in).
	order := make([]int, len(members))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return int(h.Calls[members[a].Call].Served - h.Calls[members[b].Call].Served)
	})
	txns := make([]world.Txn, len(members))
	for _, i := range order {
		c := h.Calls[members[i].Call]
		txns[i] = s.Begin(world.Event{Type: c.Event, Run: c.Run, Step: c.Step, RetryAfter: c.RetryAfter, Lazy: c.Lazy}, int32(i))
	}
	set := map[ModelOutcome]bool{}
	visited := 0
	var walk func(s *world.Store, txns []world.Txn) error
	walk = func(s *world.Store, txns []world.Txn) error {
		if visited++; visited > maxRaceStates {
			return fmt.Errorf("more than %d interleavings of %d members", maxRaceStates, len(members))
		}
		moved, done := false, true
		for i := range txns {
			if txns[i].Done() {
				continue
			}
			done = false
			if !s.Ready(&txns[i]) {
				continue
			}
			moved = true
			cs, ct := s.Clone(), slices.Clone(txns)
			cs.Advance(&ct[i], at)
			if err := walk(cs, ct); err != nil {
				return err
			}
		}
		switch {
		case done:
			ans := make([]string, len(txns))
			for i := range txns {
				res, _, _ := txns[i].Result()
				ans[i] = errorName(res)
			}
			set[ModelOutcome{Answers: strings.Join(ans, ", "), RunStatus: s.Get(run).Status.String()}] = true
		case !moved:
			set[ModelOutcome{Answers: "stuck: no member can go on"}] = true
		}
		return nil
	}
	if err := walk(s, txns); err != nil {
		return nil, "", err
	}
	for o := range set {
		outcomes = append(outcomes, o)
	}
	slices.SortFunc(outcomes, func(a, b ModelOutcome) int { return strings.Compare(a.String(), b.String()) })
	return outcomes, note, nil
}

// maxRaceStates bounds the interleavings a group's outcomes are computed
// over (a group of three run events has 1,680).
const maxRaceStates = 1 << 20

// RunWhatIf makes o.Runs real runs of the plan on each core, every race
// group released together with no schedule inside its calls, and tallies
// what each group's members answered.
func RunWhatIf(ctx context.Context, r *Runner, s check.Schedule, rp *Reproduction, wi *WhatIf, o WhatIfOptions) error {
	cores := o.Cores
	if len(cores) == 0 {
		cores = []string{ReproduceCore}
	}
	if o.Runs < 1 {
		o.Runs = 1
	}
	if o.Timeout <= 0 {
		o.Timeout = planTimeout(rp.Plan)
	}
	wi.Runs = o.Runs
	// No race group has a schedule inside its calls (planFrom): plan.mjs
	// releases the members in one tick and the World's own I/O
	// interleaves as it will.
	free := rp.Plan
	for _, v := range cores {
		core, err := CoreByVersion(v)
		if err != nil {
			return err
		}
		tally := make([]map[string]*RealOutcome, len(wi.Groups))
		var order [][]string
		for g := range wi.Groups {
			tally[g] = map[string]*RealOutcome{}
			order = append(order, nil)
		}
		for run := 1; run <= o.Runs; run++ {
			cfg := planConfig(s.Scenario, free)
			cfg.WorldLocal = o.WorldLocal
			spans := filepath.Join(o.OutDir, fmt.Sprintf("%s.what-if.%s.%d.spans.jsonl", o.Base, core.Version, run))
			cfg.TraceOut = spans
			out, runErr := r.run(ctx, core, cfg, o.Timeout)
			if out == nil {
				return runErr
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			calls := filepath.Join(o.OutDir, fmt.Sprintf("%s.what-if.%s.%d.calls.json", o.Base, core.Version, run))
			if err := writeCallRecord(calls, core.Version, out); err != nil {
				return err
			}
			cr := judgeReproduction(rp, out, spans, s.Property)
			violated := len(cr.Violations) > 0
			for g, rg := range wi.Groups {
				ans := groupAnswers(out.Plan, rg.First, len(rg.Members))
				t := tally[g][ans]
				if t == nil {
					t = &RealOutcome{Core: core.Version, Answers: ans, InModel: rg.has(ans)}
					tally[g][ans] = t
					order[g] = append(order[g], ans)
				}
				t.Runs++
				if violated {
					t.Violated++
				}
			}
		}
		for g := range wi.Groups {
			for _, ans := range order[g] {
				wi.Groups[g].Real = append(wi.Groups[g].Real, *tally[g][ans])
			}
		}
	}
	return nil
}

// groupAnswers is what a real run's group members answered, in the plan's
// order, or notReleased when the plan never released them.
func groupAnswers(pr *PlanReport, first, n int) string {
	if pr == nil || first+n > len(pr.Status) {
		return notReleased + " (no plan report)"
	}
	// Where the plan broke says why: an entry before the group that the
	// runtime never made (what the real World answered an earlier group
	// led it elsewhere), or a member that never came. (The break releases
	// what was held, so members may have answered, but not together.)
	if b := pr.Broken; b != nil && b.Entry < first+n {
		missing := b.Missing
		if len(missing) == 0 {
			missing = []int{b.Entry}
		}
		where := "before the group"
		if b.Entry >= first {
			where = "at the group"
		}
		return fmt.Sprintf("%s (the plan broke %s: entry %s never came)", notReleased, where, joinInts(missing))
	}
	ans := make([]string, n)
	for i := range n {
		st := pr.Status[first+i]
		if st.State != "answered" {
			return fmt.Sprintf("%s (entry %d %s)", notReleased, first+i, st.State)
		}
		ans[i] = st.Result
	}
	return strings.Join(ans, ", ")
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
