package model

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/simlab/simlab/model/flow"
	"github.com/simlab/simlab/model/program"
)

// IsProgram says the scenario's workflow is a program the fan-out engine
// cannot run (a race, a sleep, an if, a loop, a pool, a step's own body,
// results or hangs): model/flow runs it, as the runtime replays it, and
// simlab check judges it on each run's spans. A program of Promise.all
// fan-outs of plain steps is not one: it is the fan-out list the engine
// runs.
func (s *Scenario) IsProgram() bool {
	if s.Workflow.Search != "" {
		return true // each seed draws its program
	}
	if s.Workflow.Program == nil {
		return false
	}
	_, fanouts := program.FanoutWidths(s.Workflow.Program)
	return !fanouts
}

// ErrProgramScenario is the fan-out engine refusing a program's scenario:
// model/flow runs it (simlab check, run, validate, tui).
var ErrProgramScenario = errors.New("the scenario's workflow.program is a program (a race, sleep, if, loop, pool or a step's own body, results or hangs): it runs as the runtime replays it, in simlab check, run, validate and tui, not in the fan-out engine this command drives")

// ProgramFields are the scenario fields a program's run honours (model/flow,
// through check.FlowConfig); every other field must keep its default, since
// a knob the run would not read is refused rather than ignored.
var ProgramFields = []string{
	"name", "description", "workflow.program", "workflow.max_inline", "workflow.body", "workflow.max_retries",
	"workflow.inline_ownership_lease", "workflow.replay_base", "workflow.replay_per_entity", "workflow.replay_per_event",
	"workflow.sequential_replays", "workflow.max_duration", "workflow.log_view", "workflow.cold_replays", "workflow.callsite_ids", "workflow.resumes", "workflow.search",
	"faults.crash", "limits.max_time", "budget.work_after_end",
}

// The searches a program's scenario may run (workflow.search).
const (
	SearchPrograms = "programs"
	SearchHooks    = "hooks"
)

// SeedScenario is seed's scenario: s itself, or for a search (workflow.search)
// the program, driver, crash rate, time limit, max_inline and sequential
// replays seed draws (a plain program's scenario, with no search, that
// simlab run replays).
func (s *Scenario) SeedScenario(seed uint64) Scenario {
	out := *s
	if s.Workflow.Search == "" {
		return out
	}
	k := flow.DrawCase(seed)
	if s.Workflow.Search == SearchHooks {
		k = flow.DrawHookCase(seed)
	}
	out.Workflow.Search = ""
	out.Workflow.Program, out.Workflow.Resumes = k.Program, resumesOf(k.Resumes)
	out.Faults.Crash, out.Workflow.MaxDuration = k.Crash, k.MaxDuration
	out.Workflow.MaxInline, out.Workflow.SequentialReplays = k.MaxInline, k.SequentialReplays
	out.Description = fmt.Sprintf("%s: case %d", s.Name, seed)
	return out
}

// The log views a program's scenario may name (workflow.log_view).
const (
	LogViewPrefix     = "prefix"
	LogViewOwnWrites  = "own-writes"
	LogViewTailFence  = "tail-fence"
	LogViewCountGuard = "count-guard"
)

