package realworld

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// The concurrent conformance (issue 18): batches of World calls issued at
// once on the same run, each with its invocation and response time, and the
// rows and logs read back after every batch. A history of batches is checked
// for linearizability against model/world as the sequential specification
// (linearize.go) and, call by call, against the model's own interleavings of
// the adapters' steps (interleave.go).

// Read operations a concurrent batch may hold beside events.
const (
	OpGetRun     = "get_run"     // runs.get: the run's status
	OpGetStep    = "get_step"    // steps.get: the step's status and attempt
	OpListEvents = "list_events" // events.list: the whole log
)

// ConcCall is one call of a concurrent batch: an event or a read. DelayTicks
// holds it back for that many turns of the driver's event loop after the batch
// starts (0: issued with the others), which aims it at a later point of the
// calls it races with.
type ConcCall struct {
	Call
	DelayTicks int `json:"delay_ticks,omitempty"`
	// DelayUS holds it back that many microseconds on the driver's clock;
	// After, when set, until call After of the batch has answered.
	DelayUS int  `json:"delay_us,omitempty"`
	After   *int `json:"after,omitempty"`
}

// Delayed reports whether the call is held back from the batch's start.
func (c ConcCall) Delayed() bool { return c.DelayTicks > 0 || c.DelayUS > 0 || c.After != nil }

// IsRead reports whether the call reads instead of writing.
func (c ConcCall) IsRead() bool {
	return c.Op == OpGetRun || c.Op == OpGetStep || c.Op == OpListEvents
}

func (c ConcCall) String() string {
	var s string
	switch c.Op {
	case OpGetRun:
		s = fmt.Sprintf("r%d runs.get", c.Run)
	case OpGetStep:
		s = fmt.Sprintf("r%d.s%d steps.get", c.Run, c.Step)
	case OpListEvents:
		s = fmt.Sprintf("r%d events.list", c.Run)
	default:
		s = c.Call.String()
	}
	if c.DelayTicks > 0 {
		s += fmt.Sprintf(" (after %d ticks)", c.DelayTicks)
	}
	if c.DelayUS > 0 {
		s += fmt.Sprintf(" (after %dµs)", c.DelayUS)
	}
	if c.After != nil {
		s += fmt.Sprintf(" (after call %d)", *c.After)
	}
	return s
}

// Batch is a set of calls issued at once. Schedule, when set, forces the
// order of their steps on the real World ([call, step] pairs, in order;
// force.go): a model interleaving replayed on the real adapter.
type Batch struct {
	Calls    []ConcCall `json:"calls"`
	Schedule [][2]int   `json:"schedule,omitempty"`
}

// History is a concurrent history to run: Runs runs created one after the
// other, then the batches in order, each read back before the next starts.
type History struct {
	Name    string  `json:"name,omitempty"`
	Runs    int     `json:"runs"`
	Batches []Batch `json:"batches"`
}

// Calls counts the history's calls.
func (h History) Calls() int {
	n := 0
	for _, b := range h.Batches {
		n += len(b.Calls)
	}
	return n
}

// Steps lists, per run, the step indices the history names (0..max), which
// every read-back reads.
func (h History) Steps() [][]int {
	return h.upTo(func(c ConcCall) (int, bool) { return c.Step, StepEvent(c.Type) || c.Op == OpGetStep })
}

// Hooks lists, per run, the hook indices the history names (0..max), which
// every read-back reads.
func (h History) Hooks() [][]int {
	return h.upTo(func(c ConcCall) (int, bool) { return c.Hook, HookEvent(c.Type) })
}

// upTo lists, per run, 0..the largest index of(c) over the calls that name
// one.
func (h History) upTo(of func(ConcCall) (int, bool)) [][]int {
	out := make([][]int, h.Runs)
	max := make([]int, h.Runs)
	for i := range max {
		max[i] = -1
	}
	for _, b := range h.Batches {
		for _, c := range b.Calls {
			if k, ok := of(c); ok && c.Run < h.Runs && k > max[c.Run] {
				max[c.Run] = k
			}
		}
	}
	for r, m := range max {
		for k := 0; k <= m; k++ {
			out[r] = append(out[r], k)
		}
	}
	return out
}

