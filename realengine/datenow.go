package realengine

import (
	"context"
	"time"

	"github.com/simlab/simlab/model/program"
)

// The Date.now() probe: a program that runs a and b at once and, after a,
// picks x once Date.now() is 2.5 s past its start, else y; and the logs
// that tell whether a release's replay reads the time of the event it
// awaited or of the last event its pass took (docs/MODEL.md, "Date.now()
// branches corrupt the pinned release's logs").

// DateNowProgram is the probe's program.
var DateNowProgram = []program.Node{{All: []program.Node{
	{Seq: []program.Node{{Step: "a"}, {Clock: 2500 * time.Millisecond, As: "late"}, {If: "late", Then: []program.Node{{Step: "x"}}, Else: []program.Node{{Step: "y"}}}}},
	{Step: "b"},
}}}

// DateNowLogs are the probe's logs: a ends at 2 s and the log ends there
// (Short); b ends a second later (Longer); and the log the Short replay
// writes, its y landing after b's end (Stale).
func DateNowLogs() (short, longer, stale []program.Event) {
	ev := func(tp program.EventType, ord int32, name string, at int64) program.Event {
		e := program.E(tp, ord)
		if e.Kind == program.EntityNone {
			e.Ordinal = -1
		}
		e.Name, e.CreatedMS = name, at
		return e
	}
	short = []program.Event{
		ev(program.RunCreated, -1, "", 1), ev(program.RunStarted, -1, "", 1),
		ev(program.StepCreated, 0, "a", 100), ev(program.StepCreated, 1, "b", 100),
		ev(program.StepStarted, 0, "", 200), ev(program.StepStarted, 1, "", 200),
		ev(program.StepCompleted, 0, "", 2000),
	}
	longer = append(append([]program.Event{}, short...), ev(program.StepCompleted, 1, "", 3000))
	stale = append(append([]program.Event{}, longer...), ev(program.StepCreated, 2, "y", 3100))
	return short, longer, stale
}

// DateNowReplays are the real core's replays of the probe's logs.
type DateNowReplays struct {
	Short, Longer, Stale RealReplay
}

// ProbeDateNow replays the probe's logs through core's own replay
// (offline: no World, no queue).
func (r *Runner) ProbeDateNow(ctx context.Context, core Core) (DateNowReplays, error) {
	o, err := r.OfflineReplayer(ctx, core, map[string][]program.Node{"datenow": DateNowProgram})
	if err != nil {
		return DateNowReplays{}, err
	}
	defer o.Close()
	short, longer, stale := DateNowLogs()
	var out DateNowReplays
	for _, c := range []struct {
		log []program.Event
		to  *RealReplay
	}{{short, &out.Short}, {longer, &out.Longer}, {stale, &out.Stale}} {
		if *c.to, err = o.Replay("datenow", c.log); err != nil {
			return out, err
		}
	}
	return out, nil
}
