package realengine

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/check"
	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/seeds"
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/properties"
	"github.com/simlab/simlab/realworld"
	"github.com/simlab/simlab/sim"
)

var writeSchedules = flag.Bool("write-schedules", false, "rewrite testdata/reproduce's schedules from their searches")

// savedSchedule is one schedule of testdata/reproduce: a docs/FINDINGS.md finding as
// simlab finds it, on a scenario the real side can honour, saved as check
// saves a counterexample (the first seed of 1..5000 whose run violates the
// property, with every recorded choice).
type savedSchedule struct {
	file, property string
	scenario       func() model.Scenario
	// only, when set, is what every violation of the property must say
	// (one of its clauses), so that the search takes the first seed that
	// shows that finding and no other way of violating it.
	only string
	// foundBy, for a schedule no seed of 1..5000 of a plain scenario
	// finds (scenario nil), is the search that found it, kept as found
	// (as rapid keeps a failure): the test checks that it still replays
	// to its history and that reproduce takes it; a model change that
	// moves it needs that search run again.
	foundBy string
}

// durabenchOnLocal is durabench-256's store model on world-local's rules
// and split calls (what validate's simlab side runs), without the
// events.createBatch world-local does not have.
func durabenchOnLocal(branches, inline int) model.Scenario {
	sc, _ := model.Builtin("durabench-256")
	sc.Name = "durabench-256 on world-local"
	sc.Description = fmt.Sprintf("durabench-256's store model on world-local's rules and split calls (validate's simlab side), one fan-out of %d branches, %d inline, no events.createBatch", branches, inline)
	sc.World = HarnessWorld
	sc.Store.BatchCreates = false
	sc.Workflow.Fanouts = []int{branches}
	sc.Workflow.MaxInline = inline
	return sc
}

var savedSchedules = []savedSchedule{
	// docs/MODEL.md finding 15: two last completers of one fan-out each
	// replay the workflow and each write run_completed; world-local
	// accepts both.
	{"f15-two-run-completed.json", "single-terminal-event", func() model.Scenario { return durabenchOnLocal(6, 1) }, "", ""},
	// docs/FINDINGS.md's first finding: concurrent last completers each make the
	// fan-out's lazy runs.get, more than one per fan-out.
	{"many-lazy-reads.json", "one-lazy-fetch-per-fanout", func() model.Scenario { return durabenchOnLocal(6, 1) }, "", ""},
	// docs/FINDINGS.md's stale-pending finding (docs/VALIDATION.md, difference 4): a
	// last completer's lazy read answers the run as created, pending with no
	// startedAt; its replay cannot start without one and fails the run.
	{"stale-pending-run-failed.json", "run-fails-for-a-reason", func() model.Scenario {
		sc := durabenchOnLocal(2, 1)
		sc.Description += "; every runs.get stale by up to an hour"
		sc.Faults.StaleRead = 1
		sc.Store.StaleLag = time.Hour
		return sc
	}, "", ""},
	// docs/MODEL.md findings 16 and 17: the client cancels the run 100 ms
	// after its start, while the orchestrator's run_started is in flight;
	// world-local's start writes the run file from its pending read over
	// the cancel, the run reads running with run_cancelled in its log, its
	// steps start after the end and nothing ends it again.
	{"f17-cancel-racing-start.json", "ended-run-reads-ended", func() model.Scenario {
		sc := durabenchOnLocal(1, 1)
		sc.Description += "; the client cancels each run 100 ms after its start"
		sc.Faults.CancelAt = 100 * time.Millisecond
		return sc
	}, "", ""},
	// An inline step's claim racing the client's cancel: world-local's
	// lazy step_started reads the run running, the cancel lands, and the
	// claim's step_started is logged after the run_cancelled; turbo has
	// started the step's body already.
	{"claim-racing-cancel.json", "no-start-on-terminal", func() model.Scenario { return cancelledFanout(0) }, "", ""},
	// Two last completers of the first fan-out both replay into the next;
	// the orchestrator's own continuation loaded the log before the other's
	// claim of the next fan-out's inline step, runs it too, and turbo
	// begins its body before the World refuses the claim: after the other
	// completer completed the run. world-local with world-vercel's
	// latencies, so that the orchestrator's list answers late.
	{"turbo-body-after-completion.json", "no-start-on-terminal", func() model.Scenario {
		return slowFanout("fan-outs of 3 and 1 branches, one inline", 3, 1)
	}, "", ""},
	// docs/FINDINGS.md's third finding (docs/MODEL.md finding 9): the client's cancel
	// lands while the orchestrator suspends; its step_created of the queued
	// step is refused, the step's message (resilient dispatch: published
	// with it) is delivered, its claim answers not found, its in-band create
	// is refused on the cancelled run, and the delivery throws, again on
	// each redelivery 5 s apart, until the runtime's delivery cap (2 here:
	// WORKFLOW_MAX_QUEUE_DELIVERIES) writes run_failed, refused, and acks.
	{"ended-run-claim-loop.json", "recovery-in-band", func() model.Scenario { return cancelledFanout(2) }, "", ""},
	// The third finding under the runtime's default dispatch: the queued
	// step's message is the dispatch loop's, payload-less (no stepInput),
	// so its consumer, finding the step missing, cannot create it in band
	// and throws at once, each delivery, until the cap (2 here).
	{"ended-run-claim-loop-bare.json", "recovery-in-band", func() model.Scenario {
		sc := cancelledFanout(2)
		sc.Description += "; the runtime's default dispatch (the step message carries no input)"
		sc.Workflow.ResilientDispatch = false
		return sc
	}, "", ""},
	// docs/FINDINGS.md's turbo finding: the run's first delivery runs in turbo; the
	// client's cancel lands while it suspends on the fan-out (its
	// run_started answered first, its step_created in flight with the
	// cancel: a chained race, the create joining the group as it arrives);
	// the create and the inline claim are refused, but the inline body,
	// started optimistically, runs after the cancel. (The queued step's
	// message then loops on the ended run, the third finding: a delivery
	// cap of 2 ends it in 10 s.)
	{"turbo-body-on-cancelled-run.json", "no-start-on-terminal", func() model.Scenario { return cancelledFanout(2) }, "the body of", ""},
	// A cancel racing the run's completion (issue 18's completion-and-cancel
	// race, here on the engine): one branch, run inline; the orchestrator's
	// run_completed and the client's run_cancelled both read the run live on
	// world-local and both are accepted, two terminal events in one log.
	{"cancel-racing-completion.json", "single-terminal-event", func() model.Scenario {
		sc, _ := model.Builtin("fanout")
		sc.Description += "; one branch, inline; the client cancels each run within 40 ms of its start"
		sc.Workflow.Fanouts, sc.Workflow.MaxInline = []int{1}, 1
		sc.Faults.Cancel, sc.Faults.CancelWithin = 1, 40*time.Millisecond
		return sc
	}, "", ""},
	// docs/MODEL.md finding 21: a queued step that finishes before the
	// orchestrator's claim of its inline sibling makes its consumer the
	// last completer (the inline step has no step_created until its claim);
	// the consumer's replay claims and runs the inline step, and turbo's
	// optimistic start has begun the orchestrator's body of it: one body,
	// two deliveries, at once.
	// Its window is narrow (the orchestrator's creates answer after the
	// consumer claimed the inline step and before that body ended), which
	// rapid's draws of the extremes meet and the seeded draws of 1..5000
	// do not: the properties search keeps its shrunk schedule.
	{file: "one-body-twice.json", property: "one-body-at-a-time",
		foundBy: "SIMLAB_SCHEDULES=DIR go test ./check -run TestShippedFindsBodyTwiceOnWorldLocal, then DIR/TestShippedFindsBodyTwiceOnWorldLocal-one-body-at-a-time.json copied here"},
}

