package realengine

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// A Plan is a simulated History made into what plan.mjs releases on the
// real runtime: every World call and step body the runtime makes too, in
// the order the History's World took effect, each named by what the
// runtime itself shows of it (the identity mapping, planKey), with the
// answer the History has.
//
// The order is the History's: a read at the instant the store served it,
// a write when it took effect (its answer; world-local's split writes land
// with their last step), the client's run_created when it arrived (the
// store creates the run then), a body when it began. plan.mjs releases one
// entry once every earlier one is answered, so the real World applies the
// calls one at a time in that order, except a race group: writes of run
// events on one run whose service times overlapped in the History (their
// split steps interleaved there), released together in one tick once all
// have arrived, with every call that took effect before the first of them
// answered first.
type Plan struct {
	Entries []PlanEntry `json:"entries"`
	// Rules are the translation rules that took a History call out of the
	// plan, with how many each took: none since every one became a model
	// fix (see below); kept so that readers of the JSON find the field.
	Rules []RuleUse `json:"rules"`
	// Calls is how many calls the History holds.
	Calls int `json:"calls"`
	// Cut says the History stopped at its scenario's time limit, its work
	// not done (a delivery looping on an ended run): the real run is judged
	// once every entry is answered, not once the runtime is done, and
	// Span is how far the History went.
	Cut  bool     `json:"cut,omitempty"`
	Span sim.Time `json:"span,omitempty"`
}

// PlanEntry is one call or body of a plan.
type PlanEntry struct {
	// Key is the entry's identity, as plan.mjs computes it from a real call:
	// r<run>|<by>|<by step>|<nth delivery>|<op>|<event>|<step>|<occurrence>
	// (planKey).
	Key  string `json:"key"`
	Kind string `json:"kind"` // call or body
	// Run is the entry's run (the order the client created the runs).
	Run int `json:"run"`
	// Action says the harness makes this call itself when its turn comes:
	// "cancel", the client's run_cancelled (the runtime's own Run#cancel).
	Action string `json:"action,omitempty"`
	// Group is the race group (1, 2, ...), 0 for none.
	Group int `json:"group,omitempty"`
	// Late, on a race group's member, says it arrives only after another
	// member has answered (its invocation's previous call): plan.mjs
	// releases the group without waiting for it and lets it into the
	// group's race as it arrives (groupRaces).
	Late bool `json:"late,omitempty"`
	// Fs, on a race group's first entry, is the order in which the group's
	// writes take their steps of the World's own I/O in the History:
	// [member, step] pairs, member the position in the group (raceSchedule).
	Fs [][2]int `json:"fs,omitempty"`
	// AnswerAfter, on a read whose answer the History gave later than the
	// instant it read, is the last entry that took effect before that
	// answer: plan.mjs holds the answer from the runtime until every entry
	// up to it is answered, so what the reader does with it (a replay's
	// publishes, which no entry holds) comes after them as in the History.
	// On a body it is the same for the body's end: two bodies the History
	// ran at once overlap on the real side too. 0 for none (an entry's own
	// index is below it).
	AnswerAfter int `json:"answer_after,omitempty"`
	// AnswerWait, on a race group's member, is the members the History
	// answered before it: its answer waits for theirs (the World's own I/O
	// order inside the group does not fix the order of the answers; a
	// member refused at its first step answers at once).
	AnswerWait []int `json:"answer_wait,omitempty"`
	// Expect is the History's answer as the real World names it: ok, or
	// the error's name (EntityConflictError, RunExpiredError, ...).
	Expect string `json:"expect,omitempty"`
	// Status is a runs.get's answered status; Stale that the History's
	// read saw an older row, of that status, which the store wrapper
	// answers with.
	Status string `json:"status,omitempty"`
	Stale  string `json:"stale,omitempty"`
	// Model describes the History's call or body, for a divergence report.
	Model string `json:"model"`
	// Call is the History's call index (-1 for a body), Delivery its
	// delivery, At when it took effect in the History.
	Call     int      `json:"call"`
	Delivery int      `json:"delivery"`
	At       sim.Time `json:"at_ns"`
}

