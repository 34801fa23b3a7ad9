package conformance

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strings"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/realworld"
)

// This file is the model's side of the concurrent differential test: the
// outcomes model/world's split calls (world.Txn, each World's own steps) can
// produce for a batch, over every interleaving of those steps. Direction 1
// asks whether the real World's outcome is one of them (Explains); direction
// 2 lists them all (Outcomes) so that each can be looked for on the real
// World.

// newModelStore is the model store for a history: its runs, created in
// order, on the World's rules, fence and atomicity.
func newModelStore(w realworld.World, runs int) *world.Store {
	s := world.NewFor(model.StoreRules(w.Profile), w.Fence)
	for i := 0; i < runs; i++ {
		s.CreateRun(modelNow, 0, 7, -1)
	}
	return s
}

// eventOn is a conformance call as a model event on run id.
func eventOn(c realworld.Call, id world.RunID) world.Event {
	ev := modelEvent(c)
	ev.Run = id
	return ev
}

// node is one point of an interleaving: the store and every call's progress.
type node struct {
	s       *world.Store
	txns    []world.Txn
	done    []bool
	replies []realworld.Reply
	taken   []uint8 // steps each call has taken
}

func (n *node) clone() *node {
	return &node{s: n.s.Clone(), txns: slices.Clone(n.txns), done: slices.Clone(n.done), replies: slices.Clone(n.replies), taken: slices.Clone(n.taken)}
}

// key hashes the node: run's state and every call's progress and answer.
// The explorations evolve one run only, so the other runs are left out.
func (n *node) key(run int) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(buf[:], v)
		h.Write(buf[:])
	}
	put(n.s.HashRun(world.RunID(run)))
	for i := range n.txns {
		put(n.txns[i].Hash())
		r := n.replies[i]
		if n.done[i] {
			put(1)
		} else {
			put(0)
		}
		h.Write([]byte(r.Res))
		h.Write([]byte(r.Run))
		h.Write([]byte(r.Step))
		put(uint64(r.Attempt))
		for _, e := range r.Log {
			h.Write([]byte(e))
		}
		put(0xff)
	}
	return h.Sum64()
}

// start begins a batch on a store: every event call's Txn, begun in arrival
// order (the driver issues a batch's calls in their order, delayed ones
// later), which is the order world-local's step locks are queued in.
func start(s *world.Store, calls []realworld.ConcCall) *node {
	return startInOrder(s, calls, func(i int) int64 { return arrival(calls[i]) })
}

// startAsInvoked begins a batch's Txns in the order the real World received
// the calls (their invocation times): a hold-back only aims a call, and two
// held back by 100µs and 200µs can still reach the World the other way
// round (Node's timers fire in whole milliseconds).
func startAsInvoked(s *world.Store, calls []realworld.ConcCall, replies []realworld.Reply) *node {
	return startInOrder(s, calls, func(i int) int64 { return replies[i].T0 })
}

func startInOrder(s *world.Store, calls []realworld.ConcCall, when func(i int) int64) *node {
	n := &node{s: s.Clone(), txns: make([]world.Txn, len(calls)), done: make([]bool, len(calls)), replies: make([]realworld.Reply, len(calls)), taken: make([]uint8, len(calls))}
	order := make([]int, len(calls))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return when(order[a]) < when(order[b]) })
	for _, i := range order {
		if c := calls[i]; c.Op == "event" {
			n.txns[i] = n.s.Begin(eventOn(c.Call, world.RunID(c.Run)), int32(i))
		}
	}
	return n
}

// arrival ranks when a call reaches the World: with the batch, then those
// held back by ticks or microseconds, then those waiting for another's
// answer.
func arrival(c realworld.ConcCall) int64 {
	switch {
	case c.After != nil:
		return 1 << 62
	case c.DelayUS > 0:
		return 1<<40 + int64(c.DelayUS)
	}
	return int64(c.DelayTicks)
}

// ready reports whether call i can take its next step.
func (n *node) ready(calls []realworld.ConcCall, i int) bool {
	if n.done[i] {
		return false
	}
	if a := calls[i].After; a != nil && *a >= 0 && *a < len(calls) && !n.done[*a] {
		return false
	}
	if calls[i].Op == "event" {
		return n.s.Ready(&n.txns[i])
	}
	return true
}

