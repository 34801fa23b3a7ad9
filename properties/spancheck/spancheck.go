package spancheck

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/simlab/simlab/properties"
	"github.com/simlab/simlab/traces"
)

// Violation is one broken property in one run, with the spans that prove it.
type Violation struct {
	Property string   `json:"property"`
	Run      string   `json:"run"`
	Message  string   `json:"message"`
	Evidence []string `json:"evidence"`
}

// Verdict is one property's outcome on a set of spans: judged (with its
// violations, none when it holds) or not, and why.
type Verdict struct {
	Property   string      `json:"property"`
	Judged     bool        `json:"judged"`
	Why        string      `json:"why"` // what it read, or why it could not judge
	Violations []Violation `json:"violations"`
}

// Report is `simlab check --trace`: a verdict per property.
type Report struct {
	Spans int `json:"spans"`
	// Duplicates counts the spans read more than once (the same ids, the
	// same content) and judged once (traces.Dedup).
	Duplicates int       `json:"duplicate_spans"`
	Runs       []string  `json:"runs"`
	Verdicts   []Verdict `json:"verdicts"`
	// Violations, First and NotJudged give the report check --json's shape,
	// so that one script reads both: per judged property how many runs
	// violate it, its first violation (run, message, story), and the
	// properties spans could not judge.
	Violations map[string]int    `json:"violations"`
	First      map[string]*First `json:"first"`
	NotJudged  []string          `json:"not_judged"`
}

// First is a property's first violation in the spans, in check --json's
// field names.
type First struct {
	Run     string   `json:"run"`
	Message string   `json:"message"`
	Story   []string `json:"story"`
}

// Failed says a judged property was violated.
func (r *Report) Failed() bool {
	for _, v := range r.Verdicts {
		if len(v.Violations) > 0 {
			return true
		}
	}
	return false
}

// run is one workflow run's spans, found by workflow.run.id on a span or an
// ancestor of it in the same trace.
type run struct {
	id    string
	spans []*traces.Span
	// byActor are its spans by the actor they belong to (index.actor), in
	// the order of spans; built on first use.
	byActor map[*traces.Span][]*traces.Span
}

// spansOf are the run's spans that belong to actor a, by end.
func (ix *index) spansOf(r *run, a *traces.Span) []*traces.Span {
	if r.byActor == nil {
		r.byActor = map[*traces.Span][]*traces.Span{}
		for _, s := range r.spans {
			if act := ix.actor(s); act != nil {
				r.byActor[act] = append(r.byActor[act], s)
			}
		}
	}
	return r.byActor[a]
}

type index struct {
	spans  []traces.Span
	byID   map[string]*traces.Span // trace id + span id
	runOf  map[*traces.Span]string
	runs   []*run
	byName map[*traces.Span]string // base name: detail folded away
}

func key(trace, span string) string { return trace + "/" + span }

func newIndex(spans []traces.Span) *index {
	ix := &index{spans: spans, byID: map[string]*traces.Span{}, runOf: map[*traces.Span]string{}, byName: map[*traces.Span]string{}}
	for i := range spans {
		s := &spans[i]
		ix.byID[key(s.TraceID, s.SpanID)] = s
	}
	runs := map[string]*run{}
	for i := range spans {
		s := &spans[i]
		id := ix.runID(s)
		if id == "" {
			continue
		}
		ix.runOf[s] = id
		r := runs[id]
		if r == nil {
			r = &run{id: id}
			runs[id] = r
			ix.runs = append(ix.runs, r)
		}
		r.spans = append(r.spans, s)
	}
	for _, r := range ix.runs {
		slices.SortStableFunc(r.spans, func(a, b *traces.Span) int { return cmp.Or(a.End.Compare(b.End), cmp.Compare(a.SpanID, b.SpanID)) })
	}
	slices.SortFunc(ix.runs, func(a, b *run) int { return cmp.Compare(a.id, b.id) })
	return ix
}

// runID is the workflow.run.id of s or of its nearest ancestor having one.
func (ix *index) runID(s *traces.Span) string {
	for hops := 0; s != nil && hops < 1000; hops++ {
		if id, ok := s.Attr(traces.KeyRunID); ok {
			return id
		}
		s = ix.parent(s)
	}
	return ""
}

func (ix *index) parent(s *traces.Span) *traces.Span {
	if s.ParentID == "" {
		return nil
	}
	return ix.byID[key(s.TraceID, s.ParentID)]
}

// within says s is a or a descendant of a.
func (ix *index) within(s, a *traces.Span) bool {
	for hops := 0; s != nil && hops < 1000; hops++ {
		if s == a {
			return true
		}
		s = ix.parent(s)
	}
	return false
}

