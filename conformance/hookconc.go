package conformance

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/realworld"
)

// The model's side of the concurrent hook test (hooks_concurrent_test.go):
// the outcomes the model allows for a batch of hook and run events issued
// at once, over every interleaving of their steps. A hook event takes the
// World's own steps (world.HookTxn). A run's end takes three: its status
// write (what a hook event's run check reads), the deletion of its hooks
// (world.Hooks.End), and the append of its event: both real Worlds write the
// run's terminal status, then delete its hooks, then append the event. Any
// other run event is one step.

// hookWorld is the model of a history's runs: the store (run statuses and
// run events), each run's hooks, and each run's log in read-back words.
type hookWorld struct {
	s     *world.Store
	hooks []world.Hooks
	logs  [][]string
	// pending holds, per call of the batch in progress, the log entries of
	// a run's end that its second step appends.
	pending map[int][]string
}

func newHookWorld(w realworld.World, runs int) *hookWorld {
	hw := &hookWorld{s: newModelStore(w, runs), hooks: make([]world.Hooks, runs), logs: make([][]string, runs)}
	for r := range hw.hooks {
		hw.hooks[r].Rules = model.StoreRules(w.Profile)
		hw.logs[r] = logOf(hw.s, world.RunID(r))
	}
	return hw
}

func (hw *hookWorld) clone() *hookWorld {
	c := &hookWorld{s: hw.s.Clone(), hooks: make([]world.Hooks, len(hw.hooks)), logs: make([][]string, len(hw.logs))}
	for r := range hw.hooks {
		c.hooks[r] = hw.hooks[r].Clone()
		c.logs[r] = slices.Clone(hw.logs[r])
	}
	if hw.pending != nil {
		c.pending = map[int][]string{}
		for k, v := range hw.pending {
			c.pending[k] = slices.Clone(v)
		}
	}
	return c
}

// key is a canonical text of the model's state, for deduplicating states.
func (hw *hookWorld) key() string {
	var b strings.Builder
	b.WriteString(hw.s.Fingerprint())
	for r := range hw.hooks {
		fmt.Fprintf(&b, "|%s|%s", hw.hooks[r].String(), strings.Join(hw.logs[r], ","))
	}
	fmt.Fprintf(&b, "|%v", hw.pending) // fmt sorts a map's keys
	return b.String()
}

func (hw *hookWorld) others(run int) []*world.Hooks {
	var out []*world.Hooks
	for r := range hw.hooks {
		if r != run {
			out = append(out, &hw.hooks[r])
		}
	}
	return out
}

// endsRun reports whether c is a run's end (three steps).
func endsRun(c realworld.ConcCall) bool {
	return c.Op == "event" && !realworld.HookEvent(c.Type) && modelTypes[c.Type].EndsRun()
}

// hookNode is one point of an interleaving: the model and every call's
// progress.
type hookNode struct {
	hw      *hookWorld
	txns    []world.HookTxn // hook events
	taken   []int           // run events' steps taken
	done    []bool
	replies []realworld.Reply
}

func (n *hookNode) clone() *hookNode {
	return &hookNode{hw: n.hw.clone(), txns: slices.Clone(n.txns), taken: slices.Clone(n.taken), done: slices.Clone(n.done), replies: slices.Clone(n.replies)}
}

// key is a canonical text of the node: the model's state and every call's
// progress and answer.
func (n *hookNode) key() string {
	return fmt.Sprintf("%s|%v|%v|%v|%v", n.hw.key(), n.txns, n.taken, n.done, n.replies)
}

// ready reports whether call i can take its next step.
func (n *hookNode) ready(c realworld.ConcCall, i int) bool {
	if n.done[i] {
		return false
	}
	if realworld.HookEvent(c.Type) {
		return n.hw.hooks[c.Run].Ready(&n.txns[i])
	}
	return true
}

