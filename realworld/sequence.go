package realworld

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
)

// Call is one World call of a sequence. Runs and steps are small indices local
// to the sequence; the harness maps them to ids the real World accepts
// (world-postgres keys steps globally, so every sequence gets fresh ones).
type Call struct {
	// Op is "create_run" (run_created; the World mints the id) or "event"
	// (events.create on Run).
	Op   string `json:"op"`
	Run  int    `json:"run"`
	Type string `json:"type,omitempty"` // event type, for Op "event"
	// Step indexes the run's steps; only for step events.
	Step int `json:"step,omitempty"`
	// Lazy marks a step_started carrying stepName and input: it creates its
	// step when missing.
	Lazy bool `json:"lazy,omitempty"`
	// RetryAfterHours is step_retrying's retryAfter relative to now. Only
	// values hours away from now are generated, so the wall clock never
	// decides whether a later step_started is too early.
	RetryAfterHours int `json:"retry_after_hours,omitempty"`
	// StepRun, when set, is the run whose step Step's id the call carries
	// instead of Run's own: a step id reused in another run (world-postgres
	// keys its steps by the id alone). Only for step events; the answer then
	// also reads back StepRun's row under that id.
	StepRun *int `json:"step_run,omitempty"`
	// Hook indexes the run's hooks and Token the sequence's tokens; only for
	// hook events (HookEvent). The harness maps a hook to a correlation id
	// hook_<ULID> of its own and a token to a string unique to the sequence:
	// one token index names one token in every run of the sequence, so that
	// runs can conflict over it. Every call of one hook carries the same
	// token (core writes a hook's token with each of its events).
	Hook  int `json:"hook,omitempty"`
	Token int `json:"token,omitempty"`
}

// IDRun is the run whose step numbering the call's step id comes from.
func (c Call) IDRun() int {
	if c.StepRun != nil {
		return *c.StepRun
	}
	return c.Run
}

// Answer is what a World answered to a call, and the run's and the step's
// rows read back right after it. Step is "" when the step does not exist.
// A hook event's answer also says which event the World logged and reads the
// hook back.
type Answer struct {
	Res     string `json:"res"`
	Msg     string `json:"msg,omitempty"`
	Run     string `json:"run"`
	Step    string `json:"step"`
	Attempt int    `json:"attempt"`
	// PeerStep and PeerAttempt are the row of the call's StepRun under the
	// same id, for a call carrying another run's step id ("" when none).
	PeerStep    string `json:"peer_step,omitempty"`
	PeerAttempt int    `json:"peer_attempt,omitempty"`
	// Hook events only. Event is the type of the event the World logged for
	// an accepted call: the call's own, or hook_conflict for a hook_created
	// whose token was held. HookRow is "live" when hooks.get finds the hook,
	// "" when the World says it is not found; Owner the hook hooks.getByToken
	// finds for the call's token ("r0.h1"; "" when none). HookLog is the
	// types of the run's logged events under the hook's correlation id, in
	// order.
	Event   string   `json:"event,omitempty"`
	HookRow string   `json:"hook,omitempty"`
	Owner   string   `json:"owner,omitempty"`
	HookLog []string `json:"hook_log,omitempty"`
}

// Same reports whether two answers agree; the message is not compared (it is
// the real World's prose).
func (a Answer) Same(b Answer) bool {
	return a.Res == b.Res && a.Run == b.Run && a.Step == b.Step && a.Attempt == b.Attempt &&
		a.PeerStep == b.PeerStep && a.PeerAttempt == b.PeerAttempt &&
		a.Event == b.Event && a.HookRow == b.HookRow && a.Owner == b.Owner && slices.Equal(a.HookLog, b.HookLog)
}

func (a Answer) String() string {
	s := a.Res + " run=" + a.Run
	if a.Step != "" {
		s += fmt.Sprintf(" step=%s#%d", a.Step, a.Attempt)
	}
	if a.PeerStep != "" {
		s += fmt.Sprintf(" peer=%s#%d", a.PeerStep, a.PeerAttempt)
	}
	if a.Event != "" {
		s += " logged " + a.Event
	}
	if a.HookRow != "" || a.Owner != "" || a.HookLog != nil {
		hook := a.HookRow
		if hook == "" {
			hook = "missing"
		}
		owner := a.Owner
		if owner == "" {
			owner = "none"
		}
		s += fmt.Sprintf(" hook=%s token→%s log=[%s]", hook, owner, strings.Join(a.HookLog, ","))
	}
	return s
}

// StepEvent reports whether t addresses a step.
func StepEvent(t string) bool { return strings.HasPrefix(t, "step_") }

// HookEvent reports whether t addresses a hook.
func HookEvent(t string) bool { return strings.HasPrefix(t, "hook_") }

