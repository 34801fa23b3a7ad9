package flow

import (
	"errors"
	"fmt"
	"time"

	"github.com/simlab/simlab/model/program"
)

// Forcing is what a run's unconsumable log depends on, in terms a real run
// can be held to: the write a fresh replay of the log stops at, the last
// event below it that its writer had not seen, and, when the writer read
// Date.now() on the other side of a deadline, both reads. A real run whose
// writer makes that write from that statement, held until that event is
// answered, with its reads on the same sides of the deadline, writes a log
// that diverges the same way.
type Forcing struct {
	// Stale is the write a fresh replay stops at (log position StaleAt),
	// minted by its writer's replay from statement StaleNode; Expected is
	// what a fresh replay of the log before it mints there instead
	// ("nothing yet" when it awaits no such entity).
	Stale     program.Event
	StaleAt   int
	StaleNode int32
	Expected  string
	Writer    string
	// Missed is the last event below the stale write its writer had not
	// seen (log position MissedAt), by MissedBy.
	Missed   program.Event
	MissedAt int
	MissedBy string
	// Clock, when the writer's choice that differs from a fresh replay's
	// is a Date.now() read.
	Clock *ClockMargin
}

// ClockMargin is a Date.now() choice two replays made on either side of
// its deadline: what the stale writer's replay read and what a fresh
// replay of the log reads, at statement Node.
type ClockMargin struct {
	Node         int32
	Deadline     time.Duration
	Stale, Fresh time.Duration
	// FreshAt is the log position of the event whose stamp a fresh
	// replay's read took (-1: none).
	FreshAt int
}

// StaleGap is how far short of the deadline the stale writer's read was:
// how much later a real run may stamp the event it read before the
// writer's choice flips (the fresh read can be held past the deadline).
func (c ClockMargin) StaleGap() time.Duration { return c.Deadline - c.Stale }

// Forcing derives what res's unconsumable log depends on (Story's facts,
// structured). It refuses a run whose log a fresh replay consumes, and one
// whose stale write's writer or missed event is not known.
func (res *Result) Forcing(p *program.Compiled) (Forcing, error) {
	if res.Fresh.Status != program.Diverged {
		return Forcing{}, errors.New("a fresh replay of the run's log consumes it: nothing to force")
	}
	i := res.Fresh.At
	ev := res.Log[i]
	f := Forcing{Stale: ev.Event, StaleAt: i, Writer: res.ActorName(ev.By), MissedAt: -1}
	view := res.writerView(i)
	if view == nil {
		return f, fmt.Errorf("event %d (%s): its writer's view of the log is not known", i, ev.Event)
	}
	mint := res.replayer(false)
	mint.Replay(p, res.eventsAt(view))
	node, ok := mint.NodeOf(ev.Ordinal)
	if !ok {
		return f, fmt.Errorf("event %d (%s): its writer's replay mints no entity #%d", i, ev.Event, ev.Ordinal)
	}
	f.StaleNode = node
	_, f.Expected = res.expectedAt(p, i)
	if missed := res.missedBelow(i); len(missed) > 0 {
		j := missed[len(missed)-1] // the latest it had not seen
		f.Missed, f.MissedAt, f.MissedBy = res.Log[j].Event, j, res.ActorName(res.Log[j].By)
	}
	if f.MissedAt < 0 {
		return f, fmt.Errorf("event %d (%s): its writer had seen every event below it", i, ev.Event)
	}
	if c := res.otherChoice(p, i); c.clock != nil {
		ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
		// A fresh replay's log is the log's first events: a position in
		// it is one in the log.
		f.Clock = &ClockMargin{Node: c.clock.log.Node, Deadline: p.Nodes[c.clock.log.Node].Clock, Stale: ms(c.clock.view.Clock), Fresh: ms(c.clock.log.Clock),
			FreshAt: c.clock.log.Last}
	}
	return f, nil
}

// firstN is the positions 0..n-1.
func firstN(n int) []int {
	out := make([]int, n)
	for j := range out {
		out[j] = j
	}
	return out
}
