package check

import (
	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/properties"
	"github.com/simlab/simlab/sim"
)

// Minimize shrinks a counterexample's scenario after rapid (or a seeded
// sweep) found it. rapid shrinks the choice stream, but a smaller scenario
// shifts every later choice, so its shrinker rarely gets rid of a branch or
// a run. Minimize tries each structural knob smaller in turn (fewer runs,
// fewer and narrower fan-outs, fewer inline steps, fault rates at 0),
// replaying the same recorded choices (a choice that no longer fits is the
// plain outcome), and keeps every change under which the property still
// fails. It returns the smallest scenario found, its exact choices and its
// history.
func Minimize(sc model.Scenario, choices []sim.Choice, prop properties.Property) (model.Scenario, []sim.Choice, *model.History) {
	return MinimizeUntil(sc, choices, prop, nil)
}

// MinimizeUntil is Minimize that stops trying once stop (if set) says so
// (Ctrl-C on a check): what it returns is then the smallest case found so
// far, still a counterexample.
func MinimizeUntil(sc model.Scenario, choices []sim.Choice, prop properties.Property, stop func() bool) (model.Scenario, []sim.Choice, *model.History) {
	sc, choices = materializeSwarm(sc, choices)
	var ck properties.Checker
	props := []properties.Property{prop}
	msc, mc, h, _ := minimizeWhile(sc, choices, func(_ model.Scenario, _ []sim.Choice, h *model.History) bool {
		return len(ck.Run(h, props)) > 0
	}, stop)
	return msc, mc, h
}

// materializeSwarm turns a swarm scenario and its choices into the drawn
// scenario and the choices after the draw: they replay the same run, and
// the drawn scenario's knobs can shrink.
func materializeSwarm(sc model.Scenario, choices []sim.Choice) (model.Scenario, []sim.Choice) {
	if !sc.Swarm {
		return sc, choices
	}
	rep := sim.NewReplayer(choices)
	drawn, _ := model.DrawSwarm(sc, rep)
	drawn.Name = sc.Name
	return drawn, choices[min(rep.Used(), len(choices)):]
}

// minimizeWhile shrinks (sc, choices) while keep holds of the candidate
// scenario, the choices its run consumed and its history. ok says keep held
// of the result; when it held of nothing tried, the input comes back. Once
// stop (if set) says so, it stops trying and returns the best found so far.
func minimizeWhile(sc model.Scenario, choices []sim.Choice, keep func(model.Scenario, []sim.Choice, *model.History) bool, stop func() bool) (model.Scenario, []sim.Choice, *model.History, bool) {
	stopped := func() bool { return stop != nil && stop() }
	// Every attempt runs on spare, reused; the best run's History lives in
	// best's Runner until a better one is taken (take), when the two trade
	// places. Each is a Runner of this call's own, so the History returned
	// is the caller's to keep.
	best, spare := model.NewRunner(), model.NewRunner()
	take := func() { best, spare = spare, best }
	attempt := func(cand model.Scenario, c sim.Chooser) ([]sim.Choice, *model.History, bool) {
		rec := &sim.Recorder{Inner: c}
		res, err := spare.Run(&cand, rec, model.Options{Record: true})
		if err != nil || !keep(cand, rec.Choices, res.History) {
			return nil, nil, false
		}
		return rec.Choices, res.History, true
	}
	try := func(cand model.Scenario) ([]sim.Choice, *model.History, bool) {
		if cand.Validate() != nil {
			return nil, nil, false
		}
		if c, h, ok := attempt(cand, sim.NewReplayer(choices)); ok {
			return c, h, true
		}
		// The old choices no longer line up with the smaller scenario:
		// search a few fresh schedules of it before giving the edit up.
		for seed := uint64(0); seed < minimizeSeeds; seed++ {
			if c, h, ok := attempt(cand, sim.NewPCG(seed)); ok {
				return c, h, true
			}
		}
		return nil, nil, false
	}
	bestChoices, bestHist, ok := attempt(sc, sim.NewReplayer(choices))
	if !ok {
		// Not reproducible as given: a few fresh schedules of the same
		// scenario, else leave it alone.
		for seed := uint64(0); seed < minimizeSeeds && !ok; seed++ {
			bestChoices, bestHist, ok = attempt(sc, sim.NewPCG(seed))
		}
		if !ok {
			res, _ := model.Run(&sc, sim.NewReplayer(choices), model.Options{Record: true})
			return sc, choices, res.History, false
		}
	}
	take()
	choices = bestChoices
	// The scenario's knobs, then the schedule, and again while the
	// schedule pass took a fault out: a story with fewer faults often lets
	// a branch or a run go that it needed before.
	for again := true; again && !stopped(); {
		for changed := true; changed && !stopped(); {
			changed = false
			for _, edit := range shrinkEdits(sc) {
				if stopped() {
					break
				}
				cand := edit()
				// A smaller scenario whose story needs more faults (a
				// cancel site removed, five crashes to exhaust a message
				// instead) is not a smaller story.
				if c, h, ok := try(cand); ok && len(h.Faults) <= len(bestHist.Faults) {
					sc, choices, bestHist = cand, c, h
					take()
					changed = true
					break
				}
			}
		}
		faults := len(bestHist.Faults)
		choices, bestHist = shrinkChoices(sc, choices, bestHist, attempt, take, stopped)
		again = len(bestHist.Faults) < faults
	}
	return sc, choices, bestHist, true
}