// advance takes call i's next step; a read is one step.
func (n *node) advance(calls []realworld.ConcCall, i int) {
	n.taken[i]++
	c := calls[i]
	id := world.RunID(c.Run)
	switch c.Op {
	case realworld.OpGetRun:
		// A read inside a batch says only that the row is unreadable.
		st := modelRunStatus(n.s, id)
		if strings.HasPrefix(st, "unreadable") {
			st = "unreadable"
		}
		n.replies[i] = realworld.Reply{Res: "ok", Run: st}
	case realworld.OpGetStep:
		row := n.s.Step(id, world.StepID(c.Step))
		r := realworld.Reply{Res: "ok"}
		if row.Exists {
			r.Step, r.Attempt = row.Status.String(), int(row.Attempt)
		}
		n.replies[i] = r
	case realworld.OpListEvents:
		n.replies[i] = realworld.Reply{Res: "ok", Log: logOf(n.s, id)}
	default:
		t := &n.txns[i]
		n.s.Advance(t, modelNow)
		if !t.Done() {
			return
		}
		res, _, _ := t.Result()
		n.replies[i] = realworld.Reply{Res: res.String()}
	}
	n.done[i] = true
}

// modelRunStatus is what runs.get answers: the status, or unreadable with
// what the row holds (the driver reads an unreadable world-postgres row past
// its schema: "unreadable(running+output+completedAt)").
func modelRunStatus(s *world.Store, id world.RunID) string {
	if !s.Readable(id) {
		return "unreadable(" + s.RowContents(id) + ")"
	}
	return s.Get(id).Status.String()
}

// logOf is a run's log in the read-back's words.
func logOf(s *world.Store, id world.RunID) []string {
	log := s.Log(id)
	out := make([]string, len(log))
	for i, e := range log {
		out[i] = logEntry(e.Type, int(e.Step))
	}
	return out
}

// readbacks reads every run back as the driver does after a batch.
func readbacks(s *world.Store, steps [][]int) []realworld.Readback {
	out := make([]realworld.Readback, len(steps))
	for run := range steps {
		id := world.RunID(run)
		rb := realworld.Readback{Run: modelRunStatus(s, id), Log: logOf(s, id)}
		for _, st := range steps[run] {
			row := s.Step(id, world.StepID(st))
			r := realworld.StepRow{}
			if row.Exists {
				r = realworld.StepRow{Step: row.Status.String(), Attempt: int(row.Attempt)}
			}
			rb.Steps = append(rb.Steps, r)
		}
		out[run] = rb
	}
	return out
}

// OutcomeKey is the canonical text of a batch's outcome, real or modelled:
// each call's answer (a read's row or log), then each run's rows and log,
// logs normalised (realworld.NormalizeLog) and an unreadable row's reason dropped.
func OutcomeKey(calls []realworld.ConcCall, replies []realworld.Reply, rbs []realworld.Readback) string {
	var s strings.Builder
	for i, r := range replies {
		if i > 0 {
			s.WriteString(" ")
		}
		r.Run = unreadable(r.Run)
		r.Step = unreadable(r.Step)
		r.Log = realworld.NormalizeLog(r.Log)
		s.WriteString(realworld.ReplyString(calls[i], r))
	}
	for run, rb := range rbs {
		rb.Run = unreadable(rb.Run)
		rb.Log = realworld.NormalizeLog(rb.Log)
		for i := range rb.Steps {
			rb.Steps[i].Step = unreadable(rb.Steps[i].Step)
		}
		fmt.Fprintf(&s, " | r%d %s", run, rb)
	}
	return s.String()
}

// unreadable drops an unreadable row's reason, keeping what it holds.
func unreadable(s string) string {
	if strings.HasPrefix(s, "unreadable") {
		s, _, _ = strings.Cut(s, ":")
	}
	return s
}

// part is the calls of a batch on one run, with their indices in the batch:
// calls on different runs never meet in a World (rows, logs and locks are a
// run's own), so each run's calls are explained on their own.
func part(calls []realworld.ConcCall, run int) (sub []realworld.ConcCall, idx []int) {
	for i, c := range calls {
		if c.Run == run {
			sub = append(sub, c)
			idx = append(idx, i)
		}
	}
	return sub, idx
}

// Verdict is what Explains found.
type Verdict uint8

// Verdicts.
const (
	Explained    Verdict = iota // some interleaving produces what the real World did
	NotExplained                // none does: the model and the real World differ
	Unknown                     // the search ran out of its budget: never a pass
)

func (v Verdict) String() string {
	return [...]string{"explained", "not explained", "unknown (search budget spent)"}[v]
}