// validateProgram checks a program's scenario: its knobs' values, and that
// it sets nothing the program's run would not read.
func (s *Scenario) validateProgram() error {
	w := &s.Workflow
	if len(w.Fanouts) > 0 {
		return fmt.Errorf("workflow.fanouts is %v but workflow.program is a program: set one of them", w.Fanouts)
	}
	def := DefaultScenario()
	def.Workflow.Fanouts = nil
	if path, ok := firstDifference(reflect.ValueOf(*s), reflect.ValueOf(def), ""); ok {
		return fmt.Errorf("%s: a program's run (model/flow, as the runtime replays it) does not read it, so it would be ignored; a program's scenario sets only %s", path, strings.Join(ProgramFields, ", "))
	}
	if w.MaxInline > 16 {
		return fmt.Errorf("workflow.max_inline = %d: want 0..16 (core's MAX_INLINE_STEPS range)", w.MaxInline)
	}
	if err := w.Body.Validate(); err != nil {
		return fmt.Errorf("workflow.body.%w", err)
	}
	for _, c := range []struct {
		key string
		d   time.Duration
	}{{"replay_base", w.ReplayBase}, {"replay_per_entity", w.ReplayPerEntity}, {"replay_per_event", w.ReplayPerEvent}, {"max_duration", w.MaxDuration}} {
		if c.d < 0 {
			return fmt.Errorf("workflow.%s = %v: must not be negative", c.key, c.d)
		}
	}
	if w.MaxRetries < 0 || w.MaxInline < 0 {
		return fmt.Errorf("workflow.max_retries = %d, workflow.max_inline = %d: must not be negative", w.MaxRetries, w.MaxInline)
	}
	if l := w.InlineOwnershipLease; l != 0 && (l < time.Second || l > 900*time.Second || l%time.Second != 0) {
		return fmt.Errorf("workflow.inline_ownership_lease = %v: want whole seconds from 1s to 900s, or 0 for core's 860s", l)
	}
	switch w.LogView {
	case "", LogViewPrefix, LogViewOwnWrites, LogViewTailFence, LogViewCountGuard:
	default:
		return fmt.Errorf("workflow.log_view = %q: want %s (the pinned release), %s (a World without slot ids), %s (the same World refusing a replay's write from a log that is not the tail) or %s (the same World refusing one from a log with a hole below its latest stamp)", w.LogView, LogViewPrefix, LogViewOwnWrites, LogViewTailFence, LogViewCountGuard)
	}
	switch w.Search {
	case "":
	case SearchPrograms, SearchHooks:
		switch {
		case len(w.Program) > 0:
			return fmt.Errorf("workflow.search = %s draws each seed's program: the scenario sets none (workflow.program)", w.Search)
		case w.Resumes.Set() || s.Faults.Crash > 0 || w.MaxDuration > 0:
			return fmt.Errorf("workflow.search = %s draws each seed's driver, crash rate and time limit: the scenario sets none (workflow.resumes, faults.crash, workflow.max_duration)", w.Search)
		case w.MaxInline != def.Workflow.MaxInline || w.SequentialReplays:
			return fmt.Errorf("workflow.search = %s draws each seed's max_inline and sequential replays: the scenario sets neither (workflow.max_inline, workflow.sequential_replays)", w.Search)
		}
	default:
		return fmt.Errorf("workflow.search = %q: want %s (flow.DrawCase) or %s (programs with hooks and a driver, flow.DrawHookCase)", w.Search, SearchPrograms, SearchHooks)
	}
	if r := w.Resumes; r.Set() {
		c, err := program.Compile(w.Program)
		if err == nil && !c.UsesHooks() {
			return errors.New("workflow.resumes: the program creates no hook (hook: NAME) for it to resume")
		}
		if err := r.Flow().Validate(); err != nil {
			return fmt.Errorf("workflow.%w", err)
		}
		if !r.Flow().On() {
			return errors.New("workflow.resumes: want count (ticks every `every`) or at_deadlines: true; as written it resumes nothing")
		}
	}
	if c := s.Faults.Crash; !(c >= 0 && c <= 1) {
		return fmt.Errorf("faults.crash = %v: want a chance in [0, 1]", c)
	}
	if s.Limits.MaxTime <= 0 {
		return fmt.Errorf("limits.max_time = %v: want a positive bound on the run's virtual time", s.Limits.MaxTime)
	}
	if s.Budget.WorkAfterEnd < 0 {
		return fmt.Errorf("budget.work_after_end = %d: must not be negative", s.Budget.WorkAfterEnd)
	}
	return nil
}

// refuseProgramKnobs refuses, on a fan-out scenario, the knobs only a
// program's run reads: the fan-out engine would ignore them.
func (w *Workflow) refuseProgramKnobs() error {
	for _, k := range []struct {
		key string
		set bool
	}{{"sequential_replays", w.SequentialReplays}, {"max_duration", w.MaxDuration != 0}, {"log_view", w.LogView != ""}, {"cold_replays", w.ColdReplays}, {"callsite_ids", w.CallSiteIDs}, {"resumes", w.Resumes.Set()}} {
		if k.set {
			return fmt.Errorf("workflow.%s: only a program's run reads it (a workflow.program with a race, sleep, if, loop or pool); the fan-out engine would ignore it", k.key)
		}
	}
	return nil
}

// firstDifference is the path (in the file's key names) of the first field
// of a that differs from b outside ProgramFields, if one does.
func firstDifference(a, b reflect.Value, path string) (string, bool) {
	for _, f := range ProgramFields {
		if f == path {
			return "", false
		}
	}
	if a.Kind() == reflect.Struct && path != "store" && path != "workflow.body" {
		t := a.Type()
		for i := range t.NumField() {
			key, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
			if key == "" || key == "-" {
				continue
			}
			p := key
			if path != "" {
				p = path + "." + key
			}
			if d, ok := firstDifference(a.Field(i), b.Field(i), p); ok {
				return d, true
			}
		}
		return "", false
	}
	if !reflect.DeepEqual(a.Interface(), b.Interface()) {
		return path, true
	}
	return "", false
}

