package conformance

import (
	"fmt"
	"strings"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/realworld"
)

// HookWorlds are the Worlds whose hook rules world.Hooks claims and the hook
// tests check (docs/CONFORMANCE.md, "Hooks").
var HookWorlds = []string{"wl-fixed", "wl-b46", "wpg-b29"}

// HookWorld reports whether the hook tests check w.
func HookWorld(w realworld.World) bool {
	for _, n := range HookWorlds {
		if n == w.Name {
			return true
		}
	}
	return false
}

var hookOps = map[string]world.HookOp{
	"hook_created": world.HookCreate, "hook_received": world.HookReceive, "hook_disposed": world.HookDispose,
}

// HookModelRun is ModelRun with hooks: run and step events go to the model
// store as ModelRun applies them, hook events to a world.Hooks per run
// (configured with the store's rules), which the run's end empties.
type HookModelRun struct {
	m     *ModelRun
	rules world.Rules
	hooks map[int]*world.Hooks
	runs  []int // the runs created, in order
	logs  map[[2]int][]string
}

// NewHookModelRun returns a fresh model for w.
func NewHookModelRun(w realworld.World) *HookModelRun {
	return &HookModelRun{m: NewModelRun(w), rules: model.StoreRules(w.Profile), hooks: map[int]*world.Hooks{}, logs: map[[2]int][]string{}}
}

func (h *HookModelRun) run(r int) *world.Hooks {
	if h.hooks[r] == nil {
		h.hooks[r] = &world.Hooks{Rules: h.rules}
	}
	return h.hooks[r]
}

// others are the runs' hooks but r's, in creation order.
func (h *HookModelRun) others(r int) []*world.Hooks {
	var out []*world.Hooks
	for _, o := range h.runs {
		if o != r {
			out = append(out, h.run(o))
		}
	}
	return out
}

func (h *HookModelRun) ended(r int) bool {
	return h.m.s.Get(h.m.runs[r]).Status.Terminal()
}

// Apply applies one call and reads back what the driver reads back. sit
// names the state a hook event met and its answer ("" for other calls).
func (h *HookModelRun) Apply(c realworld.Call) (realworld.Answer, string) {
	if c.Op != "event" || !realworld.HookEvent(c.Type) {
		wasEnded := c.Op == "event" && h.ended(c.Run)
		a, _ := h.m.Apply(c)
		if c.Op == "create_run" {
			h.runs = append(h.runs, c.Run)
		} else if a.Res == world.OK.String() && h.ended(c.Run) && !wasEnded {
			// The run's end; a repeated run_cancelled deletes nothing.
			h.run(c.Run).End()
		}
		return a, ""
	}
	hooks := h.run(c.Run)
	sit := h.situation(c)
	res, class := hooks.Apply(hookOps[c.Type], int32(c.Hook), int32(c.Token), h.ended(c.Run), h.others(c.Run))
	a := realworld.Answer{Res: class.String(), Run: h.m.s.Get(h.m.runs[c.Run]).Status.String()}
	logged := c.Type
	if res == world.HookConflict {
		logged = "hook_conflict"
	}
	if !res.Refused() {
		a.Event = logged
	}
	k := [2]int{c.Run, c.Hook}
	if res.Appended() {
		h.logs[k] = append(h.logs[k], logged)
	}
	a.HookLog = append([]string{}, h.logs[k]...)
	if hooks.Live(int32(c.Hook)) {
		a.HookRow = "live"
	}
	a.Owner = h.owner(int32(c.Token))
	return a, sit + " → " + res.String() + " " + a.Res
}

// owner names the live hook holding token, "" when none.
func (h *HookModelRun) owner(token int32) string {
	for _, r := range h.runs {
		if id, ok := h.run(r).ByToken(token); ok {
			return fmt.Sprintf("r%d.h%d", r, id)
		}
	}
	return ""
}

// situation names what a hook event meets: the run's status, the hook's
// state and, for hook_created, who holds its token.
func (h *HookModelRun) situation(c realworld.Call) string {
	hooks := h.run(c.Run)
	k := [2]int{c.Run, c.Hook}
	state := "new"
	switch {
	case hooks.Live(int32(c.Hook)):
		state = "live"
	case hasEntry(h.logs[k], "hook_created"):
		state = "disposed or ended"
	case hasEntry(h.logs[k], "hook_conflict"):
		state = "conflicted"
	}
	if h.rules == world.RulesLocal && state == "disposed or ended" && strings.Contains(hooks.String(), fmt.Sprintf(" h%d:", c.Hook)) {
		// world-local's leftovers of a re-creation (claim, file), as Hooks
		// prints them.
		for _, f := range strings.Fields(hooks.String()) {
			if strings.HasPrefix(f, fmt.Sprintf("h%d:", c.Hook)) {
				if i := strings.Index(f, ","); i >= 0 {
					state += " (" + f[i+1:] + ")"
				}
			}
		}
	}
	sit := fmt.Sprintf("%s | run %v | hook %s", c.Type, h.m.s.Get(h.m.runs[c.Run]).Status, state)
	if c.Type == "hook_created" {
		switch o := h.owner(int32(c.Token)); {
		case o == "":
			sit += " | token free"
		case strings.HasPrefix(o, fmt.Sprintf("r%d.", c.Run)):
			sit += " | token held in the run"
		default:
			sit += " | token held by another run"
		}
	}
	return sit
}

func hasEntry(log []string, e string) bool {
	for _, x := range log {
		if x == e {
			return true
		}
	}
	return false
}

// RunHookModel applies a whole sequence to a fresh model of w.
func RunHookModel(w realworld.World, calls []realworld.Call) []realworld.Answer {
	return answers(NewHookModelRun(w), calls)
}