// alternatives is how many ways call i's next step can go
// (world.Hooks.Alternatives).
func (n *hookNode) alternatives(c realworld.ConcCall, i int) int {
	if !realworld.HookEvent(c.Type) {
		return 1
	}
	ended := n.hw.s.Get(world.RunID(c.Run)).Status.Terminal()
	return n.hw.hooks[c.Run].Alternatives(&n.txns[i], ended, n.hw.others(c.Run))
}

// advance takes call i's next step.
func (n *hookNode) advance(c realworld.ConcCall, i int) {
	if c.Op != "event" {
		panic(fmt.Sprintf("conformance: hook batches hold events only, not %s", c.Op))
	}
	hw, run := n.hw, c.Run
	id := world.RunID(run)
	if realworld.HookEvent(c.Type) {
		t := &n.txns[i]
		ended := hw.s.Get(id).Status.Terminal()
		if e := hw.hooks[run].Step(t, ended, hw.others(run)); e != world.NoHookEntry {
			hw.logs[run] = append(hw.logs[run], fmt.Sprintf("%s:h%d", e, c.Hook))
		}
		if t.Done() {
			res, class := t.Result()
			n.replies[i] = realworld.Reply{Res: class.String()}
			if !res.Refused() {
				n.replies[i].Event = c.Type
				if res == world.HookConflict {
					n.replies[i].Event = "hook_conflict"
				}
			}
			n.done[i] = true
		}
		return
	}
	k := n.taken[i]
	n.taken[i]++
	switch k {
	case 0:
		before := len(hw.s.Log(id))
		wasEnded := hw.s.Get(id).Status.Terminal()
		res, _, _ := hw.s.Apply(modelNow, eventOn(c.Call, id))
		n.replies[i] = realworld.Reply{Res: res.String()}
		var added []string
		for _, e := range hw.s.Log(id)[before:] {
			added = append(added, logEntry(e.Type, int(e.Step)))
		}
		// A repeated run_cancelled returns before the end's deletion.
		if !endsRun(c) || res != world.OK || wasEnded {
			hw.logs[run] = append(hw.logs[run], added...)
			n.done[i] = true
			return
		}
		if hw.pending == nil {
			hw.pending = map[int][]string{}
		}
		hw.pending[i] = added
	case 1:
		hw.hooks[run].End()
	case 2:
		hw.logs[run] = append(hw.logs[run], hw.pending[i]...)
		delete(hw.pending, i)
		n.done[i] = true
	}
}

// readbackVariants reads every run back as the driver does after a batch:
// one read-back per way hooks.getByToken can answer. A token two hooks hold
// (racing creates on world-postgres) is answered with either: the World
// picks one row without an order.
func (hw *hookWorld) readbackVariants(h realworld.History) [][]realworld.Readback {
	hooks, tokens := h.Hooks(), h.Tokens()
	// holders[j] are the names of the hooks holding token j ("" for none).
	holders := make([][]string, len(tokens))
	for j, t := range tokens {
		for o := range hw.hooks {
			for _, id := range hw.hooks[o].Holders(int32(t)) {
				holders[j] = append(holders[j], fmt.Sprintf("r%d.h%d", o, id))
			}
		}
		if len(holders[j]) == 0 {
			holders[j] = []string{""}
		}
	}
	var out [][]realworld.Readback
	choice := make([]int, len(tokens))
	for {
		rbs := make([]realworld.Readback, len(hw.hooks))
		for r := range hw.hooks {
			rb := realworld.Readback{Run: modelRunStatus(hw.s, world.RunID(r)), Log: slices.Clone(hw.logs[r])}
			for _, k := range hooks[r] {
				live := ""
				if hw.hooks[r].Live(int32(k)) {
					live = "live"
				}
				rb.Hooks = append(rb.Hooks, live)
			}
			for j := range tokens {
				rb.Owners = append(rb.Owners, holders[j][choice[j]])
			}
			rbs[r] = rb
		}
		out = append(out, rbs)
		j := 0
		for ; j < len(choice); j++ {
			if choice[j]++; choice[j] < len(holders[j]) {
				break
			}
			choice[j] = 0
		}
		if j == len(choice) {
			return out
		}
	}
}