// programBuiltins are the built-in programs' scenarios: the engine team's
// shapes (model/flow's), as simlab replays runs them by default, each with
// the pinned release's knobs.
var programBuiltins = map[string]func() Scenario{
	"storm": func() Scenario {
		return programScenario("storm", "the engine team's step-storm: 16 branches × 3 rounds, each racing a step against a 300ms sleep and running one more step when the step won, then a final step (vercel/workflow #3147)",
			flow.Storm(16, 3, 300*time.Millisecond))
	},
	"clock-storm": func() Scenario {
		return programScenario("clock-storm", "a storm that branches on Date.now(): 16 branches × 3 rounds, each running a step, then a quick step once the run is 1s old, else an extra one; on cores to beta.53 a replay reads the time of its pass's last event, and the pinned release corrupts some logs (docs/MODEL.md, \"Date.now() branches corrupt the pinned release's logs\")",
			flow.ClockStorm(16, 3, time.Second))
	},
	"control": func() Scenario {
		return programScenario("control", "the storm's control: 3 rounds of a step, one more step when its result says so, and a 300ms sleep, one waker at a time",
			flow.Control(3, 300*time.Millisecond))
	},
	"hook-storm": func() Scenario {
		s := programScenario("hook-storm", "the engine team's hook-storm (vercel/workflow #3147, as simlab reads it): 16 branches, each with its own hook, 3 rounds of a read of it raced against a 300ms watchdog, one more step when the hook won; every 20ms for 3s an outside driver resumes one live hook, drawn, each payload waking the run",
			flow.HookStorm(16, 3, 300*time.Millisecond))
		s.Workflow.Resumes = resumesOf(flow.HookStormResumes)
		return s
	},
	"wake-loop": func() Scenario {
		s := programScenario("wake-loop", "the engine team's wake-loop (vercel/workflow #4017): one loop of 12 cycles racing a carried read of one hook against a 1s heartbeat, a verify before each heartbeat and a verify, drain, verify, sync cycle after each wake (one more back to back when drain says so); wakes every 150ms for 6s, two at once, and one at each heartbeat's deadline",
			flow.WakeLoop(12, time.Second))
		s.Workflow.Resumes = resumesOf(flow.WakeLoopResumes)
		return s
	},
	"program-search": func() Scenario {
		s := programScenario("program-search", "a search over workflow shapes: each seed draws a program up to 3 deep with hooks (steps, races, Promise.all, if, loops, pools, Date.now() deadlines, hooks raced against sleeps), an outside driver for its hooks (a cadence, a burst, a single resume or the deadlines), a time limit, a crash rate, max_inline and sequential replays (flow.DrawHookCase; simlab replays --search --hooks)", nil)
		s.Workflow.Search = SearchHooks
		return s
	},
	"inline-hang": func() Scenario {
		s := programScenario("inline-hang", "the team's open production report (vercel/workflow #4199): a fan-out exactly max_inline (3) wide, run inline by one invocation, whose last step hangs its first 2 attempts until the 800s time limit kills the invocation, then a final step",
			flow.InlineHang(3, 2))
		s.Workflow.MaxDuration = 800 * time.Second
		return s
	},
}

// resumesOf is model/flow's driver as a scenario writes it (Resumes.Flow
// the other way).
func resumesOf(r flow.Resumes) Resumes {
	return Resumes{Every: r.Every, Count: r.Count, Burst: r.Burst, Spread: r.Spread, One: r.One, AtDeadlines: r.AtDeadlines}
}

// Flow is the scenario's driver as model/flow runs it.
func (r Resumes) Flow() flow.Resumes {
	return flow.Resumes{Every: r.Every, Count: r.Count, Burst: r.Burst, Spread: r.Spread, One: r.One, AtDeadlines: r.AtDeadlines}
}

// programScenario is a program's scenario with simlab replays' step bodies
// (50ms to 2s: a step and a 300ms sleep race closely).
func programScenario(name, desc string, prog []program.Node) Scenario {
	s := DefaultScenario()
	s.Name, s.Description = name, desc
	s.Workflow.Fanouts, s.Workflow.Program = nil, prog
	s.Workflow.Body = flow.Defaults(nil).Body
	return s
}

// BuiltinProgramNames lists the built-in programs' scenarios, sorted.
func BuiltinProgramNames() []string {
	names := make([]string, 0, len(programBuiltins))
	for n := range programBuiltins {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
