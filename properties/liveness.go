package properties

import (
	"fmt"
	"strings"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/world"
)

// liveness: once faults stop and the queue drains, every run has an accepted
// terminal event (endedRunReadsEnded asks that its row says so too). For a
// run without one, the story names the cause per stuck step (the last
// accepted and the last refused call on it, and the fate of its last
// message) and per finished fan-out nobody continued.
func liveness(o *observed) []Violation {
	h := o.h
	var out []Violation
	if !h.Drained {
		out = append(out, Violation{Run: -1, Message: fmt.Sprintf("the simulation reached a limit at %v before the queue drained", h.End)})
	}
	for r := range h.Runs {
		if o.terminal[r] != nil {
			continue
		}
		out = append(out, o.stuck(world.RunID(r)))
	}
	return out
}

// endedRunReadsEnded: once the queue drains, a run whose terminal event was
// accepted reads back terminal. A run whose row reads live then was written
// back by a call that raced its end (a run_started that read it pending):
// core's replay sees the terminal event in the log it lists and exits, so
// nothing ends the run again and runs.get answers running for ever, as on
// the real engine (realengine
// TestForcedCancelRacingStartReopensTheRealRun). Apart from liveness, whose
// causes (a run nobody ends) are the protocol's, this one is the World's.
func endedRunReadsEnded(o *observed) []Violation {
	h := o.h
	if !h.Drained {
		return nil // liveness says so
	}
	var out []Violation
	for r, t := range o.terminal {
		if t != nil && r < len(h.ReadBack) && (!h.ReadBack[r].Readable || !h.ReadBack[r].Status.Terminal()) {
			out = append(out, o.reopened(world.RunID(r), t))
		}
	}
	return out
}

// reopened explains a run whose log holds its terminal event t while its
// row reads live after the queue drained: the accepted run_started writes
// answered after t's write began are the evidence (on world-postgres one that
// answered while the cancel was still in flight can leave the row running
// with the cancel's completedAt, docs/MODEL.md finding 18).
func (o *observed) reopened(r world.RunID, t *model.Accepted) Violation {
	h := o.h
	reads := "reads " + h.ReadBack[r].Status.String()
	if !h.ReadBack[r].Readable {
		reads = "cannot be read back"
	}
	v := Violation{Run: r, Message: fmt.Sprintf("the run's %s was accepted, yet its row %s after the queue drained: nothing ends it again and no reader of the run sees it end",
		t.Type, reads)}
	v.Evidence = append(v.Evidence, callEvidence(h, &h.Calls[t.Call]))
	for i := range h.Calls {
		c := &h.Calls[i]
		if c.Run == r && c.Op == model.OpEventsCreate && c.Event == world.EvRunStarted && c.Result == world.OK && c.End > h.Calls[t.Call].Start {
			v.Evidence = append(v.Evidence, callEvidence(h, c))
		}
	}
	return v
}

// stepFacts is what an observer knows about one step of a run.
type stepFacts struct {
	created, finished  bool
	lastOK, lastRefuse int32 // calls about the step, -1 if none
}

func (o *observed) stepFacts(r world.RunID, step world.StepID) stepFacts {
	f := stepFacts{lastOK: -1, lastRefuse: -1}
	for i := range o.h.Calls {
		c := &o.h.Calls[i]
		if c.Run != r || c.Step != step || c.Op != model.OpEventsCreate {
			continue
		}
		if c.Result == world.OK {
			f.lastOK = int32(i)
			switch c.Event {
			case world.EvStepCreated:
				f.created = true
			case world.EvStepStarted:
				// A lazy start creates its step; the claim proves it exists.
				f.created = true
			case world.EvStepCompleted, world.EvStepFailed:
				f.finished = true
			}
		} else {
			f.lastRefuse = int32(i)
		}
	}
	return f
}

// stuck explains why run r has no terminal event.
func (o *observed) stuck(r world.RunID) Violation {
	h := o.h
	v := Violation{Run: r, Message: "no terminal event was accepted for the run after the queue drained"}
	for _, f := range h.Runs[r].Fanouts {
		fo := &h.Fanouts[f]
		done, created := 0, 0
		var stuck []world.StepID
		for b := int32(0); b < fo.Branches; b++ {
			step := fo.FirstStep + world.StepID(b)
			sf := o.stepFacts(r, step)
			if sf.created {
				created++
			}
			if sf.finished {
				done++
				continue
			}
			if sf.created || sf.lastRefuse >= 0 {
				stuck = append(stuck, step)
			}
		}
		if created == 0 && done == 0 {
			v.Message += fmt.Sprintf("; fan-out %d never began", fo.Index)
			break
		}
		if done == int(fo.Branches) {
			if by := o.continuers(f); len(by) > 0 {
				// Continued, yet the run did not end: say by whom and what
				// became of each continuation.
				v.Message += fmt.Sprintf("; fan-out %d finished all %d steps and was continued by %s, yet the run never ended", fo.Index, fo.Branches, o.continuationFates(by))
				v.Evidence = append(v.Evidence, o.continuationStory(f)...)
				continue
			}
			v.Message += fmt.Sprintf("; fan-out %d finished all %d steps and was never continued", fo.Index, fo.Branches)
			v.Evidence = append(v.Evidence, o.continuationStory(f)...)
			continue
		}
		for _, step := range stuck {
			cause, ev := o.stepCause(r, step, int32(step-fo.FirstStep) < fo.Inline)
			v.Message += fmt.Sprintf("; %s stuck: %s", stepLabel(h, r, step), cause)
			v.Evidence = append(v.Evidence, ev...)
		}
		if len(stuck) > 0 || done < int(fo.Branches) {
			break // later fan-outs cannot have begun
		}
	}
	return v
}

