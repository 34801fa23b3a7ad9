package properties

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/program"
	"github.com/simlab/simlab/model/world"
)

// replayableLog: a fresh replay of every run's log consumes it, as the real
// runtime's replay would (model/program, held against core's own replay by
// realengine's offline corpus). The log is read up to its first terminal
// run event, as the runtime reads it (it replays no log holding the run's
// end); the replay is of the workflow's code, the fan-out list each run
// ran. A log it cannot consume is one the runtime would fail
// CORRUPTED_EVENT_LOG after its recovery replays. The story names the
// event the replay stopped at, the delivery that wrote it and the prefix
// of the log that delivery had loaded, what a fresh replay of the log
// before it minted at that id, and every other write for the same id.
func replayableLog(o *observed) []Violation {
	h := o.h
	var out []Violation
	if len(h.Runs) == 1 {
		// One run (most checks): its events are the History's, in order.
		o.runLogs = resetLists(o.runLogs, 1)
		for i := range h.Accepted {
			o.runLogs[0] = append(o.runLogs[0], int32(i))
		}
	} else {
		o.runLogs = resetLists(o.runLogs, len(h.Runs))
		for i := range h.Accepted {
			if r := int(h.Accepted[i].Run); r < len(h.Runs) {
				o.runLogs[r] = append(o.runLogs[r], int32(i))
			}
		}
	}
	for r := range h.Runs {
		acc := o.runLogs[r]
		// Recorded as they took effect: mostly in log order already.
		for j := 1; j < len(acc); j++ {
			if h.Accepted[acc[j]].Pos < h.Accepted[acc[j-1]].Pos {
				slices.SortStableFunc(acc, func(a, b int32) int { return cmp.Compare(h.Accepted[a].Pos, h.Accepted[b].Pos) })
				break
			}
		}
		o.plog, o.pacc = o.plog[:0], o.pacc[:0]
		for _, i := range acc {
			a := &h.Accepted[i]
			if a.Type.EndsRun() {
				break
			}
			if e, ok := model.ProgramEvent(a); ok {
				o.plog = append(o.plog, e)
				o.pacc = append(o.pacc, i)
			}
		}
		p := o.programOf(world.RunID(r))
		if res := o.replayer.Replay(p, o.plog); res.Status == program.Diverged {
			out = append(out, o.unreplayable(world.RunID(r), p, res))
		}
	}
	return out
}

// programOf is run's workflow: the fan-out list it ran, compiled once per
// shape.
func (o *observed) programOf(run world.RunID) *program.Compiled {
	h := o.h
	o.widths = o.widths[:0]
	for _, f := range h.Runs[run].Fanouts {
		o.widths = append(o.widths, int(h.Fanouts[f].Branches))
	}
	for _, c := range o.programs {
		if slices.Equal(c.widths, o.widths) {
			return c.prog
		}
	}
	c := compiledProgram{widths: slices.Clone(o.widths), prog: program.MustCompile(program.FromFanouts(o.widths, model.FanoutStep))}
	o.programs = append(o.programs, c)
	return c.prog
}

type compiledProgram struct {
	widths []int
	prog   *program.Compiled
}

