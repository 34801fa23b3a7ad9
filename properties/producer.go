package properties

import (
	"fmt"

	"github.com/simlab/simlab/model"
)

// producerSite: a dispatch site where a producer builds a step message
// itself (DOMAIN §5). A re-route and a fresh copy copy a message instead:
// core beta.52's deployment guard keeps the original's runContext, and
// stamps none on a message that had none (runtime.js, `...(runContext ?
// { runContext } : {})`), so they are judged against their original.
func producerSite(s model.Site) bool {
	switch s {
	case model.SiteNodeDispatchLoop, model.SiteDelayedRetry, model.SiteSuspensionPublish, model.SiteQuickJS:
		return true
	}
	return false
}

// producerStampsRunContext: every step message a v2 producer publishes, at
// every dispatch site, carries a runContext equal to the run row as that
// producer read it (the newest row a World answer gave it, or the
// runContext of the message it was handling); a copy (a re-route, or
// world-vercel's fresh copy) carries its original's.
func producerStampsRunContext(o *observed) []Violation {
	h := o.h
	var out []Violation
	for i := range h.Publishes {
		p := &h.Publishes[i]
		if p.Msg < 0 {
			continue
		}
		m := &h.Messages[p.Msg]
		if m.Kind != model.MsgStep {
			continue
		}
		var want model.RunContext
		var has bool
		var why string
		switch {
		case (p.Site == model.SiteFreshCopy || p.Site == model.SiteReroute) && m.Origin >= 0:
			orig := &h.Messages[m.Origin]
			want, has, why = orig.Ctx, orig.HasCtx, fmt.Sprintf("the copied message %d", orig.ID)
		case p.Producer == model.V2 && producerSite(p.Site):
			want, has = o.heldRow(p)
			why = "the run row the producer held"
			if !has {
				continue // nothing read to stamp from: judged by run-context-matches-run
			}
		default:
			continue
		}
		if m.HasCtx == has && m.Ctx == want {
			continue
		}
		got := "no runContext"
		if m.HasCtx {
			got = fmt.Sprintf("runContext %+v", m.Ctx)
		}
		exp := "none"
		if has {
			exp = fmt.Sprintf("%+v", want)
		}
		out = append(out, Violation{Run: m.Run,
			Message:  fmt.Sprintf("%s published message %d at %s with %s; %s was %s", p.Producer, m.ID, p.Site, got, why, exp),
			Evidence: []Evidence{publishEvidence(h, p, m)}})
	}
	return out
}

// noWorkAfterVisibleEnd bounds the work a run receives after its end: once
// an actor (a delivery) has been told the run ended (a runs.get reading a
// terminal status, a log holding the terminal event, a write refused with
// RunExpired), it writes nothing more, runs no body and publishes nothing.
// The bound is zero: every such action is work nobody can use. Reads stay
// allowed: a replay's reload of the log is how core notices the end.
func noWorkAfterVisibleEnd(o *observed) []Violation {
	h := o.h
	var out []Violation
	for i := range h.Deliveries {
		d := int32(i)
		seen, ok := o.endSeen(d)
		if !ok {
			continue
		}
		told := &h.Calls[seen]
		var after []Evidence
		for _, j := range o.calls[d] {
			c := &h.Calls[j]
			if j <= seen || c.Start < told.End {
				continue
			}
			if c.Op == model.OpEventsCreate {
				after = append(after, callEvidence(h, c))
			}
		}
		del := &h.Deliveries[i]
		if del.BodyRan && del.BodyStart >= told.End {
			after = append(after, deliveryEvidence(h, d, "body of "+stepLabel(h, del.Run, del.Step)+" begins"))
		}
		for _, j := range o.pubs[d] {
			if p := &h.Publishes[j]; p.At >= told.End {
				after = append(after, Evidence{At: p.At, Text: actor(h, p.Caller) + ": publish (" + p.Site.String() + ")"})
			}
		}
		if len(after) == 0 {
			continue
		}
		out = append(out, Violation{Run: del.Run,
			Message:  fmt.Sprintf("delivery d%d was told the run had ended and did %d more things", d, len(after)),
			Evidence: append([]Evidence{callEvidence(h, told)}, after...)})
	}
	return out
}
