package world

import "testing"

// hookStep is one hook event of a script; ended is the run's status at
// the call (terminal or not), end marks the run's end (End) instead of an
// event.
type hookStep struct {
	op      HookOp
	id, tok int32
	ended   bool
	end     bool
	want    HookResult
	class   Result
}

func create(id, tok int32, want HookResult, class Result) hookStep {
	return hookStep{op: HookCreate, id: id, tok: tok, want: want, class: class}
}
func receive(id int32, want HookResult, class Result) hookStep {
	return hookStep{op: HookReceive, id: id, want: want, class: class}
}
func dispose(id int32, want HookResult, class Result) hookStep {
	return hookStep{op: HookDispose, id: id, want: want, class: class}
}
func onEnded(s hookStep) hookStep { s.ended = true; return s }

var runEnd = hookStep{end: true}

func runHookScript(t *testing.T, name string, h *Hooks, others []*Hooks, script []hookStep) {
	t.Helper()
	ended := false
	for i, s := range script {
		if s.end {
			h.End()
			ended = true
			continue
		}
		got, class := h.Apply(s.op, s.id, s.tok, s.ended || ended, others)
		if got != s.want || class != s.class {
			t.Errorf("%s (%v): call %d, %v h%d t%d: got %v %v, want %v %v (hooks: %s)", name, h.Rules, i, s.op, s.id, s.tok, got, class, s.want, s.class, h)
		}
	}
}

// TestHookRules pins the hook rules both real Worlds share, each with the
// sequence of conformance/testdata/hooks.json whose real answers
// conformance's TestHooks compared (world-local 5.0.0-beta.45, beta.46,
// world-postgres 5.0.0-beta.29), on every rule set.
func TestHookRules(t *testing.T) {
	const ok, ec, nf, re = OK, EntityConflict, NotFound, RunExpired
	cases := []struct {
		name   string
		script []hookStep
	}{
		{"hooks.json 0: created, received twice, disposed; the dispose releases the token", []hookStep{
			create(0, 0, HookLogged, ok), receive(0, HookLogged, ok), receive(0, HookLogged, ok),
			dispose(0, HookLogged, ok), create(1, 0, HookLogged, ok), receive(1, HookLogged, ok)}},
		{"hooks.json 1: hook_created of a live hook is refused", []hookStep{
			create(0, 0, HookLogged, ok), create(0, 0, HookRefused, ec), receive(0, HookLogged, ok)}},
		{"hooks.json 2: a held token: hook_conflict, again hook_conflict, then created once free", []hookStep{
			create(0, 0, HookLogged, ok), create(1, 0, HookConflict, ok), create(1, 0, HookConflict, ok),
			receive(1, HookRefused, nf), dispose(1, HookRefused, nf), dispose(0, HookLogged, ok),
			create(1, 0, HookLogged, ok), receive(1, HookLogged, ok)}},
		{"hooks.json 4: hook_received and hook_disposed of a hook never created", []hookStep{
			receive(0, HookRefused, nf), dispose(0, HookRefused, nf), create(0, 0, HookLogged, ok), receive(0, HookLogged, ok)}},
		{"hooks.json 5: a second dispose, a receive after the dispose", []hookStep{
			create(0, 0, HookLogged, ok), dispose(0, HookLogged, ok), dispose(0, HookRefused, nf), receive(0, HookRefused, nf)}},
		{"hooks.json 6-8: the run's end deletes its hooks; hook_created on the ended run is refused", []hookStep{
			create(0, 0, HookLogged, ok), create(1, 1, HookLogged, ok), runEnd,
			receive(0, HookRefused, nf), dispose(1, HookRefused, nf), create(2, 2, HookRefused, ec), create(0, 0, HookRefused, ec)}},
		{"a receive that found its hook before the end's deletion, on the ended run: RunExpired (a race)", []hookStep{
			create(0, 0, HookLogged, ok), onEnded(receive(0, HookRefused, re)), onEnded(dispose(0, HookLogged, ok))}},
	}
	for _, rules := range []Rules{RulesDomain, RulesLocal, RulesPostgres} {
		for _, c := range cases {
			h := &Hooks{Rules: rules}
			runHookScript(t, c.name, h, nil, c.script)
		}
	}
	var zero Hooks
	if zero.Rules != RulesDomain || zero.Live(0) || zero.Create(3, 1, false) != HookLogged {
		t.Error("the zero value is empty and applies RulesDomain")
	}
}

