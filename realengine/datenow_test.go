package realengine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/model/program"
)

// Date.now() in a workflow is the replay's clock, moved to each event's
// createdAt. Up to core 5.0.0-beta.53 it moves as the walk consumes events,
// and the walk consumes, in one pass, every event in a row a registered
// consumer takes before the program runs on: a continuation reads the time
// of the last event of that pass, so a replay whose log goes on past the
// event it awaited (another branch's step finishing a second later) reads a
// later time at the same point of the program than the replay whose log
// ended there. A program that branches on it then mints another entity,
// and the log the earlier replay wrote is one no later replay consumes:
// CORRUPTED_EVENT_LOG on the pinned release, slot ids or not. Core
// 5.0.0-beta.55 moves the clock as the program is handed each event, and
// reads the same time either way.
//
// The program: a and b at once; after a, Date.now() - t0 >= 2.5 s picks x,
// else y. The logs are the real core's own replays (offline, every pinned
// core), simlab's model/program replay held to each.
func TestDateNowReadsTheWholePassBeforeBeta55(t *testing.T) {
	prog := []program.Node{{All: []program.Node{
		{Seq: []program.Node{{Step: "a"}, {Clock: 2500 * time.Millisecond, As: "late"}, {If: "late", Then: []program.Node{{Step: "x"}}, Else: []program.Node{{Step: "y"}}}}},
		{Step: "b"},
	}}}
	ev := func(tp program.EventType, ord int32, name string, at int64) program.Event {
		e := program.E(tp, ord)
		if e.Kind == program.EntityNone {
			e.Ordinal = -1
		}
		e.Name, e.CreatedMS = name, at
		return e
	}
	base := []program.Event{
		ev(program.RunCreated, -1, "", 1), ev(program.RunStarted, -1, "", 1),
		ev(program.StepCreated, 0, "a", 100), ev(program.StepCreated, 1, "b", 100),
		ev(program.StepStarted, 0, "", 200), ev(program.StepStarted, 1, "", 200),
		ev(program.StepCompleted, 0, "", 2000),
	}
	with := func(more ...program.Event) []program.Event {
		return append(append([]program.Event{}, base...), more...)
	}
	bDone := ev(program.StepCompleted, 1, "", 3000)
	cases := []struct {
		what string
		log  []program.Event
		// want is the outcome on cores to beta.53, and on beta.55.
		want, want55 string
	}{
		{"the log ends at a's end (2 s)", with(), "suspended on step#1 b (created), step#2 y", "suspended on step#1 b (created), step#2 y"},
		{"b ends a second later", with(bDone), "suspended on step#2 x", "suspended on step#2 y"},
		{"b is started again a second later", with(ev(program.StepStarted, 1, "", 3000)), "suspended on step#1 b (created), step#2 x", "suspended on step#1 b (created), step#2 y"},
		{"the first replay's y lands after b's end", with(bDone, ev(program.StepCreated, 2, "y", 3100)), "diverged at event 8 (name-mismatch)", "suspended on step#2 y (created)"},
	}
	r := prepared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	compiled := program.MustCompile(prog)
	for _, c := range Cores {
		o, err := r.OfflineReplayer(ctx, c, map[string][]program.Node{"datenow": prog})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range cases {
			want := k.want
			if c.ClockMode() == program.ClockPerDelivery {
				want = k.want55
			}
			real, err := o.Replay("datenow", k.log)
			if err != nil {
				t.Fatal(err)
			}
			sim := c.Replay(compiled, k.log)
			if got := real.String(); !strings.HasPrefix(got, want) {
				t.Errorf("core %s, %s: the real replay %s, want %s", c.Version, k.what, got, want)
			}
			if !real.Agrees(sim) {
				t.Errorf("core %s, %s: simlab %s, the real core %s", c.Version, k.what, sim, real)
			}
		}
		o.Close()
	}
}