// SearchBudget bounds the interleaving states Explains visits for one run's
// calls of one batch: a search is bounded by steps, never by the clock, so
// its verdict does not depend on the machine.
var SearchBudget = 2_000_000

// Explains reports whether the model can produce what the real World did in
// every batch of a history, in some interleaving of the calls' steps that
// respects real time (a call answered before another was invoked takes all
// its steps first). Unless Explained, batch and run name where it stopped.
func Explains(w realworld.World, h realworld.History, results []realworld.BatchResult) (v Verdict, batch, run int) {
	steps := h.Steps()
	for r := 0; r < h.Runs; r++ {
		state := newModelStore(w, h.Runs)
		for bi, b := range h.Batches {
			calls, idx := part(b.Calls, r)
			res := results[bi]
			sub := realworld.BatchResult{Readbacks: []realworld.Readback{res.Readbacks[r]}}
			for _, i := range idx {
				sub.Replies = append(sub.Replies, res.Replies[i])
			}
			e := &explainer{run: r, calls: calls, steps: steps, real: sub}
			e.prepare()
			for left := 0; ; left++ {
				e.seen, e.cut = map[uint64]int{}, false
				e.search(startAsInvoked(state, calls, sub.Replies), left)
				if e.found != nil || e.spent || !e.cut {
					break
				}
			}
			switch {
			case e.found != nil:
				// The states that explain a batch differ at most in what no
				// call can see (virtual times, an idempotent answer's
				// position): carrying the first one found is enough.
				state = e.found
			case e.spent:
				return Unknown, bi, r
			default:
				return NotExplained, bi, r
			}
		}
	}
	return Explained, -1, -1
}

// explainer searches the interleavings of one run's calls of a batch for the
// real outcome, pruning every branch where a call answers otherwise than it
// did or the run's log grows otherwise than the real one did, nearest the
// real calls' own order first (search).
type explainer struct {
	run     int
	calls   []realworld.ConcCall
	steps   [][]int
	real    realworld.BatchResult // the run's replies, and its read-back alone
	want    string
	log     []string // the real log after the batch, normalised
	answers []string // the real answers, as OutcomeKey words
	results []world.Result
	before  [][]int        // before[j]: calls answered before j was invoked
	seen    map[uint64]int // nodes searched, with the departures they were allowed
	visits  int
	cut     bool // a branch was left for want of departures
	found   *world.Store
	spent   bool
}

func (e *explainer) prepare() {
	e.want = OutcomeKey(e.calls, e.real.Replies, e.real.Readbacks)
	e.log = realworld.NormalizeLog(e.real.Readbacks[0].Log)
	for i, c := range e.calls {
		r := e.real.Replies[i]
		r.Run, r.Step, r.Log = unreadable(r.Run), unreadable(r.Step), realworld.NormalizeLog(r.Log)
		e.answers = append(e.answers, realworld.ReplyString(c, r))
		e.results = append(e.results, resultNamed(r.Res))
	}
	e.before = make([][]int, len(e.calls))
	for j := range e.calls {
		for i := range e.calls {
			if i != j && e.real.Replies[i].T1 < e.real.Replies[j].T0 {
				e.before[j] = append(e.before[j], i)
			}
		}
	}
}

// search looks for the real outcome below n, allowed left departures from
// the likeliest next step (limited discrepancy search): the likeliest is the
// call whose next step, spread evenly over its real interval, comes first.
// Real interleavings stay close to that order, so the search first tries the
// orders nearest it; Explains widens the allowance until the outcome is
// found, the whole tree has been seen, or the budget is spent.
func (e *explainer) search(n *node, left int) {
	if e.found != nil || e.spent {
		return
	}
	k := n.key(e.run)
	if prev, ok := e.seen[k]; ok && prev >= left {
		return
	}
	e.seen[k] = left
	if e.visits++; e.visits >= SearchBudget {
		e.spent = true
		return
	}
	var cands []int
	all := true
	for i := range e.calls {
		if n.done[i] {
			continue
		}
		all = false
		if e.mayStart(n, i) && n.ready(e.calls, i) {
			cands = append(cands, i)
		}
	}
	if all {
		rb := readbacks(n.s, e.steps)[e.run : e.run+1]
		if OutcomeKey(e.calls, n.replies, rb) == e.want {
			e.found = n.s
		}
		return
	}
	sort.SliceStable(cands, func(a, b int) bool { return e.eta(n, cands[a]) < e.eta(n, cands[b]) })
	taken := 0
	for _, i := range cands {
		cost := min(taken, 1)
		if cost > left {
			e.cut = true
			return
		}
		c := n.clone()
		c.advance(e.calls, i)
		if c.done[i] && !e.answersAsReal(c, i) {
			continue
		}
		if !c.done[i] && !c.txns[i].Possible().Has(e.results[i]) {
			continue
		}
		if !e.logAsReal(c) {
			continue
		}
		taken++
		e.search(c, left-cost)
		if e.found != nil || e.spent {
			return
		}
	}
}