// TestHookRulesWorldsDiffer pins a disposed hook's re-creation, where the
// Worlds differ (hooks.json 10: "a disposed hook created again ... the Worlds
// differ", compared by TestHooks on each).
func TestHookRulesWorldsDiffer(t *testing.T) {
	const ok, ec, nf = OK, EntityConflict, NotFound
	script := map[Rules][]hookStep{
		// world-local 5.0.0-beta.45/46: the re-create is logged yet refused
		// (its file write fails), the hook stays disposed; its claim names
		// it, so the next re-create is refused and writes the file back,
		// which a dispose then meets (its lock refuses); another hook taking
		// the token drops both.
		RulesLocal: {
			create(0, 0, HookLogged, ok), dispose(0, HookLogged, ok), create(0, 0, HookRefusedLogged, ec),
			receive(0, HookRefused, nf), dispose(0, HookRefused, nf), create(0, 0, HookRefused, ec),
			dispose(0, HookRefused, ec), create(1, 0, HookLogged, ok), receive(1, HookLogged, ok),
			dispose(1, HookLogged, ok), create(0, 0, HookRefusedLogged, ec), receive(0, HookRefused, nf)},
		// world-postgres 5.0.0-beta.29: the hook row comes back live (the
		// event is refused by the unique index), holding its token.
		RulesPostgres: {
			create(0, 0, HookLogged, ok), dispose(0, HookLogged, ok), create(0, 0, HookRefusedLive, ec),
			receive(0, HookLogged, ok), dispose(0, HookLogged, ok), create(0, 0, HookRefusedLive, ec),
			dispose(0, HookLogged, ok), create(1, 0, HookLogged, ok), receive(1, HookLogged, ok),
			dispose(1, HookLogged, ok), create(0, 0, HookRefusedLive, ec), receive(0, HookLogged, ok)},
		// DOMAIN (world-vercel, unverified): refused, nothing else.
		RulesDomain: {
			create(0, 0, HookLogged, ok), dispose(0, HookLogged, ok), create(0, 0, HookRefused, ec),
			receive(0, HookRefused, nf), dispose(0, HookRefused, nf), create(1, 0, HookLogged, ok)},
	}
	for rules, s := range script {
		runHookScript(t, "re-creation of a disposed hook", &Hooks{Rules: rules}, nil, s)
	}
	// While another hook holds the token, every World logs hook_conflict.
	for _, rules := range []Rules{RulesDomain, RulesLocal, RulesPostgres} {
		runHookScript(t, "re-creation on a held token (hooks.json 11)", &Hooks{Rules: rules}, nil, []hookStep{
			create(0, 0, HookLogged, ok), dispose(0, HookLogged, ok), create(1, 0, HookLogged, ok),
			create(0, 0, HookConflict, ok), receive(0, HookRefused, nf)})
	}
}

// Tokens are the World's: another run's live hook holds one (hooks.json 3),
// and world-local's leftovers of a re-creation in one run are dropped when a
// hook of another run takes the token.
func TestHookTokensAcrossRuns(t *testing.T) {
	for _, rules := range []Rules{RulesDomain, RulesLocal, RulesPostgres} {
		a, b := &Hooks{Rules: rules}, &Hooks{Rules: rules}
		if r, _ := a.Apply(HookCreate, 0, 7, false, []*Hooks{b}); r != HookLogged {
			t.Fatalf("%v: first create %v", rules, r)
		}
		if r, _ := b.Apply(HookCreate, 0, 7, false, []*Hooks{a}); r != HookConflict {
			t.Errorf("%v: another run's live hook holds the token: got %v, want conflict", rules, r)
		}
		if b.Live(0) {
			t.Errorf("%v: a conflicted hook is live", rules)
		}
		if id, ok := a.ByToken(7); !ok || id != 0 {
			t.Errorf("%v: ByToken(7) = %d, %v", rules, id, ok)
		}
		a.End()
		if _, ok := a.ByToken(7); ok || a.Live(0) {
			t.Errorf("%v: End left a hook live", rules)
		}
		if r, _ := b.Apply(HookCreate, 0, 7, false, []*Hooks{a}); r != HookLogged {
			t.Errorf("%v: the token released by the run's end: got %v, want logged", rules, r)
		}
	}
	a, b := &Hooks{Rules: RulesLocal}, &Hooks{Rules: RulesLocal}
	a.Create(0, 1, false)
	a.Dispose(0, false)
	a.Create(0, 1, false) // refused-logged: the claim names a's h0
	b.Apply(HookCreate, 0, 1, false, []*Hooks{a})
	b.Dispose(0, false)
	if r, _ := a.Apply(HookCreate, 0, 1, false, []*Hooks{b}); r != HookRefusedLogged {
		t.Errorf("world-local: b took the token from a's leftover claim, so a's re-create claims anew: got %v, want refused-logged", r)
	}
}

