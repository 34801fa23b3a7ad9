package world

import "fmt"

// Hook events (hook_created, hook_received, hook_disposed) as the real Worlds
// answer them, checked call by call against world-local 5.0.0-beta.45 and
// beta.46 and world-postgres 5.0.0-beta.29 by conformance/hooks_test.go
// (docs/CONFORMANCE.md, "Hooks"). What both Worlds do:
//
//   - hook_created on an ended run is refused (EntityConflict), before any
//     other check.
//   - hook_created of a live hook is refused (EntityConflict): core's
//     suspension handler reads that as "already exists" and continues.
//   - hook_created whose token a live hook holds (of any run) appends
//     hook_conflict instead; the hook does not become live. A later
//     hook_created of the same hook is not refused for that: it meets the
//     token again (another hook_conflict, or, once the token is free, a
//     hook_created that makes the hook live).
//   - hook_received needs a live hook (else NotFound: HookNotFoundError), then
//     a run that has not ended (else RunExpired). It leaves the hook live.
//   - hook_disposed needs a live hook (else NotFound; a second dispose is
//     NotFound), whatever the run's status; it releases the token, which a
//     later hook_created of another hook may take.
//   - A run's end (run_completed, run_failed, run_cancelled) deletes every
//     hook of the run and releases their tokens (world-local's
//     deleteAllHooksForRun, world-postgres's DELETE by run): End. After it,
//     hook_received and hook_disposed of them are NotFound. RunExpired is met
//     only by a hook_received that found its hook before the end's deletion
//     and the run ended after the end's status write (a race; runEnded with
//     the hook still live).
//
// Where they differ: hook_created of a disposed hook whose token is free
// (a stale replay's re-create). world-local appends the hook_created and
// then fails writing the hook's file (its per-process file cache remembers
// the first one), answering EntityConflict with the event in the log; the
// hook stays disposed (HookRefusedLogged). world-postgres inserts the hook
// row again, then its unique index on (run, correlation id, hook_created)
// refuses the event: EntityConflict, nothing appended, and the hook is live
// again and holds its token (HookRefusedLive).

// HookResult is what the World does with one hook event of a run.
type HookResult uint8

// Hook results. The last two are the Worlds' answers to a disposed hook's
// re-creation (see above); RulesDomain never gives them.
const (
	HookLogged   HookResult = iota // accepted and appended to the run's log as written
	HookConflict                   // hook_created whose token a live hook holds: the World appends hook_conflict instead
	HookRefused                    // refused (an error answer); nothing appended
	// HookRefusedLogged: refused (EntityConflict), yet its hook_created is
	// appended; the hook stays disposed (world-local).
	HookRefusedLogged
	// HookRefusedLive: refused (EntityConflict), nothing appended, yet the
	// hook is live again and holds its token (world-postgres).
	HookRefusedLive
)

var hookResultNames = [...]string{"logged", "conflict", "refused", "refused-logged", "refused-live"}

func (r HookResult) String() string {
	if int(r) < len(hookResultNames) {
		return hookResultNames[r]
	}
	return fmt.Sprintf("HookResult(%d)", uint8(r))
}

// Refused reports whether the World answered the event with an error.
func (r HookResult) Refused() bool { return r >= HookRefused }

// Appended reports whether the event (or, for HookConflict, hook_conflict)
// went into the run's log.
func (r HookResult) Appended() bool {
	return r == HookLogged || r == HookConflict || r == HookRefusedLogged
}

// HookOp is a hook event's type.
type HookOp uint8

// Hook events.
const (
	HookCreate  HookOp = iota // hook_created
	HookReceive               // hook_received (resumeHook from outside the run)
	HookDispose               // hook_disposed
)

var hookOpNames = [...]string{"hook_created", "hook_received", "hook_disposed"}

func (o HookOp) String() string {
	if int(o) < len(hookOpNames) {
		return hookOpNames[o]
	}
	return fmt.Sprintf("HookOp(%d)", uint8(o))
}

// hook is one hook id's state in its run.
type hook struct {
	token int32
	// created: a hook_created of the id is in the run's log.
	created bool
	live    bool
	// world-local only, for a hook that is not live: its token's claim file
	// still names it (claimed) and its hook file is on disk (file). A
	// disposed hook's re-creation leaves both behind, each changing the next
	// answer about it.
	claimed, file bool
}

// Hooks is one run's hooks as the World keeps them. Ids and tokens are small ints
// (a hook's correlation-id ordinal and its token's index); the zero value is empty
// and applies RulesDomain. Rules selects whose answers it gives where the
// real Worlds differ (a disposed hook's re-creation): RulesLocal,
// RulesPostgres, or RulesDomain (world-vercel, unverified: refused, nothing
// appended, the hook stays disposed).
type Hooks struct {
	Rules Rules
	hooks []hook // indexed by id
}

func (h *Hooks) at(id int32) *hook {
	if id < 0 {
		panic(fmt.Sprintf("world: hook id %d", id))
	}
	for int(id) >= len(h.hooks) {
		h.hooks = append(h.hooks, hook{})
	}
	return &h.hooks[id]
}

