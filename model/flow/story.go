package flow

import (
	"fmt"
	"time"

	"github.com/simlab/simlab/model/program"
	"github.com/simlab/simlab/sim"
)

// maxMissed is how many of the events a writer had not seen its story
// lists.
const maxMissed = 6

// Story explains a run whose log no replay consumes (or that failed
// CORRUPTED_EVENT_LOG): the event a fresh replay of the log stops at and
// what the program awaits there instead; who wrote that event, from which
// log, and the events below its write it had not seen; and every other
// write of an entity under the same id, accepted or refused. It is empty
// for a run whose log replays and that did not fail corrupted.
func (res *Result) Story(p *program.Compiled) []string {
	if res.Fresh.Status != program.Diverged && res.End != Corrupted {
		return nil
	}
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	if res.End == Corrupted {
		end := res.Log[res.EndAt()]
		add("the run failed CORRUPTED_EVENT_LOG at %s, written by %s after %d divergent replays", at(end.At), res.ActorName(end.By), res.Divergences)
	}
	if res.Fresh.Status != program.Diverged {
		add("a fresh replay of the log consumes it whole: the divergences were of writers' own views, not of the log")
		return out
	}
	i := res.Fresh.At
	ev := res.Log[i]
	add("a fresh replay of the log diverges at event %d (%s): %s", i, res.Fresh.Divergence, ev.Event)
	o, expected := res.expectedAt(p, i)
	if o.Status == program.Suspended {
		add("  a fresh replay of the %d events before it awaits, at #%d: %s", i, ev.Ordinal, expected)
	} else {
		add("  a fresh replay of the %d events before it: %s", i, o)
	}
	add("event %d was written at %s by %s", i, at(ev.At), res.ActorName(ev.By))
	if ev.Saw >= 0 {
		own := ev.Saw - ev.Loaded
		last := ""
		if ev.Loaded > 0 {
			l := res.Log[ev.Loaded-1]
			last = fmt.Sprintf(" (the last: %s, at %s)", l.Event, at(l.At))
		}
		if own > 0 {
			add("  from a replay of %d events: the log's first %d%s and %d of its own writes after them", ev.Saw, ev.Loaded, last, own)
		} else {
			add("  from a replay of the log's first %d events%s", ev.Saw, last)
		}
		if missed := res.missedBelow(i); len(missed) > 0 {
			add("  it had not seen %d events below its write:", len(missed))
			for k, j := range missed {
				if k == maxMissed {
					add("    … %d more", len(missed)-maxMissed)
					break
				}
				add("    event %d %s, by %s at %s", j, res.Log[j].Event, res.ActorName(res.Log[j].By), at(res.Log[j].At))
			}
		}
	}
	if line := res.choiceMadeOtherwise(p, i); line != "" {
		add("%s", line)
	}
	var others []string
	for _, w := range res.Writes {
		if w.Ordinal != ev.Ordinal || w.Kind != ev.Kind || (w.At == ev.At && w.By == ev.By) {
			continue
		}
		if !creates(w.Type) || (w.Type == program.StepStarted && w.Saw < 0) {
			continue // a queued step's own claim creates nothing
		}
		verdict := "accepted"
		switch {
		case w.Fenced:
			verdict = "refused by the tail fence: its log was not the run's tail"
			if res.View == ViewCountGuard {
				verdict = "refused by the count guard: an event stamped below its log's latest committed after its read"
			}
		case !w.Accepted:
			verdict = "refused: the id exists"
		}
		saw := ""
		if w.Saw >= 0 {
			saw = fmt.Sprintf(", from a replay of %d events", w.Saw)
		}
		others = append(others, fmt.Sprintf("    %s %s by %s%s: %s", at(w.At), w.Event, res.ActorName(w.By), saw, verdict))
	}
	if len(others) > 0 {
		add("other creates of #%d:", ev.Ordinal)
		out = append(out, others...)
	}
	return out
}

