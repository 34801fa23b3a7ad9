package properties

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// This file holds the properties' functions. Each reads the History only.

// stepLabel names a step as the workflow code does.
func stepLabel(h *model.History, run world.RunID, step world.StepID) string {
	if int(run) < len(h.Runs) {
		for _, f := range h.Runs[run].Fanouts {
			fo := &h.Fanouts[f]
			if step >= fo.FirstStep && step < fo.FirstStep+world.StepID(fo.Branches) {
				return model.StepName(fo.Index, int32(step-fo.FirstStep))
			}
		}
	}
	return fmt.Sprintf("step%d", step)
}

func actor(h *model.History, c model.Caller) string {
	if c.Delivery < 0 {
		return c.Kind.String()
	}
	d := &h.Deliveries[c.Delivery]
	if d.Msg < 0 {
		return fmt.Sprintf("%s d%d (inline)", c.Kind, c.Delivery)
	}
	return fmt.Sprintf("%s d%d (msg %d attempt %d on %s/%s)", c.Kind, c.Delivery, d.Msg, d.Attempt,
		h.Deployments[d.Deployment].Name, d.Version)
}

func callText(h *model.History, c *model.Call) string {
	what := c.Op.String()
	switch c.Op {
	case model.OpEventsCreate:
		what += " " + c.Event.String()
		if c.Step != world.NoStep {
			what += "(" + stepLabel(h, c.Run, c.Step) + ")"
		}
		what += " → " + c.Result.String()
	case model.OpRunsGet:
		if c.Unreadable {
			what += " → threw: the row does not fit its status"
			break
		}
		what += " → " + c.StatusRead.String()
		if c.Stale {
			what += " (stale)"
		}
	case model.OpEventsList:
		if c.Fanout >= 0 {
			if c.PendingEmpty {
				what += " → pending set empty"
			} else {
				what += " → steps still pending"
			}
		}
	}
	return actor(h, c.Caller) + ": " + what
}

func callEvidence(h *model.History, c *model.Call) Evidence {
	return Evidence{At: c.End, Text: callText(h, c)}
}

func deliveryEvidence(h *model.History, i int32, text string) Evidence {
	d := &h.Deliveries[i]
	return Evidence{At: d.Start, Text: actor(h, model.Caller{Kind: callerKind(h, i), Delivery: i}) + ": " + text}
}

func callerKind(h *model.History, i int32) model.CallerKind {
	if inv := h.Invocation(i); inv >= 0 {
		i = inv
	}
	if h.Deliveries[i].Kind == model.MsgWorkflow {
		return model.CallerOrchestrator
	}
	return model.CallerConsumer
}

// terminalOf returns each run's first accepted terminal event, or nil.
func terminalOf(h *model.History) []*model.Accepted {
	return terminalInto(make([]*model.Accepted, len(h.Runs)), h)
}

// terminalInto is terminalOf written into out, len(h.Runs) nil entries.
func terminalInto(out []*model.Accepted, h *model.History) []*model.Accepted {
	for i := range h.Accepted {
		a := &h.Accepted[i]
		if a.Type.EndsRun() && out[a.Run] == nil {
			out[a.Run] = a
		}
	}
	return out
}

func acceptedEvidence(h *model.History, a *model.Accepted) Evidence {
	return callEvidence(h, &h.Calls[a.Call])
}

func noStartOnTerminal(h *model.History) []Violation {
	term := terminalOf(h)
	var out []Violation
	for i := range h.Accepted {
		a := &h.Accepted[i]
		t := term[a.Run]
		if a.Type == world.EvStepStarted && t != nil && a.Pos > t.Pos {
			out = append(out, Violation{Run: a.Run,
				Message:  fmt.Sprintf("step_started of %s accepted at log position %d, after the run's %s at %d", stepLabel(h, a.Run, a.Step), a.Pos, t.Type, t.Pos),
				Evidence: []Evidence{acceptedEvidence(h, t), acceptedEvidence(h, a)}})
		}
	}
	for i := range h.Deliveries {
		d := &h.Deliveries[i]
		t := term[d.Run]
		if d.BodyRan && t != nil && d.BodyStart > t.At {
			out = append(out, Violation{Run: d.Run,
				Message:  fmt.Sprintf("the body of %s began at %v, after the run's %s at %v", stepLabel(h, d.Run, d.Step), d.BodyStart, t.Type, t.At),
				Evidence: []Evidence{acceptedEvidence(h, t), {At: d.BodyStart, Text: actor(h, model.Caller{Kind: callerKind(h, int32(i)), Delivery: int32(i)}) + ": body of " + stepLabel(h, d.Run, d.Step) + " begins"}}})
		}
	}
	return out
}