func (h *Hooks) peek(id int32) hook {
	if id < 0 || int(id) >= len(h.hooks) {
		return hook{}
	}
	return h.hooks[id]
}

// Create applies hook_created.
func (h *Hooks) Create(id, token int32, runEnded bool) HookResult {
	r, _ := h.Apply(HookCreate, id, token, runEnded, nil)
	return r
}

// Receive applies hook_received (resumeHook from outside).
func (h *Hooks) Receive(id int32, runEnded bool) HookResult {
	r, _ := h.Apply(HookReceive, id, 0, runEnded, nil)
	return r
}

// Dispose applies hook_disposed.
func (h *Hooks) Dispose(id int32, runEnded bool) HookResult {
	r, _ := h.Apply(HookDispose, id, 0, runEnded, nil)
	return r
}

// Live reports whether the hook is created (not conflicted) and not disposed.
func (h *Hooks) Live(id int32) bool { return h.peek(id).live }

// ByToken finds the live hook holding token.
func (h *Hooks) ByToken(token int32) (id int32, ok bool) {
	for i := range h.hooks {
		if h.hooks[i].live && h.hooks[i].token == token {
			return int32(i), true
		}
	}
	return 0, false
}

// End is the run's end: the World deletes every hook of the run, releasing
// their tokens. Call it when run_completed, run_failed or run_cancelled
// ends the run; hook_received and hook_disposed of its hooks are NotFound
// from then on.
func (h *Hooks) End() {
	for i := range h.hooks {
		k := &h.hooks[i]
		k.live, k.claimed, k.file = false, false, false
	}
}

// Apply applies one hook event and returns what the World does with it and
// its answer: OK, or the error class of a refusal. token is hook_created's
// (the other events look the hook up by id). others are the other runs of
// the World, whose live hooks hold tokens too (a token is the World's, not
// the run's); nil for a run alone. runEnded says the run's status is
// terminal.
func (h *Hooks) Apply(op HookOp, id, token int32, runEnded bool, others []*Hooks) (HookResult, Result) {
	switch op {
	case HookCreate:
		return h.create(id, token, runEnded, others)
	case HookReceive:
		switch {
		case !h.peek(id).live:
			return HookRefused, NotFound
		case runEnded:
			return HookRefused, RunExpired
		}
		return HookLogged, OK
	case HookDispose:
		k := h.peek(id)
		if !k.live {
			// world-local: a re-created hook's file on disk passes the
			// existence check; its dispose lock then refuses.
			if h.Rules == RulesLocal && k.file {
				return HookRefused, EntityConflict
			}
			return HookRefused, NotFound
		}
		k2 := h.at(id)
		k2.live, k2.claimed, k2.file = false, false, false
		return HookLogged, OK
	}
	panic(fmt.Sprintf("world: hook op %v", op))
}

func (h *Hooks) create(id, token int32, runEnded bool, others []*Hooks) (HookResult, Result) {
	if runEnded {
		return HookRefused, EntityConflict
	}
	k := h.at(id)
	if k.live {
		return HookRefused, EntityConflict
	}
	// world-local: the token's claim still names this disposed hook; the
	// retry pins the event id it claimed, which is taken, and the repair
	// writes the hook's file back.
	if h.Rules == RulesLocal && k.claimed {
		k.file = true
		return HookRefused, EntityConflict
	}
	all := append([]*Hooks{h}, others...)
	for _, o := range all {
		if _, ok := o.ByToken(token); ok {
			return HookConflict, OK
		}
	}
	// The token is free. Taking it drops what a disposed holder left
	// behind on world-local (its claim and its file).
	for _, o := range all {
		for i := range o.hooks {
			if o.hooks[i].token == token && o.hooks[i].claimed {
				o.hooks[i].claimed, o.hooks[i].file = false, false
			}
		}
	}
	k.token = token
	if !k.created {
		k.created, k.live = true, true
		return HookLogged, OK
	}
	// A disposed hook created again.
	switch h.Rules {
	case RulesLocal:
		k.claimed = true
		return HookRefusedLogged, EntityConflict
	case RulesPostgres:
		k.live = true
		return HookRefusedLive, EntityConflict
	}
	return HookRefused, EntityConflict
}

// Clone returns a copy that shares no memory with h.
func (h *Hooks) Clone() Hooks {
	return Hooks{Rules: h.Rules, hooks: append([]hook(nil), h.hooks...)}
}

// String is a canonical text of the hooks, for tests and memo keys.
func (h *Hooks) String() string {
	b := []byte(h.Rules.String())
	for i, k := range h.hooks {
		if k == (hook{}) {
			continue
		}
		b = fmt.Appendf(b, " h%d:t%d", i, k.token)
		for _, f := range []struct {
			on   bool
			name string
		}{{k.created, "created"}, {k.live, "live"}, {k.claimed, "claimed"}, {k.file, "file"}} {
			if f.on {
				b = append(b, ","+f.name...)
			}
		}
	}
	return string(b)
}