// RuleUse is one translation rule and how many History calls it took out.
type RuleUse struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// The translation rules: History calls the runtime does not make as World
// calls, which a plan took out. None remains: each existed because the model
// differed from the runtime there, and each became a model fix (issue 23,
// point 2): inline-continuation-list (the inline path replays from its
// pending check's list) and inline-lists-once (an invocation lists once
// after all its inline steps), model/completer.go; turbo-orchestrator-runs-get
// and turbo-preload-list (a workflow delivery writes run_started without
// reading the run, and replays from its answer's preload, or from turbo's
// empty one), model/orchestrator.go; inline-step-created (an inline step's
// claim is a lazy step_started that creates it, with no step_created
// before it: core's handleSuspension skips the lazyInlineCorrelationIds),
// model/consumer.go claimStep. Plan.Rules stays in the JSON, empty.

// errorName is the name the real World's error of a History result has.
func errorName(r world.Result) string {
	switch r {
	case world.OK:
		return "ok"
	case world.RunExpired:
		return "RunExpiredError"
	case world.EntityConflict:
		return "EntityConflictError"
	case world.TooEarly:
		return "TooEarlyError"
	case world.NotFound:
		// world-local's missing step: a WorkflowWorldError saying "not found".
		return "WorkflowWorldError"
	}
	return r.String()
}

// planKey is an entry's identity (plan.mjs keyOf computes the same from a
// real call). by is client, run (the run's own message) or step (a queued
// step's message, byStep its fan-out/branch); nth the delivery of that
// message (1 for the first); step the fan-out/branch the call or body is
// about; n its occurrence among the same (op, event, step) of that delivery.
func planKey(run int, by, byStep string, nth int, op, event, step string, n int) string {
	return fmt.Sprintf("r%d|%s|%s|%d|%s|%s|%s|%d", run, by, byStep, nth, op, event, step, n)
}

// translator holds what the rules need to know of a History.
type translator struct {
	h *model.History
	// runIdx maps a RunID to its run's index (the order the client created
	// the runs, which is the order the harness starts them).
	runIdx map[world.RunID]int
	// nth is each message delivery's position among the deliveries of its
	// message's (run, step).
	nth []int
}

func newTranslator(h *model.History) *translator {
	t := &translator{h: h, runIdx: map[world.RunID]int{}, nth: make([]int, len(h.Deliveries))}
	for i, r := range h.Runs {
		t.runIdx[r.ID] = i
	}
	count := map[[2]int32]int{}
	for i, d := range h.Deliveries {
		if d.Msg < 0 {
			continue
		}
		k := [2]int32{int32(d.Run), int32(d.Step)}
		count[k]++
		t.nth[i] = count[k]
	}
	return t
}

// branch is step's fan-out (its index in the run's workflow) and branch,
// as "f/i" (the branch step's own arguments on the real side).
func (t *translator) branch(run world.RunID, step world.StepID) (string, error) {
	if step == world.NoStep {
		return "", nil
	}
	ri, ok := t.runIdx[run]
	if !ok {
		return "", fmt.Errorf("run %d is not in the History's runs", run)
	}
	for _, fi := range t.h.Runs[ri].Fanouts {
		f := t.h.Fanouts[fi]
		if step >= f.FirstStep && int32(step) < int32(f.FirstStep)+f.Branches {
			return fmt.Sprintf("%d/%d", f.Index, int32(step)-int32(f.FirstStep)), nil
		}
	}
	return "", fmt.Errorf("step %d of run %s is in none of its fan-outs", step, model.RunName(run))
}

// who is the real delivery a History delivery's calls are made in: the
// delivery itself, or for an inline step the invocation it runs inside.
// It returns by (run or step), byStep and nth.
func (t *translator) who(d int32) (inv int32, by, byStep string, nth int, err error) {
	inv = t.h.Invocation(d)
	if inv < 0 {
		return -1, "", "", 0, fmt.Errorf("delivery %d runs in no message's delivery", d)
	}
	dv := t.h.Deliveries[inv]
	if dv.Kind == model.MsgWorkflow {
		return inv, "run", "", t.nth[inv], nil
	}
	bs, err := t.branch(dv.Run, dv.Step)
	return inv, "step", bs, t.nth[inv], err
}