func oneLazyFetchPerFanout(o *observed) []Violation {
	h := o.h
	lazy := make([][]int32, len(h.Fanouts))
	anyLazy := make([]int, len(h.Fanouts))
	lists := make([][]int32, len(h.Fanouts))
	// first continuer of each fan-out, and whether any continuer died or
	// was a fetch-free consumer.
	first := make([]int32, len(h.Fanouts))
	for f := range first {
		first[f] = -1
	}
	// crashedAt is, per fan-out, when its first continuer that died did:
	// a consumer's lazy read after that is the retry the crash forced.
	crashedAt := make([]sim.Time, len(h.Fanouts))
	for f := range crashedAt {
		crashedAt[f] = -1
	}
	contFetchFree := make([]bool, len(h.Fanouts))
	for i := range h.Deliveries {
		d := int32(i)
		f := h.Deliveries[i].Fanout
		if f < 0 || h.Deliveries[i].Kind != model.MsgStep {
			continue
		}
		if l := o.lastCompleterList(d); l >= 0 {
			lists[f] = append(lists[f], l)
		}
		// A delivery that crashed did not finish its continuation, so its
		// redelivery's read is a retry forced by the fault, not a second
		// last completer.
		if r := o.lazyRead(d); r >= 0 {
			anyLazy[f]++
			if !o.crashedTree(d) {
				lazy[f] = append(lazy[f], r)
			}
		}
		if o.continued(d) {
			if first[f] < 0 || o.h.Calls[o.replayLoad(d)].Start < o.h.Calls[o.replayLoad(first[f])].Start {
				first[f] = d
			}
			if o.crashedTree(d) {
				if at := o.deathOf(d); crashedAt[f] < 0 || at < crashedAt[f] {
					crashedAt[f] = at
				}
			}
			contFetchFree[f] = contFetchFree[f] || o.fetchFree(d)
		}
	}
	var out []Violation
	for f := range h.Fanouts {
		fo := &h.Fanouts[f]
		n := len(lazy[f])
		byOrchestrator := first[f] >= 0 && h.Deliveries[first[f]].Msg < 0
		var msg string
		switch {
		case n > 1:
			msg = fmt.Sprintf("fan-out %d made %d lazy runs.get: %d deliveries saw its pending set empty", fo.Index, n, len(lists[f]))
		case byOrchestrator && unexcused(h, lazy[f], crashedAt[f]) > 0:
			// The exemption covers only the reads a dead continuer forced:
			// those begun after it died.
			msg = fmt.Sprintf("fan-out %d was continued by an inline step (which holds the run), yet a consumer also made a lazy runs.get", fo.Index)
		case first[f] >= 0 && !byOrchestrator && anyLazy[f] == 0 && contFetchFree[f]:
			msg = fmt.Sprintf("fan-out %d was continued by a fetch-free consumer without its lazy runs.get", fo.Index)
		default:
			continue
		}
		v := Violation{Run: fo.Run, Message: msg}
		for _, i := range lists[f] {
			v.Evidence = append(v.Evidence, callEvidence(h, &h.Calls[i]))
		}
		for _, i := range lazy[f] {
			v.Evidence = append(v.Evidence, callEvidence(h, &h.Calls[i]))
		}
		out = append(out, v)
	}
	return out
}

// unexcused counts the reads that began before the fan-out's first
// continuer died (all of them when none died).
func unexcused(h *model.History, reads []int32, diedAt sim.Time) int {
	n := 0
	for _, r := range reads {
		if diedAt < 0 || h.Calls[r].Start < diedAt {
			n++
		}
	}
	return n
}

func noPrologueFetchWithRunContext(o *observed) []Violation {
	h := o.h
	var out []Violation
	for i := range h.Deliveries {
		d := &h.Deliveries[i]
		r := o.prologueRead(int32(i))
		if r < 0 || d.Version != model.V2 || !h.Messages[d.Msg].HasCtx {
			continue
		}
		out = append(out, Violation{Run: d.Run,
			Message:  fmt.Sprintf("delivery d%d carried runContext to a v2 consumer and still read the run before its claim", i),
			Evidence: []Evidence{callEvidence(h, &h.Calls[r])}})
	}
	return out
}

