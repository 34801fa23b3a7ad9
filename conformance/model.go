package conformance

import (
	"fmt"
	"strings"
	"time"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// World is one real World the test drives and the model configuration that
// claims to be it.
type World struct {
	Name    string // driver.mjs --world
	Package string // the real package, exactly pinned
	Profile string // the model profile (scenario field "world")
	Fence   world.Fence
	Variant string // the simlab variant that selects Fence ("" = the default)
}

// Worlds are the real Worlds observable here. world-vercel is not: its store
// runs behind Vercel's API (docs/CONFORMANCE.md).
var Worlds = []World{
	{Name: "wl-fixed", Package: "@workflow/world-local@5.0.0-beta.45", Profile: "world-local", Fence: world.FenceFixed},
	{Name: "wl-pre", Package: "@workflow/world-local@5.0.0-beta.43", Profile: "world-local", Fence: world.FencePreFix, Variant: "pre-fix-fence"},
	{Name: "wpg-pre", Package: "@workflow/world-postgres@5.0.0-beta.27", Profile: "world-postgres", Fence: world.FencePreFix, Variant: "pre-fix-fence"},
	{Name: "wl-b46", Package: "@workflow/world-local@5.0.0-beta.46", Profile: "world-local", Fence: world.FenceFixed},
	{Name: "wpg-b29", Package: "@workflow/world-postgres@5.0.0-beta.29", Profile: "world-postgres", Fence: world.FencePreFix, Variant: "pre-fix-fence"},
}

// Postgres reports whether the World stores in PostgreSQL (the test starts
// a cluster and applies the package's migrations for it).
func (w World) Postgres() bool { return w.Profile == "world-postgres" }

// WorldByName finds a World by its driver name.
func WorldByName(name string) (World, error) {
	for _, w := range Worlds {
		if w.Name == name {
			return w, nil
		}
	}
	names := make([]string, len(Worlds))
	for i, w := range Worlds {
		names[i] = w.Name
	}
	return World{}, fmt.Errorf("world %q: want one of %s", name, strings.Join(names, ", "))
}

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
func NewModelRun(w World) *ModelRun {
	return &ModelRun{s: world.NewFor(model.StoreRules(w.Profile), w.Fence), runs: map[int]world.RunID{}}
}

// Apply applies one call and reads the rows back. sit names the state the
// call met and the answer (see situation); "" for create_run.
func (m *ModelRun) Apply(c Call) (a Answer, sit string) {
	s := m.s
	if c.Op == "create_run" {
		m.runs[c.Run] = s.CreateRun(modelNow, 0, 7, -1)
		a.Res = world.OK.String()
	} else {
		sit = m.situation(c)
		ev := world.Event{Type: modelTypes[c.Type], Run: m.runs[c.Run], Step: world.NoStep, Lazy: c.Lazy}
		if stepEvent(c.Type) {
			ev.Step = world.StepID(c.Step)
			ev = ev.WithStepIDOf(m.runs[c.idRun()])
		}
		if ev.Type == world.EvStepRetrying {
			ev.RetryAfter = modelNow.Add(time.Duration(c.RetryAfterHours) * time.Hour)
		}
		res, _, _ := s.Apply(modelNow, ev)
		a.Res = res.String()
	}
	r := m.runs[c.Run]
	a.Run = s.Get(r).Status.String()
	if c.Op == "event" && stepEvent(c.Type) {
		from := m.runs[c.idRun()]
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
func RunModel(w World, calls []Call) []Answer {
	m := NewModelRun(w)
	out := make([]Answer, 0, len(calls))
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
func (m *ModelRun) situation(c Call) string {
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
	if stepEvent(c.Type) {
		from, step := m.runs[c.idRun()], world.StepID(c.Step)
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