// invocation is the workflow.execute span s runs under, or nil.
func (ix *index) invocation(s *traces.Span) *traces.Span {
	for hops := 0; s != nil && hops < 1000; hops++ {
		if strings.HasPrefix(s.Name, traces.ExecuteSpanPrefix) {
			return s
		}
		s = ix.parent(s)
	}
	return nil
}

// eventType is the event of a World events.create span: core names the
// span "world.events.create <type>"; an older simlab export carries
// simlab.event.type.
func eventType(s *traces.Span) (string, bool) {
	if t, ok := strings.CutPrefix(s.Name, "world.events.create "); ok {
		return t, true
	}
	if s.Name == traces.EventsCreateSpanName {
		return s.Attr(traces.KeyEventType)
	}
	return "", false
}

// accepted says the World accepted a call: simlab's result attribute when
// there is one, else the span's status (core marks a refused call error).
func accepted(s *traces.Span) bool {
	if r, ok := s.Attr(traces.KeyEventResult); ok {
		return r == "ok"
	}
	return s.StatusCode != "error"
}

// runExpired says the World refused a write because the run had ended.
func runExpired(s *traces.Span) bool {
	if r, ok := s.Attr(traces.KeyEventResult); ok {
		return r == "run_expired"
	}
	m := strings.ToLower(s.StatusMessage)
	return s.StatusCode == "error" && (strings.Contains(m, "expired") || strings.Contains(m, "410"))
}

func isTerminalRunEvent(t string) bool {
	return t == "run_completed" || t == "run_failed" || t == "run_cancelled"
}

func terminalStatus(s string) bool { return s == "completed" || s == "failed" || s == "cancelled" }

// stepOf is the step a span is about: step.id, on core's step spans and on
// simlab's calls.
func stepOf(s *traces.Span) (string, bool) { return s.Attr(traces.KeyStepID) }

// bodyEvidence is the line of a step body's beginning, stamped when it
// began (the span ends when its delivery does, often much later).
func bodyEvidence(s *traces.Span) string {
	b, _ := bodyStart(s)
	return b.UTC().Format("15:04:05.000000") + "  body of " + s.Name + " begins  span " + s.SpanID
}

func evidence(s *traces.Span) string {
	text := s.End.UTC().Format("15:04:05.000000") + "  " + s.Name
	if id, ok := stepOf(s); ok && !strings.HasPrefix(s.Name, traces.StepSpanPrefix) {
		text += " (" + id + ")"
	}
	if s.StatusCode == "error" {
		text += " → error"
		if s.StatusMessage != "" {
			text += ": " + s.StatusMessage
		}
	}
	if r, ok := s.Attr(traces.KeyEventResult); ok {
		text += " [" + r + "]"
	}
	return text + "  span " + s.SpanID
}

// Check judges every property that spans can judge.
func Check(spans []traces.Span) *Report {
	ix := newIndex(spans)
	rep := &Report{Spans: len(spans), Violations: map[string]int{}, First: map[string]*First{}, NotJudged: []string{}}
	for _, r := range ix.runs {
		rep.Runs = append(rep.Runs, r.id)
	}
	for _, name := range Names() {
		v := ruleFor(name)(ix)
		v.Property = name
		if v.Violations == nil {
			v.Violations = []Violation{}
		}
		for i := range v.Violations {
			v.Violations[i].Property = name
		}
		rep.Verdicts = append(rep.Verdicts, v)
		if !v.Judged {
			rep.NotJudged = append(rep.NotJudged, name)
			continue
		}
		runs := map[string]bool{}
		for _, x := range v.Violations {
			runs[x.Run] = true
		}
		rep.Violations[name] = len(runs)
		if len(v.Violations) > 0 {
			x := v.Violations[0]
			rep.First[name] = &First{Run: x.Run, Message: x.Message, Story: append([]string{name + " violated in " + x.Run + ": " + x.Message}, x.Evidence...)}
		}
	}
	return rep
}

// ruleFor is how spans judge the named property. A property with no span
// rule yet is reported as not judged, with that reason, so a new property
// shows up in check --trace the day it is added.
func ruleFor(name string) func(ix *index) Verdict {
	for _, c := range checks {
		if c.name == name {
			return c.judge
		}
	}
	return func(*index) Verdict {
		return notJudged("no span rule for this property yet: it is judged on a simulated History only (simlab check without --trace)")
	}
}

type check struct {
	name  string
	judge func(ix *index) Verdict
}

func notJudged(why string) Verdict { return Verdict{Why: why} }

// has says some span satisfies ok.
func (ix *index) has(ok func(s *traces.Span) bool) bool {
	for i := range ix.spans {
		if ok(&ix.spans[i]) {
			return true
		}
	}
	return false
}