type stepKey struct {
	run  world.RunID
	step world.StepID
}

// stepGroups are accepted events grouped by step (run, step), in log
// order within a group; a checker reuses one from History to History.
// A step the workflow declares (and a run's own events, NoStep) finds its
// group in a dense table, slot[base[run]+step+1]; any other id (one used
// outside its run) in the map.
type stepGroups struct {
	base  []int32 // per run: its first slot; base[len(runs)] ends the table
	slot  []int32 // 1 + the group's index in lists, 0 for none
	other map[stepKey]int32
	lists [][]*model.Accepted
}

// slotOf is k's slot in the dense table, or -1.
func (g *stepGroups) slotOf(k stepKey) int {
	if k.run < 0 || int(k.run)+1 >= len(g.base) {
		return -1
	}
	i := int(g.base[k.run]) + int(k.step) + 1
	if k.step < world.NoStep || i >= int(g.base[k.run+1]) {
		return -1
	}
	return i
}

// of is k's group, nil when none.
func (g *stepGroups) of(k stepKey) []*model.Accepted {
	if i := g.slotOf(k); i >= 0 {
		if j := g.slot[i]; j > 0 {
			return g.lists[j-1]
		}
		return nil
	}
	if j, ok := g.other[k]; ok {
		return g.lists[j]
	}
	return nil
}

// countAccepted groups h's accepted events that match by step, into g's
// reused room.
func countAccepted(g *stepGroups, h *model.History, match func(t world.EventType) bool) *stepGroups {
	g.base = g.base[:0]
	n := int32(0)
	for r := range h.Runs {
		g.base = append(g.base, n)
		steps := int32(0)
		for _, f := range h.Runs[r].Fanouts {
			fo := &h.Fanouts[f]
			steps = max(steps, int32(fo.FirstStep)+fo.Branches)
		}
		n += 1 + steps
	}
	g.base = append(g.base, n)
	g.slot = zeroed(g.slot, int(n))
	clear(g.other)
	g.lists = g.lists[:0]
	for i := range h.Accepted {
		a := &h.Accepted[i]
		if !match(a.Type) {
			continue
		}
		k := stepKey{a.Run, a.Step}
		var j int32
		if s := g.slotOf(k); s >= 0 {
			if g.slot[s] == 0 {
				g.slot[s] = g.newList()
			}
			j = g.slot[s] - 1
		} else {
			if g.other == nil {
				g.other = map[stepKey]int32{}
			}
			var ok bool
			if j, ok = g.other[k]; !ok {
				j = g.newList() - 1
				g.other[k] = j
			}
		}
		g.lists[j] = append(g.lists[j], a)
	}
	return g
}

// newList adds an empty group, keeping the room of the one it reuses, and
// returns 1 + its index.
func (g *stepGroups) newList() int32 {
	j := len(g.lists)
	if j < cap(g.lists) {
		g.lists = g.lists[:j+1]
		g.lists[j] = g.lists[j][:0]
	} else {
		g.lists = append(g.lists, nil)
	}
	return int32(j + 1)
}

// groupViolations turns per-key groups into violations in log order, so
// that map iteration never decides the order of a report.
func groupViolations(h *model.History, groups *stepGroups, max int, msg func(k stepKey, n int) string) []Violation {
	var out []Violation
	for i := range h.Accepted {
		a := &h.Accepted[i]
		k := stepKey{a.Run, a.Step}
		g := groups.of(k)
		if len(g) <= max || g[len(g)-1] != a {
			continue
		}
		v := Violation{Run: k.run, Message: msg(k, len(g))}
		for _, e := range g {
			v.Evidence = append(v.Evidence, acceptedEvidence(h, e))
		}
		out = append(out, v)
	}
	return out
}

func uniqueStepCreated(o *observed) []Violation {
	h := o.h
	g := countAccepted(&o.groups, h, func(t world.EventType) bool { return t == world.EvStepCreated })
	return groupViolations(h, g, 1, func(k stepKey, n int) string {
		return fmt.Sprintf("%d step_created accepted for %s", n, stepLabel(h, k.run, k.step))
	})
}

