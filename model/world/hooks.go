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
//
// Racing calls (HookTxn, checked by conformance/hooks_concurrent_test.go)
// are not atomic on either World, and the run's log shows it: a
// hook_conflict can precede the winning hook_created; a hook_created, or a
// hook_disposed, can follow the run's terminal event; another hook's
// hook_created can precede the disposal that freed its token. world-postgres
// also lets two racing hook_created both take one token (no unique index on
// it: two live hooks), and appends a hook_received after its hook's
// hook_disposed (world-local's per-hook lock keeps those apart).

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

func (r HookResult) String() string { return enumName(hookResultNames[:], uint8(r), "HookResult") }

// enumName is names[v], or type(v) for a value past them.
func enumName(names []string, v uint8, typ string) string {
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, v)
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

func (o HookOp) String() string { return enumName(hookOpNames[:], uint8(o), "HookOp") }

// HookEntry is what a hook event's step appends to the run's log.
type HookEntry uint8

// Log entries of hook events.
const (
	NoHookEntry HookEntry = iota
	HookCreatedEntry
	HookConflictEntry
	HookReceivedEntry
	HookDisposedEntry
)

var hookEntryNames = [...]string{"", "hook_created", "hook_conflict", "hook_received", "hook_disposed"}

func (e HookEntry) String() string { return enumName(hookEntryNames[:], uint8(e), "HookEntry") }

// hook is one hook id's state in its run.
type hook struct {
	token int32
	// created: a hook_created of the id is in the run's log.
	created bool
	// entity: the hook's row (world-postgres, RulesDomain) or its file
	// (world-local) exists.
	entity bool
	// world-local only: the hook's dispose lock exists (disposed), its
	// token's claim file names it (claimed), and a lifecycle event of it
	// holds its in-process lock (busy). A disposed hook's re-creation
	// leaves a claim behind, and a re-creation after that writes its file
	// back, each changing the next answer about it.
	disposed, claimed, busy bool
}