var checks = []check{
	{"no-start-on-terminal", noStartOnTerminal},
	{"one-lazy-fetch-per-fanout", oneLazyFetchPerFanout},
	{"no-prologue-fetch-with-run-context", noPrologueFetchWithRunContext},
	{"liveness", liveness},
	{"unique-step-created", uniqueStepCreated},
	{"single-terminal-event", singleTerminalEvent},
	{"attempt-count", attemptCount},
	{"one-body-at-a-time", oneBodyAtATime},
	{"run-context-matches-run", func(*index) Verdict {
		return notJudged("spans carry no message payload: whether a message had a runContext (simlab.run_context.present) but not its value, nor the run row it should equal")
	}},
	{"run-fails-for-a-reason", func(*index) Verdict {
		return notJudged("spans show a step's failure for good but not a message retired at the delivery cap or out of re-routes, so a run_failed without a failed step cannot be told apart from those")
	}},
	{"reroute-preserves-message", func(*index) Verdict {
		return notJudged("spans carry no message payload (stepInput, runContext) to compare a re-routed message with its original")
	}},
	{"pinned-deployment", pinnedDeployment},
	{"producer-stamps-run-context", func(*index) Verdict {
		return notJudged("spans carry neither the runContext a producer stamped nor the run row it read (core puts neither on queue.publish)")
	}},
	{"no-work-after-visible-end", noWorkAfterVisibleEnd},
	{"bounded-work-after-end", boundedWorkAfterEnd},
	{"recovery-in-band", recoveryInBand},
	{"replayable-log", replayableLog},
}

// replayableLog judges, on core's spans, what a failed run says of its log:
// a run failed CORRUPTED_EVENT_LOG (a replay diverged past its recovery
// replays) or REPLAY_DIVERGENCE carries that workflow.error.code on the
// span of the invocation that failed it. A log no replay has read since it
// became unconsumable shows on no span, so spans that name no failure code
// cannot judge it.
//
// simlab's traces of a program's run (traces.BuildFlow) also say what a
// fresh replay of the run's whole log did (simlab.flow.fresh_replay on the
// run's span): a log it diverges on is one no replay consumes, whether or
// not a replay read it since.
func replayableLog(ix *index) Verdict {
	fresh := func(s *traces.Span) bool { _, ok := s.Attr(traces.KeyFlowFresh); return ok }
	if !ix.has(func(s *traces.Span) bool { _, ok := s.Attr(traces.KeyErrorCode); return ok }) && !ix.has(fresh) {
		return notJudged("no span carries workflow.error.code: no run failed here, and a log no replay read since it became unconsumable shows on no span")
	}
	v := Verdict{Judged: true, Why: "a run failed CORRUPTED_EVENT_LOG or REPLAY_DIVERGENCE (workflow.error.code on the span of the invocation that failed it), or a fresh replay of a simulated program's log diverged (simlab.flow.fresh_replay); on core's spans a log no replay read since cannot be seen"}
	for _, r := range ix.runs {
		var found *Violation
		for _, s := range r.spans {
			if code, _ := s.Attr(traces.KeyErrorCode); code == "CORRUPTED_EVENT_LOG" || code == "REPLAY_DIVERGENCE" {
				text := evidence(s)
				if msg, ok := s.Attr(traces.KeyErrorMessage); ok {
					msg, _, _ = strings.Cut(msg, "\n")
					text += ": " + msg
				}
				found = &Violation{Run: r.id, Message: "the run failed " + code, Evidence: []string{text}}
				break
			}
		}
		for _, s := range r.spans {
			if f, ok := s.Attr(traces.KeyFlowFresh); ok && strings.HasPrefix(f, "diverged") {
				text := "a fresh replay of the run's log " + f + "  span " + s.SpanID
				if found == nil {
					found = &Violation{Run: r.id, Message: "no replay consumes the run's log: a fresh replay " + f}
				}
				found.Evidence = append(found.Evidence, text)
				break
			}
		}
		if found != nil {
			v.Violations = append(v.Violations, *found)
		}
	}
	return v
}

// Names lists the properties in the order Check reports them: every
// property, in the properties package's order.
func Names() []string { return properties.Names() }

func hasEventSpans(ix *index) bool {
	return ix.has(func(s *traces.Span) bool { _, ok := eventType(s); return ok })
}

// terminalAt is when each run's end was accepted: the earliest accepted
// terminal run event's span end.
func (ix *index) terminalAt(r *run) (*traces.Span, bool) {
	for _, s := range r.spans { // by end time
		if t, ok := eventType(s); ok && isTerminalRunEvent(t) && accepted(s) {
			return s, true
		}
	}
	return nil, false
}

