package program

import (
	"fmt"
	"maps"
	"regexp"
	"strings"
	"time"

	"github.com/simlab/simlab/sim"
)

// Node is one statement of a workflow program, as a scenario file writes it
// (workflow.program is a list of them, run in order). Exactly one of the
// kind keys is set:
//
//	step: NAME     a step call (await NAME(...)); body: its run time
//	               (default: the workflow's body), results: N draws its
//	               result uniformly from 0..N-1 (default: it returns 1),
//	               hangs: N makes its first N attempts hang (the body never
//	               returns: only a time limit ends it, with its invocation)
//	all: [...]     Promise.all of the sub-programs, each one statement
//	race: [...]    Promise.race: the first to settle wins; the losers go on
//	seq: [...]     statements in order (a branch of all or race)
//	pool: K        K workers share N calls of step (n: N, step: NAME): each
//	               starts the next call when its own finishes
//	sleep: D       sleep(D): a wait the runtime completes once D has passed
//	if: LABEL      then: [...] when the value labelled LABEL is truthy (a
//	               step's result other than 0, a race a step won), else:
//	               [...] otherwise; not: true inverts the test
//	loop: N        do: [...] at most N times, until: LABEL stops it once
//	               that value is truthy after an iteration
//	clock: D       Date.now() - t0 >= D, t0 the workflow's Date.now() at
//	               its start: truthy once the run's clock (the VM's, which
//	               the replay advances as it consumes events) is D past it;
//	               it awaits nothing and mints nothing
//	hook: H        const H = createHook(): mints a hook (its correlation id
//	               the next of the run's sequence, its token the next of
//	               the run's token sequence); awaits nothing. H is in scope
//	               for the rest of its list and the lists inside it
//	receive: H     await H: the hook's next payload (truthy), one per
//	               hook_received in log order; in a loop it reads the next
//	               each time. Each await enrols an awaiter the payloads go
//	               to oldest first, and one whose race was lost stays
//	               enrolled (vercel/workflow #4264): its payload is lost.
//	               carry: true (a receive that is a branch of a race)
//	               carries the read across races instead, as iterating the
//	               hook does (it.next() kept until it settles): a read the
//	               race lost is raced again by the next carried receive of
//	               the hook, settled or not; the hook has one carried read,
//	               so carried receives in races running at once race the
//	               same read and its payload settles each of them; a read
//	               a dispose dropped never settles
//	dispose: H     H.dispose(): the next suspension writes hook_disposed;
//	               awaits nothing
//
// as: LABEL on any statement keeps its value for a later if or until: a
// step's result, a race's winner's value (a sleep's is undefined, so
// falsy), an all's array (truthy).
type Node struct {
	Step    string        `json:"step,omitempty" yaml:"step,omitempty"`
	Body    sim.Dist      `json:"body,omitzero" yaml:"body,omitempty"`
	Results int           `json:"results,omitempty" yaml:"results,omitempty"`
	Hangs   int           `json:"hangs,omitempty" yaml:"hangs,omitempty"`
	All     []Node        `json:"all,omitempty" yaml:"all,omitempty"`
	Race    []Node        `json:"race,omitempty" yaml:"race,omitempty"`
	Seq     []Node        `json:"seq,omitempty" yaml:"seq,omitempty"`
	Pool    int           `json:"pool,omitempty" yaml:"pool,omitempty"`
	N       int           `json:"n,omitempty" yaml:"n,omitempty"`
	Sleep   time.Duration `json:"sleep,omitempty" yaml:"sleep,omitempty"`
	If      string        `json:"if,omitempty" yaml:"if,omitempty"`
	Not     bool          `json:"not,omitempty" yaml:"not,omitempty"`
	Then    []Node        `json:"then,omitempty" yaml:"then,omitempty"`
	Else    []Node        `json:"else,omitempty" yaml:"else,omitempty"`
	Loop    int           `json:"loop,omitempty" yaml:"loop,omitempty"`
	Do      []Node        `json:"do,omitempty" yaml:"do,omitempty"`
	Until   string        `json:"until,omitempty" yaml:"until,omitempty"`
	Clock   time.Duration `json:"clock,omitempty" yaml:"clock,omitempty"`
	Hook    string        `json:"hook,omitempty" yaml:"hook,omitempty"`
	Receive string        `json:"receive,omitempty" yaml:"receive,omitempty"`
	Dispose string        `json:"dispose,omitempty" yaml:"dispose,omitempty"`
	Carry   bool          `json:"carry,omitempty" yaml:"carry,omitempty"`
	As      string        `json:"as,omitempty" yaml:"as,omitempty"`
	// Line is where the statement starts in its file, for errors (0 when it
	// came from elsewhere).
	Line int `json:"-" yaml:"-"`
}