func TestHookResultWords(t *testing.T) {
	for r, want := range map[HookResult][3]string{
		HookLogged: {"logged", "", "appended"}, HookConflict: {"conflict", "", "appended"}, HookRefused: {"refused", "refused", ""},
		HookRefusedLogged: {"refused-logged", "refused", "appended"}, HookRefusedLive: {"refused-live", "refused", ""},
	} {
		got := [3]string{r.String(), "", ""}
		if r.Refused() {
			got[1] = "refused"
		}
		if r.Appended() {
			got[2] = "appended"
		}
		if got != want {
			t.Errorf("%d: %v, want %v", r, got, want)
		}
	}
	if HookReceive.String() != "hook_received" || HookResult(9).String() != "HookResult(9)" {
		t.Error("names")
	}
}

func TestHooksCloneSharesNothing(t *testing.T) {
	h := &Hooks{Rules: RulesPostgres}
	h.Create(0, 0, false)
	c := h.Clone()
	c.Dispose(0, false)
	if !h.Live(0) || c.Live(0) {
		t.Fatal("the clone shares its hooks")
	}
	if h.String() != "world-postgres h0:t0,created,live,entity" {
		t.Errorf("String: %q", h.String())
	}
}

// interleave runs two hook events of one run step by step in the order
// given (0: the first event's next step, 1: the second's) and returns both
// results and the log entries in the order they were appended.
func interleave(h *Hooks, a, b HookTxn, order []int, ended func(step int) bool) (ra, rb HookResult, log []HookEntry) {
	ts := []*HookTxn{&a, &b}
	for i, w := range order {
		if e := h.Step(ts[w], ended(i), nil); e != NoHookEntry {
			log = append(log, e)
		}
	}
	ra, _ = a.Result()
	rb, _ = b.Result()
	return ra, rb, log
}

func never(int) bool { return false }