func noStartOnTerminal(ix *index) Verdict {
	if !hasEventSpans(ix) {
		return notJudged("no World events.create spans")
	}
	v := Verdict{Judged: true, Why: "an accepted step_started, or a step body, after the run's accepted terminal event (ordered by the spans' end, the World's answer)"}
	for _, r := range ix.runs {
		term, ok := ix.terminalAt(r)
		if !ok {
			continue
		}
		for _, s := range r.spans {
			if t, _ := eventType(s); t == "step_started" && accepted(s) && s.End.After(term.End) {
				v.Violations = append(v.Violations, Violation{Run: r.id, Message: "step_started accepted after the run's " + term.Name,
					Evidence: []string{evidence(term), evidence(s)}})
			}
			if b, ok := bodyStart(s); ok && b.After(term.End) {
				v.Violations = append(v.Violations, Violation{Run: r.id, Message: "a step body began after the run's " + term.Name,
					Evidence: []string{evidence(term), bodyEvidence(s)}})
			}
		}
	}
	return v
}

// oneBodyAtATime judges that a step's body never runs in two executions
// at once: per run and step.id, the bodies the spans show (simlab's
// step.body.start and step.body.end events, core's bare step.execute span
// from start to end, its step.id its parent's), and one beginning before
// another has ended. A body
// whose end no span shows ends with its span (its delivery), as the
// History's property ends it with its delivery.
func oneBodyAtATime(ix *index) Verdict {
	type body struct {
		s          *traces.Span
		start, end time.Time
	}
	judged := false
	v := Verdict{Judged: true, Why: "per step.id, the step bodies the spans show (step.body.start to step.body.end, or core's step.execute span), one beginning before another ended"}
	for _, r := range ix.runs {
		bySteps := map[string][]body{}
		var ids []string
		for _, s := range r.spans {
			start, ok := bodyStart(s)
			if !ok {
				continue
			}
			// core's bare step.execute (the body) names no step: its
			// parent, the step's execution span, does.
			id, ok := stepOf(s)
			for p, hops := ix.parent(s), 0; !ok && p != nil && hops < 3; p, hops = ix.parent(p), hops+1 {
				id, ok = stepOf(p)
			}
			if !ok {
				continue
			}
			judged = true
			end := s.End
			for _, e := range s.Events {
				if e.Name == traces.BodyEndEvent && !e.Time.Before(start) {
					end = e.Time
				}
			}
			if bySteps[id] == nil {
				ids = append(ids, id)
			}
			bySteps[id] = append(bySteps[id], body{s, start, end})
		}
		for _, id := range ids {
			bs := bySteps[id]
			slices.SortStableFunc(bs, func(a, b body) int { return a.start.Compare(b.start) })
			open := 0
			for j := 1; j < len(bs); j++ {
				if bs[j].start.Before(bs[open].end) {
					v.Violations = append(v.Violations, Violation{Run: r.id, Message: "the body of " + id + " ran in two executions at once",
						Evidence: []string{bodyEvidence(bs[open].s), bodyEvidence(bs[j].s)}})
					break
				}
				if bs[j].end.After(bs[open].end) {
					open = j
				}
			}
		}
	}
	if !judged {
		return notJudged("no span shows a step body (simlab's step.body.start event, or core's step.execute span) with its step.id")
	}
	return v
}

// bodyStart is when a step body began: simlab's step.body.start event, or
// the start of core's bare step.execute span (the body's own span).
func bodyStart(s *traces.Span) (time.Time, bool) {
	if s.Name == traces.StepSpanPrefix {
		return s.Start, true
	}
	for _, e := range s.Events {
		if e.Name == traces.BodyStartEvent {
			return e.Time, true
		}
	}
	return time.Time{}, false
}

// fetchFree lists the invocations that handled a step message on the
// fetch-free prologue.
func (ix *index) fetchFree() []*traces.Span {
	var out []*traces.Span
	for i := range ix.spans {
		s := &ix.spans[i]
		if p, _ := s.Attr(traces.KeyDispatchPrologue); p == "run_context" {
			out = append(out, s)
		}
	}
	return out
}

// under lists r's spans under invocation inv whose name starts with prefix.
func (ix *index) under(r *run, inv *traces.Span, prefix string) []*traces.Span {
	var out []*traces.Span
	for _, s := range r.spans {
		if s != inv && strings.HasPrefix(s.Name, prefix) && ix.within(s, inv) {
			out = append(out, s)
		}
	}
	return out
}

func (ix *index) runOfSpan(s *traces.Span) *run {
	id := ix.runOf[s]
	for _, r := range ix.runs {
		if r.id == id {
			return r
		}
	}
	return nil
}