// expectedAt replays the log before event i afresh and names what it
// awaits of event i's entity there ("nothing yet": no such entity).
func (res *Result) expectedAt(p *program.Compiled, i int) (program.Outcome, string) {
	rep := res.replayer(false)
	o := rep.Replay(p, res.eventsAt(firstN(i)))
	expected := "nothing yet"
	for _, pe := range o.Pending {
		if pe.Ordinal == res.Log[i].Ordinal {
			expected = pe.Kind.String()
			if pe.Name != "" {
				expected += " " + pe.Name
			}
		}
	}
	return o, expected
}

func creates(t program.EventType) bool {
	return t == program.StepCreated || t == program.StepStarted || t == program.WaitCreated
}

// ownedBy reports whether log event j was written by an inline step of
// invocation a (its own claims count as its writes).
func (res *Result) ownedBy(j int, a int32) bool {
	by := res.Log[j].By
	return by >= 0 && res.Actors[by].Parent == a
}

// ActorName names actor a for a reader: what it is and why it ran.
func (res *Result) ActorName(a int32) string {
	if a < 0 {
		return "the run's creation"
	}
	ac := &res.Actors[a]
	switch ac.Kind {
	case ActorStep:
		if len(ac.Replays) > 0 {
			return fmt.Sprintf("step delivery %d (#%d %s) as its last completer", a, ac.Ordinal, ac.Name)
		}
		return fmt.Sprintf("step delivery %d (#%d %s)", a, ac.Ordinal, ac.Name)
	case ActorInline:
		return fmt.Sprintf("inline step %d (#%d %s) of workflow invocation %d", a, ac.Ordinal, ac.Name, ac.Parent)
	case ActorResume:
		return fmt.Sprintf("outside resume %d of hook#%d", a, ac.Ordinal)
	}
	return fmt.Sprintf("workflow invocation %d (%s)", a, ac.Cause)
}

func at(t sim.Time) string {
	return "+" + time.Duration(t).Round(time.Microsecond).String()
}

// choiceMadeOtherwise names the first choice the writer of log event i made
// otherwise than a fresh replay of the log before i makes it: a race it saw
// settled by another branch, else a clock statement (Date.now()) it read
// on the other side of its deadline (up to core beta.53 a replay reads the
// time of the last event its pass took, program.ClockPerPass). That is the
// writer's own wrong act, when its view was not the log's. "" when its view
// is not known or it chose as the log does.
func (res *Result) choiceMadeOtherwise(p *program.Compiled, i int) string {
	c := res.otherChoice(p, i)
	if c.race != nil {
		lw, vw := c.race.log, c.race.view
		logEv := fmt.Sprintf("event %d %s, by %s", lw.At, res.Log[lw.At].Event, res.ActorName(res.Log[lw.At].By))
		if !c.race.ok {
			return fmt.Sprintf("  the race of statement %d was settled in the log by branch %d (%s); its replay saw it unsettled", lw.Node, lw.Branch, logEv)
		}
		j := c.view[vw.At]
		return fmt.Sprintf("  the race of statement %d: its replay saw branch %d win on %s (event %d, by %s), the log has branch %d winning first (%s)",
			lw.Node, vw.Branch, res.Log[j].Event, j, res.ActorName(res.Log[j].By), lw.Branch, logEv)
	}
	if c.clock == nil {
		return ""
	}
	last := func(pos []int, k int) string {
		if k < 0 {
			return "no event"
		}
		// Its createdAt, what the clock reads: its write's start, not
		// when it landed.
		j := pos[k]
		return fmt.Sprintf("event %d %s, by %s, stamped +%v", j, res.Log[j].Event, res.ActorName(res.Log[j].By), time.Duration(res.Log[j].CreatedMS)*time.Millisecond)
	}
	lc, vc := c.clock.log, c.clock.view
	d := p.Nodes[lc.Node].Clock
	side := func(t bool) string {
		if t {
			return fmt.Sprintf("at or past its %v", d)
		}
		return fmt.Sprintf("short of its %v", d)
	}
	return fmt.Sprintf("  Date.now() at statement %d: its replay read +%v, %s (the last event it had taken: %s); a fresh replay of the log reads +%v there, %s (its pass had taken %s): the replay's clock runs ahead with its pass (%s)",
		lc.Node, time.Duration(vc.Clock)*time.Millisecond, side(vc.Truthy), last(c.view, vc.Last), time.Duration(lc.Clock)*time.Millisecond, side(lc.Truthy), last(c.truth, lc.Last), res.Clock)
}