// shrinkChoices is the schedule pass: each choice in turn set to 0, the
// plain outcome (a fault that does not fire, the first in order), kept when
// the property still fails with no more faults. rapid did this on its own
// stream; after the scenario shrank, faults its shrinker could not remove
// (a crash on every redelivery) often can be.
func shrinkChoices(sc model.Scenario, choices []sim.Choice, best *model.History,
	attempt func(model.Scenario, sim.Chooser) ([]sim.Choice, *model.History, bool), take func(), stopped func() bool) ([]sim.Choice, *model.History) {
	if len(choices) > maxChoicePass {
		return choices, best
	}
	for i := 0; i < len(choices) && !stopped(); i++ {
		if choices[i].V == 0 {
			continue
		}
		cand := append([]sim.Choice(nil), choices...)
		cand[i].V = 0
		if c, h, ok := attempt(sc, sim.NewReplayer(cand)); ok && len(h.Faults) <= len(best.Faults) {
			choices, best = c, h
			take()
			continue
		}
		// A fault that no longer fires draws nothing after it (where a
		// crash lands, a stale read's lag), and the actor it spared goes on
		// drawing: the rest of the stream then lines up one or a few
		// choices earlier. So the choice is also tried deleted, with up to
		// maxDeleted after it, as Hypothesis deletes blocks; kept only when
		// the story has fewer faults.
		for k := 1; k <= maxDeleted && i+k <= len(choices); k++ {
			cand := append(append([]sim.Choice(nil), choices[:i]...), choices[i+k:]...)
			if c, h, ok := attempt(sc, sim.NewReplayer(cand)); ok && len(h.Faults) < len(best.Faults) {
				choices, best = c, h
				take()
				break
			}
		}
	}
	return choices, best
}

// maxChoicePass bounds the choice-by-choice pass to small schedules, where
// a story is meant to be read.
const maxChoicePass = 4000

// maxDeleted is the longest run of choices the choice pass deletes at once.
const maxDeleted = 4

// minimizeSeeds is how many fresh schedules Minimize tries per edit.
const minimizeSeeds = 256

// minInline is the fewest inline steps a shrunk scenario keeps: the
// runtime runs at least one (WORKFLOW_MAX_INLINE_STEPS takes 1..16), so a
// counterexample shrunk to none could not be handed to simlab reproduce
// (issue 23: both schedules check saved had shrunk to 0). A scenario that
// asks for none keeps none; shrinking only never goes there.
const minInline = 1

// shrinkEdits lists the one-step simplifications of sc, biggest first.
// Every edit stays within what the real engine can run when sc is (fewer
// runs, narrower fan-outs, lower fault rates, max_inline down to
// minInline), so a saved counterexample stays reproducible.
func shrinkEdits(sc model.Scenario) []func() model.Scenario {
	clone := func() model.Scenario {
		c := sc
		c.Workflow.Fanouts = append([]int(nil), sc.Workflow.Fanouts...)
		c.Deployments = append([]model.DeploymentConfig(nil), sc.Deployments...)
		return c
	}
	var edits []func() model.Scenario
	if sc.Runs > 1 {
		edits = append(edits, func() model.Scenario { c := clone(); c.Runs = 1; return c },
			func() model.Scenario { c := clone(); c.Runs--; return c })
	}
	if n := len(sc.Workflow.Fanouts); n > 1 {
		edits = append(edits, func() model.Scenario { c := clone(); c.Workflow.Fanouts = c.Workflow.Fanouts[:n-1]; return c })
	}
	for i, w := range sc.Workflow.Fanouts {
		if w > 1 {
			edits = append(edits, func() model.Scenario { c := clone(); c.Workflow.Fanouts[i] = 1; return c },
				func() model.Scenario { c := clone(); c.Workflow.Fanouts[i] = w - 1; return c })
		}
	}
	if sc.Workflow.MaxInline > minInline {
		edits = append(edits, func() model.Scenario { c := clone(); c.Workflow.MaxInline = minInline; return c },
			func() model.Scenario { c := clone(); c.Workflow.MaxInline--; return c })
	}
	if sc.Workflow.FlakySteps > 0 {
		edits = append(edits, func() model.Scenario { c := clone(); c.Workflow.FlakySteps = 0; return c })
	}
	rates := []func(*model.FaultConfig) *float64{
		func(f *model.FaultConfig) *float64 { return &f.Crash },
		func(f *model.FaultConfig) *float64 { return &f.Misdeliver },
		func(f *model.FaultConfig) *float64 { return &f.StaleRead },
		func(f *model.FaultConfig) *float64 { return &f.LostCreate },
		func(f *model.FaultConfig) *float64 { return &f.BodyFailure },
		func(f *model.FaultConfig) *float64 { return &f.Cancel },
	}
	for _, r := range rates {
		if *r(&sc.Faults) > 0 {
			edits = append(edits, func() model.Scenario { c := clone(); *r(&c.Faults) = 0; return c })
		}
	}
	// A rate that cannot be 0 may still be lower: fewer faults fire, so
	// the story has fewer of them.
	for _, r := range rates {
		if v := *r(&sc.Faults); v > 0.01 {
			edits = append(edits, func() model.Scenario { c := clone(); *r(&c.Faults) = v / 2; return c })
		}
	}
	if sc.Workflow.QuickJSShare > 0 {
		edits = append(edits, func() model.Scenario { c := clone(); c.Workflow.QuickJSShare = 0; return c })
	}
	return edits
}