func noPrologueFetchWithRunContext(ix *index) Verdict {
	inv := ix.fetchFree()
	if !ix.has(func(s *traces.Span) bool { _, ok := s.Attr(traces.KeyDispatchPrologue); return ok }) {
		return notJudged("no span carries workflow.step.dispatch_prologue")
	}
	v := Verdict{Judged: true, Why: "no runs.get under a run_context invocation before its step_started"}
	for _, e := range inv {
		r := ix.runOfSpan(e)
		if r == nil {
			continue
		}
		var claim *traces.Span
		for _, s := range ix.under(r, e, traces.EventsCreateSpanName) {
			if t, _ := eventType(s); t == "step_started" && (claim == nil || s.Start.Before(claim.Start)) {
				claim = s
			}
		}
		if claim == nil {
			continue
		}
		for _, g := range ix.under(r, e, traces.RunsGetSpanName) {
			if g.Start.Before(claim.Start) {
				v.Violations = append(v.Violations, Violation{Run: r.id, Message: "an invocation on the run_context prologue read the run before its claim",
					Evidence: []string{evidence(e), evidence(g), evidence(claim)}})
			}
		}
	}
	return v
}

func oneLazyFetchPerFanout(ix *index) Verdict {
	if !ix.has(func(s *traces.Span) bool {
		_, ok := s.Attr(traces.KeyFanoutID)
		return ok && s.Name == traces.RunsGetSpanName
	}) {
		return notJudged("spans name no fan-out (Promise.all) a read is about: core records none, so lazy reads cannot be counted per fan-out")
	}
	v := Verdict{Judged: true, Why: "per simlab.fanout.id: lazy runs.get (after a run_context invocation's listing), and who continued (a replay after a listing that found the fan-out finished); crashed invocations aside"}
	type fk struct{ run, fan string }
	lazy := map[fk][]*traces.Span{}
	anyLazy := map[fk]int{}
	type cont struct {
		load      *traces.Span
		inline    bool
		crashed   bool
		fetchFree bool
	}
	first := map[fk]cont{}
	// crashedAt is, per fan-out, when its first continuer that died did
	// (its invocation's end): a lazy read begun after it is the retry the
	// crash forced, as the History's property excuses it.
	crashedAt, contFetchFree := map[fk]time.Time{}, map[fk]bool{}
	var order []fk
	seen := map[fk]bool{}
	note := func(k fk) {
		if !seen[k] {
			seen[k] = true
			order = append(order, k)
		}
	}
	for i := range ix.spans {
		st := &ix.spans[i]
		if !strings.HasPrefix(st.Name, traces.StepSpanPrefix) || st.Name == traces.StepSpanPrefix {
			continue
		}
		r := ix.runOfSpan(st)
		inv := ix.invocation(st)
		if r == nil || inv == nil {
			continue
		}
		// The step's own calls: under its span, not under a nested step's.
		var list, load, read *traces.Span
		after := false // a call of the step's after its pending check's list
		for _, c := range r.spans {
			if c == st || !ix.within(c, st) || ix.stepOf(c) != st {
				continue
			}
			if list != nil && c != list && !c.Start.Before(list.End) {
				after = true
			}
			switch {
			case (c.Name == traces.EventsListSpanName || strings.HasPrefix(c.Name, traces.EventsCreateSpanName)) && list == nil:
				// The pending check: a list, or an inline step's
				// step_completed whose answer carried the log's delta.
				if pe, _ := c.Attr(traces.KeyFanoutPendingEmpty); pe == "true" {
					list = c
				}
			case c.Name == traces.EventsListSpanName && list != nil && load == nil:
				if _, ok := c.Attr(traces.KeyFanoutID); !ok {
					load = c
				}
			case c.Name == traces.RunsGetSpanName && list != nil && read == nil && !c.Start.Before(list.End):
				read = c
			}
		}
		if list == nil {
			continue
		}
		fan, _ := list.Attr(traces.KeyFanoutID)
		k := fk{r.id, fan}
		note(k)
		inline, _ := st.Attr(traces.KeyStepInline)
		if load == nil && inline == "true" && after {
			// The orchestrator's inline path replays from its one list
			// after its inline steps: the calls after it are the replay.
			load = list
		}
		prologue, _ := inv.Attr(traces.KeyDispatchPrologue)
		crashed := inv.StatusCode == "error"
		if read != nil && inline != "true" {
			anyLazy[k]++
			if !crashed {
				lazy[k] = append(lazy[k], read)
			}
		}
		if load != nil {
			c := cont{load: load, inline: inline == "true", crashed: crashed, fetchFree: inline != "true" && prologue == "run_context"}
			if f, ok := first[k]; !ok || load.Start.Before(f.load.Start) {
				first[k] = c
			}
			if at, ok := crashedAt[k]; crashed && (!ok || inv.End.Before(at)) {
				crashedAt[k] = inv.End
			}
			contFetchFree[k] = contFetchFree[k] || c.fetchFree
		}
	}
	for _, k := range order {
		f, continued := first[k]
		var msg string
		switch n := len(lazy[k]); {
		case n > 1:
			msg = fmt.Sprintf("fan-out %s made %d lazy runs.get", k.fan, n)
		case continued && f.inline && unexcusedReads(lazy[k], crashedAt, k) > 0:
			msg = fmt.Sprintf("fan-out %s was continued by an inline step, yet a consumer also made a lazy runs.get", k.fan)
		case continued && !f.inline && anyLazy[k] == 0 && contFetchFree[k]:
			msg = fmt.Sprintf("fan-out %s was continued by a fetch-free consumer without its lazy runs.get", k.fan)
		default:
			continue
		}
		v.Violations = append(v.Violations, Violation{Run: k.run, Message: msg, Evidence: evidenceOf(lazy[k])})
	}
	return v
}

