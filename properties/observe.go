package properties

import (
	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/program"
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// This file derives, from what an observer of the real system could record,
// the facts the properties judge: which runs.get was a prologue read and
// which a last completer's lazy read, which delivery replayed the workflow,
// what run row a producer held when it published. An observer sees World
// calls with their arguments and answers, queue publishes with their
// payloads, deliveries with their attempt, consumer and disposition, and a
// step body's span. It does not see the model's reason tags, its per-delivery
// flags (LastComplete, Continued, Recovered, Outcome, Prologue), its per
// fan-out bookkeeping, whether a read was stale, or the store's final rows:
// no property reads those (TestPropertiesIgnoreModelInternals scrambles them).

// observed indexes a History by delivery.
type observed struct {
	h *model.History
	// calls lists each delivery's calls in the order it issued them.
	calls [][]int32
	// pubs lists each delivery's publishes in order.
	pubs [][]int32
	// created is each run's identity as run_created answered it; started
	// as the first accepted run_started answered it (hasStart says one was).
	created  []world.Identity
	started  []world.Identity
	hasStart []bool
	// terminal is each run's first accepted terminal event, or nil.
	terminal []*model.Accepted

	// Scratch space of the properties, kept from History to History by a
	// checker: the accepted events grouped by step, each message's
	// publish (pubOf, made by publishes), the step bodies.
	groups stepGroups
	pubOf  []*model.Publish
	hasPub bool
	bodies []stepBody
	// replayable-log's: each run's accepted events, the log it replays
	// and the events' indexes, the replay, the workflows by shape.
	runLogs  [][]int32
	plog     []program.Event
	pacc     []int32
	replayer program.Replayer
	widths   []int
	programs []compiledProgram
}

// publishes is each message's publish record (publishOf), made once per
// History.
func (o *observed) publishes() []*model.Publish {
	if !o.hasPub {
		o.pubOf = publishInto(zeroed(o.pubOf, len(o.h.Messages)), o.h)
		o.hasPub = true
	}
	return o.pubOf
}

func observe(h *model.History) *observed {
	o := &observed{}
	o.index(h)
	return o
}

// index makes o the index of h, reusing the room of the History it indexed
// before (a checker's): each delivery's lists keep their arrays.
func (o *observed) index(h *model.History) {
	o.h, o.hasPub = h, false
	o.calls = resetLists(o.calls, len(h.Deliveries))
	o.pubs = resetLists(o.pubs, len(h.Deliveries))
	o.created = zeroed(o.created, len(h.Runs))
	o.started = zeroed(o.started, len(h.Runs))
	o.hasStart = zeroed(o.hasStart, len(h.Runs))
	o.terminal = terminalInto(zeroed(o.terminal, len(h.Runs)), h)
	for i := range h.Calls {
		c := &h.Calls[i]
		if c.Caller.Delivery >= 0 {
			o.calls[c.Caller.Delivery] = append(o.calls[c.Caller.Delivery], int32(i))
		}
		if c.Op != model.OpEventsCreate || c.Result != world.OK || !c.HasRow {
			continue
		}
		switch {
		case c.Event == world.EvRunCreated:
			o.created[c.Run] = c.Row
		case c.Event == world.EvRunStarted && !o.hasStart[c.Run]:
			o.started[c.Run], o.hasStart[c.Run] = c.Row, true
		}
	}
	for i := range h.Publishes {
		if d := h.Publishes[i].Caller.Delivery; d >= 0 {
			o.pubs[d] = append(o.pubs[d], int32(i))
		}
	}
}

// resetLists returns n empty lists, each keeping the array it had in l.
func resetLists(l [][]int32, n int) [][]int32 {
	if cap(l) < n {
		l = append(l[:cap(l)], make([][]int32, n-cap(l))...)
	}
	l = l[:n]
	for i := range l {
		l[i] = l[i][:0]
	}
	return l
}

// zeroed returns s resliced to n zero elements, reusing its room when it
// has enough.
func zeroed[S ~[]E, E any](s S, n int) S {
	if cap(s) < n {
		return make(S, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// identity is the run's immutable identity as the World answered it: the
// row an accepted run_started returned (it sets startedAt), else the row
// run_created returned.
func (o *observed) identity(r world.RunID) world.Identity {
	if o.hasStart[r] {
		return o.started[r]
	}
	return o.created[r]
}

// queuedStep says delivery d handled a step message (not an inline step,
// not a workflow invocation): its payload has a stepId.
func (o *observed) queuedStep(d int32) bool {
	del := &o.h.Deliveries[d]
	return del.Msg >= 0 && del.Kind == model.MsgStep
}

// prologueRead returns the runs.get a queued step delivery made before it
// wrote or listed anything (the legacy prologue's read), or -1.
func (o *observed) prologueRead(d int32) int32 {
	if !o.queuedStep(d) {
		return -1
	}
	for _, i := range o.calls[d] {
		c := &o.h.Calls[i]
		switch {
		case c.Op == model.OpRunsGet:
			return i
		case c.Op == model.OpEventsList, c.Op == model.OpEventsCreate && c.Event != world.EvStepCreated:
			// The claim (or a listing) came first; a step_created before it
			// is the prologue's re-ensure, issued alongside the read.
			return -1
		}
	}
	return -1
}

// fetchFree says a queued step delivery made no read before its claim.
func (o *observed) fetchFree(d int32) bool { return o.queuedStep(d) && o.prologueRead(d) < 0 }

// lastCompleterList returns the delivery's events.list of its fan-out that
// answered "nothing pending" (it saw itself as the fan-out's last
// completer), or -1.
func (o *observed) lastCompleterList(d int32) int32 {
	for _, i := range o.calls[d] {
		c := &o.h.Calls[i]
		if c.Op == model.OpEventsList && c.Fanout >= 0 && c.PendingEmpty {
			return i
		}
	}
	return -1
}

// lazyRead returns the lazy runs.get of a queued step delivery: the first
// runs.get it made that is not its prologue read, or -1. Every path that
// tells a completer it is last counts (an events.list answering nothing
// pending, a skipped claim's listing, the atomic World's answer to its
// write): the read comes after the delivery's claim whatever taught it.
func (o *observed) lazyRead(d int32) int32 {
	if !o.queuedStep(d) {
		return -1
	}
	pro := o.prologueRead(d)
	for _, i := range o.calls[d] {
		if c := &o.h.Calls[i]; i != pro && c.Op == model.OpRunsGet {
			return i
		}
	}
	return -1
}

// replayLoad returns the call its replay loaded the log with (not a
// fan-out check only), or -1: its first list of the whole run, its
// run_started answered ok (the preload), or, for an inline step, the list
// after its step that calls followed. The
// orchestrator's inline path lists once after its inline steps and replays
// from that load (core's nextEventLogLoad), so the replay shows as calls
// after it, not as a list of its own.
func (o *observed) replayLoad(d int32) int32 {
	last := int32(-1)
	for _, i := range o.calls[d] {
		c := &o.h.Calls[i]
		switch {
		case c.Op == model.OpEventsList && c.Fanout < 0:
			return i
		case c.Op == model.OpEventsCreate && c.Event == world.EvRunStarted && c.Result == world.OK:
			// A workflow delivery replays from run_started's answer: the
			// log world-local preloads with it (none on turbo's first
			// delivery, which replays an empty log).
			return i
		case c.Op == model.OpEventsList:
			last = i
		case last >= 0 && o.h.Deliveries[d].Msg < 0:
			return last
		}
	}
	if last >= 0 && o.h.Deliveries[d].Msg < 0 {
		// A replay that found the next fan-out already created makes no
		// World call, only its dispatch loop's publishes of the pending
		// steps: it continued all the same (the spans show the publish
		// under the step, spancheck).
		// A publish of the same fan-out's steps is no continuation: the
		// last inline step's replay finding its fan-out unfinished arms a
		// backstop (no step) or hands an owned step back to the queue.
		fo := &o.h.Fanouts[o.h.Deliveries[d].Fanout]
		for _, i := range o.pubs[d] {
			if pub := &o.h.Publishes[i]; pub.At >= o.h.Calls[last].End && pub.Step >= fo.FirstStep+world.StepID(fo.Branches) {
				return last
			}
		}
	}
	return -1
}

// continued says the step delivery replayed the workflow (loaded the whole
// run's log) after its step: it continued the fan-out, however it learned
// the fan-out was finished (a listing, or the atomic World's answer).
func (o *observed) continued(d int32) bool {
	if o.h.Deliveries[d].Kind != model.MsgStep {
		return false
	}
	return o.replayLoad(d) >= 0
}

// crashedTree says delivery d, or the invocation an inline step ran in,
// died mid-delivery (the queue saw the consumer go away).
func (o *observed) crashedTree(d int32) bool {
	for d >= 0 {
		del := &o.h.Deliveries[d]
		if del.Disposition == model.DispCrash {
			return true
		}
		if del.Msg >= 0 {
			return false
		}
		d = del.Parent
	}
	return false
}

// deathOf is when delivery d's tree died: the end of the delivery that
// crashed (d, or the invocation it ran in).
func (o *observed) deathOf(d int32) sim.Time {
	for d >= 0 {
		del := &o.h.Deliveries[d]
		if del.Disposition == model.DispCrash || del.Msg >= 0 {
			return del.End
		}
		d = del.Parent
	}
	return -1
}

// heldRow is the run row the producer held when it published p: the newest
// row a World answer gave the publishing delivery (or the invocation an
// inline step runs in) before the publish, else the runContext of the
// message it was handling. ok is false when it held none.
func (o *observed) heldRow(p *model.Publish) (ctx model.RunContext, ok bool) {
	for d := p.Caller.Delivery; d >= 0; d = o.h.Deliveries[d].Parent {
		var best *model.Call
		for _, i := range o.calls[d] {
			c := &o.h.Calls[i]
			if c.HasRow && c.End <= p.At && (best == nil || c.End >= best.End) {
				best = c
			}
		}
		if best != nil {
			r := best.Row
			return model.RunContext{DeploymentID: r.DeploymentID, SpecVersion: r.SpecVersion, StartedAt: r.StartedAt, RootRunID: r.RootRunID}, true
		}
		del := &o.h.Deliveries[d]
		if del.Msg >= 0 {
			if m := &o.h.Messages[del.Msg]; m.HasCtx {
				return m.Ctx, true
			}
			return model.RunContext{}, false
		}
	}
	return model.RunContext{}, false
}

// endSeen returns when delivery d first learned its run had ended, from an
// answer it got: a runs.get reading a terminal status, a log holding the
// terminal event, or a write refused with RunExpired. ok is false if never.
func (o *observed) endSeen(d int32) (at int32, ok bool) {
	for _, i := range o.calls[d] {
		c := &o.h.Calls[i]
		switch {
		case c.Op == model.OpRunsGet && c.StatusRead.Terminal(),
			c.Op == model.OpEventsList && c.LogTerminal,
			c.Op == model.OpEventsCreate && c.Result == world.RunExpired:
			return i, true
		}
	}
	return -1, false
}