// stepCause names the fate of a stuck step's last message, with the last
// accepted and the last refused call on the step as evidence.
func (o *observed) stepCause(r world.RunID, step world.StepID, inline bool) (string, []Evidence) {
	h := o.h
	sf := o.stepFacts(r, step)
	var ev []Evidence
	if sf.lastOK >= 0 {
		ev = append(ev, Evidence{At: h.Calls[sf.lastOK].End, Text: "last accepted: " + callText(h, &h.Calls[sf.lastOK])})
	}
	if sf.lastRefuse >= 0 {
		ev = append(ev, Evidence{At: h.Calls[sf.lastRefuse].End, Text: "last refused: " + callText(h, &h.Calls[sf.lastRefuse])})
	}
	last := int32(-1)
	for i := range h.Messages {
		if m := &h.Messages[i]; m.Run == r && m.Step == step && m.Kind == model.MsgStep {
			last = int32(i)
		}
	}
	var lastPub, lastDedup *model.Publish
	for i := range h.Publishes {
		p := &h.Publishes[i]
		if p.Run != r || p.Step != step {
			continue
		}
		if p.Deduped {
			lastDedup = p
		} else if p.Msg == last {
			lastPub = p
		}
	}
	// A publish absorbed by a key after the last message's: the message
	// that holds the key (or held it for its TTL) is still the step's
	// fate; the absorbed publish is said after it.
	absorbed := ""
	if lastDedup != nil && lastPub != nil && lastDedup.At > lastPub.At {
		ev = append(ev, Evidence{At: lastDedup.At, Text: fmt.Sprintf("%s: publish of %s (%s) absorbed by its idempotency key",
			actor(h, lastDedup.Caller), stepLabel(h, r, step), lastDedup.Site)})
		absorbed = fmt.Sprintf("; a later publish (%s, %v) was absorbed by an idempotency key", lastDedup.Site, lastDedup.At)
	}
	cause, ev := o.messageFate(r, step, inline, last, lastPub, lastDedup, ev)
	return cause + absorbed, ev
}

// messageFate is stepCause's fate of the step's last message last (or of
// its absence).
func (o *observed) messageFate(r world.RunID, step world.StepID, inline bool, last int32, lastPub, lastDedup *model.Publish, ev []Evidence) (string, []Evidence) {
	h := o.h
	switch {
	case lastDedup != nil && lastPub == nil:
		ev = append(ev, Evidence{At: lastDedup.At, Text: fmt.Sprintf("%s: publish of %s (%s) absorbed by its idempotency key: no message",
			actor(h, lastDedup.Caller), stepLabel(h, r, step), lastDedup.Site)})
		return "its last publish was absorbed by an idempotency key", ev
	case last < 0 && inline:
		return "an inline step with no message, never finished by a replay", ev
	case last < 0:
		return "its message was never published", ev
	}
	var lastDel int32 = -1
	for i := range h.Deliveries {
		if h.Deliveries[i].Msg == last {
			lastDel = int32(i)
		}
	}
	if lastDel < 0 {
		for _, m := range h.Retired {
			if m == last {
				return fmt.Sprintf("its last message %d was retired at the delivery cap", last), ev
			}
		}
		return fmt.Sprintf("its last message %d was published and never delivered", last), ev
	}
	d := &h.Deliveries[lastDel]
	if journey, crashed := o.messageJourney(last); crashed {
		// After a crash, follow the message to its fate: every delivery of
		// it after the first that died, and how the last one ended.
		for _, i := range o.calls[lastDel] {
			if c := &h.Calls[i]; c.Op != model.OpEventsCreate || c.Step != step {
				ev = append(ev, callEvidence(h, c))
			}
		}
		ev = append(ev, Evidence{At: d.End, Text: actor(h, model.Caller{Kind: callerKind(h, lastDel), Delivery: lastDel}) +
			": last delivery of the step's last message ends: " + d.Disposition.String()})
		return fmt.Sprintf("its last message %d %s", last, journey), ev
	}
	for _, m := range h.Retired {
		if m == last {
			return fmt.Sprintf("its last message %d was retired at the delivery cap", last), ev
		}
	}
	for _, i := range o.calls[lastDel] {
		if c := &h.Calls[i]; c.Op != model.OpEventsCreate || c.Step != step {
			ev = append(ev, callEvidence(h, c)) // what the last delivery read before it let go
		}
	}
	ev = append(ev, Evidence{At: d.End, Text: actor(h, model.Caller{Kind: callerKind(h, lastDel), Delivery: lastDel}) +
		": last delivery of the step's last message ends: " + d.Disposition.String()})
	switch d.Disposition {
	case model.DispAck:
		return fmt.Sprintf("its last message %d was acked (delivery d%d) without a terminal event", last, lastDel), ev
	case model.DispCrash:
		return fmt.Sprintf("its last message %d died with its consumer (delivery d%d) and never came back", last, lastDel), ev
	}
	return fmt.Sprintf("its last message %d ended with %s (delivery d%d) and was not delivered again", last, d.Disposition, lastDel), ev
}