// unexcusedReads counts the lazy reads begun before the fan-out's first
// continuer died (all of them if none did).
func unexcusedReads[K comparable](reads []*traces.Span, diedAt map[K]time.Time, k K) int {
	at, died := diedAt[k]
	n := 0
	for _, r := range reads {
		if !died || r.Start.Before(at) {
			n++
		}
	}
	return n
}

// stepOf is the step.execute span a call was made by: its nearest step
// ancestor.
// actor is who made a call: the step execution it runs in, else the
// invocation (the simlab History's delivery).
func (ix *index) actor(s *traces.Span) *traces.Span {
	if st := ix.stepOf(s); st != nil {
		return st
	}
	return ix.invocation(s)
}

func (ix *index) stepOf(s *traces.Span) *traces.Span {
	for p := ix.parent(s); p != nil; p = ix.parent(p) {
		if strings.HasPrefix(p.Name, traces.StepSpanPrefix) && p.Name != traces.StepSpanPrefix {
			return p
		}
	}
	return nil
}

func liveness(ix *index) Verdict {
	if len(ix.runs) == 0 {
		return notJudged("no span names a workflow run (workflow.run.id)")
	}
	v := Verdict{Judged: true, Why: "each run in the spans has an accepted terminal event or a terminal workflow.run.status (a trace cut short looks stuck)"}
	for _, r := range ix.runs {
		if _, ok := ix.terminalAt(r); ok {
			continue
		}
		done := false
		for _, s := range r.spans {
			if st, ok := s.Attr(traces.KeyRunStatus); ok && terminalStatus(st) {
				done = true
			}
		}
		if !done {
			last := r.spans[len(r.spans)-1]
			v.Violations = append(v.Violations, Violation{Run: r.id, Message: "no terminal event for the run in the spans", Evidence: []string{"last span: " + evidence(last)}})
		}
	}
	return v
}

// perStep groups the accepted events.create spans of type typ by step.
func (ix *index) perStep(r *run, typ func(string) bool) (map[string][]*traces.Span, []string) {
	out := map[string][]*traces.Span{}
	var order []string
	for _, s := range r.spans {
		t, ok := eventType(s)
		if !ok || !typ(t) || !accepted(s) {
			continue
		}
		id, ok := stepOf(s)
		if !ok {
			continue
		}
		if out[id] == nil {
			order = append(order, id)
		}
		out[id] = append(out[id], s)
	}
	return out, order
}

func callsNameSteps(ix *index) bool {
	return ix.has(func(s *traces.Span) bool {
		_, ev := eventType(s)
		_, st := stepOf(s)
		return ev && st
	})
}

func uniqueStepCreated(ix *index) Verdict {
	if !callsNameSteps(ix) {
		return notJudged("World call spans name no step (core's carry workflow.run.id only)")
	}
	v := Verdict{Judged: true, Why: "accepted step_created per step.id"}
	for _, r := range ix.runs {
		g, order := ix.perStep(r, func(t string) bool { return t == "step_created" })
		for _, id := range order {
			if len(g[id]) > 1 {
				v.Violations = append(v.Violations, Violation{Run: r.id, Message: fmt.Sprintf("%d step_created accepted for %s", len(g[id]), id), Evidence: evidenceOf(g[id])})
			}
		}
	}
	return v
}

func evidenceOf(ss []*traces.Span) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = evidence(s)
	}
	return out
}