// Tokens lists the token indices the history names (0..max; none without
// hook events), whose owners every read-back reads.
func (h History) Tokens() []int {
	max := -1
	for _, b := range h.Batches {
		for _, c := range b.Calls {
			if HookEvent(c.Type) && c.Token > max {
				max = c.Token
			}
		}
	}
	var out []int
	for t := 0; t <= max; t++ {
		out = append(out, t)
	}
	return out
}

// Validate names the first thing wrong with a history.
func (h History) Validate() error {
	if h.Runs < 1 || h.Runs > 16 {
		return fmt.Errorf("runs %d: want 1..16", h.Runs)
	}
	if len(h.Batches) == 0 {
		return fmt.Errorf("no batches")
	}
	tokens := map[[2]int]int{} // (run, hook) → token
	for i, b := range h.Batches {
		if len(b.Calls) == 0 {
			return fmt.Errorf("batch %d: no calls", i)
		}
		if len(b.Calls) > 64 {
			return fmt.Errorf("batch %d: %d calls, at most 64", i, len(b.Calls))
		}
		for j, c := range b.Calls {
			if err := c.validate(h.Runs); err != nil {
				return fmt.Errorf("batch %d call %d: %w", i, j, err)
			}
			if HookEvent(c.Type) {
				k := [2]int{c.Run, c.Hook}
				if t, ok := tokens[k]; ok && t != c.Token {
					return fmt.Errorf("batch %d call %d: hook r%d.h%d carries token %d, an earlier call token %d (a hook has one token)", i, j, c.Run, c.Hook, c.Token, t)
				}
				tokens[k] = c.Token
			}
		}
	}
	return nil
}

func (c ConcCall) validate(runs int) error {
	if c.Run < 0 || c.Run >= runs {
		return fmt.Errorf("run %d: want 0..%d (the history creates %d runs)", c.Run, runs-1, runs)
	}
	if c.Step < 0 || c.Step > 63 {
		return fmt.Errorf("step %d: want 0..63", c.Step)
	}
	if c.Hook < 0 || c.Hook > 63 || c.Token < 0 || c.Token > 63 {
		return fmt.Errorf("hook %d, token %d: want 0..63", c.Hook, c.Token)
	}
	if c.DelayTicks < 0 || c.DelayTicks > 1000 {
		return fmt.Errorf("delay_ticks %d: want 0..1000", c.DelayTicks)
	}
	if c.DelayUS < 0 || c.DelayUS > 1_000_000 {
		return fmt.Errorf("delay_us %d: want 0..1000000", c.DelayUS)
	}
	switch c.Op {
	case OpGetRun, OpGetStep, OpListEvents:
		if c.Type != "" || c.Lazy {
			return fmt.Errorf("%s carries no event", c.Op)
		}
		return nil
	case "event":
		// The sequential rules: a known type, lazy only for step_started.
		return Validate([]Call{{Op: "create_run", Run: c.Run}, c.Call})
	}
	return fmt.Errorf("op %q: want event, %s, %s or %s", c.Op, OpGetRun, OpGetStep, OpListEvents)
}

// Reply is what the real World answered to one call of a batch, with its
// interval on the driver's monotonic clock (nanoseconds).
type Reply struct {
	Res string `json:"res"`
	Msg string `json:"msg,omitempty"`
	T0  int64  `json:"t0"`
	T1  int64  `json:"t1"`
	// Reads only.
	Run     string   `json:"run,omitempty"`
	Step    string   `json:"step,omitempty"`
	Attempt int      `json:"attempt,omitempty"`
	Log     []string `json:"log,omitempty"`
	// Hook events only: the type of the event the World logged (hook_conflict
	// for a hook_created whose token was held).
	Event string `json:"event,omitempty"`
}

// StepRow is a step row read back: status "" when the step does not exist,
// "unreadable: …" when the World could not give it back.
type StepRow struct {
	Step    string `json:"step"`
	Attempt int    `json:"attempt"`
}

// Readback is one run's rows and log read back after a batch. Log entries are
// "type" for run events and "type:sN" for step N's events, in the World's
// order, with a repeated run_cancelled left out (see NormalizeLog).
type Readback struct {
	Run   string    `json:"run"`
	Steps []StepRow `json:"steps"`
	Log   []string  `json:"log"`
	T0    int64     `json:"t0"`
	T1    int64     `json:"t1"`
	// Hooks are the run's hooks the history names, each "live" or "" (as
	// Answer.HookRow); Owners, per token the history names, the hook
	// holding it ("r0.h1", "" for none). Absent without hook events.
	Hooks  []string `json:"hooks,omitempty"`
	Owners []string `json:"owners,omitempty"`
}