// continuationStory shows who saw a finished fan-out's pending set empty
// and what their lazy reads answered.
func (o *observed) continuationStory(f int32) []Evidence {
	h := o.h
	var ev []Evidence
	for i := range h.Deliveries {
		if h.Deliveries[i].Fanout != f {
			continue
		}
		if l := o.lastCompleterList(int32(i)); l >= 0 || o.continued(int32(i)) {
			if l >= 0 {
				ev = append(ev, callEvidence(h, &h.Calls[l]))
			}
			if r := o.lazyRead(int32(i)); r >= 0 {
				ev = append(ev, callEvidence(h, &h.Calls[r]))
			}
			replay := ", no replay"
			if o.continued(int32(i)) {
				replay = ", after its replay"
				for _, j := range o.calls[i] {
					if c := &h.Calls[j]; j >= o.replayLoad(int32(i)) {
						ev = append(ev, callEvidence(h, c))
					}
				}
			}
			ev = append(ev, Evidence{At: h.Deliveries[i].End, Text: actor(h, model.Caller{Kind: callerKind(h, int32(i)), Delivery: int32(i)}) +
				": delivery ends: " + h.Deliveries[i].Disposition.String() + replay})
		}
	}
	if len(ev) == 0 {
		ev = append(ev, Evidence{At: h.End, Text: "no delivery saw the fan-out's pending set empty"})
	}
	return ev
}

// continuers lists the step deliveries that replayed the workflow after
// fan-out f (they continued it).
func (o *observed) continuers(f int32) []int32 {
	var out []int32
	for i := range o.h.Deliveries {
		if o.h.Deliveries[i].Fanout == f && o.continued(int32(i)) {
			out = append(out, int32(i))
		}
	}
	return out
}

// continuationFates says, per continuer, how its replay ended: the answer
// to its last write, or that it died.
func (o *observed) continuationFates(by []int32) string {
	h := o.h
	var parts []string
	for _, d := range by {
		fate := "its replay wrote nothing"
		for _, j := range o.calls[d] {
			if c := &h.Calls[j]; j > o.replayLoad(d) && c.Op == model.OpEventsCreate {
				fate = fmt.Sprintf("its replay's last write %s answered %s", c.Event, c.Result)
			}
		}
		if o.crashedTree(d) {
			fate += ", then it died"
		}
		parts = append(parts, fmt.Sprintf("d%d (%s)", d, fate))
	}
	return strings.Join(parts, ", ")
}

// messageJourney narrates message m's deliveries from its first crash on,
// and its fate: redelivered (each later delivery, its claim's answer and
// how it ended), retired at the delivery cap, a re-publish absorbed by an
// idempotency key, acked by a skipped delivery. crashed is false when no
// delivery of m died.
func (o *observed) messageJourney(m int32) (string, bool) {
	h := o.h
	var dels []int32
	for i := range h.Deliveries {
		if h.Deliveries[i].Msg == m {
			dels = append(dels, int32(i))
		}
	}
	first := -1
	for k, d := range dels {
		if h.Deliveries[d].Disposition == model.DispCrash {
			first = k
			break
		}
	}
	if first < 0 {
		return "", false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "died with its consumer (d%d)", dels[first])
	later := dels[first+1:]
	if len(later) == 0 {
		b.WriteString(" and was never delivered again")
	}
	for k, d := range later {
		del := &h.Deliveries[d]
		if k == 0 {
			b.WriteString(" and was redelivered: ")
		} else {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "d%d attempt %d", d, del.Attempt)
		claim := ""
		for _, j := range o.calls[d] {
			if c := &h.Calls[j]; c.Op == model.OpEventsCreate && c.Event == world.EvStepStarted {
				claim = c.Result.String()
			}
		}
		switch {
		case claim == world.EntityConflict.String() && del.Disposition == model.DispAck:
			b.WriteString(" was skipped (its claim met entity_conflict) and acked")
		case claim == world.OK.String() && del.Disposition == model.DispAck:
			b.WriteString(" claimed the step and was acked without a terminal event")
		case claim != "":
			fmt.Fprintf(&b, " claimed (%s) and ended %s", claim, del.Disposition)
		default:
			fmt.Fprintf(&b, " ended %s before a claim", del.Disposition)
		}
	}
	for _, r := range h.Retired {
		if r == m {
			b.WriteString("; then it was retired at the delivery cap")
		}
	}
	// A re-publish the key absorbed is said by stepCause, after the fate.
	return b.String(), true
}