func singleTerminalEvent(ix *index) Verdict {
	if !hasEventSpans(ix) {
		return notJudged("no World events.create spans")
	}
	v := Verdict{Judged: true, Why: "accepted run_completed/run_failed/first run_cancelled per run; per step too where calls name steps"}
	for _, r := range ix.runs {
		var terms []*traces.Span
		cancelled := false
		for _, s := range r.spans {
			t, _ := eventType(s)
			if !isTerminalRunEvent(t) || !accepted(s) {
				continue
			}
			if t == "run_cancelled" {
				// A repeated cancel is answered with the first: idempotent.
				if cancelled {
					continue
				}
				cancelled = true
			}
			terms = append(terms, s)
		}
		if len(terms) > 1 {
			v.Violations = append(v.Violations, Violation{Run: r.id, Message: fmt.Sprintf("%d terminal events accepted for the run", len(terms)), Evidence: evidenceOf(terms)})
		}
		g, order := ix.perStep(r, func(t string) bool { return t == "step_completed" || t == "step_failed" })
		for _, id := range order {
			if len(g[id]) > 1 {
				v.Violations = append(v.Violations, Violation{Run: r.id, Message: fmt.Sprintf("%d terminal events accepted for %s", len(g[id]), id), Evidence: evidenceOf(g[id])})
			}
		}
	}
	return v
}

func attemptCount(ix *index) Verdict {
	if !ix.has(func(s *traces.Span) bool {
		t, _ := eventType(s)
		_, ok := s.Attr(traces.KeyStepAttempt)
		return t == "step_started" && ok
	}) {
		return notJudged("no step_started span carries the attempt it answered (step.attempt)")
	}
	v := Verdict{Judged: true, Why: "the k-th accepted step_started of a step (by answer) carries step.attempt k"}
	for _, r := range ix.runs {
		g, order := ix.perStep(r, func(t string) bool { return t == "step_started" })
		for _, id := range order {
			for k, s := range g[id] {
				if a, _ := s.Attr(traces.KeyStepAttempt); a != fmt.Sprint(k+1) {
					v.Violations = append(v.Violations, Violation{Run: r.id, Message: fmt.Sprintf("%s: accepted step_started number %d answered attempt %s", id, k+1, a), Evidence: []string{evidence(s)}})
					break
				}
			}
		}
	}
	return v
}

func pinnedDeployment(ix *index) Verdict {
	if !ix.has(func(s *traces.Span) bool { _, ok := s.Attr(traces.KeyConsumerDeploymentID); return ok }) {
		return notJudged("no invocation span names the deployment that ran it (core's resource carries no deployment.id)")
	}
	v := Verdict{Judged: true, Why: "steps run and replays begun only by invocations on the run's deployment.id"}
	for _, r := range ix.runs {
		pinned := ""
		for _, s := range r.spans {
			if s.ParentID == "" {
				pinned, _ = s.Attr(traces.KeyDeploymentID)
			}
		}
		if pinned == "" {
			continue
		}
		for _, s := range r.spans {
			dep, ok := s.Attr(traces.KeyConsumerDeploymentID)
			if !ok || dep == pinned || !strings.HasPrefix(s.Name, traces.ExecuteSpanPrefix) {
				continue
			}
			ran := false
			for _, c := range ix.under(r, s, traces.StepSpanPrefix) {
				if _, ok := bodyStart(c); ok {
					ran = true
				}
			}
			if b, _ := s.Attr(traces.KeyContinued); b == "true" {
				ran = true
			}
			if ran {
				v.Violations = append(v.Violations, Violation{Run: r.id, Message: "an invocation on " + dep + " ran work of a run pinned to " + pinned, Evidence: []string{evidence(s)}})
			}
		}
	}
	return v
}