// pending is one entry before it is ordered.
type pending struct {
	e      PlanEntry
	at     sim.Time
	tie    int
	served sim.Time // a write's first step (race groups)
	// order breaks ties of at: a call's Effect (the order the simulation
	// applied calls of one instant in: a list served at the instant a
	// write answered saw it or not), a body's right after its claim's.
	order int64
	// runLevel: a write of a run event, which seeds a race group; joins:
	// a write that may join one (a run event, or a step write that reads
	// the run first: step_created, step_started, step_failed).
	runLevel, joins bool
	run             world.RunID
}

// PlanFrom translates a History into a plan. It refuses (an error naming
// the call and why) what no rule covers and the real side cannot be made
// to do: a call of the World itself, an unreadable row.
func PlanFrom(h *model.History) (*Plan, error) { return planFrom(h, false) }

// planFrom is PlanFrom; with everyWrite, a race group is any writes of one
// run the History had in flight at once, step events too (--what-if,
// which releases them together and forces nothing inside their calls: the
// file-system gate orders only run events' I/O).
func planFrom(h *model.History, everyWrite bool) (*Plan, error) {
	t := newTranslator(h)
	var ps []pending
	for ci := range h.Calls {
		c := &h.Calls[ci]
		desc := describeCall(h, ci)
		p := pending{run: c.Run, tie: 2 * ci, order: 2 * int64(c.Effect)}
		p.e = PlanEntry{Kind: "call", Call: ci, Delivery: int(c.Caller.Delivery), Model: desc, Expect: errorName(c.Result)}
		ri, ok := t.runIdx[c.Run]
		if !ok {
			return nil, fmt.Errorf("call %s: its run is not in the History's runs", desc)
		}
		step, err := t.branch(c.Run, c.Step)
		if err != nil {
			return nil, fmt.Errorf("call %s: %w", desc, err)
		}
		var by, byStep string
		nth := 0
		switch c.Caller.Kind {
		case model.CallerClient:
			by = "client"
		case model.CallerWorld:
			return nil, fmt.Errorf("call %s: the World's own call (a message retired at its cap) has no counterpart the plan can hold", desc)
		default:
			if _, by, byStep, nth, err = t.who(c.Caller.Delivery); err != nil {
				return nil, fmt.Errorf("call %s: %w", desc, err)
			}
		}
		switch c.Op {
		case model.OpRunsGet:
			if c.Unreadable {
				return nil, fmt.Errorf("call %s: the History's row could not be read (a world-postgres row); world-local writes a run file whole", desc)
			}
			p.at = c.Served
			p.e.Status = c.StatusRead.String()
			if c.Stale {
				p.e.Stale = c.StatusRead.String()
			}
		case model.OpEventsList:
			p.at = c.Served
		case model.OpEventsCreate:
			p.at = c.End
			if c.Event == world.EvRunCreated {
				// The store creates the run as the call arrives.
				p.at = c.Start
			}
			p.served = c.Served
			p.runLevel = c.Event == world.EvRunStarted || c.Event.EndsRun()
			p.joins = p.runLevel || c.Event == world.EvStepCreated || c.Event == world.EvStepStarted || c.Event == world.EvStepFailed ||
				everyWrite && c.Event != world.EvRunCreated
		}
		event := eventName(c)
		if c.Op == model.OpRunsGet && by == "step" {
			// plan.mjs tells a step delivery's reads apart by whether its
			// claim came first: a legacy prologue's read, or a lazy read.
			event = "lazy"
			if c.Reason == model.ReasonPrologue {
				event = "prologue"
			}
		}
		p.e.Key = planKey(ri, by, byStep, nth, c.Op.String(), event, step, 0)
		p.e.Run = ri
		if c.Caller.Kind == model.CallerClient && c.Op == model.OpEventsCreate && c.Event == world.EvRunCancelled {
			p.e.Action = "cancel"
		} else if c.Caller.Kind == model.CallerClient && !(c.Op == model.OpEventsCreate && c.Event == world.EvRunCreated) {
			return nil, fmt.Errorf("call %s: the client's calls the harness makes are run_created (start) and run_cancelled (Run#cancel)", desc)
		}
		ps = append(ps, p)
	}
	// Bodies, each after the calls its delivery, or the invocation it runs
	// in, had answered when it began: its claim, or (turbo's optimistic
	// start, whose body begins as its claim is fired) the suspension's
	// creates the invocation awaited first.
	for di := range h.Deliveries {
		dv := &h.Deliveries[di]
		if !dv.BodyRan {
			continue
		}
		inv, by, byStep, nth, err := t.who(int32(di))
		if err != nil {
			return nil, fmt.Errorf("body of delivery %d: %w", di, err)
		}
		step, err := t.branch(dv.Run, dv.Step)
		if err != nil {
			return nil, fmt.Errorf("body of delivery %d: %w", di, err)
		}
		// The body comes after every call of its invocation answered before
		// it began (any call: an inline step's parent may itself be an
		// inline step, a continuation's next fan-out, whose suspension's
		// creates the body began after): tie after the last issued, order
		// after the last applied (creates issued together answer in
		// another order than they were issued).
		claim, order := -1, int64(-1)
		for ci := range h.Calls {
			if c := &h.Calls[ci]; c.Caller.Delivery >= 0 && (c.Caller.Delivery == int32(di) || h.Invocation(c.Caller.Delivery) == inv) && c.End <= dv.BodyStart {
				claim, order = ci, max(order, 2*int64(c.Effect)+1)
			}
		}
		p := pending{run: dv.Run, at: dv.BodyStart, tie: 2*claim + 1, order: order}
		p.e = PlanEntry{Kind: "body", Call: -1, Delivery: di, Run: t.runIdx[dv.Run], Model: fmt.Sprintf("body of step %d (%s) by %s begins %v", dv.Step, step, deliveryName(h, int32(di)), dv.BodyStart),
			Key: planKey(t.runIdx[dv.Run], by, byStep, nth, "body", "", step, 0)}
		ps = append(ps, p)
	}
	ps = slices.DeleteFunc(ps, func(p pending) bool { return p.e.Key == "" })
	groupRaces(h, ps, everyWrite)
	// A race group's members stay together in the plan: an entry at the
	// group's instant whose tie falls among the members' goes after them.
	groupTie := map[int]int64{}
	for _, p := range ps {
		if g := p.e.Group; g != 0 {
			if t, ok := groupTie[g]; !ok || p.order < t {
				groupTie[g] = p.order
			}
		}
	}
	rank := func(p pending) int64 {
		if p.e.Group != 0 {
			return groupTie[p.e.Group]
		}
		return p.order
	}
	slices.SortStableFunc(ps, func(a, b pending) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(rank(a), rank(b)), cmp.Compare(a.order, b.order), cmp.Compare(a.tie, b.tie))
	})
	// Occurrences: the nth call of one (delivery, op, event, step), in the
	// order the delivery issued them (the History's call order).
	order := make([]int, len(ps))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(ps[a].tie, ps[b].tie) })
	seen := map[string]int{}
	for _, i := range order {
		seen[ps[i].e.Key]++
		ps[i].e.Key = strings.TrimSuffix(ps[i].e.Key, "|0") + fmt.Sprintf("|%d", seen[ps[i].e.Key])
	}
	plan := &Plan{Calls: len(h.Calls), Cut: !h.Drained, Span: h.End}
	for i := range ps {
		ps[i].e.At = ps[i].at
		plan.Entries = append(plan.Entries, ps[i].e)
	}
	answerTurns(h, plan.Entries)
	for i := 0; i < len(plan.Entries); {
		g := plan.Entries[i].Group
		end := i + 1
		for g != 0 && end < len(plan.Entries) && plan.Entries[end].Group == g {
			end++
		}
		if g != 0 && !everyWrite {
			plan.Entries[i].Fs = raceSchedule(h, plan.Entries[i:end])
		}
		i = end
	}
	return plan, nil
}