func singleTerminalEvent(o *observed) []Violation {
	h := o.h
	g := countAccepted(&o.groups, h, func(t world.EventType) bool {
		return t.EndsStep() || t.EndsRun()
	})
	return groupViolations(h, g, 1, func(k stepKey, n int) string {
		if k.step == world.NoStep {
			return fmt.Sprintf("%d terminal events accepted for the run", n)
		}
		return fmt.Sprintf("%d terminal events accepted for %s", n, stepLabel(h, k.run, k.step))
	})
}

// attemptCount checks each accepted step_started's answer: the k-th start
// of a step in the run's log must answer attempt k.
func attemptCount(o *observed) []Violation {
	h := o.h
	starts := countAccepted(&o.groups, h, func(t world.EventType) bool { return t == world.EvStepStarted })
	var out []Violation
	for i := range h.Accepted {
		a := &h.Accepted[i]
		if a.Type != world.EvStepStarted {
			continue
		}
		g := starts.of(stepKey{a.Run, a.Step})
		if g[len(g)-1] != a {
			continue // judge each step once, at its last start
		}
		// Positions in one run's log are distinct: any sort gives this
		// order (and slices.SortFunc allocates nothing).
		slices.SortFunc(g, func(x, y *model.Accepted) int { return cmp.Compare(x.Pos, y.Pos) })
		for k, e := range g {
			c := &h.Calls[e.Call]
			if c.Attempt == int32(k+1) {
				continue
			}
			out = append(out, Violation{Run: a.Run,
				Message:  fmt.Sprintf("%s: step_started number %d in the log answered attempt %d", stepLabel(h, a.Run, a.Step), k+1, c.Attempt),
				Evidence: []Evidence{callEvidence(h, c)}})
			break
		}
	}
	return out
}

func publishOf(h *model.History) []*model.Publish {
	return publishInto(make([]*model.Publish, len(h.Messages)), h)
}

// publishInto is publishOf written into out, len(h.Messages) nil entries.
func publishInto(out []*model.Publish, h *model.History) []*model.Publish {
	for i := range h.Publishes {
		p := &h.Publishes[i]
		if p.Msg >= 0 {
			out[p.Msg] = p
		}
	}
	return out
}

func publishEvidence(h *model.History, p *model.Publish, m *model.Message) Evidence {
	return Evidence{At: p.At, Text: fmt.Sprintf("%s: publish msg %d (%s, %s) stepInput=%v runContext=%v",
		actor(h, p.Caller), m.ID, stepLabel(h, m.Run, m.Step), p.Site, m.HasInput, m.HasCtx)}
}

// runContextMatchesRun compares every runContext a message carries with
// the run's identity as the World answered it (run_started's row).
func runContextMatchesRun(o *observed) []Violation {
	h := o.h
	pubs := o.publishes()
	var out []Violation
	for i := range h.Messages {
		m := &h.Messages[i]
		if !m.HasCtx {
			continue
		}
		r := o.identity(m.Run)
		want := model.RunContext{DeploymentID: r.DeploymentID, SpecVersion: r.SpecVersion, StartedAt: r.StartedAt, RootRunID: r.RootRunID}
		if m.Ctx != want {
			v := Violation{Run: m.Run, Message: fmt.Sprintf("message %d carries runContext %+v, the World answered the run's identity %+v", m.ID, m.Ctx, want)}
			if p := pubs[i]; p != nil {
				v.Evidence = []Evidence{publishEvidence(h, p, m)}
			}
			out = append(out, v)
		}
	}
	return out
}

// reroutePreservesMessage checks what a re-routed message carries (the
// original's payload, its retry counter one more) and where it is sent:
// the deployment the run is pinned to, as run_created answered it.
func reroutePreservesMessage(obs *observed) []Violation {
	h := obs.h
	pubs := obs.publishes()
	var out []Violation
	for i := range h.Messages {
		m := &h.Messages[i]
		p := pubs[i]
		if p == nil || p.Site != model.SiteReroute || m.Origin < 0 {
			continue
		}
		o := &h.Messages[m.Origin]
		same := m.Kind == o.Kind && m.Run == o.Run && m.Step == o.Step && m.Fanout == o.Fanout &&
			m.HasInput == o.HasInput && m.HasCtx == o.HasCtx && m.Ctx == o.Ctx && m.Reroutes == o.Reroutes+1
		if pinned := obs.created[m.Run].DeploymentID; same && m.Target != pinned {
			out = append(out, Violation{Run: m.Run,
				Message: fmt.Sprintf("re-routed message %d is sent to %s; the run is pinned to %s",
					m.ID, h.Deployments[m.Target].Name, h.Deployments[pinned].Name),
				Evidence: []Evidence{publishEvidence(h, pubs[o.ID], o), publishEvidence(h, p, m)}})
			continue
		}
		if same {
			continue
		}
		out = append(out, Violation{Run: m.Run,
			Message: fmt.Sprintf("re-routed message %d differs from message %d: stepInput %v→%v, runContext %v→%v, retry count %d→%d",
				m.ID, o.ID, o.HasInput, m.HasInput, o.HasCtx, m.HasCtx, o.Reroutes, m.Reroutes),
			Evidence: []Evidence{publishEvidence(h, pubs[o.ID], o), publishEvidence(h, p, m)}})
	}
	return out
}