// choice is the first choice the writer of a log event made otherwise than
// a fresh replay of the log before it (race or clock, nil: none), with the
// two logs as positions in the run's log (view nil: the writer's view is
// not known).
type choice struct {
	race        *paired[program.RaceWin]
	clock       *paired[program.ClockRead]
	view, truth []int
}

// otherChoice finds choiceMadeOtherwise's choice for log event i.
func (res *Result) otherChoice(p *program.Compiled, i int) choice {
	view := res.writerView(i)
	if view == nil {
		return choice{}
	}
	truth := firstN(i)
	replay := func(pos []int) ([]program.RaceWin, []program.ClockRead) {
		r := res.replayer(true)
		r.Replay(p, res.eventsAt(pos))
		return r.Wins, r.Clocks
	}
	viewWins, viewClocks := replay(view)
	logWins, logClocks := replay(truth)
	c := choice{view: view, truth: truth}
	for _, w := range pairByStatement(logWins, viewWins, func(w program.RaceWin) int32 { return w.Node }) {
		if !w.ok || w.view.Branch != w.log.Branch {
			c.race = &w
			return c
		}
	}
	for _, k := range pairByStatement(logClocks, viewClocks, func(c program.ClockRead) int32 { return c.Node }) {
		if k.ok && k.view.Truthy != k.log.Truthy {
			c.clock = &k
			return c
		}
	}
	return c
}

// paired is a choice the log's replay made and the writer's replay's at
// the same statement and occurrence (ok: the writer's made it too).
type paired[T any] struct {
	log, view T
	ok        bool
}

// pairByStatement pairs each of the log's choices with the writer's at the
// same statement and occurrence, in the log's order.
func pairByStatement[T any](inLog, inView []T, node func(T) int32) []paired[T] {
	type key struct{ node, nth int32 }
	seen, byKey := map[int32]int32{}, map[key]T{}
	for _, v := range inView {
		byKey[key{node(v), seen[node(v)]}] = v
		seen[node(v)]++
	}
	clear(seen)
	out := make([]paired[T], 0, len(inLog))
	for _, l := range inLog {
		k := key{node(l), seen[node(l)]}
		seen[node(l)]++
		v, ok := byKey[k]
		out = append(out, paired[T]{log: l, view: v, ok: ok})
	}
	return out
}

// Explain is everything the run's own record tells of what went wrong in
// it: a log no replay consumes (Story), then a run ended more than once
// (EndsStory). Empty for a run with neither.
func (res *Result) Explain(p *program.Compiled) []string {
	return append(res.Story(p), res.EndsStory()...)
}

// EndsStory explains a run the World accepted more than one end for: each
// accepted run_completed or run_failed, who wrote it from which log, and,
// for each end after the first, whether its writer's log could have shown
// the first (it was issued before the first landed: world-local checks the
// run's status, then writes, so both checks passed). Empty for a run that
// ended at most once.
func (res *Result) EndsStory() []string {
	if res.RunEnds < 2 {
		return nil
	}
	var out []string
	var first *Write
	for i := range res.Writes {
		w := &res.Writes[i]
		if !w.Accepted || (w.Type != program.RunCompleted && w.Type != program.RunFailed) {
			continue
		}
		line := fmt.Sprintf("%s %s wrote %s (accepted)", at(w.At), res.ActorName(w.By), w.Type)
		if w.Saw >= 0 {
			line += fmt.Sprintf(", from a replay of %d events", w.Saw)
		}
		if first == nil {
			first = w
			out = append(out, "the run ended more than once:", "  "+line)
			continue
		}
		out = append(out, "  "+line)
		if w.Issued < first.At {
			out = append(out, fmt.Sprintf("    issued at %s, before the first end landed at %s: its replay could not have seen it, and the World's status check let both ends through", at(w.Issued), at(first.At)))
		} else {
			out = append(out, fmt.Sprintf("    issued at %s, after the first end landed at %s: the World accepted an end for a run already ended", at(w.Issued), at(first.At)))
		}
	}
	return out
}