// cancelledFanout is the fanout scenario with two branches, one inline, the
// client cancelling half the runs within 20 ms of their start, and, when
// deliveryCap is above 0, the runtime's delivery cap lowered to it (so that
// a delivery looping on the ended run stops after seconds, not minutes).
func cancelledFanout(deliveryCap int) model.Scenario {
	sc, _ := model.Builtin("fanout")
	sc.Description += "; two branches, one inline; the client cancels half the runs within 20 ms of their start"
	sc.Workflow.Fanouts, sc.Workflow.MaxInline = []int{2}, 1
	sc.Faults.Cancel, sc.Faults.CancelWithin = 0.5, 20*time.Millisecond
	// The turbo replay's cost is left out: these searches look for a cancel
	// landing in the run's first milliseconds, in chained races the plan
	// can force (the plan orders the calls whatever the real replay costs).
	// With the default cost the first such seeds are races the harness
	// cannot hold (turbo-body-on-cancelled-run's seed 18: the refused
	// create ends the real suspension before the inline body it waits for).
	sc.Workflow.ReplayBase, sc.Workflow.ReplayPerEntity, sc.Workflow.ReplayPerEvent = 0, 0, 0
	if deliveryCap > 0 {
		sc.Description += fmt.Sprintf("; a delivery cap of %d", deliveryCap)
		sc.Store.MaxDeliveries = deliveryCap
	}
	return sc
}

// slowFanout is the fanout scenario (world-local's rules and split calls)
// with world-vercel's latencies, so that a claim or a list answers after
// other deliveries went on, and one inline step per fan-out.
func slowFanout(what string, widths ...int) model.Scenario {
	sc, _ := model.Builtin("fanout")
	sc.Description += "; " + what + "; world-vercel's latencies"
	sc.Workflow.Fanouts, sc.Workflow.MaxInline = widths, 1
	sc.Store.TakeLatencies(model.Profiles()["world-vercel"])
	return sc
}

func scheduleFile(name string) string { return filepath.Join("testdata", "reproduce", name) }

// search finds the first seed of 1..5000 whose run of sc violates prop
// (every violation saying only, when set).
func search(t *testing.T, sc model.Scenario, prop, only string) check.Schedule {
	t.Helper()
	p, ok := properties.ByName(prop)
	if !ok {
		t.Fatalf("no property %s", prop)
	}
	for seed := uint64(1); seed <= 5000; seed++ {
		c := sc
		res, choices, err := check.Record(&c, sim.NewPCG(seed), seed)
		if err != nil {
			t.Fatal(err)
		}
		vs := p.Check(res.History)
		for _, v := range vs {
			if only != "" && !strings.Contains(v.Message, only) {
				vs = nil
				break
			}
		}
		if len(vs) > 0 {
			return check.Schedule{Version: 1, Property: prop, Seed: seed, HistoryHash: fmt.Sprintf("%016x", res.History.Hash), Scenario: sc, Choices: choices}
		}
	}
	t.Fatalf("%s holds on seeds 1..5000 of %s", prop, sc.Name)
	return check.Schedule{}
}