// hookOutcomes runs batch b from hw in every interleaving of its calls'
// steps and returns each outcome (OutcomeKey) with the states it ends in,
// deduplicated.
func hookOutcomes(hw *hookWorld, h realworld.History, b realworld.Batch) map[string][]*hookWorld {
	out := map[string][]*hookWorld{}
	seen := map[string]bool{}
	n := len(b.Calls)
	start := &hookNode{hw: hw.clone(), txns: make([]world.HookTxn, n), taken: make([]int, n), done: make([]bool, n), replies: make([]realworld.Reply, n)}
	for i, c := range b.Calls {
		if realworld.HookEvent(c.Type) {
			start.txns[i] = hw.hooks[c.Run].Begin(hookOps[c.Type], int32(c.Hook), int32(c.Token))
		}
	}
	visited := map[string]bool{}
	var walk func(cur *hookNode)
	walk = func(cur *hookNode) {
		// Two orders that reach the same point go on alike.
		k := cur.key()
		if visited[k] {
			return
		}
		visited[k] = true
		finished, moved := true, false
		for i, c := range b.Calls {
			if cur.done[i] {
				continue
			}
			finished = false
			if !cur.ready(c, i) {
				continue
			}
			moved = true
			for alt := 0; alt < cur.alternatives(c, i); alt++ {
				next := cur.clone()
				if realworld.HookEvent(c.Type) {
					next.txns[i].Alt = alt
				}
				next.advance(c, i)
				walk(next)
			}
		}
		if !finished {
			if !moved {
				panic("conformance: every call of a hook batch waits")
			}
			return
		}
		for _, rbs := range cur.hw.readbackVariants(h) {
			key := OutcomeKey(b.Calls, cur.replies, rbs)
			if sk := key + "\x00" + cur.hw.key(); !seen[sk] {
				seen[sk] = true
				out[key] = append(out[key], cur.hw)
			}
		}
	}
	walk(start)
	return out
}

// ExplainHooks replays a history's batches in the model, keeping the states
// that produce each real outcome, and reports the first batch whose real
// outcome no interleaving produces (-1 when every batch is explained), with
// the outcomes the model allowed there, sorted.
func ExplainHooks(w realworld.World, h realworld.History, results []realworld.BatchResult) (batch int, allowed []string) {
	states := []*hookWorld{newHookWorld(w, h.Runs)}
	for bi, b := range h.Batches {
		real := OutcomeKey(b.Calls, results[bi].Replies, results[bi].Readbacks)
		var next []*hookWorld
		all := map[string]bool{}
		keys := map[string]bool{}
		for _, s := range states {
			for o, ends := range hookOutcomes(s, h, b) {
				all[o] = true
				if o != real {
					continue
				}
				for _, e := range ends {
					if k := e.key(); !keys[k] {
						keys[k] = true
						next = append(next, e)
					}
				}
			}
		}
		if len(next) == 0 {
			for o := range all {
				allowed = append(allowed, o)
			}
			sort.Strings(allowed)
			return bi, allowed
		}
		states = next
	}
	return -1, nil
}

// HookOutcomes lists the outcomes the model allows for a history's last
// batch, from every state its earlier batches can leave (each of those a
// batch of one call: a set-up), sorted.
func HookOutcomes(w realworld.World, h realworld.History) []string {
	states := []*hookWorld{newHookWorld(w, h.Runs)}
	var last map[string][]*hookWorld
	for _, b := range h.Batches {
		var next []*hookWorld
		last = map[string][]*hookWorld{}
		for _, s := range states {
			for o, ends := range hookOutcomes(s, h, b) {
				last[o] = append(last[o], ends...)
				next = append(next, ends...)
			}
		}
		states = next
	}
	var out []string
	for o := range last {
		out = append(out, o)
	}
	sort.Strings(out)
	return out
}