// writerView is the log the writer of event i replayed, as positions in
// the log: its first Loaded events, then its own writes (and its inline
// steps') below event i that it had made before the replay. nil when its
// view is not known or this reconstruction does not match it.
func (res *Result) writerView(i int) []int {
	ev := res.Log[i]
	if ev.Saw < 0 || ev.Loaded < 0 {
		return nil
	}
	view := make([]int, 0, ev.Saw)
	for j := range int(ev.Loaded) {
		view = append(view, j)
	}
	// Its own writes land in the order it issued them, so the ones its
	// replay saw are the first Saw - Loaded of them.
	for j := int(ev.Loaded); j < i && len(view) < int(ev.Saw); j++ {
		if res.Log[j].By == ev.By || res.ownedBy(j, ev.By) {
			view = append(view, j)
		}
	}
	if len(view) != int(ev.Saw) {
		return nil
	}
	return view
}

// eventsAt is the log's events at positions pos.
func (res *Result) eventsAt(pos []int) []program.Event {
	out := make([]program.Event, len(pos))
	for k, j := range pos {
		out[k] = res.Log[j].Event
	}
	return out
}

// replayer replays as the run's replays did: its clock, its conflicts'
// order and its correlation ids.
func (res *Result) replayer(explain bool) program.Replayer {
	return program.Replayer{Explain: explain, Clock: res.Clock, Conflicts: res.Conflicts, CallSite: res.CallSite}
}

// The causes Cause names: the first wrong act of the writer of the event a
// fresh replay of the log stops at.
const (
	// CauseClockAhead: its replay read Date.now() on the other side of a
	// deadline than a fresh replay of the log does at the same statement.
	CauseClockAhead = "a Date.now() read ahead with its pass"
	// CauseStaleRace: its replay saw a race won by another branch than
	// the log has winning first (it had not seen the winner).
	CauseStaleRace = "a race decided on a stale log"
	// CauseUnsettledRace: its replay saw a race unsettled that the log
	// had settled.
	CauseUnsettledRace = "a race the writer saw unsettled"
	// CauseStaleMint: no choice went otherwise, but the writer had not
	// seen events below its write, and its replay minted another entity
	// at the id (an awaited step's result not yet seen, so the next id went
	// to the next statement).
	CauseStaleMint = "a stale log minting another entity at the id"
	// CauseOwnViews: the log replays whole; the run failed on its
	// writers' own views diverging.
	CauseOwnViews = "writers' own views diverging, the log whole"
	// CauseOther: none of the above.
	CauseOther = "none named"
)

// Cause names what made the run's log unreplayable (or the run fail
// CORRUPTED_EVENT_LOG), as its Story tells it: "" for a run whose log
// replays and that did not fail corrupted.
func (res *Result) Cause(p *program.Compiled) string {
	if res.Fresh.Status != program.Diverged {
		if res.End == Corrupted {
			return CauseOwnViews
		}
		return ""
	}
	i := res.Fresh.At
	c := res.otherChoice(p, i)
	switch {
	case c.race != nil && !c.race.ok:
		return CauseUnsettledRace
	case c.race != nil:
		return CauseStaleRace
	case c.clock != nil:
		return CauseClockAhead
	}
	if len(res.missedBelow(i)) > 0 {
		return CauseStaleMint
	}
	return CauseOther
}

// missedBelow are the positions below log event i that its writer had not
// seen: past the log it loaded, and neither its own writes nor its inline
// steps' (none when no replay decided the event).
func (res *Result) missedBelow(i int) []int {
	ev := res.Log[i]
	if ev.Saw < 0 {
		return nil
	}
	var missed []int
	for j := int(max(ev.Loaded, 0)); j < i; j++ {
		if res.Log[j].By != ev.By && !res.ownedBy(j, ev.By) {
			missed = append(missed, j)
		}
	}
	return missed
}
