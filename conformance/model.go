package conformance

import (
	"fmt"
	"time"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/realworld"
	"github.com/simlab/simlab/sim"
)

// modelNow is the model's "now" for every call: far from 0 so that
// retryAfter hours before it stays positive. The real World's now is the wall
// clock; only retryAfter hours away from either is ever generated.
const modelNow = sim.Time(1000 * time.Hour)

var modelTypes = map[string]world.EventType{
	"run_started": world.EvRunStarted, "run_completed": world.EvRunCompleted,
	"run_failed": world.EvRunFailed, "run_cancelled": world.EvRunCancelled,
	"step_created": world.EvStepCreated, "step_started": world.EvStepStarted,
	"step_completed": world.EvStepCompleted, "step_failed": world.EvStepFailed,
	"step_retrying": world.EvStepRetrying,
}

// ModelRun applies calls one at a time to a fresh model store configured as
// w, the way the engine configures it for w's profile and variant.
type ModelRun struct {
	s    *world.Store
	runs map[int]world.RunID
}

// NewModelRun returns a fresh model store for w.
func NewModelRun(w realworld.World) *ModelRun {
	return &ModelRun{s: world.NewFor(model.StoreRules(w.Profile), w.Fence), runs: map[int]world.RunID{}}
}

// Apply applies one call and reads the rows back. sit names the state the
// call met and the answer (see situation); "" for create_run.
func (m *ModelRun) Apply(c realworld.Call) (a realworld.Answer, sit string) {
	s := m.s
	if c.Op == "create_run" {
		m.runs[c.Run] = s.CreateRun(modelNow, 0, 7, -1)
		a.Res = world.OK.String()
	} else {
		sit = m.situation(c)
		ev := world.Event{Type: modelTypes[c.Type], Run: m.runs[c.Run], Step: world.NoStep, Lazy: c.Lazy}
		if realworld.StepEvent(c.Type) {
			ev.Step = world.StepID(c.Step)
			ev = ev.WithStepIDOf(m.runs[c.IDRun()])
		}
		if ev.Type == world.EvStepRetrying {
			ev.RetryAfter = modelNow.Add(time.Duration(c.RetryAfterHours) * time.Hour)
		}
		res, _, _ := s.Apply(modelNow, ev)
		a.Res = res.String()
	}
	r := m.runs[c.Run]
	a.Run = s.Get(r).Status.String()
	if c.Op == "event" && realworld.StepEvent(c.Type) {
		from := m.runs[c.IDRun()]
		if st := s.StepOf(r, from, world.StepID(c.Step)); st.Exists {
			a.Step, a.Attempt = st.Status.String(), int(st.Attempt)
		}
		if st := s.Step(from, world.StepID(c.Step)); c.StepRun != nil && st.Exists {
			a.PeerStep, a.PeerAttempt = st.Status.String(), int(st.Attempt)
		}
	}
	if sit != "" {
		sit += " → " + a.Res
	}
	return a, sit
}

// RunModel applies a whole sequence to a fresh model store configured as w.
func RunModel(w realworld.World, calls []realworld.Call) []realworld.Answer {
	return answers(NewModelRun(w), calls)
}

// modelRun is a model a sequence's calls are applied to one at a time
// (ModelRun, HookModelRun): its answer, and the situation the call met.
type modelRun interface {
	Apply(realworld.Call) (realworld.Answer, string)
}

// answers applies calls to m in order.
func answers(m modelRun, calls []realworld.Call) []realworld.Answer {
	out := make([]realworld.Answer, 0, len(calls))
	for _, c := range calls {
		a, _ := m.Apply(c)
		out = append(out, a)
	}
	return out
}

// situation names what a call meets: its event, the run's status and the
// step's (the rows of docs/CONFORMANCE.md's coverage table), and for a step
// id that another run also uses, whose it is and whether another run has a
// row under it.
func (m *ModelRun) situation(c realworld.Call) string {
	s, r := m.s, m.runs[c.Run]
	ev := c.Type
	if c.Lazy {
		ev += " (lazy)"
	}
	if c.StepRun != nil {
		ev += " with another run's id"
	}
	run := s.Get(r).Status
	sit := fmt.Sprintf("%s | run %v", ev, run)
	if realworld.StepEvent(c.Type) {
		from, step := m.runs[c.IDRun()], world.StepID(c.Step)
		st := s.StepOf(r, from, step)
		switch {
		case !st.Exists:
			sit += " | step missing"
		case st.Status == world.StepPending && st.RetryAfter > modelNow:
			sit += " | step pending, retryAfter ahead"
		default:
			sit += " | step " + st.Status.String()
		}
		for _, o := range m.runs { // any order: the answer is one bit
			if o != r && s.StepOf(o, from, step).Exists {
				sit += " | another run has a row under the id"
				break
			}
		}
	}
	return sit
}