// answerTurns sets AnswerAfter on each read the History answered, and each
// body it ended, after later entries took effect (entries is in plan order,
// by At first).
func answerTurns(h *model.History, entries []PlanEntry) {
	for i := range entries {
		e := &entries[i]
		var end sim.Time
		switch {
		case e.Kind == "body":
			// A body's end (harness.mjs holds it as it returns).
			if dv := &h.Deliveries[e.Delivery]; dv.BodyEnd > dv.BodyStart {
				end = dv.BodyEnd
			}
		case h.Calls[e.Call].Op == model.OpRunsGet || h.Calls[e.Call].Op == model.OpEventsList:
			end = h.Calls[e.Call].End
		}
		if e.Group != 0 && e.Kind == "call" {
			for j := range entries {
				if o := &entries[j]; j != i && o.Group == e.Group && o.Kind == "call" && h.Calls[o.Call].End < h.Calls[e.Call].End {
					e.AnswerWait = append(e.AnswerWait, j)
				}
			}
		}
		if end == 0 {
			continue
		}
		// The first entry at or after the answer; the one before it is the
		// last that took effect strictly before (a tie's order is not known).
		j := i + 1 + sort.Search(len(entries)-i-1, func(k int) bool { return entries[i+1+k].At >= end })
		if j-1 > i {
			e.AnswerAfter = j - 1
		}
	}
}