// Hooks is one run's hooks as the World keeps them. Ids and tokens are small ints
// (a hook's correlation-id ordinal and its token's index); the zero value is empty
// and applies RulesDomain. Rules selects whose answers it gives where the
// real Worlds differ (a disposed hook's re-creation, and how a hook event
// splits into steps when calls race: HookTxn): RulesLocal, RulesPostgres, or
// RulesDomain (world-vercel, unverified: each event one step; a disposed
// hook's re-creation refused, nothing appended, the hook stays disposed).
type Hooks struct {
	Rules Rules
	hooks []hook // indexed by id
	ended bool   // End has run
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

// Live reports whether the hook is created (not conflicted) and not disposed:
// whether hooks.get finds it. On world-local a hook of an ended run never
// is, even one whose hook_created landed after the run's end (a race).
func (h *Hooks) Live(id int32) bool { return h.live(h.peek(id)) }

func (h *Hooks) live(k hook) bool {
	if h.Rules == RulesLocal {
		return k.entity && !k.disposed && !h.ended
	}
	return k.entity
}

// ByToken finds the live hook holding token (the lowest id, should two
// hold it: world-postgres lets racing creates do that).
func (h *Hooks) ByToken(token int32) (id int32, ok bool) {
	for i, k := range h.hooks {
		if k.token == token && h.live(k) && (h.Rules != RulesLocal || k.claimed) {
			return int32(i), true
		}
	}
	return 0, false
}

// Holders lists the live hooks holding token, by id: more than one only
// after racing creates on world-postgres (no unique index on the token).
func (h *Hooks) Holders(token int32) []int32 {
	var out []int32
	for i, k := range h.hooks {
		if k.token == token && h.live(k) && (h.Rules != RulesLocal || k.claimed) {
			out = append(out, int32(i))
		}
	}
	return out
}

// holds reports whether k keeps token from another hook's hook_created:
// world-local's claim that is not releasable (its hook not disposed, its
// run not ended), the row elsewhere. runEnded is k's run's status.
func (h *Hooks) holds(k hook, token int32, runEnded bool) bool {
	if k.token != token {
		return false
	}
	if h.Rules == RulesLocal {
		return k.claimed && !k.disposed && !runEnded && !h.ended
	}
	return k.entity
}

// End is the run's end: the World deletes every hook of the run, releasing
// their tokens. Call it when run_completed, run_failed or run_cancelled
// ends the run (after the run's status is terminal; not for a repeated
// run_cancelled, which deletes nothing); hook_received and hook_disposed of
// its hooks are NotFound from then on.
func (h *Hooks) End() {
	for i := range h.hooks {
		k := &h.hooks[i]
		if k.entity && h.Rules == RulesLocal {
			k.claimed = false // deleteAllHooksForRun releases what it finds
		}
		k.entity = false
	}
	h.ended = true
}

// Apply applies one hook event whole and returns what the World does with
// it and its answer: OK, or the error class of a refusal. token is
// hook_created's (the other events look the hook up by id). others are the
// other runs of the World, whose hooks hold tokens too (a token is the
// World's, not the run's); nil for a run alone. runEnded says the run's
// status is terminal.
func (h *Hooks) Apply(op HookOp, id, token int32, runEnded bool, others []*Hooks) (HookResult, Result) {
	t := h.Begin(op, id, token)
	for !t.Done() {
		h.Step(&t, runEnded, others)
	}
	return t.Result()
}

// HookTxn is one hook event in flight, split into the World's own steps so
// that racing calls can interleave as they do on the real World (the
// concurrent conformance test, conformance/hookconc.go): between two steps
// another call, a run's end among them, may change what the next one sees.
// Applying a HookTxn's steps with nothing in between is Apply.
//
// world-local: hook_created reads the run (ended: EntityConflict), then
// takes the token's claim under the claim's lock (a held claim: it appends
// hook_conflict next, after the lock, and is done), then appends
// hook_created and writes the hook's file (a claim that already named its
// hook: the append collides, EntityConflict, and the hook's file is written
// back if it is missing); hook_received checks the hook's file and dispose lock, then appends
// unless the run has ended (RunExpired); hook_disposed checks the hook's
// file, then takes its dispose lock (from then on the token's claim is
// releasable: another hook's hook_created may take the token), then
// releases the claim if it still names the hook, deletes the file and
// appends. One hook's lifecycle events hold its in-process lock while
// they run (Ready), so they never interleave with each other.
//
// world-postgres: hook_created reads the run, then looks the token up (a row
// of another hook: it appends hook_conflict next and is done), then inserts the
// hook's row (none if one exists under the id), then appends (refused by the
// unique index when the run's log has the hook's hook_created);
// hook_received looks the row up, then appends unless the run has ended;
// hook_disposed looks the row up, then deletes it (gone: EntityConflict),
// then appends. Nothing holds one hook's events apart.
//
// RulesDomain: every event is one step.
type HookTxn struct {
	Op        HookOp
	ID, Token int32
	step      uint8
	done      bool
	res       HookResult
	class     Result
	locked    bool // world-local: holds the hook's in-process lock
	inserted  bool // world-postgres: inserted the hook's row
	conflict  bool // hook_created found its token held: it appends hook_conflict next
	owned     bool // world-local: hook_created found the token's claim naming its hook
	// Alt picks how the next step goes where the World may go more than one
	// way (Alternatives); 0 otherwise.
	Alt int
}

// Begin starts a hook event; Step takes its steps.
func (h *Hooks) Begin(op HookOp, id, token int32) HookTxn {
	return HookTxn{Op: op, ID: id, Token: token}
}

// Done reports whether the event has answered.
func (t *HookTxn) Done() bool { return t.done }

// Result is the event's result and answer once it is done.
func (t *HookTxn) Result() (HookResult, Result) { return t.res, t.class }

// Taken is how many steps the event has taken.
func (t *HookTxn) Taken() int { return int(t.step) }

// Alternatives is how many ways the event's next step can go: 1 but for
// world-postgres's hook_created looking its token up when its own row and
// another hook's both hold the token (after racing creates): the lookup
// (LIMIT 1, no order) finds either, another's with Alt 0, its own with
// Alt 1.
func (h *Hooks) Alternatives(t *HookTxn, runEnded bool, others []*Hooks) int {
	if h.Rules != RulesPostgres || t.Op != HookCreate || t.step != 1 || t.done {
		return 1
	}
	k := h.peek(t.ID)
	if k.entity && k.token == t.Token && h.heldElsewhere(&k, t.Token, runEnded, others) {
		return 2
	}
	return 1
}

// Ready reports whether the event can take its next step: on world-local
// not while another lifecycle event of its hook holds the hook's lock.
func (h *Hooks) Ready(t *HookTxn) bool {
	return t.done || t.locked || h.Rules != RulesLocal || !h.peek(t.ID).busy
}

func (t *HookTxn) finish(h *Hooks, res HookResult, class Result) {
	t.done, t.res, t.class = true, res, class
	if t.locked {
		h.at(t.ID).busy = false
		t.locked = false
	}
}

// Step takes the event's next step and returns what it appended to the
// run's log. runEnded is the run's status at the step; others as for Apply.
// It panics on an event that is done or not Ready.
func (h *Hooks) Step(t *HookTxn, runEnded bool, others []*Hooks) HookEntry {
	if t.done || !h.Ready(t) {
		panic(fmt.Sprintf("world: step of a hook event that is done or waits (%+v)", *t))
	}
	k := h.at(t.ID)
	if h.Rules == RulesLocal && !t.locked {
		k.busy, t.locked = true, true
	}
	n := t.step
	t.step++
	switch h.Rules {
	case RulesLocal:
		return h.stepLocal(t, k, n, runEnded, others)
	case RulesPostgres:
		return h.stepPostgres(t, k, n, runEnded, others)
	}
	return h.stepDomain(t, k, runEnded, others)
}

// heldElsewhere reports whether a hook other than k holds token.
func (h *Hooks) heldElsewhere(k *hook, token int32, runEnded bool, others []*Hooks) bool {
	for i := range h.hooks {
		if o := &h.hooks[i]; o != k && h.holds(*o, token, runEnded) {
			return true
		}
	}
	for _, oh := range others {
		for _, o := range oh.hooks {
			if oh.holds(o, token, false) {
				return true
			}
		}
	}
	return false
}

func (h *Hooks) stepLocal(t *HookTxn, k *hook, n uint8, runEnded bool, others []*Hooks) HookEntry {
	switch t.Op {
	case HookCreate:
		switch n {
		case 0: // the run, read at the call's start
			if runEnded {
				t.finish(h, HookRefused, EntityConflict)
			}
		case 1: // the token's claim, under its lock
			if k.claimed {
				// Its own claim: the retry pins the claimed event id.
				t.owned = true
				break
			}
			if h.heldElsewhere(k, t.Token, runEnded, others) {
				t.conflict = true // appended after the claim's lock
				break
			}
			// Free, or held by a claim that is releasable: the successor
			// removes that hook's claim and its file.
			for _, oh := range append([]*Hooks{h}, others...) {
				for i := range oh.hooks {
					if o := &oh.hooks[i]; o != k && o.token == t.Token && o.claimed {
						o.claimed, o.entity = false, false
					}
				}
			}
			k.claimed, k.token = true, t.Token
		case 2: // the append, then the hook's file
			if t.conflict {
				t.finish(h, HookConflict, OK)
				return HookConflictEntry
			}
			if t.owned {
				// The pinned event id is taken; the repair writes the
				// hook's file back when it is missing, even after the
				// run's end deleted it.
				k.entity = true
				t.finish(h, HookRefused, EntityConflict)
				break
			}
			if k.created {
				// The process's file cache remembers the first file.
				t.finish(h, HookRefusedLogged, EntityConflict)
			} else {
				k.created, k.entity = true, true
				t.finish(h, HookLogged, OK)
			}
			return HookCreatedEntry
		}
	case HookReceive:
		switch n {
		case 0:
			if !k.entity || k.disposed {
				t.finish(h, HookRefused, NotFound)
			}
		case 1: // the run's end marker, then the append
			if runEnded {
				t.finish(h, HookRefused, RunExpired)
				break
			}
			t.finish(h, HookLogged, OK)
			return HookReceivedEntry
		}
	case HookDispose:
		switch n {
		case 0:
			if !k.entity {
				t.finish(h, HookRefused, NotFound)
			}
		case 1: // the dispose lock: the disposal is committed
			if k.disposed {
				t.finish(h, HookRefused, EntityConflict)
				break
			}
			k.disposed = true
		case 2: // the claim's release (if it still names the hook), the file, the append
			k.claimed, k.entity = false, false
			t.finish(h, HookLogged, OK)
			return HookDisposedEntry
		}
	}
	return NoHookEntry
}

func (h *Hooks) stepPostgres(t *HookTxn, k *hook, n uint8, runEnded bool, others []*Hooks) HookEntry {
	switch t.Op {
	case HookCreate:
		switch n {
		case 0: // the run
			if runEnded {
				t.finish(h, HookRefused, EntityConflict)
			}
		case 1: // the token's row
			own := k.entity && k.token == t.Token
			if h.heldElsewhere(k, t.Token, runEnded, others) && !(own && t.Alt == 1) {
				t.conflict = true // its own INSERT next
				break
			}
			if own && k.created {
				t.finish(h, HookRefused, EntityConflict)
			}
		case 2: // the row, unless one exists under the id
			if t.conflict {
				t.finish(h, HookConflict, OK)
				return HookConflictEntry
			}
			if !k.entity {
				k.entity, k.token, t.inserted = true, t.Token, true
			}
		case 3: // the event, under the unique index
			switch {
			case !k.created:
				k.created = true
				t.finish(h, HookLogged, OK)
				return HookCreatedEntry
			case t.inserted:
				t.finish(h, HookRefusedLive, EntityConflict)
			default:
				t.finish(h, HookRefused, EntityConflict)
			}
		}
	case HookReceive:
		switch n {
		case 0:
			if !k.entity {
				t.finish(h, HookRefused, NotFound)
			}
		case 1: // the run's row FOR UPDATE, then the append
			if runEnded {
				t.finish(h, HookRefused, RunExpired)
				break
			}
			t.finish(h, HookLogged, OK)
			return HookReceivedEntry
		}
	case HookDispose:
		switch n {
		case 0:
			if !k.entity {
				t.finish(h, HookRefused, NotFound)
			}
		case 1: // DELETE ... RETURNING
			if !k.entity {
				t.finish(h, HookRefused, EntityConflict)
				break
			}
			k.entity = false
		case 2: // the append
			t.finish(h, HookLogged, OK)
			return HookDisposedEntry
		}
	}
	return NoHookEntry
}

func (h *Hooks) stepDomain(t *HookTxn, k *hook, runEnded bool, others []*Hooks) HookEntry {
	switch t.Op {
	case HookCreate:
		switch {
		case runEnded, k.entity:
			t.finish(h, HookRefused, EntityConflict)
		case h.heldElsewhere(k, t.Token, runEnded, others):
			t.finish(h, HookConflict, OK)
			return HookConflictEntry
		case k.created: // a disposed hook again
			t.finish(h, HookRefused, EntityConflict)
		default:
			k.created, k.entity, k.token = true, true, t.Token
			t.finish(h, HookLogged, OK)
			return HookCreatedEntry
		}
	case HookReceive:
		switch {
		case !k.entity:
			t.finish(h, HookRefused, NotFound)
		case runEnded:
			t.finish(h, HookRefused, RunExpired)
		default:
			t.finish(h, HookLogged, OK)
			return HookReceivedEntry
		}
	case HookDispose:
		if !k.entity {
			t.finish(h, HookRefused, NotFound)
			break
		}
		k.entity = false
		t.finish(h, HookLogged, OK)
		return HookDisposedEntry
	default:
		panic(fmt.Sprintf("world: hook op %v", t.Op))
	}
	return NoHookEntry
}

// Clone returns a copy that shares no memory with h.
func (h *Hooks) Clone() Hooks {
	return Hooks{Rules: h.Rules, hooks: append([]hook(nil), h.hooks...), ended: h.ended}
}

// String is a canonical text of the hooks, for tests and memo keys.
func (h *Hooks) String() string {
	b := []byte(h.Rules.String())
	if h.ended {
		b = append(b, " ended"...)
	}
	for i, k := range h.hooks {
		if k == (hook{}) {
			continue
		}
		b = fmt.Appendf(b, " h%d:t%d", i, k.token)
		for _, f := range []struct {
			on   bool
			name string
		}{{k.created, "created"}, {h.live(k), "live"}, {k.entity, "entity"}, {k.disposed, "disposed"}, {k.claimed, "claimed"}, {k.busy, "busy"}} {
			if f.on {
				b = append(b, ","+f.name...)
			}
		}
	}
	return string(b)
}