// The races TestHooksConcurrent met on the real Worlds, as HookTxn's steps
// produce them (conformance/hooks_concurrent_test.go logs how often each
// came up).
func TestHookTxnRaces(t *testing.T) {
	// world-postgres: two hooks look the token up before either inserts its
	// row: both are created and hold the token.
	h := &Hooks{Rules: RulesPostgres}
	ra, rb, log := interleave(h, h.Begin(HookCreate, 0, 0), h.Begin(HookCreate, 1, 0), []int{0, 1, 0, 1, 0, 1, 0, 1}, never)
	if ra != HookLogged || rb != HookLogged || len(log) != 2 || len(h.Holders(0)) != 2 {
		t.Errorf("world-postgres, two hooks racing for a token: %v %v %v, holders %v", ra, rb, log, h.Holders(0))
	}
	// world-local: the token's claim decides; the loser's hook_conflict can
	// land in the log before the winner's hook_created.
	h = &Hooks{Rules: RulesLocal}
	ra, rb, log = interleave(h, h.Begin(HookCreate, 0, 0), h.Begin(HookCreate, 1, 0), []int{0, 1, 0, 1, 1, 0}, never)
	if ra != HookLogged || rb != HookConflict || len(log) != 2 || log[0] != HookConflictEntry {
		t.Errorf("world-local, two hooks racing for a token: %v %v %v", ra, rb, log)
	}
	// world-local: one hook's events wait for each other (its lock).
	h = &Hooks{Rules: RulesLocal}
	h.Create(0, 0, false)
	r, d := h.Begin(HookReceive, 0, 0), h.Begin(HookDispose, 0, 0)
	h.Step(&r, false, nil)
	if h.Ready(&d) || !h.Ready(&r) {
		t.Error("world-local: a dispose does not wait for a receive of its hook in flight")
	}
	// world-postgres: nothing holds them apart: hook_received lands after
	// hook_disposed.
	h = &Hooks{Rules: RulesPostgres}
	h.Create(0, 0, false)
	ra, rb, log = interleave(h, h.Begin(HookReceive, 0, 0), h.Begin(HookDispose, 0, 0), []int{0, 1, 1, 1, 0}, never)
	if ra != HookLogged || rb != HookLogged || len(log) != 2 || log[0] != HookDisposedEntry || log[1] != HookReceivedEntry {
		t.Errorf("world-postgres, received racing disposed: %v %v %v", ra, rb, log)
	}
	// Both: a receive that found its hook, then the run ended: RunExpired.
	for _, rules := range []Rules{RulesLocal, RulesPostgres} {
		h = &Hooks{Rules: rules}
		h.Create(0, 0, false)
		rcv := h.Begin(HookReceive, 0, 0)
		h.Step(&rcv, false, nil)
		h.Step(&rcv, true, nil)
		if res, class := rcv.Result(); res != HookRefused || class != RunExpired {
			t.Errorf("%v: a receive across the run's end: %v %v", rules, res, class)
		}
	}
	// world-local: a hook_created that read the run before its end lands
	// after it, and its hook is never live; on world-postgres its row
	// outlives the end's deletion and keeps the token.
	for rules, live := range map[Rules]bool{RulesLocal: false, RulesPostgres: true} {
		h = &Hooks{Rules: rules}
		c := h.Begin(HookCreate, 0, 0)
		h.Step(&c, false, nil)
		h.End()
		for !c.Done() {
			h.Step(&c, true, nil)
		}
		if res, _ := c.Result(); res != HookLogged || h.Live(0) != live {
			t.Errorf("%v: a create across the run's end: %v, live %v", rules, res, h.Live(0))
		}
	}
	// world-local: once a dispose has its lock, another hook may take the
	// token before the dispose is appended.
	h = &Hooks{Rules: RulesLocal}
	h.Create(0, 0, false)
	ra, rb, log = interleave(h, h.Begin(HookDispose, 0, 0), h.Begin(HookCreate, 1, 0), []int{0, 0, 1, 1, 1, 0}, never)
	if ra != HookLogged || rb != HookLogged || len(log) != 2 || log[0] != HookCreatedEntry || !h.Live(1) {
		t.Errorf("world-local, a dispose racing another hook's create: %v %v %v", ra, rb, log)
	}
	// world-local: a duplicate hook_created that found its claim before the
	// run's end writes the hook's file back after it: a hook_disposed then
	// finds the file and is logged on the ended run.
	h = &Hooks{Rules: RulesLocal}
	h.Create(0, 0, false)
	dup := h.Begin(HookCreate, 0, 0)
	h.Step(&dup, false, nil)
	h.Step(&dup, false, nil)
	h.End()
	h.Step(&dup, true, nil)
	if res, class := dup.Result(); res != HookRefused || class != EntityConflict || h.Live(0) {
		t.Errorf("world-local, a duplicate create across the run's end: %v %v, live %v", res, class, h.Live(0))
	}
	if res, _ := h.Apply(HookDispose, 0, 0, true, nil); res != HookLogged {
		t.Errorf("world-local, a dispose after the duplicate's repair on the ended run: %v, want logged", res)
	}
	// RulesDomain: one step each.
	h = &Hooks{}
	c := h.Begin(HookCreate, 0, 0)
	if h.Step(&c, false, nil) != HookCreatedEntry || !c.Done() || c.Taken() != 1 {
		t.Error("RulesDomain: hook_created is one step")
	}
	defer func() {
		if recover() == nil {
			t.Error("a step of a done event does not panic")
		}
	}()
	h.Step(&c, false, nil)
}