// groupRaces gives the writes of one run that were in flight at once in
// the History (every pair's service times overlap, so they share an
// instant) one race group each, ordered at the first answer among them:
// every call a member's delivery made before it took effect earlier, so all
// members can arrive before the group is due. A group holds a run event
// (run_started or a terminal one) and every step write that reads the run
// first (step_created, step_started, step_failed) in flight with it, the
// writes whose outcome world-local's own I/O decides; with everyWrite
// (--what-if) any writes of the run in flight at once make one.
func groupRaces(h *model.History, ps []pending, everyWrite bool) {
	byRun := map[world.RunID][]int{}
	var runs []world.RunID
	byCall := map[int]int{} // History call -> its pending
	for i, p := range ps {
		if p.e.Kind == "call" {
			byCall[p.e.Call] = i
		}
		if p.joins {
			if _, ok := byRun[p.run]; !ok {
				runs = append(runs, p.run)
			}
			byRun[p.run] = append(byRun[p.run], i)
		}
	}
	// prev is, for each call, the call of its invocation that answered
	// last before it was served (-1 for none): what it waited for. Calls
	// an invocation issues together (a suspension's creates) all wait for
	// the same answer, not for each other.
	prev := make([]int, len(h.Calls))
	byInv := map[int32][]int{}
	for ci := range h.Calls {
		prev[ci] = -1
		d := h.Calls[ci].Caller.Delivery
		if d < 0 {
			continue
		}
		inv := h.Invocation(d)
		c := &h.Calls[ci]
		for _, pc := range byInv[inv] {
			if p := &h.Calls[pc]; p.End > 0 && p.End <= c.Served && (prev[ci] < 0 || p.End >= h.Calls[prev[ci]].End) {
				prev[ci] = pc
			}
		}
		byInv[inv] = append(byInv[inv], ci)
	}
	group := 0
	for _, run := range runs {
		idx := byRun[run]
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(ps[a].served, ps[b].served) })
		if everyWrite {
			// --what-if: every run of writes in flight at once, seeded or
			// not, released together; nothing is forced inside them.
			for s := 0; s < len(idx); {
				minEnd := ps[idx[s]].at
				e := s + 1
				for e < len(idx) && ps[idx[e]].served < minEnd {
					minEnd = min(minEnd, ps[idx[e]].at)
					e++
				}
				if e-s > 1 {
					group++
					for _, i := range idx[s:e] {
						ps[i].e.Group, ps[i].at = group, minEnd
					}
				}
				s = e
			}
			continue
		}
		// Each run event, in the order they were served, seeds a group:
		// the writes in flight with it at one instant (its start, or a
		// later write's while it is in flight), the instant that holds the
		// most of them, the earliest of equals. A write between it and an
		// earlier one that answered first (a claim served before a queued
		// step's short write, the cancel after that write answered) does
		// not keep them apart.
		inFlightAt := func(t sim.Time) []int {
			var m []int
			for _, w := range idx {
				if ps[w].e.Group == 0 && ps[w].served <= t && t < ps[w].at {
					m = append(m, w)
				}
			}
			return m
		}
		for _, r := range idx {
			if !ps[r].runLevel || ps[r].e.Group != 0 {
				continue
			}
			best := inFlightAt(ps[r].served)
			for _, w := range idx {
				if ps[w].e.Group == 0 && ps[w].served > ps[r].served && ps[w].served < ps[r].at {
					if m := inFlightAt(ps[w].served); len(m) > len(best) {
						best = m
					}
				}
			}
			if len(best) < 2 {
				continue
			}
			group++
			minEnd, maxEnd := ps[best[0]].at, ps[best[0]].at
			members := map[int]bool{}
			for _, i := range best {
				minEnd, maxEnd = min(minEnd, ps[i].at), max(maxEnd, ps[i].at)
				members[ps[i].e.Call] = true
				ps[i].e.Group = group
			}
			// Late members (a chained race): a write served while a member
			// was still in flight whose invocation waited for a member's
			// answer, so that it can only arrive once that member has
			// answered (the orchestrator's creates after its run_started,
			// in flight with a cancel). plan.mjs releases it into the
			// group's race as it arrives.
			for _, c := range idx {
				if ps[c].e.Group != 0 || ps[c].served >= maxEnd || !members[prev[ps[c].e.Call]] {
					continue
				}
				if pc, ok := byCall[prev[ps[c].e.Call]]; !ok || ps[pc].at > ps[c].served {
					continue
				}
				ps[c].e.Group, ps[c].e.Late = group, true
				members[ps[c].e.Call] = true
				maxEnd = max(maxEnd, ps[c].at)
			}
			for _, i := range idx {
				if ps[i].e.Group == group {
					ps[i].at = minEnd
				}
			}
		}
	}
}