func pinnedDeployment(o *observed) []Violation {
	h := o.h
	var out []Violation
	for i := range h.Deliveries {
		d := &h.Deliveries[i]
		pinned := o.created[d.Run].DeploymentID
		replayed := o.continued(int32(i)) || d.Kind == model.MsgWorkflow && o.replayLoad(int32(i)) >= 0
		if d.Deployment == pinned || !(d.BodyRan || replayed) {
			continue
		}
		what := "ran the body of " + stepLabel(h, d.Run, d.Step)
		if !d.BodyRan {
			what = "replayed the workflow"
		}
		out = append(out, Violation{Run: d.Run,
			Message:  fmt.Sprintf("delivery d%d on %s %s; the run is pinned to %s", i, h.Deployments[d.Deployment].Name, what, h.Deployments[pinned].Name),
			Evidence: []Evidence{deliveryEvidence(h, int32(i), what)}})
	}
	return out
}

func recoveryInBand(o *observed) []Violation {
	h := o.h
	var out []Violation
	for i := range h.Calls {
		c := &h.Calls[i]
		if c.Op != model.OpEventsCreate || c.Event != world.EvStepStarted || c.Result != world.NotFound || c.Caller.Delivery < 0 {
			continue
		}
		d := &h.Deliveries[c.Caller.Delivery]
		// A crash is a fault, not a choice the consumer made: only a
		// delivery that went on and ended without the step is a violation.
		if d.Msg < 0 || d.Disposition == model.DispCrash || d.Disposition == model.DispPending {
			continue
		}
		recreated := false
		for _, j := range o.calls[c.Caller.Delivery] {
			if n := &h.Calls[j]; j > int32(i) && n.Op == model.OpEventsCreate && n.Event == world.EvStepCreated && n.Step == c.Step {
				recreated = true
			}
		}
		if recreated {
			continue
		}
		out = append(out, Violation{Run: c.Run,
			Message: fmt.Sprintf("delivery d%d found %s missing and ended (%s) without creating it", c.Caller.Delivery, stepLabel(h, c.Run, c.Step), d.Disposition),
			Evidence: []Evidence{callEvidence(h, c),
				{At: d.End, Text: actor(h, c.Caller) + ": delivery ends: " + d.Disposition.String()}}})
	}
	return out
}

// readableRunRow: every runs.get of a run gives its row back. A row whose
// fields no longer fit its status (world-postgres: run_started's unguarded
// UPDATE over an ended row keeps its completedAt) fails the World's own
// schema, and every reader of it throws. The evidence is the failed read and
// the run's accepted lifecycle writes, the race that left the row so.
func readableRunRow(h *model.History) []Violation {
	var out []Violation
	seen := map[world.RunID]bool{}
	for i := range h.Calls {
		c := &h.Calls[i]
		if c.Op != model.OpRunsGet || !c.Unreadable || seen[c.Run] {
			continue
		}
		seen[c.Run] = true
		ev := []Evidence{callEvidence(h, c)}
		for j := range h.Accepted {
			if a := &h.Accepted[j]; a.Run == c.Run && !a.Type.IsStepEvent() && a.Type != world.EvRunCreated {
				ev = append(ev, Evidence{At: a.At, Text: fmt.Sprintf("%s: events.create %s → ok (log position %d)", actor(h, a.Caller), a.Type, a.Pos)})
			}
		}
		out = append(out, Violation{Run: c.Run, Message: "runs.get could not read the run's row back: its fields do not fit its status", Evidence: ev})
	}
	return out
}