// unreplayable is the violation of run's log, whose replay res diverged
// (o.plog and o.pacc are the log it replayed).
func (o *observed) unreplayable(run world.RunID, p *program.Compiled, res program.Outcome) Violation {
	h := o.h
	at := o.pacc[res.At]
	a := &h.Accepted[at]
	ev := o.plog[res.At]
	v := Violation{Property: "replayable-log", Run: run,
		Message: fmt.Sprintf("a fresh replay of the log diverges at its event %d, %s (%s): a replay reading it fails the run CORRUPTED_EVENT_LOG after its recovery replays", res.At, ev, res.Divergence)}
	v.Evidence = append(v.Evidence, Evidence{At: a.At, Text: fmt.Sprintf("%s, accepted at log position %d; %s",
		callText(h, &h.Calls[a.Call]), a.Pos, o.loaded(&h.Calls[a.Call]))})
	// What a replay of the log before it expects at that id.
	before := o.replayer.Replay(p, o.plog[:res.At])
	expect := fmt.Sprintf("a fresh replay of the %d events before it minted %d entities, none at id %d", res.At, before.Minted, ev.Ordinal)
	if ev.Ordinal >= 0 && ev.Ordinal < before.Minted {
		expect = fmt.Sprintf("a fresh replay of the %d events before it saw the entity at id %d finish, and nothing takes an event for it now", res.At, ev.Ordinal)
	}
	for _, pe := range before.Pending {
		if pe.Ordinal == ev.Ordinal {
			expect = fmt.Sprintf("a fresh replay of the %d events before it awaits %s at that id", res.At, pe)
		}
	}
	v.Evidence = append(v.Evidence, Evidence{At: a.At, Text: expect})
	// The writes for the same id, accepted or refused, in the order they
	// were issued: which landed first in the log and which was in flight.
	if a.Step != world.NoStep {
		for i := range h.Calls {
			c := &h.Calls[i]
			if c.Run != run || c.Step != a.Step || c.Op != model.OpEventsCreate {
				continue
			}
			if int32(i) == a.Call {
				v.Evidence = append(v.Evidence, Evidence{At: c.Start, Text: fmt.Sprintf("%s: events.create %s(%s) issued; in flight until %v",
					actor(h, c.Caller), c.Event, stepLabel(h, run, c.Step), c.End)})
				continue
			}
			v.Evidence = append(v.Evidence, Evidence{At: c.End, Text: callText(h, c) + "; " + o.loaded(c)})
		}
	}
	return v
}

// loaded says what prefix of its run's log write w rests on: for a
// replay's write, what its invocation had loaded by then (its last
// listing of the log, run_started's preload or an inline step_completed's
// delta); a step's claim and end rest on none.
func (o *observed) loaded(w *model.Call) string {
	h := o.h
	d, at, run := w.Caller.Delivery, w.Start, w.Run
	if d < 0 {
		return "written by no replay"
	}
	if w.Step != world.NoStep && w.Step == h.Deliveries[d].Step && w.Event != world.EvStepCreated {
		return "its delivery's write for its own step, which rests on no log"
	}
	inv := h.Invocation(d)
	var last *model.Call
	for dd := range h.Deliveries {
		// The invocation's own calls and its inline steps': a step's
		// completion answered with the log's delta is the invocation's load.
		if int32(dd) != d && (inv < 0 || h.Invocation(int32(dd)) != inv) {
			continue
		}
		for _, i := range o.calls[dd] {
			c := &h.Calls[i]
			listed := c.Op == model.OpEventsList || c.Op == model.OpEventsCreate && c.Result == world.OK &&
				(c.Event == world.EvRunStarted || c.Event == world.EvStepCompleted && c.PendingEmpty)
			if listed && c.End <= at && (last == nil || c.End > last.End) {
				last = c
			}
		}
	}
	if last == nil {
		return "its invocation had loaded no log (turbo's empty one)"
	}
	n := 0
	lastEv := "none"
	for i := range h.Accepted {
		if e := &h.Accepted[i]; e.Run == run && e.At <= last.Served {
			n++
			lastEv = e.Type.String()
			if e.Step != world.NoStep {
				lastEv += "(" + stepLabel(h, run, e.Step) + ")"
			}
		}
	}
	how := "its events.list"
	switch {
	case last.Event == world.EvRunStarted && last.Op == model.OpEventsCreate:
		how = "run_started's preload"
	case last.Event == world.EvStepCompleted && last.Op == model.OpEventsCreate:
		how = "its inline step_completed's delta"
	}
	return fmt.Sprintf("its invocation's replay had loaded the log's first %d events (the last %s), from %s at +%v", n, lastEv, how, last.End.Duration())
}