// Kind is what a statement does.
type Kind uint8

const (
	KindStep Kind = iota
	KindAll
	KindRace
	KindSeq
	KindPool
	KindSleep
	KindIf
	KindLoop
	KindClock
	KindHook
	KindReceive
	KindDispose
)

var kindKeys = [...]string{"step", "all", "race", "seq", "pool", "sleep", "if", "loop", "clock", "hook", "receive", "dispose"}

func (k Kind) String() string { return kindKeys[k] }

// Limits keep a program a workflow, not a generator of millions of
// entities: a replay's cost grows with what it mints.
const (
	MaxDepth    = 16
	MaxWidth    = 4096 // children of one all, race or seq; a pool's calls
	MaxLoop     = 64
	MaxHangs    = 48     // the runtime's delivery cap: more hangs than deliveries never end
	MaxEntities = 100000 // entities one run of the program can mint
)

var nameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,63}$`)

// kinds lists the kind keys n sets.
func (n *Node) kinds() []Kind {
	var ks []Kind
	if n.Step != "" && n.Pool == 0 {
		ks = append(ks, KindStep)
	}
	if n.All != nil {
		ks = append(ks, KindAll)
	}
	if n.Race != nil {
		ks = append(ks, KindRace)
	}
	if n.Seq != nil {
		ks = append(ks, KindSeq)
	}
	if n.Pool != 0 {
		ks = append(ks, KindPool)
	}
	if n.Sleep != 0 {
		ks = append(ks, KindSleep)
	}
	if n.If != "" {
		ks = append(ks, KindIf)
	}
	if n.Loop != 0 {
		ks = append(ks, KindLoop)
	}
	if n.Clock != 0 {
		ks = append(ks, KindClock)
	}
	if n.Hook != "" {
		ks = append(ks, KindHook)
	}
	if n.Receive != "" {
		ks = append(ks, KindReceive)
	}
	if n.Dispose != "" {
		ks = append(ks, KindDispose)
	}
	return ks
}

// Kind is the statement's kind; Validate has made sure there is one.
func (n *Node) Kind() Kind {
	if ks := n.kinds(); len(ks) > 0 {
		return ks[0]
	}
	return KindSeq
}

// Error is a bad statement: where it is and what was wrong.
type Error struct {
	Line int
	Path string
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s: %s", e.Line, e.Path, e.Msg)
	}
	return e.Path + ": " + e.Msg
}

// Validate checks a program (path names it, e.g. "workflow.program"): each
// statement has one kind and the keys that kind takes, names are
// identifiers, labels are defined before they are tested, and the program
// can mint at most MaxEntities entities. Every branch of an all or a race
// must await an entity on every path: a branch that could finish without
// awaiting would order the program's next statements by microtask ticks,
// which the replay does not model.
func Validate(prog []Node, path string) error {
	v := validator{labels: map[string]bool{}, hooks: map[string]bool{}}
	if err := v.list(prog, path, 0); err != nil {
		return err
	}
	if n := MaxMinted(prog); n > MaxEntities {
		return &Error{Path: path, Msg: fmt.Sprintf("can mint %d entities in one run; at most %d", n, MaxEntities)}
	}
	return nil
}

type validator struct {
	labels map[string]bool
	// hooks are the hooks in scope: a hook statement's name is a const of
	// its list (block-scoped, as JavaScript's).
	hooks map[string]bool
	// raceList: the list about to be validated is a race's branches.
	raceList bool
}

func (v *validator) list(ns []Node, path string, depth int) error {
	if len(ns) > MaxWidth {
		return &Error{Path: path, Msg: fmt.Sprintf("%d statements; at most %d", len(ns), MaxWidth)}
	}
	outer := v.hooks
	v.hooks = maps.Clone(outer)
	defer func() { v.hooks = outer }()
	race := v.raceList
	v.raceList = false
	for i := range ns {
		if ns[i].Carry && !race {
			return &Error{Line: ns[i].Line, Path: fmt.Sprintf("%s[%d]", path, i), Msg: "carry: a carried read is a branch of a race (what it carries is the read the race lost)"}
		}
		if err := v.node(&ns[i], fmt.Sprintf("%s[%d]", path, i), depth); err != nil {
			return err
		}
	}
	return nil
}

func (v *validator) node(n *Node, path string, depth int) error {
	bad := func(format string, a ...any) error {
		return &Error{Line: n.Line, Path: path, Msg: fmt.Sprintf(format, a...)}
	}
	if depth >= MaxDepth {
		return bad("nested %d deep; at most %d", depth+1, MaxDepth)
	}
	ks := n.kinds()
	switch len(ks) {
	case 0:
		return bad("want one of %s", strings.Join(kindKeys[:], ", "))
	case 1:
	default:
		names := make([]string, len(ks))
		for i, k := range ks {
			names[i] = k.String()
		}
		return bad("one statement has one kind; this one has %s", strings.Join(names, " and "))
	}
	k := ks[0]
	// Keys that belong to another kind.
	extra := map[string]bool{
		"body": n.Body != (sim.Dist{}), "results": n.Results != 0, "hangs": n.Hangs != 0, "n": n.N != 0, "not": n.Not,
		"then": n.Then != nil, "else": n.Else != nil, "do": n.Do != nil, "until": n.Until != "",
		"step": n.Step != "" && k != KindStep && k != KindPool, "carry": n.Carry,
	}
	allowed := map[Kind][]string{
		KindStep: {"body", "results", "hangs"}, KindPool: {"body", "results", "hangs", "n", "step"},
		KindIf: {"not", "then", "else"}, KindLoop: {"do", "until"}, KindReceive: {"carry"},
	}
	for _, key := range allowed[k] {
		delete(extra, key)
	}
	for _, key := range []string{"step", "body", "results", "hangs", "n", "not", "then", "else", "do", "until", "carry"} {
		if extra[key] {
			return bad("%s is not a key of %s", key, k)
		}
	}
	if n.As != "" && (k == KindHook || k == KindDispose) {
		return bad("as: %s has no value to keep (receive: NAME's payload has)", k)
	}
	if n.As != "" && !nameRE.MatchString(n.As) {
		return bad("as %q: want a name of letters, digits and _ (a letter first, at most 64)", n.As)
	}
	if err := n.Body.Validate(); err != nil {
		return bad("body: %v", err)
	}
	var err error
	switch k {
	case KindStep:
		err = v.stepName(n, bad)
	case KindAll, KindRace, KindSeq:
		kids := map[Kind][]Node{KindAll: n.All, KindRace: n.Race, KindSeq: n.Seq}[k]
		if len(kids) == 0 {
			return bad("%s: want at least one statement", k)
		}
		v.raceList = k == KindRace
		if err = v.list(kids, path+"."+k.String(), depth+1); err != nil {
			return err
		}
		if k != KindSeq {
			for i := range kids {
				if !mustAwait(&kids[i]) {
					return &Error{Line: kids[i].Line, Path: fmt.Sprintf("%s.%s[%d]", path, k, i),
						Msg: "a branch of " + k.String() + " must await a step, a sleep, a pool or a hook's payload on every path (an if without else, or with a branch that awaits nothing, may not)"}
				}
			}
		}
	case KindPool:
		if n.Pool < 1 || n.N < 1 || n.N > MaxWidth {
			return bad("pool %d of n %d: want pool ≥ 1 and 1 ≤ n ≤ %d", n.Pool, n.N, MaxWidth)
		}
		err = v.stepName(n, bad)
	case KindSleep:
		if n.Sleep < 0 {
			return bad("sleep %v: want a positive duration", n.Sleep)
		}
	case KindClock:
		if n.Clock < time.Millisecond || n.Clock%time.Millisecond != 0 {
			return bad("clock %v: want a positive whole number of milliseconds (Date.now()'s unit)", n.Clock)
		}
	case KindHook:
		if !nameRE.MatchString(n.Hook) {
			return bad("hook %q: want a name of letters, digits and _ (a letter first, at most 64)", n.Hook)
		}
		if v.hooks[n.Hook] {
			return bad("hook %q: a hook of that name is in scope already", n.Hook)
		}
		v.hooks[n.Hook] = true
	case KindReceive, KindDispose:
		h := n.Receive + n.Dispose
		if !v.hooks[h] {
			return bad("%s %q: no hook statement before it in its list or one around it makes %q (hook: %s)", k, h, h, h)
		}
	case KindIf:
		if !v.labels[n.If] {
			return bad("if %q: no statement before it is labelled %q (as: %s)", n.If, n.If, n.If)
		}
		if n.Then == nil && n.Else == nil {
			return bad("if: want then, else or both")
		}
		if n.Then != nil {
			if err := v.list(n.Then, path+".then", depth+1); err != nil {
				return err
			}
		}
		if n.Else != nil {
			err = v.list(n.Else, path+".else", depth+1)
		}
	case KindLoop:
		if n.Loop < 1 || n.Loop > MaxLoop {
			return bad("loop %d: want 1..%d iterations", n.Loop, MaxLoop)
		}
		if len(n.Do) == 0 {
			return bad("loop: want do with at least one statement")
		}
		if err := v.list(n.Do, path+".do", depth+1); err != nil {
			return err
		}
		if n.Until != "" && !v.labels[n.Until] {
			return bad("until %q: no statement in or before the loop is labelled %q", n.Until, n.Until)
		}
	}
	if err != nil {
		return err
	}
	if n.As != "" {
		v.labels[n.As] = true
	}
	return nil
}

func (v *validator) stepName(n *Node, bad func(string, ...any) error) error {
	if !nameRE.MatchString(n.Step) {
		return bad("step %q: want a name of letters, digits and _ (a letter first, at most 64)", n.Step)
	}
	if n.Results < 0 || n.Results > 1<<20 {
		return bad("results %d: want 0 (the step returns 1) or a count of results 0..N-1", n.Results)
	}
	if n.Hangs < 0 || n.Hangs > MaxHangs {
		return bad("hangs %d: want how many of its first attempts hang, 0..%d", n.Hangs, MaxHangs)
	}
	return nil
}

// mustAwait reports whether every path through n awaits an entity.
func mustAwait(n *Node) bool {
	switch n.Kind() {
	case KindStep, KindSleep, KindPool, KindAll, KindRace, KindReceive:
		return true
	case KindSeq:
		return anyAwaits(n.Seq)
	case KindIf:
		return anyAwaits(n.Then) && anyAwaits(n.Else)
	case KindLoop:
		return anyAwaits(n.Do)
	}
	return false
}

func anyAwaits(ns []Node) bool {
	for i := range ns {
		if mustAwait(&ns[i]) {
			return true
		}
	}
	return false
}

// MaxMinted bounds how many entities one run of the program mints: every
// branch of every if taken, every loop run to its bound.
func MaxMinted(ns []Node) int {
	total := 0
	for i := range ns {
		total = satAdd(total, maxMinted(&ns[i]))
	}
	return total
}

func maxMinted(n *Node) int {
	switch n.Kind() {
	case KindStep, KindSleep, KindHook:
		return 1
	case KindPool:
		return n.N
	case KindAll:
		return MaxMinted(n.All)
	case KindRace:
		return MaxMinted(n.Race)
	case KindSeq:
		return MaxMinted(n.Seq)
	case KindIf:
		return satAdd(MaxMinted(n.Then), MaxMinted(n.Else))
	case KindLoop:
		m := MaxMinted(n.Do)
		if m > 0 && n.Loop > (1<<30)/m {
			return 1 << 30
		}
		return m * n.Loop
	}
	return 0
}

func satAdd(a, b int) int {
	if a+b > 1<<30 {
		return 1 << 30
	}
	return a + b
}

// FromFanouts is the program a fan-out list stands for: one Promise.all of
// steps per fan-out, in order, every step named step.
func FromFanouts(widths []int, step string) []Node {
	prog := make([]Node, len(widths))
	for i, w := range widths {
		kids := make([]Node, w)
		for j := range kids {
			kids[j] = Node{Step: step}
		}
		prog[i] = Node{All: kids}
	}
	return prog
}

// Walk calls fn on every statement of ns and of the statements inside
// them, in walk order (as Compile numbers them).
func Walk(ns []Node, fn func(*Node)) {
	for i := range ns {
		n := &ns[i]
		fn(n)
		Walk(n.All, fn)
		Walk(n.Race, fn)
		Walk(n.Seq, fn)
		Walk(n.Then, fn)
		Walk(n.Else, fn)
		Walk(n.Do, fn)
	}
}

// StepNames lists the step names a program calls, in order of first
// appearance.
func StepNames(ns []Node) []string {
	var out []string
	seen := map[string]bool{}
	Walk(ns, func(n *Node) {
		if n.Step != "" && !seen[n.Step] {
			seen[n.Step] = true
			out = append(out, n.Step)
		}
	})
	return out
}

// FanoutWidths is the fan-out list a program stands for, when it is one: a
// list of Promise.all statements of plain steps (no body, results or
// label of their own). ok is false for any other program.
func FanoutWidths(ns []Node) (widths []int, ok bool) {
	for i := range ns {
		n := &ns[i]
		if n.Kind() != KindAll || n.As != "" {
			return nil, false
		}
		for j := range n.All {
			c := &n.All[j]
			if c.Kind() != KindStep || c.As != "" || c.Results != 0 || c.Hangs != 0 || c.Body != (sim.Dist{}) {
				return nil, false
			}
		}
		widths = append(widths, len(n.All))
	}
	return widths, len(widths) > 0
}
