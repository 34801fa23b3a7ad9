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
// The program and logs are DateNowProgram and DateNowLogs (and b started
// again a second later), replayed by the real core's own replay (offline,
// every pinned core), simlab's model/program replay held to each.
func TestDateNowReadsTheWholePassBeforeBeta55(t *testing.T) {
	short, longer, stale := DateNowLogs()
	restarted := append(append([]program.Event{}, short...), short[5])
	restarted[len(restarted)-1].CreatedMS = 3000 // b started again a second later
	cases := []struct {
		what string
		log  []program.Event
		// want is the outcome on cores to beta.53, and on beta.55.
		want, want55 string
	}{
		{"the log ends at a's end (2 s)", short, "suspended on step#1 b (created), step#2 y", "suspended on step#1 b (created), step#2 y"},
		{"b ends a second later", longer, "suspended on step#2 x", "suspended on step#2 y"},
		{"b is started again a second later", restarted, "suspended on step#1 b (created), step#2 x", "suspended on step#1 b (created), step#2 y"},
		{"the first replay's y lands after b's end", stale, "diverged at event 8 (name-mismatch)", "suspended on step#2 y (created)"},
	}
	r := prepared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	compiled := program.MustCompile(DateNowProgram)
	for _, c := range Cores {
		o, err := r.OfflineReplayer(ctx, c, map[string][]program.Node{"datenow": DateNowProgram})
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