// BatchResult is a batch's replies (in call order) and read-backs (per run).
// Broken lists the steps of a forced schedule the real World could not take
// in the order given (none when it was honoured).
type BatchResult struct {
	Replies   []Reply    `json:"replies"`
	Readbacks []Readback `json:"readbacks"`
	Broken    []string   `json:"broken,omitempty"`
}

// Outcome is what a batch did, as an observer sees it: every call's answer
// (without its times) and every run's rows and log after it. Two trials of a
// batch with the same Outcome are the same behaviour.
func (b BatchResult) Outcome(calls []ConcCall) string {
	var s strings.Builder
	for i, r := range b.Replies {
		if i > 0 {
			s.WriteString(" ")
		}
		s.WriteString(ReplyString(calls[i], r))
	}
	for run, rb := range b.Readbacks {
		fmt.Fprintf(&s, " | r%d %s", run, rb.String())
	}
	return s.String()
}

func ReplyString(c ConcCall, r Reply) string {
	switch c.Op {
	case OpGetRun:
		return "run=" + r.Run
	case OpGetStep:
		if r.Step == "" {
			return "step=missing"
		}
		return fmt.Sprintf("step=%s#%d", r.Step, r.Attempt)
	case OpListEvents:
		return "log=[" + strings.Join(r.Log, ",") + "]"
	}
	if HookEvent(c.Type) && r.Event != "" {
		return r.Res + ":" + r.Event
	}
	return r.Res
}

func (rb Readback) String() string {
	var s strings.Builder
	s.WriteString(shortUnreadable(rb.Run))
	for i, st := range rb.Steps {
		if st.Step == "" {
			fmt.Fprintf(&s, " s%d=missing", i)
		} else {
			fmt.Fprintf(&s, " s%d=%s#%d", i, st.Step, st.Attempt)
		}
	}
	for i, h := range rb.Hooks {
		if h == "" {
			h = "missing"
		}
		fmt.Fprintf(&s, " h%d=%s", i, shortUnreadable(h))
	}
	for i, o := range rb.Owners {
		if o == "" {
			o = "none"
		}
		fmt.Fprintf(&s, " t%d→%s", i, shortUnreadable(o))
	}
	s.WriteString(" log=[" + strings.Join(rb.Log, ",") + "]")
	return s.String()
}

// shortUnreadable keeps an unreadable row's reason to its first line.
func shortUnreadable(s string) string {
	if !strings.HasPrefix(s, "unreadable") {
		return s
	}
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimRight(line, " :[")
}

// NormalizeLog leaves out every run_cancelled that follows an earlier one:
// the real Worlds log a repeated (idempotent) cancel again, the model answers
// with the first and logs nothing (docs/CONFORMANCE.md), and the two mean the
// same run.
func NormalizeLog(log []string) []string {
	out := make([]string, 0, len(log))
	cancelled := false
	for _, e := range log {
		if e == "run_cancelled" {
			if cancelled {
				continue
			}
			cancelled = true
		}
		out = append(out, e)
	}
	return out
}

// ConcurrentFile is the concurrent sequence file format (docs/CONFORMANCE.md):
// histories, each replayed against a World with fresh runs.
type ConcurrentFile struct {
	Histories []FileHistory `json:"histories"`
}

// FileHistory is one history of a file; Seen, when present, is what the real
// World did when the file was written (informative).
type FileHistory struct {
	History
	Seen []BatchResult `json:"seen,omitempty"`
}

// ReadConcurrentFile reads and validates a concurrent sequence file.
func ReadConcurrentFile(path string) (*ConcurrentFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w (a relative path is taken from conformance/, where go test runs the test)", err)
	}
	var f ConcurrentFile
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(f.Histories) == 0 {
		return nil, fmt.Errorf("%s: no histories", path)
	}
	for i, h := range f.Histories {
		if err := h.Validate(); err != nil {
			return nil, fmt.Errorf("%s: history %d (%s): %w", path, i, h.Name, err)
		}
	}
	return &f, nil
}