// TestSavedSchedulesAreCurrent: each committed schedule is what its search
// finds with today's model (the same seed and history), so a model change
// that moves it shows here, not as a puzzling divergence on the real side.
// Regenerate with go test ./realengine -run SavedSchedules -write-schedules.
func TestSavedSchedulesAreCurrent(t *testing.T) {
	for _, s := range savedSchedules {
		if s.scenario == nil {
			got, err := check.LoadSchedule(scheduleFile(s.file))
			if err != nil {
				t.Fatal(err)
			}
			if got.Property != s.property {
				t.Errorf("%s: property %s, want %s", s.file, got.Property, s.property)
			}
			if _, err := PrepareReproduction(got, s.file); err != nil {
				t.Errorf("%s (found by %s; run it again): %v", s.file, s.foundBy, err)
			}
			continue
		}
		want := search(t, s.scenario(), s.property, s.only)
		if *writeSchedules {
			if err := check.SaveSchedule(scheduleFile(s.file), want); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := check.LoadSchedule(scheduleFile(s.file))
		if err != nil {
			t.Fatal(err)
		}
		if got.Seed != want.Seed || got.HistoryHash != want.HistoryHash || got.Property != want.Property {
			t.Errorf("%s: seed %d history %s (%s), the search now finds seed %d history %s: regenerate with -write-schedules",
				s.file, got.Seed, got.HistoryHash, got.Property, want.Seed, want.HistoryHash)
		}
		if _, err := PrepareReproduction(got, s.file); err != nil {
			t.Errorf("%s: %v", s.file, err)
		}
	}
}

func loadSaved(t *testing.T, name string) (check.Schedule, *Reproduction) {
	t.Helper()
	s, err := check.LoadSchedule(scheduleFile(name))
	if err != nil {
		t.Fatal(err)
	}
	rp, err := PrepareReproduction(s, name)
	if err != nil {
		t.Fatal(err)
	}
	return s, rp
}

// TestPlanOfTwoLastCompleters: finding 15's History made a plan. No rule
// takes a call out (the model makes the runtime's calls); the client's
// run_created comes first and the run's start next; each queued step's
// delivery reads the run once, lazily, after its claim; the two
// run_completed are one race group, last.
func TestPlanOfTwoLastCompleters(t *testing.T) {
	_, rp := loadSaved(t, "f15-two-run-completed.json")
	p := rp.Plan
	rules := map[string]int{}
	for _, r := range p.Rules {
		rules[r.Name] = r.Count
	}
	if len(rules) != 0 {
		t.Errorf("rules %v, want none: the model makes the runtime's calls", rules)
	}
	bodies, keys := 0, map[string]bool{}
	for i, e := range p.Entries {
		if keys[e.Key] {
			t.Errorf("entry %d: key %s twice", i, e.Key)
		}
		keys[e.Key] = true
		if e.Kind == "body" {
			bodies++
		}
		if strings.Contains(e.Key, "|runs.get|") && !strings.Contains(e.Key, "|runs.get|lazy|") {
			t.Errorf("entry %d: %s: a queued step's read that is not its lazy read", i, e.Key)
		}
	}
	// 6 bodies; calls: every History call, none taken out.
	if bodies != 6 || len(p.Entries)-bodies != p.Calls {
		t.Errorf("%d entries (%d bodies) from %d calls, want 6 bodies and %d calls", len(p.Entries), bodies, p.Calls, p.Calls)
	}
	head := []string{"r0|client||0|events.create|run_created||1", "r0|run||1|events.create|run_started||1"}
	for i, k := range head {
		if p.Entries[i].Key != k {
			t.Errorf("entry %d: %s, want %s", i, p.Entries[i].Key, k)
		}
	}
	n := len(p.Entries)
	for _, e := range p.Entries[n-2:] {
		if e.Group == 0 || e.Group != p.Entries[n-1].Group || !strings.Contains(e.Key, "|run_completed|") || e.Expect != "ok" {
			t.Errorf("last entries: %s group %d expect %s, want both run_completed, ok, in one race group", e.Key, e.Group, e.Expect)
		}
	}
	for _, e := range p.Entries[:n-2] {
		if e.Group != 0 {
			t.Errorf("%s: race group %d, want none but the two run_completed", e.Key, e.Group)
		}
	}
	// An inline step's claim is the orchestrator's, made in the run's
	// own delivery: r0|run||1 ... step_started|0/0.
	if !keys["r0|run||1|events.create|step_started|0/0|1"] || keys["r0|run||1|events.create|step_created|0/0|1"] {
		t.Errorf("the inline step 0/0: want its claim by the run's delivery and no step_created in the plan")
	}
}

// firstHistory returns the first seed's History of sc (1..2000) that ok
// accepts.
func firstHistory(t *testing.T, sc model.Scenario, ok func(h *model.History) bool) *model.History {
	t.Helper()
	for seed := uint64(1); seed <= 2000; seed++ {
		c := sc
		res, err := model.Run(&c, sim.NewPCG(seed), model.Options{Record: true, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if ok(res.History) {
			return res.History
		}
	}
	t.Fatalf("no History of %s on seeds 1..2000 has what the test needs", sc.Name)
	return nil
}

// TestPlanRulesOfInlineSteps: the model makes the runtime's calls on the
// inline path, so no rule translates them: an orchestrator whose inline
// step was the fan-out's last continues from its one pending check's list
// (no second list), and with two inline steps the invocation lists once,
// after both; each inline step is created by its own claim, a lazy
// step_started, as the runtime's is, not by a step_created.
func TestPlanRulesOfInlineSteps(t *testing.T) {
	// The orchestrator's inline step continues the workflow.
	h := firstHistory(t, durabenchOnLocal(2, 1), func(h *model.History) bool {
		for _, d := range h.Deliveries {
			if d.Msg < 0 && d.Continued {
				return true
			}
		}
		return false
	})
	p, err := PlanFrom(h)
	if err != nil {
		t.Fatal(err)
	}
	// The run's delivery lists the log once in the plan: its pending check.
	lists := 0
	for _, e := range p.Entries {
		if strings.HasPrefix(e.Key, "r0|run||1|events.list|") {
			lists++
		}
	}
	if lists != 1 {
		t.Errorf("the run's delivery lists %d times in the plan, want once", lists)
	}

	// Two inline steps: one pending check for the invocation, after both
	// steps' terminal writes, on the History itself.
	h = firstHistory(t, durabenchOnLocal(4, 2), func(h *model.History) bool { return h.Drained })
	for inv := range h.Deliveries {
		if h.Deliveries[inv].Kind != model.MsgWorkflow {
			continue
		}
		var checks, lastWrite, firstCheck sim.Time = 0, -1, -1
		for _, c := range h.Calls {
			d := c.Caller.Delivery
			if d < 0 || h.Deliveries[d].Msg >= 0 || h.Deliveries[d].Parent != int32(inv) {
				continue
			}
			switch {
			case c.Op == model.OpEventsList && c.Fanout >= 0:
				checks++
				if firstCheck < 0 {
					firstCheck = c.Start
				}
			case c.Op == model.OpEventsCreate && (c.Event == world.EvStepCompleted || c.Event == world.EvStepFailed):
				lastWrite = max(lastWrite, c.End)
			}
		}
		if lastWrite >= 0 && (checks != 1 || firstCheck < lastWrite) {
			t.Errorf("invocation d%d: %d pending checks of its inline steps, the first at %v, the last terminal write answered at %v; want one, after it", inv, checks, firstCheck, lastWrite)
		}
	}
	if p, err = PlanFrom(h); err != nil {
		t.Fatal(err)
	}
	for _, r := range p.Rules {
		t.Errorf("rule %s used %d times; the model makes those calls now", r.Name, r.Count)
	}
	// The inline steps' claims create them: a lazy step_started each, and
	// no step_created of an inline step in the History (core writes none:
	// handleSuspension skips the lazyInlineCorrelationIds).
	inline, lazy := map[world.StepID]bool{}, 0
	for _, d := range h.Deliveries {
		if d.Msg < 0 {
			inline[d.Step] = true
		}
	}
	for _, c := range h.Calls {
		switch {
		case c.Op == model.OpEventsCreate && c.Event == world.EvStepCreated && inline[c.Step]:
			t.Errorf("the History writes step_created of inline step %d", c.Step)
		case c.Op == model.OpEventsCreate && c.Event == world.EvStepStarted && c.Lazy:
			if !inline[c.Step] || c.Caller.Delivery < 0 || h.Deliveries[c.Caller.Delivery].Msg >= 0 {
				t.Errorf("a lazy step_started of step %d by d%d, which is no inline step's delivery", c.Step, c.Caller.Delivery)
			}
			lazy++
		}
	}
	if lazy != len(inline) {
		t.Errorf("%d lazy step_started for %d inline steps, want one each", lazy, len(inline))
	}
}

// TestReproduceRefuses: what the real side cannot honour is refused before
// anything runs, with the knob's name, as is a schedule that no longer
// replays to its history or whose property holds.
func TestReproduceRefuses(t *testing.T) {
	s, err := check.LoadSchedule(scheduleFile("f15-two-run-completed.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit func(s *check.Schedule)
		want string
	}{
		{func(s *check.Schedule) { s.Scenario.World = "world-vercel" }, "world = world-vercel"},
		{func(s *check.Schedule) { s.Scenario.World = "world-postgres" }, "declares spec version 5"},
		{func(s *check.Schedule) { s.Scenario.Workflow.MaxInline = 0 }, "workflow.max_inline = 0"},
		{func(s *check.Schedule) { s.Scenario.Faults.Crash = 0.1 }, "faults.crash"},
		{func(s *check.Schedule) { s.Scenario.Store.BatchCreates = true }, "store.batch_creates"},
		{func(s *check.Schedule) { s.Scenario.Faults.Misdeliver = 0.1 }, "faults.misdeliver"},
		{func(s *check.Schedule) { s.Scenario.Variants = []string{"atomic-fan-in"} }, "variants"},
		{func(s *check.Schedule) { s.HistoryHash = "0000000000000000" }, "no longer replays to its history"},
		{func(s *check.Schedule) { s.Property = "unique-step-created" }, "holds on the schedule's history"},
		{func(s *check.Schedule) { s.Property = "" }, "names no property"},
	} {
		e := s
		e.Scenario.Variants = append([]string(nil), s.Scenario.Variants...)
		c.edit(&e)
		_, err := PrepareReproduction(e, "edited")
		if !errors.Is(err, ErrNotReproducible) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a refusal naming it", c.want, err)
		}
	}
}

// TestReproduceTwoLastCompletersOnTheRealCore: finding 15 forced on core
// beta.52 over world-local by its saved schedule's plan: every entry
// released in order with the History's answer, no write the plan does not
// name, and single-terminal-event violated on the real run's own spans (two
// accepted run_completed). On core beta.50 the same plan diverges, and says
// where: its last completers reuse the row their legacy prologue read, so
// the History's first lazy runs.get never comes.
func TestReproduceTwoLastCompletersOnTheRealCore(t *testing.T) {
	r := prepared(t)
	s, rp := loadSaved(t, "f15-two-run-completed.json")
	start := time.Now()
	err := Reproduce(context.Background(), r, s, rp, ReproduceOptions{Cores: []string{ReproduceCore, ReproduceLegacyCore}, OutDir: t.TempDir(), Base: "f15", Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if len(rp.Cores) != 2 {
		t.Fatalf("%d cores reported, want 2", len(rp.Cores))
	}
	c := rp.Cores[0]
	if c.Verdict != VerdictReproduced || c.Released != len(rp.Plan.Entries) || len(c.Violations) != 1 || !strings.Contains(c.Violations[0], "2 terminal events accepted for the run") {
		t.Errorf("core %s: %s (%s), %d of %d released, violations %v; want reproduced with 2 terminal events", c.Core, c.Verdict, c.Reason, c.Released, c.Entries, c.Violations)
	}
	lazy := -1
	for i, e := range rp.Plan.Entries {
		if lazy < 0 && strings.Contains(e.Key, "|runs.get|lazy|") {
			lazy = i
		}
	}
	c = rp.Cores[1]
	if c.Verdict != VerdictDiverged || c.DivergedAt != lazy || !strings.Contains(c.Reason, "never arrived") {
		t.Errorf("core %s: %s at entry %d (%s), want diverged at entry %d, the first lazy runs.get, which never arrives", c.Core, c.Verdict, c.DivergedAt, c.Reason, lazy)
	}
	if len(c.Model) == 0 || len(c.Real) == 0 {
		t.Errorf("core %s: the divergence shows no calls around it: model %v, real %v", c.Core, c.Model, c.Real)
	}
	t.Logf("core %s: %s, %d/%d entries; core %s: %s at entry %d: %s; %s", rp.Cores[0].Core, rp.Cores[0].Verdict, rp.Cores[0].Released, rp.Cores[0].Entries,
		c.Core, c.Verdict, c.DivergedAt, c.Reason, time.Since(start).Round(100*time.Millisecond))
}

// TestReproduceStalePendingOnTheRealCore: the stale-pending run failure
// forced by its saved schedule's plan on core beta.52: the History's one
// stale read (the last completer's lazy runs.get, answered pending) is
// answered by the store wrapper with the run as created, and the real
// replay fails the run for want of a startedAt. Spans cannot judge
// run-fails-for-a-reason; the call record does: the run_failed's writer
// had listed no step_failed, and no message was retired.
func TestReproduceStalePendingOnTheRealCore(t *testing.T) {
	r := prepared(t)
	s, rp := loadSaved(t, "stale-pending-run-failed.json")
	stale := 0
	for _, e := range rp.Plan.Entries {
		if e.Stale != "" {
			stale++
			if e.Stale != "pending" || !strings.Contains(e.Key, "|runs.get|lazy|") {
				t.Errorf("stale entry %s (%s), want the lazy read answered pending", e.Key, e.Stale)
			}
		}
	}
	if stale != 1 {
		t.Errorf("%d stale entries, want 1", stale)
	}
	if err := Reproduce(context.Background(), r, s, rp, ReproduceOptions{OutDir: t.TempDir(), Base: "stale", Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
	c := rp.Cores[0]
	if c.Verdict != VerdictReproduced || c.JudgedOn != "call record" || len(c.Violations) != 1 || !strings.Contains(c.Violations[0], "run_failed accepted") {
		t.Errorf("core %s: %s (%s) judged on %q, violations %v; want reproduced on the call record", c.Core, c.Verdict, c.Reason, c.JudgedOn, c.Violations)
	}
	t.Logf("core %s: %s, %d/%d entries; %v", c.Core, c.Verdict, c.Released, c.Entries, c.Violations)
}

// TestPlanOfTheCancelRacingTheStart: findings 16–17's History made a plan.
// The client's cancel is an action the harness makes when its turn comes;
// it and the orchestrator's run_started are one race group, forced inside
// the calls in the History's interleaving of world-local's steps (each
// read, run-file write, publish): start reads; the cancel reads, writes;
// start writes (from its pending read, over the cancel); the cancel, then
// start, publish. Stepped on the model's own world-local Txns in that
// order, the calls end as the History's did: both accepted, the run
// running, its log run_created, run_cancelled, run_started.
func TestPlanOfTheCancelRacingTheStart(t *testing.T) {
	_, rp := loadSaved(t, "f17-cancel-racing-start.json")
	p := rp.Plan
	var group []PlanEntry
	for _, e := range p.Entries {
		if e.Group != 0 {
			group = append(group, e)
		}
	}
	// The group's members, in the plan's order (which call reaches the
	// World first is the History's): the start and the cancel, and, late
	// (it comes once the start has answered), the inline step's claim,
	// served while the cancel was still in flight.
	start, cancel, claim := -1, -1, -1
	for i, e := range group {
		switch {
		case strings.Contains(e.Key, "|run|") && strings.HasSuffix(e.Key, "|run_started||1"):
			start = i
		case e.Key == "r0|client||0|events.create|run_cancelled||1" && e.Action == "cancel":
			cancel = i
		case strings.Contains(e.Key, "|run||1|events.create|step_started|") && e.Late:
			claim = i
		}
	}
	if len(group) != 3 || start < 0 || cancel < 0 || claim < 0 || group[start].Late || group[cancel].Late {
		t.Fatalf("race group %+v, want the run's run_started and the client's run_cancelled (an action), and the inline claim late", group)
	}
	// The schedule, stepped on the model's own world-local Txns, ends as
	// the History did: the start's write from its pending read lands over
	// the cancel.
	w, err := realworld.WorldByName("wl-fixed")
	if err != nil {
		t.Fatal(err)
	}
	s := world.NewFor(model.StoreRules(w.Profile), w.Fence)
	id := s.CreateRun(0, 0, 7, -1)
	txns := make([]world.Txn, 3)
	txns[start] = s.Begin(world.Event{Type: world.EvRunStarted, Run: id}, int32(start))
	txns[cancel] = s.Begin(world.Event{Type: world.EvRunCancelled, Run: id}, int32(cancel))
	txns[claim] = s.Begin(world.Event{Type: world.EvStepStarted, Run: id, Step: 0, Lazy: true}, int32(claim))
	log := stepFs(t, s, id, txns, group[0].Fs)
	for i, tx := range txns {
		if res, _, _ := tx.Result(); !tx.Done() || res != world.OK {
			t.Errorf("model: member %d done %v answering %v, want done and ok", i, tx.Done(), res)
		}
	}
	if got := fmt.Sprintf("%s [%s]", s.Get(id).Status, strings.Join(log, " ")); s.Get(id).Status != world.RunRunning || !slices.Contains(log, "run_cancelled") || !slices.Contains(log, "run_started") {
		t.Errorf("model: the schedule ends %q, want the run running over its cancel, both events logged", got)
	}
	for _, r := range p.Rules {
		t.Errorf("rule %s used %d times; the model makes those calls now", r.Name, r.Count)
	}
}

// stepFs takes a race group's forced steps on the model's Txns, in the
// plan's order, and returns run id's log as event names.
func stepFs(t *testing.T, s *world.Store, id world.RunID, txns []world.Txn, fs [][2]int) []string {
	t.Helper()
	for _, st := range fs {
		if !s.Advance(&txns[st[0]], 0) {
			t.Fatalf("model: member %d cannot take its step %d", st[0], st[1])
		}
	}
	var log []string
	for _, e := range s.Log(id) {
		log = append(log, e.Type.String())
	}
	return log
}

// TestReproduceCancelRacingTheStartOnTheRealCore: findings 16–17 forced by
// their saved schedule's plan on core beta.52: the harness cancels the run
// (Run#cancel) when the History's cancel is due, the cancel and the
// runtime's run_started take world-local's own I/O in the History's order,
// and the run is reopened: it reads back running with run_cancelled in its
// log (ended-run-reads-ended, on the read-back), and its inline step
// started after the end (no-start-on-terminal, on its spans).
func TestReproduceCancelRacingTheStartOnTheRealCore(t *testing.T) {
	r := prepared(t)
	s, rp := loadSaved(t, "f17-cancel-racing-start.json")
	out := t.TempDir()
	if err := Reproduce(context.Background(), r, s, rp, ReproduceOptions{OutDir: out, Base: "f17", Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
	c := rp.Cores[0]
	if c.Verdict != VerdictReproduced || c.JudgedOn != "call record" || len(c.Violations) != 1 || !strings.Contains(c.Violations[0], `reads it back "running"`) {
		t.Errorf("core %s: %s (%s) judged on %q, violations %v; want reproduced: the run reads back running", c.Core, c.Verdict, c.Reason, c.JudgedOn, c.Violations)
	}
	judged, _, vs, err := judgeSpans(c.Spans, "no-start-on-terminal")
	if err != nil || !judged || len(vs) == 0 {
		t.Errorf("no-start-on-terminal on the real spans: judged %v, violations %v (%v); want violated: the inline step started after the cancel", judged, vs, err)
	}
	t.Logf("core %s: %s, %d/%d entries; %v; on the spans: %v", c.Core, c.Verdict, c.Released, c.Entries, c.Violations, vs)
}

// TestPlanOfTheClaimRacingTheCancel: the claim-racing-cancel schedule's
// race group is a step write against a run event, forced inside the calls:
// the inline step's lazy step_started (three steps on world-local: read the
// run under the step's lock, its step_created, its step_started) and the
// client's run_cancelled (an action; read, write the run file, publish).
// Stepped on the model's own world-local Txns in the plan's order, the
// schedule ends as the History did: both accepted, the step_started logged
// after the run_cancelled.
func TestPlanOfTheClaimRacingTheCancel(t *testing.T) {
	_, rp := loadSaved(t, "claim-racing-cancel.json")
	var group []PlanEntry
	for _, e := range rp.Plan.Entries {
		if e.Group != 0 {
			group = append(group, e)
		}
	}
	claim, cancel := -1, -1
	for i, e := range group {
		switch {
		case strings.Contains(e.Key, "|events.create|step_started|"):
			claim = i
		case e.Action == "cancel":
			cancel = i
		}
	}
	if len(group) != 2 || claim < 0 || cancel < 0 || len(group[0].Fs) != 6 {
		t.Fatalf("race group %+v, want the inline claim and the client's cancel, six steps forced", group)
	}
	s := world.NewFor(world.RulesLocal, world.FenceFixed)
	id := s.CreateRun(0, 0, 7, -1)
	if res, _, _ := s.Apply(0, world.Event{Type: world.EvRunStarted, Run: id}); res != world.OK {
		t.Fatal(res)
	}
	txns := make([]world.Txn, 2)
	txns[claim] = s.Begin(world.Event{Type: world.EvStepStarted, Run: id, Step: 0, Lazy: true}, int32(claim))
	txns[cancel] = s.Begin(world.Event{Type: world.EvRunCancelled, Run: id}, int32(cancel))
	log := stepFs(t, s, id, txns, group[0].Fs)
	if got := strings.Join(log, " "); !strings.HasSuffix(got, "run_cancelled step_started") {
		t.Errorf("model: the schedule logs %q, want the claim's step_started after the run_cancelled", got)
	}
}

// TestReproduceClaimRacingTheCancelOnTheRealCore: the plan forces the
// inline claim's I/O and the cancel's in the History's order on core
// beta.52: world-local accepts the claim after the cancel, and the real
// spans show a step started on the cancelled run.
// TestReproduceManyLazyReadsOnTheRealCore: the docs/FINDINGS.md's first finding as
// check saves it, forced on the real core: the fan-out's last completers
// each make its lazy runs.get, counted on the call record.
func TestReproduceManyLazyReadsOnTheRealCore(t *testing.T) {
	reproduceSaved(t, "many-lazy-reads.json", "call record", 0, "lazy runs.get")
}

// TestReproduceCancelRacingTheCompletionOnTheRealCore: one branch run
// inline; the orchestrator's run_completed and the client's cancel are one
// race group, forced inside world-local's I/O: both read the run live, both
// are accepted, two terminal events in the real log.
func TestReproduceCancelRacingTheCompletionOnTheRealCore(t *testing.T) {
	reproduceSaved(t, "cancel-racing-completion.json", "spans", 1, "2 terminal events accepted")
}

// TestReproduceBareClaimLoopOnTheRealCore: under the runtime's default
// dispatch the step message carries no input; the model's consumer, as
// core's, finds its step missing and throws without an in-band create (no
// step_created of the step by any step delivery in the plan), and the real
// core does the same, call for call.
func TestReproduceBareClaimLoopOnTheRealCore(t *testing.T) {
	_, rp := loadSaved(t, "ended-run-claim-loop-bare.json")
	for _, e := range rp.Plan.Entries {
		if strings.Contains(e.Key, "|step|") && strings.Contains(e.Key, "|events.create|step_created|") {
			t.Errorf("entry %s: a step delivery creates its step in band, but its message carries no input", e.Model)
		}
	}
	reproduceSaved(t, "ended-run-claim-loop-bare.json", "call record", 0, "missing")
}

func TestReproduceClaimRacingTheCancelOnTheRealCore(t *testing.T) {
	reproduceSaved(t, "claim-racing-cancel.json", "spans", 1, "step_started accepted after the run's world.events.create run_cancelled")
}

// TestPlanOfTheTurboBodyAfterCompletion: the orchestrator's list after
// the first fan-out read the log early and answered after the other last
// completer's run_completed took effect; its entry holds the answer until
// that run_completed is answered (answer_after), so that the late body and
// claim it leads to come after the run's end on the real side too. No
// entry of the same invocation lies between a read and its answer turn.
func TestPlanOfTheTurboBodyAfterCompletion(t *testing.T) {
	_, rp := loadSaved(t, "turbo-body-after-completion.json")
	es := rp.Plan.Entries
	completed := -1
	for i, e := range es {
		if strings.Contains(e.Key, "|events.create|run_completed|") && e.Expect == "ok" {
			completed = i
		}
	}
	if completed < 0 {
		t.Fatal("no accepted run_completed in the plan")
	}
	late := -1
	for i, e := range es {
		if e.AnswerAfter == 0 {
			continue
		}
		if e.AnswerAfter <= i || e.AnswerAfter >= len(es) {
			t.Fatalf("entry %d (%s) answer_after %d, want after its own index and inside the plan", i, e.Model, e.AnswerAfter)
		}
		for j := i + 1; j <= e.AnswerAfter; j++ {
			if es[j].Delivery == e.Delivery {
				t.Errorf("entry %d (%s) is due before entry %d's answer (%s), by the same delivery", j, es[j].Model, i, e.Model)
			}
		}
		if strings.Contains(e.Key, "|run||1|events.list|") && e.AnswerAfter >= completed {
			late = i
		}
	}
	if late < 0 {
		t.Fatalf("no list of the run's first delivery holds its answer past the run_completed (entry %d)", completed)
	}
}

// reproduceSaved forces saved schedule file on the pinned core and checks
// it reproduced, judged on judgedOn, with violations (at least one when
// n is 0) the first of which says want. It returns the reproduction.
func reproduceSaved(t *testing.T, file, judgedOn string, n int, want string) *Reproduction {
	t.Helper()
	r := prepared(t)
	s, rp := loadSaved(t, file)
	if err := Reproduce(context.Background(), r, s, rp, ReproduceOptions{OutDir: t.TempDir(), Base: strings.TrimSuffix(file, ".json"), Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
	c := rp.Cores[0]
	count := len(c.Violations) == n || n == 0 && len(c.Violations) > 0
	// judgedOn "spans or call record": either observer may judge (both
	// can; the spans show it in some runs only).
	judgedOK := c.JudgedOn == judgedOn || strings.Contains(judgedOn, " or ") && strings.Contains(judgedOn, c.JudgedOn) && c.JudgedOn != ""
	if c.Verdict != VerdictReproduced || !judgedOK || !count || !strings.Contains(c.Violations[0], want) {
		t.Errorf("core %s: %s (%s) judged on %q, violations %v; want reproduced on the %s", c.Core, c.Verdict, c.Reason, c.JudgedOn, c.Violations, judgedOn)
	}
	t.Logf("core %s: %s, %d/%d entries; %v", c.Core, c.Verdict, c.Released, c.Entries, c.Violations)
	return rp
}

// TestReproduceTurboBodyAfterTheRunCompleted: the plan holds the
// orchestrator's late list's answer until the other last completer's replay
// has completed the run (a read answered after later entries took effect,
// plan.mjs answerTurn); the orchestrator's continuation then replays from
// the log it loaded, runs the next fan-out's inline step, and turbo begins
// its body, which the real spans show after run_completed.
func TestReproduceTurboBodyAfterTheRunCompleted(t *testing.T) {
	rp := reproduceSaved(t, "turbo-body-after-completion.json", "spans", 1, "a step body began after the run's world.events.create run_completed")
	held := 0
	for _, e := range rp.Plan.Entries {
		if e.AnswerAfter > 0 {
			held++
		}
	}
	if held == 0 {
		t.Error("no entry holds its answer: the plan does not order the late list's answer")
	}
}

// TestPlanOfTheTurboBodyOnACancelledRun: a chained race. The orchestrator's
// step_created is served once its run_started answered, while the cancel
// is still in flight, so it joins their group late (it cannot arrive before
// the group is released), and its answer waits for the cancel's, which the
// History gave first: the turbo body it leads to begins after the cancel.
func TestPlanOfTheTurboBodyOnACancelledRun(t *testing.T) {
	_, rp := loadSaved(t, "turbo-body-on-cancelled-run.json")
	es := rp.Plan.Entries
	var start, cancel, create = -1, -1, -1
	for i, e := range es {
		switch {
		case e.Group == 0:
		case strings.HasSuffix(e.Key, "|events.create|run_started||1"):
			start = i
		case e.Action == "cancel":
			cancel = i
		case strings.Contains(e.Key, "|events.create|step_created|"):
			create = i
		}
	}
	if start < 0 || cancel < 0 || create < 0 || es[start].Group != es[create].Group || es[cancel].Group != es[create].Group {
		t.Fatalf("entries %+v: want run_started, the cancel and the step_created in one race group", es)
	}
	if es[start].Late || es[cancel].Late || !es[create].Late {
		t.Errorf("late: start %v cancel %v create %v; want only the create", es[start].Late, es[cancel].Late, es[create].Late)
	}
	if !slices.Contains(es[create].AnswerWait, cancel) {
		t.Errorf("the create's answer waits for %v, want the cancel (entry %d) among them", es[create].AnswerWait, cancel)
	}
	if len(es[start].Fs) == 0 {
		t.Error("the group forces no I/O schedule")
	}
}

// TestReproduceTurboBodyOnACancelledRun: the docs/FINDINGS.md's turbo finding from
// check's own search, forced on the real core: the group's chained member
// and its held answer put the turbo body after the cancel.
func TestReproduceTurboBodyOnACancelledRun(t *testing.T) {
	reproduceSaved(t, "turbo-body-on-cancelled-run.json", "spans", 0, "a step body began after the run's world.events.create run_cancelled")
}

// TestReproduceEndedRunClaimLoopOnTheRealCore: the third finding forced on
// the real core: every delivery of the queued step's message finds its step
// missing on the cancelled run and throws, until the runtime's cap (lowered
// to 2) writes run_failed from the third. About 10 s of world-local's fixed
// 5 s backoff.
func TestReproduceEndedRunClaimLoopOnTheRealCore(t *testing.T) {
	rp := reproduceSaved(t, "ended-run-claim-loop.json", "call record", 2, "missing")
	capWrite := false
	for _, e := range rp.Plan.Entries {
		capWrite = capWrite || strings.Contains(e.Key, "|3|events.create|run_failed|")
	}
	if !capWrite {
		t.Error("the plan has no run_failed of the message's third delivery: the cap's write is not a delivery's")
	}
}

// TestReproduceBodyTwiceOnTheRealCore: finding 21 as the properties search
// found it on world-local: the consumer's replay claims the inline step and
// runs it, turbo's optimistic body of it begins in the orchestrator, and the
// plan holds the consumer's body's end until the orchestrator's has begun,
// so the real record shows the two at once.
func TestReproduceBodyTwiceOnTheRealCore(t *testing.T) {
	reproduceSaved(t, "one-body-twice.json", "spans or call record", 1, "ran in")
}

// TestCheckSavedScheduleReproduces: what a user gets from `simlab check
// --scenario golden-t3` (the stale-pending failure, its first queued
// delivery crashing before its claim) is handed to reproduce as saved,
// with nothing edited: the shrinker kept the inline step the runtime needs
// (max_inline 1, not 0), the plan crashes the first delivery as the model
// does (the harness's crash at the claim, world-local's 5 s redelivery),
// and the real core fails the run from the stale read the History has.
func TestCheckSavedScheduleReproduces(t *testing.T) {
	r := prepared(t)
	sc, _ := model.Builtin("golden-t3")
	p, _ := properties.ByName("run-fails-for-a-reason")
	dir := t.TempDir()
	rep, err := check.Sweep(check.SweepConfig{Scenario: sc, Seeds: seeds.Count(5), Props: []properties.Property{p}, ScheduleDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	first := rep.First[p.Name]
	if first == nil || first.ScheduleFile == "" {
		t.Fatalf("check saved no schedule of %s: %+v", p.Name, rep.First)
	}
	s, err := check.LoadSchedule(first.ScheduleFile)
	if err != nil {
		t.Fatal(err)
	}
	if s.Scenario.Workflow.MaxInline < 1 || !s.Scenario.Faults.CrashFirstDelivery {
		t.Fatalf("saved schedule: max_inline %d, crash_first_delivery %v; want ≥ 1 and the crash kept", s.Scenario.Workflow.MaxInline, s.Scenario.Faults.CrashFirstDelivery)
	}
	rp, err := PrepareReproduction(s, filepath.Base(first.ScheduleFile))
	if err != nil {
		t.Fatalf("reproduce refuses what check saved: %v", err)
	}
	if err := Reproduce(context.Background(), r, s, rp, ReproduceOptions{OutDir: t.TempDir(), Base: "check-saved", Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
	c := rp.Cores[0]
	if c.Verdict != VerdictReproduced || len(c.Violations) != 1 || !strings.Contains(c.Violations[0], "run_failed accepted") {
		t.Errorf("core %s: %s (%s), %d/%d entries, violations %v; want reproduced", c.Core, c.Verdict, c.Reason, c.Released, c.Entries, c.Violations)
	}
	t.Logf("core %s: %s, %d/%d entries; %v", c.Core, c.Verdict, c.Released, c.Entries, c.Violations)
}

// The call-record judge of one-body-at-a-time: two bodies of one step in two
// deliveries overlap from each one's release (or beginning, when nothing
// held it) to its end; bodies that follow each other, or are one delivery's,
// do not.
func TestJudgeBodiesOnTheCallRecord(t *testing.T) {
	body := func(step string, delivery int, begin, released, end float64) Body {
		return Body{Run: "wrun_A", Step: step, Delivery: delivery, Begin: begin, Held: released > 0, Released: released, End: end}
	}
	for _, c := range []struct {
		name   string
		bodies []Body
		want   int
	}{
		{"overlapping, held", []Body{body("s", 0, 1, 10, 20), body("s", 2, 15, 18, 25)}, 1},
		{"held long, then one after the other", []Body{body("s", 0, 1, 30, 40), body("s", 2, 15, 18, 25)}, 0},
		{"one after the other", []Body{body("s", 0, 1, 0, 5), body("s", 2, 5, 0, 9)}, 0},
		{"another step", []Body{body("s", 0, 1, 0, 20), body("t", 2, 5, 0, 9)}, 0},
		{"one delivery's retry", []Body{body("s", 0, 1, 0, 20), body("s", 0, 5, 0, 9)}, 0},
		{"one never ended", []Body{body("s", 0, 1, 0, -1), body("s", 2, 5, 0, 9)}, 0},
	} {
		judged, _, violations, ok := judgeCalls("one-body-at-a-time", &RealRun{Bodies: c.bodies}, 2)
		if !judged || !ok || len(violations) != c.want {
			t.Errorf("%s: judged %v ok %v, violations %v; want %d", c.name, judged, ok, violations, c.want)
		}
	}
}

// The call-record judge of one-lazy-fetch-per-fanout: a fan-out with more
// than one lazy runs.get (the harness's own count) violates it; one or none
// does not.
func TestJudgeLazyReadsOnTheCallRecord(t *testing.T) {
	var out RealRun
	if err := json.Unmarshal([]byte(`{"fanouts":[{"run_id":"wrun_A","index":0,"lazy_reads":1},{"run_id":"wrun_A","index":1,"lazy_reads":0},{"run_id":"wrun_B","index":0,"lazy_reads":3,"last_completers":3}]}`), &out); err != nil {
		t.Fatal(err)
	}
	judged, _, violations, ok := judgeCalls("one-lazy-fetch-per-fanout", &out, 2)
	if !judged || !ok || len(violations) != 1 || !strings.HasPrefix(violations[0], "wrun_B: fan-out 0 made 3 lazy runs.get") {
		t.Errorf("judged %v ok %v, violations %v; want wrun_B's fan-out 0 alone", judged, ok, violations)
	}
}

// The call-record judge of bounded-work-after-end: per delivery, the reads,
// listings and bodies it began at or after the run's first accepted
// terminal write answered, against the budget.
func TestJudgeWorkAfterEndOnTheCallRecord(t *testing.T) {
	out := RealRun{
		Calls: []Call{
			{Op: "events.create", Event: "run_cancelled", Run: "wrun_A", Delivery: -1, Result: "ok", Start: 1, End: 3},
			{Op: "events.list", Run: "wrun_A", Delivery: 2, Start: 2, End: 4}, // begun before the end
			{Op: "events.list", Run: "wrun_A", Delivery: 2, Start: 9, End: 10},
			{Op: "runs.get", Run: "wrun_A", Delivery: 2, Start: 10, End: 11},
			{Op: "events.list", Run: "wrun_A", Delivery: 5, Start: 12, End: 13},
			{Op: "events.create", Event: "run_completed", Run: "wrun_A", Delivery: 5, Result: "RunExpiredError", Start: 13, End: 14},
		},
		Bodies: []Body{{Run: "wrun_A", Delivery: 2, Begin: 3.5, End: 8}, {Run: "wrun_A", Delivery: 5, Begin: 2, End: 3}},
	}
	for budget, want := range map[int]int{2: 1, 3: 0} {
		judged, _, violations, ok := judgeCalls("bounded-work-after-end", &out, budget)
		if !judged || !ok || len(violations) != want {
			t.Errorf("budget %d: judged %v ok %v, violations %v; want %d", budget, judged, ok, violations, want)
		}
		if want == 1 && !strings.HasPrefix(violations[0], "wrun_A: delivery 2 began 3 reads, listings and bodies") {
			t.Errorf("budget %d: %q, want delivery 2's three", budget, violations[0])
		}
	}
}

// TestPlanGroupsARunEventAcrossAShortWrite: an inline claim served before a
// queued step's short claim, the client's cancel served after that claim
// answered, the inline claim still in flight with the cancel (durabench on
// world-local with cancels, the first seed that shows it): the claim and the
// cancel are one race group, though the short write between them breaks the
// run of overlaps the first pass groups by. Without the group the plan
// released the claim after the cancel had answered, and the real claim was
// refused where the History has it accepted.
func TestPlanGroupsARunEventAcrossAShortWrite(t *testing.T) {
	sc := durabenchOnLocal(4, 2)
	sc.Workflow.Fanouts = []int{4, 3}
	sc.Faults.Cancel, sc.Faults.CancelWithin, sc.Faults.StaleRead = 0.5, 300*time.Millisecond, 0.2
	firstViolatingPlan(t, sc, "no-start-on-terminal", 2000, func(seed uint64, h *model.History, plan *Plan) bool {
		for _, e := range plan.Entries {
			if e.Group == 0 || e.Kind != "call" || h.Calls[e.Call].Event != world.EvRunCancelled {
				continue
			}
			cancel := &h.Calls[e.Call]
			for _, o := range plan.Entries {
				if o.Group != e.Group || o.Kind != "call" || h.Calls[o.Call].Event != world.EvStepStarted {
					continue
				}
				claim := &h.Calls[o.Call]
				// A joining write of the run served after the claim and
				// answered before the cancel was served: the short write.
				for ci := range h.Calls {
					w := &h.Calls[ci]
					if w.Run == cancel.Run && w.Op == model.OpEventsCreate && (w.Event == world.EvStepStarted || w.Event == world.EvStepCreated) &&
						w.Served > claim.Served && w.End <= cancel.Served {
						t.Logf("seed %d: group %d: %s with %s, across %s", seed, e.Group, describeCall(h, o.Call), describeCall(h, e.Call), describeCall(h, ci))
						return true
					}
				}
			}
		}
		return false
	})
}

// planConfig gives the harness every knob of the workflow the model ran
// that the real side honours: flaky steps throw there too (a plan of a
// History with retries diverged where the real bodies did not fail).
func TestPlanConfigCarriesTheWorkflow(t *testing.T) {
	sc, _ := model.Builtin("fanout")
	sc.Workflow.Fanouts, sc.Workflow.MaxInline = []int{3, 2}, 1
	sc.Workflow.FlakySteps, sc.Workflow.FlakyTimes = 1, 2
	sc.Workflow.AwaitInlineClaims, sc.Workflow.ResilientDispatch = true, false
	sc.Workflow.InlineOwnershipLease = 3 * time.Second
	sc.Faults.CrashFirstDelivery = true
	sc.Store.MaxDeliveries = 2
	sc.Runs = 3
	cfg := planConfig(sc, &Plan{})
	got := fmt.Sprintf("%v %d %d %d/%d %v %v %d %v %d", cfg.Fanouts, cfg.MaxInline, cfg.Runs, cfg.FlakySteps, cfg.FlakyTimes,
		cfg.AwaitInlineClaims, cfg.ResilientDispatch, cfg.LeaseSeconds, cfg.CrashFirstDelivery, cfg.MaxQueueDeliveries)
	if want := "[3 2] 1 3 1/2 true false 3 true 2"; got != want {
		t.Errorf("planConfig: %s, want %s", got, want)
	}
}

// TestPlanOrdersOneInstantAsTheModelApplied: a list served at the instant a
// write of its run answered saw that write or not, as the simulation
// applied the two; the plan releases them in that order (Call.Effect), not
// in the order the calls were issued. (Found on a schedule of three runs
// whose queued step's list was released after its sibling's completion,
// which it had not seen: the real consumer became a second last completer.)
func TestPlanOrdersOneInstantAsTheModelApplied(t *testing.T) {
	sc, _ := model.Builtin("fanout")
	sc.World = HarnessWorld
	sc.Runs = 3
	sc.Workflow.Fanouts, sc.Workflow.MaxInline = []int{3, 2}, 1
	// Without a replay's cost: the instants calls meet at are what this
	// needs, and a replay's cost, a fraction of a millisecond apart per
	// event, moves the replays' lists off the instants writes answer at.
	sc.Workflow.ReplayBase, sc.Workflow.ReplayPerEntity, sc.Workflow.ReplayPerEvent = 0, 0, 0
	for seed := uint64(1); seed <= 500; seed++ {
		h, plan, pos := recordedPlan(t, sc, seed)
		if plan == nil {
			continue
		}
		for li := range h.Calls {
			l := &h.Calls[li]
			if l.Op != model.OpEventsList {
				continue
			}
			for wi := range li {
				w := &h.Calls[wi]
				if w.Op != model.OpEventsCreate || w.Run != l.Run || w.End != l.Served || w.Effect < l.Effect || plan.Entries[pos[wi]].Group != 0 {
					continue
				}
				// Issued first, applied after the list was served: the
				// list did not see it.
				if pos[li] > pos[wi] {
					t.Fatalf("seed %d: %s (effect %d) is released before %s (effect %d), which was served first",
						seed, describeCall(h, wi), w.Effect, describeCall(h, li), l.Effect)
				}
				t.Logf("seed %d: %s before %s", seed, describeCall(h, li), describeCall(h, wi))
				return
			}
		}
	}
	t.Fatal("no seed of 1..500 serves a list at the instant an earlier-issued write of its run answered, before it")
}

// A plan says when its History stopped at the time limit with work left
// (the harness then judges once every entry is answered), and a real run's
// default bound covers the History's span.
func TestPlanCutAndTimeout(t *testing.T) {
	sc, _ := model.Builtin("fanout")
	sc.World = HarnessWorld
	for _, c := range []struct {
		limit time.Duration
		cut   bool
	}{{0, false}, {30 * time.Millisecond, true}} {
		s := sc
		s.Limits.MaxTime = c.limit
		res, _, err := check.Record(&s, sim.NewPCG(1), 1)
		if err != nil {
			t.Fatal(err)
		}
		p, err := PlanFrom(res.History)
		if err != nil {
			t.Fatal(err)
		}
		if p.Cut != c.cut || p.Span != res.History.End || planConfig(s, p).Gate.Plan.Cut != c.cut {
			t.Errorf("time limit %v: cut %v (span %v), want %v", c.limit, p.Cut, p.Span, c.cut)
		}
	}
	for span, want := range map[time.Duration]time.Duration{10 * time.Second: 2 * time.Minute, 4 * time.Minute: 5 * time.Minute} {
		if got := planTimeout(&Plan{Span: sim.Time(span)}); got != want {
			t.Errorf("planTimeout(span %v) = %v, want %v", span, got, want)
		}
	}
}

// TestPlanLetsASuspensionsCreatesJoinLate: the creates a suspension issues
// together once its run_started answered all wait for that answer, not for
// each other, so each joins the start's and the cancel's race as it arrives
// (durabench on world-local with cancels: a run_started and a cancel in
// flight, the orchestrator's creates served as the start answered, the
// cancel landing between their reads and their writes).
func TestPlanLetsASuspensionsCreatesJoinLate(t *testing.T) {
	sc := durabenchOnLocal(6, 2)
	sc.Workflow.Fanouts = []int{6, 4}
	sc.Runs = 2
	sc.Faults.StaleRead, sc.Store.StaleLag = 0.2, 50*time.Millisecond
	sc.Faults.Cancel, sc.Faults.CancelWithin = 0.3, 500*time.Millisecond
	firstViolatingPlan(t, sc, "no-start-on-terminal", 300, func(seed uint64, h *model.History, plan *Plan) bool {
		late := map[int]int{}
		for _, e := range plan.Entries {
			if e.Late && e.Kind == "call" && h.Calls[e.Call].Event == world.EvStepCreated {
				late[e.Group]++
			}
		}
		for g, n := range late {
			if n >= 2 {
				t.Logf("seed %d: race group %d has %d late step_created", seed, g, n)
				return true
			}
		}
		return false
	})
}

// recordedPlan records seed of sc and plans its History: the History, its
// plan (nil when it cannot be planned) and each planned call's entry.
func recordedPlan(t *testing.T, sc model.Scenario, seed uint64) (*model.History, *Plan, map[int]int) {
	t.Helper()
	res, _, err := check.Record(&sc, sim.NewPCG(seed), seed)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := PlanFrom(res.History)
	if err != nil {
		return res.History, nil, nil
	}
	pos := map[int]int{}
	for i, e := range plan.Entries {
		if e.Kind == "call" {
			pos[e.Call] = i
		}
	}
	return res.History, plan, pos
}

// firstViolatingPlan walks seeds 1..maxSeed of sc and returns the first
// whose History violates prop and whose plan satisfies found (which may
// log what it found), or fails the test.
func firstViolatingPlan(t *testing.T, sc model.Scenario, prop string, maxSeed uint64, found func(seed uint64, h *model.History, plan *Plan) bool) {
	t.Helper()
	p, ok := properties.ByName(prop)
	if !ok {
		t.Fatalf("no property %s", prop)
	}
	for seed := uint64(1); seed <= maxSeed; seed++ {
		c := sc
		res, _, err := check.Record(&c, sim.NewPCG(seed), seed)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Check(res.History)) == 0 {
			continue
		}
		if plan, err := PlanFrom(res.History); err == nil && found(seed, res.History, plan) {
			return
		}
	}
	t.Fatalf("no seed of 1..%d violating %s has the plan the test looks for", maxSeed, prop)
}

// TestPlanPutsABodyAfterItsInvocationsAnswers: a body begins once the calls
// of its invocation it waited for have answered, so no such call comes
// after it in the plan, even when several answered at the instant the body
// began in another order than they were issued (a suspension's creates;
// faults on world-local, seed 252, broke at a turbo body before its last
// create).
func TestPlanPutsABodyAfterItsInvocationsAnswers(t *testing.T) {
	sc, _ := model.Builtin("faults")
	sc.World, sc.Store = HarnessWorld, model.LocalProfile()
	sc.Faults.Crash, sc.Faults.LostCreate, sc.Faults.BodyFailure = 0, 0, 0
	checked := 0
	for seed := uint64(250); seed <= 260; seed++ {
		h, plan, pos := recordedPlan(t, sc, seed)
		if plan == nil {
			continue
		}
		for i, e := range plan.Entries {
			if e.Kind != "body" {
				continue
			}
			dv := &h.Deliveries[e.Delivery]
			inv := h.Invocation(int32(e.Delivery))
			for ci := range h.Calls {
				c := &h.Calls[ci]
				if c.Caller.Delivery < 0 || h.Invocation(c.Caller.Delivery) != inv || c.End > dv.BodyStart {
					continue
				}
				if j, ok := pos[ci]; ok && j > i {
					t.Fatalf("seed %d: entry %d, %s, comes after entry %d, %s, which began once it had answered", seed, j, describeCall(h, ci), i, e.Model)
				}
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no body checked")
	}
}