func noWorkAfterVisibleEnd(ix *index) Verdict {
	if !hasEventSpans(ix) {
		return notJudged("no World events.create spans")
	}
	v := Verdict{Judged: true, Why: "after an actor (a step execution, else its invocation) is told the run ended (a terminal read, a log holding the end, a run_expired refusal), no write, no publish and no step body by it"}
	for i := range ix.spans {
		a := &ix.spans[i]
		if !strings.HasPrefix(a.Name, traces.ExecuteSpanPrefix) && !(strings.HasPrefix(a.Name, "step.execute ")) {
			continue
		}
		r := ix.runOfSpan(a)
		if r == nil {
			continue
		}
		var told *traces.Span
		mine := ix.spansOf(r, a)
		for _, s := range mine { // by end
			if s == a {
				continue
			}
			st, _ := s.Attr(traces.KeyRunStatusRead)
			lt, _ := s.Attr(traces.KeyLogTerminal)
			if (s.Name == traces.RunsGetSpanName && terminalStatus(st)) || (strings.HasPrefix(s.Name, traces.EventsCreateSpanName) && runExpired(s)) ||
				((s.Name == traces.EventsListSpanName || strings.HasPrefix(s.Name, traces.EventsCreateSpanName)) && lt == "true") {
				told = s
				break
			}
		}
		if told == nil {
			continue
		}
		var after []*traces.Span
		for _, s := range mine {
			if s == a || s.Start.Before(told.End) {
				continue
			}
			if _, ok := eventType(s); ok || s.Name == traces.PublishSpanName {
				after = append(after, s)
			}
		}
		ev := evidenceOf(after)
		if b, ok := bodyStart(a); ok && !b.Before(told.End) {
			ev = append(ev, bodyEvidence(a))
		}
		if len(ev) > 0 {
			v.Violations = append(v.Violations, Violation{Run: r.id, Message: fmt.Sprintf("%s was told the run had ended and did %d more things", a.Name, len(ev)),
				Evidence: append([]string{evidence(told)}, ev...)})
		}
	}
	return v
}

func recoveryInBand(ix *index) Verdict {
	if !ix.has(func(s *traces.Span) bool { r, _ := s.Attr(traces.KeyEventResult); return r != "" }) {
		return notJudged("a missing step's refusal is not told apart from other refusals (core's span shows only an error message)")
	}
	v := Verdict{Judged: true, Why: "an invocation whose step_started met not_found writes step_created for it before it ends"}
	for i := range ix.spans {
		s := &ix.spans[i]
		if t, _ := eventType(s); t != "step_started" {
			continue
		}
		if res, _ := s.Attr(traces.KeyEventResult); res != "not_found" {
			continue
		}
		inv := ix.invocation(s)
		r := ix.runOfSpan(s)
		if inv == nil || r == nil || inv.StatusCode == "error" {
			continue // a crash is a fault, not a choice
		}
		id, _ := stepOf(s)
		ok := false
		for _, c := range ix.under(r, inv, traces.EventsCreateSpanName) {
			if t, _ := eventType(c); t == "step_created" && !c.Start.Before(s.End) {
				if cid, _ := stepOf(c); cid == id {
					ok = true
				}
			}
		}
		if !ok {
			v.Violations = append(v.Violations, Violation{Run: r.id, Message: "an invocation found " + id + " missing and ended without creating it", Evidence: []string{evidence(s), evidence(inv)}})
		}
	}
	return v
}

// boundedWorkAfterEnd judges that an actor (a step execution, else its
// invocation) begins at most the budget of reads, listings and step bodies
// once its run's end was accepted.
func boundedWorkAfterEnd(ix *index) Verdict {
	if !hasEventSpans(ix) {
		return notJudged("no World events.create spans")
	}
	v := Verdict{Judged: true, Why: fmt.Sprintf("per actor (a step execution, else its invocation), the runs.get and events.list it begins, and a step body, once its run's end was accepted: at most the run's budget (simlab.budget.work_after_end on its root, else budget.work_after_end's default, %d)", traces.DefaultWorkAfterEnd)}
	for _, r := range ix.runs {
		term, ok := ix.terminalAt(r)
		if !ok {
			continue
		}
		budget := traces.DefaultWorkAfterEnd
		for _, s := range r.spans {
			if b, ok := s.Attr(traces.KeyWorkAfterEnd); ok && s.Name == traces.RunSpanName {
				if n, err := strconv.Atoi(b); err == nil {
					budget = n
				}
			}
		}
		work := map[*traces.Span][]string{}
		var order []*traces.Span
		add := func(a *traces.Span, text string) {
			if work[a] == nil {
				order = append(order, a)
			}
			work[a] = append(work[a], text)
		}
		for _, s := range r.spans {
			if (s.Name == traces.RunsGetSpanName || s.Name == traces.EventsListSpanName) && !s.Start.Before(term.End) {
				if a := ix.actor(s); a != nil {
					add(a, evidence(s)+" (begun after the end)")
				}
			}
			if strings.HasPrefix(s.Name, traces.StepSpanPrefix+" ") {
				if b, ok := bodyStart(s); ok && !b.Before(term.End) {
					add(s, bodyEvidence(s))
				}
			}
		}
		for _, a := range order {
			if n := len(work[a]); n > budget {
				v.Violations = append(v.Violations, Violation{Run: r.id,
					Message:  fmt.Sprintf("%s began %d reads, listings and bodies after the run's %s was accepted; the budget is %d", a.Name, n, term.Name, budget),
					Evidence: append([]string{evidence(term)}, work[a]...)})
			}
		}
	}
	return v
}