// raceSchedule is a race group's writes' steps in the order the History
// took them. A world-local run event is three steps (read the run file and
// decide; write the run file; publish the event: world.Txn, and the
// classifier of realworld/node/gate.mjs), a step write two (read the run
// file under the step's lock; write), a lazy step_started three (read; its
// step_created; its step_started); one the read refused is that read alone. The model takes the first step when the store serves the
// write, the last with its answer and the one between halfway (flight.go),
// so the History's served and answer times give each step's instant; ties
// go by the members' order, then the step.
func raceSchedule(h *model.History, members []PlanEntry) [][2]int {
	type step struct {
		at     sim.Time
		member int
		k      int
	}
	var steps []step
	for m, e := range members {
		c := &h.Calls[e.Call]
		if c.Result != world.OK {
			steps = append(steps, step{c.Served, m, 0})
			continue
		}
		n := localSteps(c)
		for k := range n {
			steps = append(steps, step{c.Served + (c.End-c.Served)*sim.Time(k)/sim.Time(n-1), m, k})
		}
	}
	slices.SortStableFunc(steps, func(a, b step) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.member, b.member), cmp.Compare(a.k, b.k))
	})
	out := make([][2]int, len(steps))
	for i, s := range steps {
		out[i] = [2]int{s.member, s.k}
	}
	return out
}

func eventName(c *model.Call) string {
	if c.Op != model.OpEventsCreate {
		return ""
	}
	return c.Event.String()
}

// deliveryName names a History delivery as a report reads it.
func deliveryName(h *model.History, d int32) string {
	if d < 0 {
		return "the client"
	}
	dv := h.Deliveries[d]
	switch {
	case dv.Msg < 0:
		return fmt.Sprintf("D%d (inline step %d in D%d)", d, dv.Step, dv.Parent)
	case dv.Kind == model.MsgWorkflow:
		return fmt.Sprintf("D%d (the run's message, attempt %d)", d, dv.Attempt)
	}
	return fmt.Sprintf("D%d (step %d's message, attempt %d)", d, dv.Step, dv.Attempt)
}

// describeCall is a History call in one line.
func describeCall(h *model.History, ci int) string {
	c := &h.Calls[ci]
	s := fmt.Sprintf("C%d %s", ci, c.Op)
	if c.Op == model.OpEventsCreate {
		s += " " + c.Event.String()
	}
	if c.Step != world.NoStep {
		s += fmt.Sprintf(" step %d", c.Step)
	}
	s += " by " + deliveryName(h, c.Caller.Delivery)
	if c.Reason != model.ReasonNone {
		s += " (" + c.Reason.String() + ")"
	}
	s += fmt.Sprintf(" %v..%v → %s", c.Start, c.End, c.Result)
	if c.Op == model.OpRunsGet {
		s += " " + c.StatusRead.String()
		if c.Stale {
			s += " (stale)"
		}
	}
	if c.PendingEmpty {
		s += " (pending set empty)"
	}
	return s
}

// localSteps is how many steps a write takes on world-local as the model
// splits it (world.Txn.MaxSteps), which the file-system gate's classifier
// counts alike.
func localSteps(c *model.Call) int {
	s := world.NewFor(world.RulesLocal, world.FenceFixed)
	t := s.Begin(world.Event{Type: c.Event, Run: c.Run, Step: c.Step, Lazy: c.Lazy}, 0)
	return t.MaxSteps()
}