// eta is when call i's next step is likeliest to have happened: its real
// interval divided evenly among the steps it can take.
func (e *explainer) eta(n *node, i int) float64 {
	r := e.real.Replies[i]
	steps := 1
	if e.calls[i].Op == "event" {
		steps = n.txns[i].MaxSteps()
	}
	return float64(r.T0) + float64(r.T1-r.T0)*(float64(n.taken[i])+0.5)/float64(steps)
}

// resultNamed is the model Result a real answer names (reads answer OK).
func resultNamed(res string) world.Result {
	for r := world.OK; r <= world.TooEarly; r++ {
		if r.String() == res {
			return r
		}
	}
	return world.OK
}

// mayStart: a call invoked after others answered takes no step before they
// are done.
func (e *explainer) mayStart(n *node, j int) bool {
	for _, i := range e.before[j] {
		if !n.done[i] {
			return false
		}
	}
	return true
}

func (e *explainer) answersAsReal(n *node, i int) bool {
	r := n.replies[i]
	r.Log = realworld.NormalizeLog(r.Log)
	return realworld.ReplyString(e.calls[i], r) == e.answers[i]
}

// logAsReal: the model's log of the run so far must be how the real one
// began. A write may hold a position it has not committed yet (world-
// postgres mints an event's id before its INSERT): the log it will read
// then, those included, must be how the real one began; while one of them
// may still be given up, only the order of the rest is checked.
func (e *explainer) logAsReal(n *node) bool {
	s := n.s
	id := world.RunID(e.run)
	if !s.Reserving(id) {
		got := realworld.NormalizeLog(logOf(s, id))
		return len(got) <= len(e.log) && slices.Equal(got, e.log[:len(got)])
	}
	type entry struct {
		pos int32
		txt string
	}
	var ev []entry
	optional := false
	for _, le := range s.Log(id) {
		ev = append(ev, entry{le.Pos, logEntry(le.Type, int(le.Step))})
	}
	for i := range n.txns {
		if n.done[i] || e.calls[i].Op != "event" {
			continue
		}
		for _, p := range n.txns[i].Pending() {
			optional = optional || p.Optional
			ev = append(ev, entry{p.Pos, logEntry(p.Type, int(p.Step))})
		}
	}
	if !optional {
		sort.Slice(ev, func(a, b int) bool { return ev[a].pos < ev[b].pos })
		eventual := make([]string, len(ev))
		for i, x := range ev {
			eventual[i] = x.txt
		}
		eventual = realworld.NormalizeLog(eventual)
		return len(eventual) <= len(e.log) && slices.Equal(eventual, e.log[:len(eventual)])
	}
	got := realworld.NormalizeLog(logOf(s, id))
	j := 0
	for _, g := range got {
		for j < len(e.log) && e.log[j] != g {
			j++
		}
		if j == len(e.log) {
			return false
		}
		j++
	}
	return true
}

// Outcomes lists every outcome the model can produce for one run's calls of
// a batch (calls all on run) from the store s (the state after the batches
// before it), sorted, and how many distinct interleaving states it visited.
func Outcomes(w realworld.World, s *world.Store, calls []realworld.ConcCall, steps [][]int, run int) (outcomes []string, visited int) {
	seen := map[uint64]bool{}
	set := map[string]bool{}
	var walk func(n *node)
	walk = func(n *node) {
		k := n.key(run)
		if seen[k] {
			return
		}
		seen[k] = true
		all := true
		for i := range calls {
			if n.done[i] {
				continue
			}
			all = false
			if !n.ready(calls, i) {
				continue
			}
			c := n.clone()
			c.advance(calls, i)
			walk(c)
		}
		if all {
			set[OutcomeKey(calls, n.replies, readbacks(n.s, steps)[run:run+1])] = true
		}
	}
	walk(start(s, calls))
	for o := range set {
		outcomes = append(outcomes, o)
	}
	sort.Strings(outcomes)
	return outcomes, len(seen)
}
