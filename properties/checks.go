package properties

import (
	"fmt"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/world"
)

// This file holds the properties' functions. Each reads the History only.

func isRunTerminalEvent(t world.EventType) bool {
	return t == world.EvRunCompleted || t == world.EvRunFailed || t == world.EvRunCancelled
}

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
		what += fmt.Sprintf(" [%s] → %s", c.Reason, c.StatusRead)
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
	for h.Deliveries[i].Msg < 0 && h.Deliveries[i].Parent >= 0 {
		i = h.Deliveries[i].Parent
	}
	if h.Deliveries[i].Kind == model.MsgWorkflow {
		return model.CallerOrchestrator
	}
	return model.CallerConsumer
}

// terminalOf returns each run's first accepted terminal event, or nil.
func terminalOf(h *model.History) []*model.Accepted {
	out := make([]*model.Accepted, len(h.Runs))
	for i := range h.Accepted {
		a := &h.Accepted[i]
		if isRunTerminalEvent(a.Type) && out[a.Run] == nil {
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

func oneLazyFetchPerFanout(h *model.History) []Violation {
	lazy := make([][]int, len(h.Fanouts))
	anyLazy := make([]int, len(h.Fanouts))
	lists := make([][]int, len(h.Fanouts))
	for i := range h.Calls {
		c := &h.Calls[i]
		if c.Fanout < 0 {
			continue
		}
		// A delivery that crashed did not finish its continuation, so its
		// redelivery's read is a retry forced by the fault, not a second
		// last completer.
		if c.Op == model.OpRunsGet && c.Reason == model.ReasonLastCompleter {
			anyLazy[c.Fanout]++
			if !crashed(h, c.Caller) {
				lazy[c.Fanout] = append(lazy[c.Fanout], i)
			}
		}
		if c.Op == model.OpEventsList && c.PendingEmpty {
			lists[c.Fanout] = append(lists[c.Fanout], i)
		}
	}
	var out []Violation
	for f := range h.Fanouts {
		fo := &h.Fanouts[f]
		n := len(lazy[f])
		var msg string
		switch {
		case n > 1:
			msg = fmt.Sprintf("fan-out %d made %d lazy runs.get: %d deliveries saw its pending set empty", fo.Index, n, len(lists[f]))
		case fo.Continued && fo.ContinuedBy == model.CallerOrchestrator && n > 0 && !continuerCrashed(h, int32(f)):
			msg = fmt.Sprintf("fan-out %d was continued by the orchestrator's inline step, yet a consumer also made a lazy runs.get", fo.Index)
		case fo.Continued && fo.ContinuedBy == model.CallerConsumer && anyLazy[f] == 0 && continuedFetchFree(h, int32(f)):
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

// continuerCrashed reports whether a delivery that took the fan-out's
// continuation died before finishing it (itself, or the invocation an
// inline step ran in): a second continuation is then the retry the crash
// forced, not a second last completer.
func continuerCrashed(h *model.History, fan int32) bool {
	for i := range h.Deliveries {
		d := &h.Deliveries[i]
		if d.Fanout != fan || !d.Continued {
			continue
		}
		for j := int32(i); j >= 0; j = h.Deliveries[j].Parent {
			if h.Deliveries[j].Disposition == model.DispCrash {
				return true
			}
			if h.Deliveries[j].Msg >= 0 {
				break
			}
		}
	}
	return false
}

func crashed(h *model.History, c model.Caller) bool {
	return c.Delivery >= 0 && h.Deliveries[c.Delivery].Disposition == model.DispCrash
}

func continuedFetchFree(h *model.History, fan int32) bool {
	for i := range h.Deliveries {
		d := &h.Deliveries[i]
		if d.Fanout == fan && d.Continued && d.Msg >= 0 && d.Prologue == model.PrologueRunContext {
			return true
		}
	}
	return false
}

func noPrologueFetchWithRunContext(h *model.History) []Violation {
	var out []Violation
	for i := range h.Calls {
		c := &h.Calls[i]
		if c.Op != model.OpRunsGet || c.Reason != model.ReasonPrologue || c.Caller.Delivery < 0 {
			continue
		}
		d := &h.Deliveries[c.Caller.Delivery]
		if d.Msg >= 0 && h.Messages[d.Msg].HasCtx && d.Version == model.V2 {
			out = append(out, Violation{Run: c.Run,
				Message:  fmt.Sprintf("delivery d%d carried runContext to a v2 consumer and still read the run before its claim", c.Caller.Delivery),
				Evidence: []Evidence{callEvidence(h, c)}})
		}
	}
	return out
}

func liveness(h *model.History) []Violation {
	var out []Violation
	if !h.Drained {
		out = append(out, Violation{Run: -1, Message: fmt.Sprintf("the simulation reached a limit at %v before the queue drained", h.End)})
	}
	for r, fr := range h.FinalRuns {
		if fr.Status.Terminal() {
			continue
		}
		v := Violation{Run: world.RunID(r), Message: fmt.Sprintf("the run is still %s after the queue drained", fr.Status)}
		for _, f := range h.Runs[r].Fanouts {
			fo := &h.Fanouts[f]
			done := 0
			for s := int32(0); s < fo.Branches; s++ {
				if st := h.FinalSteps[r][fo.FirstStep+world.StepID(s)]; st.Status.Terminal() {
					done++
				}
			}
			if done == int(fo.Branches) && !fo.Continued {
				v.Message += fmt.Sprintf("; fan-out %d finished all %d steps and was never continued", fo.Index, fo.Branches)
			}
		}
		// The story: the last things that happened to the run.
		var ev []Evidence
		for i := range h.Calls {
			c := &h.Calls[i]
			if c.Run == world.RunID(r) && (c.Op == model.OpRunsGet || c.Op == model.OpEventsList && c.Fanout >= 0) {
				ev = append(ev, callEvidence(h, c))
			}
		}
		if len(ev) > 6 {
			ev = ev[len(ev)-6:]
		}
		v.Evidence = ev
		out = append(out, v)
	}
	return out
}

type stepKey struct {
	run  world.RunID
	step world.StepID
}

func countAccepted(h *model.History, match func(t world.EventType) bool) map[stepKey][]*model.Accepted {
	out := map[stepKey][]*model.Accepted{}
	for i := range h.Accepted {
		a := &h.Accepted[i]
		if match(a.Type) {
			k := stepKey{a.Run, a.Step}
			out[k] = append(out[k], a)
		}
	}
	return out
}

// groupViolations turns per-key groups into violations in log order, so
// that map iteration never decides the order of a report.
func groupViolations(h *model.History, groups map[stepKey][]*model.Accepted, max int, msg func(k stepKey, n int) string) []Violation {
	var out []Violation
	for i := range h.Accepted {
		a := &h.Accepted[i]
		k := stepKey{a.Run, a.Step}
		g := groups[k]
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

func uniqueStepCreated(h *model.History) []Violation {
	g := countAccepted(h, func(t world.EventType) bool { return t == world.EvStepCreated })
	return groupViolations(h, g, 1, func(k stepKey, n int) string {
		return fmt.Sprintf("%d step_created accepted for %s", n, stepLabel(h, k.run, k.step))
	})
}

func singleTerminalEvent(h *model.History) []Violation {
	g := countAccepted(h, func(t world.EventType) bool {
		return t == world.EvStepCompleted || t == world.EvStepFailed || isRunTerminalEvent(t)
	})
	return groupViolations(h, g, 1, func(k stepKey, n int) string {
		if k.step == world.NoStep {
			return fmt.Sprintf("%d terminal events accepted for the run", n)
		}
		return fmt.Sprintf("%d terminal events accepted for %s", n, stepLabel(h, k.run, k.step))
	})
}

func attemptCount(h *model.History) []Violation {
	starts := countAccepted(h, func(t world.EventType) bool { return t == world.EvStepStarted })
	var out []Violation
	for r, steps := range h.FinalSteps {
		for s, st := range steps {
			k := stepKey{world.RunID(r), world.StepID(s)}
			if int(st.Attempt) == len(starts[k]) {
				continue
			}
			v := Violation{Run: k.run, Message: fmt.Sprintf("%s has attempt %d but %d accepted step_started", stepLabel(h, k.run, k.step), st.Attempt, len(starts[k]))}
			for _, a := range starts[k] {
				v.Evidence = append(v.Evidence, acceptedEvidence(h, a))
			}
			out = append(out, v)
		}
	}
	return out
}

func publishOf(h *model.History) []*model.Publish {
	out := make([]*model.Publish, len(h.Messages))
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

func runContextMatchesRun(h *model.History) []Violation {
	pubs := publishOf(h)
	var out []Violation
	for i := range h.Messages {
		m := &h.Messages[i]
		if !m.HasCtx {
			continue
		}
		r := h.FinalRuns[m.Run]
		want := model.RunContext{DeploymentID: r.DeploymentID, SpecVersion: r.SpecVersion, StartedAt: r.StartedAt, RootRunID: r.RootRunID}
		if m.Ctx != want {
			v := Violation{Run: m.Run, Message: fmt.Sprintf("message %d carries runContext %+v, the run's identity is %+v", m.ID, m.Ctx, want)}
			if p := pubs[i]; p != nil {
				v.Evidence = []Evidence{publishEvidence(h, p, m)}
			}
			out = append(out, v)
		}
	}
	return out
}

func reroutePreservesMessage(h *model.History) []Violation {
	pubs := publishOf(h)
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

func pinnedDeployment(h *model.History) []Violation {
	var out []Violation
	for i := range h.Deliveries {
		d := &h.Deliveries[i]
		pinned := h.Runs[d.Run].Deployment
		if d.Deployment == pinned || !(d.BodyRan || d.Continued) {
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

func recoveryInBand(h *model.History) []Violation {
	var out []Violation
	for i := range h.Calls {
		c := &h.Calls[i]
		if c.Op != model.OpEventsCreate || c.Event != world.EvStepStarted || c.Result != world.NotFound || c.Caller.Delivery < 0 {
			continue
		}
		d := &h.Deliveries[c.Caller.Delivery]
		// A crash is a fault, not a choice the consumer made: only a
		// delivery that went on and ended without the step is a violation.
		if d.Msg < 0 || d.Recovered || d.Disposition == model.DispCrash || d.Disposition == model.DispPending {
			continue
		}
		out = append(out, Violation{Run: c.Run,
			Message: fmt.Sprintf("delivery d%d found %s missing and ended (%s) without creating it", c.Caller.Delivery, stepLabel(h, c.Run, c.Step), d.Disposition),
			Evidence: []Evidence{callEvidence(h, c),
				{At: d.End, Text: actor(h, c.Caller) + ": delivery ends: " + d.Disposition.String()}}})
	}
	return out
}
