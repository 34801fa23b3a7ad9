package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
	"github.com/simlab/simlab/traces"
)

// moment is one instant the timeline's time cursor stops at: an event the
// World accepted into the run's log, or an injected fault.
type moment struct {
	At    time.Duration // offset from the run's start
	Event string        // accepted event type (run_started, step_completed, ...), "" for a fault
	Step  int           // the step the event is about, -1 for run events
	Fault string        // fault kind, "" for an event
}

func (m moment) text(names map[int]string) string {
	if m.Fault != "" {
		return "fault " + m.Fault
	}
	if m.Step < 0 {
		return m.Event
	}
	return m.Event + " " + stepName(names, m.Step)
}

func stepName(names map[int]string, step int) string {
	if n, ok := names[step]; ok {
		return n
	}
	return "step " + strconv.Itoa(step)
}

// timeModel is what the time cursor needs of a run: its moments in order
// and the facts to project a state from them.
type timeModel struct {
	moments    []moment
	totalSteps int
	stepNames  map[int]string
	deliveries [][2]time.Duration // each queue.process span's start and end offsets
}

// newTimeModel reads a run's moments from its History when it has one (the
// accepted log is the truth the properties judge) and from its spans
// otherwise: an events.create call answered ok stands for the accepted
// event, at the call's end.
func newTimeModel(r *Run) *timeModel {
	tm := &timeModel{stepNames: map[int]string{}}
	steps := map[int]bool{}
	root := ""
	for i := range r.Spans {
		if r.Spans[i].ParentID == "" {
			root = r.Spans[i].SpanID
		}
	}
	for i := range r.Spans {
		s := &r.Spans[i]
		if id, ok := stepIndex(s); ok && strings.HasPrefix(s.Name, traces.StepSpanPrefix) {
			name, _ := s.Attr(traces.KeyStepLabel)
			tm.stepNames[id] = name
			steps[id] = true
		}
		// A delivery: a workflow invocation (workflow.execute <name>), or
		// a queued step's own delivery, a step execution straight under
		// the run's root (a program's run, traces.BuildFlow).
		if strings.HasPrefix(s.Name, traces.ExecuteSpanPrefix+" ") ||
			strings.HasPrefix(s.Name, traces.StepSpanPrefix) && root != "" && s.ParentID == root {
			tm.deliveries = append(tm.deliveries, [2]time.Duration{r.offset(s.Start), r.offset(s.End)})
		}
	}
	if h := r.hist; h != nil {
		info := &h.Runs[r.runIndex]
		for _, f := range info.Fanouts {
			tm.totalSteps += int(h.Fanouts[f].Branches)
		}
		at := func(t sim.Time) time.Duration { return historyOffset(r, t) }
		for _, a := range h.Accepted {
			if int(a.Run) == r.runIndex {
				tm.moments = append(tm.moments, moment{At: at(a.At), Event: a.Type.String(), Step: int(a.Step)})
			}
		}
		for _, f := range h.Faults {
			if int(f.Run) == r.runIndex {
				tm.moments = append(tm.moments, moment{At: at(f.At), Step: -1, Fault: f.Kind.String()})
			}
		}
	} else {
		for i := range r.Spans {
			s := &r.Spans[i]
			for _, e := range s.Events {
				if e.Name == traces.FaultSpanName {
					kind, _ := e.Attr(traces.KeyFaultKind)
					tm.moments = append(tm.moments, moment{At: r.offset(e.Time), Step: -1, Fault: kind})
				}
			}
			if !strings.HasPrefix(s.Name, "world.events.create ") {
				continue
			}
			if res, _ := s.Attr(traces.KeyEventResult); res != "ok" {
				continue
			}
			typ, _ := s.Attr(traces.KeyEventType)
			step, ok := stepIndex(s)
			if !ok {
				step = -1
			}
			if typ == world.EvStepCreated.String() {
				steps[step] = true
			}
			if creates, _ := s.Attr(traces.KeyEventCreatesStep); creates == "true" {
				// A lazy start logged its step's step_created with it.
				steps[step] = true
				tm.moments = append(tm.moments, moment{At: r.offset(s.End), Event: world.EvStepCreated.String(), Step: step})
			}
			tm.moments = append(tm.moments, moment{At: r.offset(s.End), Event: typ, Step: step})
		}
		tm.totalSteps = len(steps)
	}
	slices.SortStableFunc(tm.moments, func(a, b moment) int { return cmp.Compare(a.At, b.At) })
	return tm
}

// historyOffset places an instant of a run's History on its span clock:
// Simulate builds spans at virtual time plus traces.DefaultEpoch, and
// offsets are measured from the run's root span.
func historyOffset(r *Run, t sim.Time) time.Duration {
	return traces.DefaultEpoch.Add(time.Duration(t)).Sub(r.Start)
}

// stepIndex reads a simlab span's step.id ("step_3") as the step's index.
func stepIndex(s *traces.Span) (int, bool) {
	v, ok := s.Attr(traces.KeyStepID)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(v, "step_"))
	return n, err == nil
}

// runState is the run as of one moment: the projection of the accepted log
// up to it (DOMAIN §1 transitions), and the deliveries in progress.
type runState struct {
	Status                                                 string
	Total, NotCreated, Pending, Running, Completed, Failed int
	InFlight                                               int
}

func (s runState) String() string {
	return fmt.Sprintf("run %s · steps %d: %d not created, %d pending, %d running, %d completed, %d failed · deliveries in flight %d",
		s.Status, s.Total, s.NotCreated, s.Pending, s.Running, s.Completed, s.Failed, s.InFlight)
}

// stateAt replays moments[0..k] (all of them up to and including k; none
// for k < 0) and counts deliveries in flight at moment k's instant.
func (tm *timeModel) stateAt(k int) runState {
	st := runState{Status: "not created"}
	steps := map[int]world.StepStatus{}
	var at time.Duration
	for i := 0; i <= k && i < len(tm.moments); i++ {
		m := tm.moments[i]
		at = m.At
		switch m.Event {
		case "run_created":
			st.Status = world.RunPending.String()
		case "run_started":
			st.Status = world.RunRunning.String()
		case "run_completed":
			st.Status = world.RunCompleted.String()
		case "run_failed":
			st.Status = world.RunFailed.String()
		case "run_cancelled":
			st.Status = world.RunCancelled.String()
		case "step_created", "step_retrying":
			steps[m.Step] = world.StepPending
		case "step_started":
			steps[m.Step] = world.StepRunning
		case "step_completed":
			steps[m.Step] = world.StepCompleted
		case "step_failed":
			steps[m.Step] = world.StepFailed
		}
	}
	st.Total = max(tm.totalSteps, len(steps))
	st.NotCreated = st.Total - len(steps)
	for _, s := range steps {
		switch s {
		case world.StepPending:
			st.Pending++
		case world.StepRunning:
			st.Running++
		case world.StepCompleted:
			st.Completed++
		case world.StepFailed:
			st.Failed++
		}
	}
	if k >= 0 {
		for _, d := range tm.deliveries {
			if d[0] <= at && at < d[1] {
				st.InFlight++
			}
		}
	}
	return st
}