func (c Call) String() string {
	if c.Op == "create_run" {
		return fmt.Sprintf("r%d run_created", c.Run)
	}
	s := fmt.Sprintf("r%d %s", c.Run, c.Type)
	if StepEvent(c.Type) {
		s = fmt.Sprintf("r%d.s%d %s", c.Run, c.Step, c.Type)
	}
	if HookEvent(c.Type) {
		s = fmt.Sprintf("r%d.h%d %s t%d", c.Run, c.Hook, c.Type, c.Token)
	}
	if c.StepRun != nil {
		s = fmt.Sprintf("r%d %s with r%d.s%d's id", c.Run, c.Type, *c.StepRun, c.Step)
	}
	if c.Lazy {
		s += " (lazy)"
	}
	if c.Type == "step_retrying" {
		s += fmt.Sprintf(" retryAfter=now%+dh", c.RetryAfterHours)
	}
	return s
}

// eventTypes are the event types a Call may carry (run_created is Op
// "create_run").
var eventTypes = []string{
	"run_started", "run_completed", "run_failed", "run_cancelled",
	"step_created", "step_started", "step_completed", "step_failed", "step_retrying",
	"hook_created", "hook_received", "hook_disposed",
}

// Validate names the first thing wrong with a sequence: calls on a run not
// created yet, unknown event types or ops, a hook whose calls carry two
// tokens.
func Validate(calls []Call) error {
	created := map[int]bool{}
	tokens := map[[2]int]int{} // (run, hook) → token
	for i, c := range calls {
		switch c.Op {
		case "create_run":
			if created[c.Run] {
				return fmt.Errorf("call %d: run %d created twice", i, c.Run)
			}
			if c.Run < 0 {
				return fmt.Errorf("call %d: run %d: must not be negative", i, c.Run)
			}
			created[c.Run] = true
		case "event":
			if !created[c.Run] {
				return fmt.Errorf("call %d: run %d is not created yet (add a create_run call before it)", i, c.Run)
			}
			known := false
			for _, t := range eventTypes {
				known = known || t == c.Type
			}
			if !known {
				return fmt.Errorf("call %d: event type %q: want one of %s", i, c.Type, strings.Join(eventTypes, ", "))
			}
			if StepEvent(c.Type) && c.Step < 0 {
				return fmt.Errorf("call %d: step %d: must not be negative", i, c.Step)
			}
			if !HookEvent(c.Type) && (c.Hook != 0 || c.Token != 0) {
				return fmt.Errorf("call %d: hook and token are only for hook events, not %s", i, c.Type)
			}
			if HookEvent(c.Type) {
				if c.Hook < 0 || c.Token < 0 {
					return fmt.Errorf("call %d: hook %d, token %d: must not be negative", i, c.Hook, c.Token)
				}
				k := [2]int{c.Run, c.Hook}
				if t, ok := tokens[k]; ok && t != c.Token {
					return fmt.Errorf("call %d: hook r%d.h%d carries token %d, its earlier calls token %d (a hook has one token)", i, c.Run, c.Hook, c.Token, t)
				}
				tokens[k] = c.Token
			}
			if c.Lazy && c.Type != "step_started" {
				return fmt.Errorf("call %d: lazy is only for step_started, not %s", i, c.Type)
			}
			if c.StepRun != nil {
				switch o := *c.StepRun; {
				case !StepEvent(c.Type):
					return fmt.Errorf("call %d: step_run is only for step events, not %s", i, c.Type)
				case o == c.Run:
					return fmt.Errorf("call %d: step_run %d is the call's own run: leave step_run out", i, o)
				case !created[o]:
					return fmt.Errorf("call %d: step_run %d is not created yet (its ids are the run's)", i, o)
				}
			}
		default:
			return fmt.Errorf("call %d: op %q: want create_run or event", i, c.Op)
		}
	}
	return nil
}

// File is the sequence file format (docs/CONFORMANCE.md): sequences of calls,
// each replayed against a World and the model with fresh runs.
type File struct {
	Sequences []FileSequence `json:"sequences"`
}

// FileSequence is one named sequence of a File; Expect, when present, is
// what the real World answered when the sequence was written (informative:
// the check compares the real World with the model, not with Expect).
type FileSequence struct {
	Name   string   `json:"name,omitempty"`
	Calls  []Call   `json:"calls"`
	Expect []Answer `json:"expect,omitempty"`
}

// ReadFile reads and validates a sequence file.
func ReadFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		// go test runs the test in the package directory.
		return nil, fmt.Errorf("%w (a relative path is taken from conformance/, where go test runs the test)", err)
	}
	var f File
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(f.Sequences) == 0 {
		return nil, fmt.Errorf("%s: no sequences", path)
	}
	for i, s := range f.Sequences {
		if err := Validate(s.Calls); err != nil {
			return nil, fmt.Errorf("%s: sequence %d (%s): %w", path, i, s.Name, err)
		}
	}
	return &f, nil
}

// Table prints a sequence with both Worlds' answers, marking the calls where
// they differ: the failure report of the differential test.
func Table(calls []Call, real, model []Answer) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "#\tcall\treal answer\tmodel answer\t")
	for i, c := range calls {
		var r, m string
		mark := ""
		if i < len(real) {
			r = real[i].String()
		}
		if i < len(model) {
			m = model[i].String()
		}
		if i < len(real) && i < len(model) && !real[i].Same(model[i]) {
			mark = "  <-- differs"
			if real[i].Msg != "" {
				mark += " (real: " + real[i].Msg + ")"
			}
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\n", i, c, r, m, mark)
	}
	w.Flush()
	return b.String()
}
