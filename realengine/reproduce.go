package realengine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/simlab/simlab/check"
	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/properties"
	"github.com/simlab/simlab/properties/spancheck"
	"github.com/simlab/simlab/traces"
)

// PlanReport is what plan.mjs did with a plan (its report()).
type PlanReport struct {
	Entries  int `json:"entries"`
	Released int `json:"released"`
	// Next is the first entry not released when the run ended.
	Next int `json:"next"`
	// Broken is set when the plan could not go on: nothing more could
	// arrive while Entry (or Missing, a race group's members) had not.
	Broken *struct {
		Entry       int   `json:"entry"`
		Missing     []int `json:"missing"`
		Outstanding int   `json:"outstanding"`
		Held        []int `json:"held"`
	} `json:"broken"`
	Status []struct {
		State  string `json:"state"`
		Result string `json:"result"`
		Status string `json:"status"`
	} `json:"status"`
	// Unplanned are the calls no entry names, passed through; Position the
	// plan's next entry when each arrived.
	Unplanned []struct {
		Call     string `json:"call"`
		Key      string `json:"key"`
		Write    bool   `json:"write"`
		Position int    `json:"position"`
		Result   string `json:"result"`
	} `json:"unplanned"`
	// Mismatches are entries answered otherwise than the History says.
	Mismatches []struct {
		Entry int    `json:"entry"`
		Want  string `json:"want"`
		Got   string `json:"got"`
		Call  string `json:"call"`
	} `json:"mismatches"`
	// Seq is what happened in order: a release of an entry, an unplanned
	// call passing, the plan breaking.
	Seq []struct {
		At       float64 `json:"at"`
		What     string  `json:"what"`
		Entry    *int    `json:"entry"`
		Call     string  `json:"call"`
		Write    bool    `json:"write"`
		Position int     `json:"position"`
	} `json:"seq"`
	// FsRaces are the race groups forced inside their calls: the group's
	// first entry, and the steps of the World's own I/O the schedule had to
	// let go out of order (none when it was honoured).
	FsRaces []struct {
		First  int      `json:"first"`
		Broken []string `json:"broken"`
	} `json:"fs_races"`
	Runs  map[string]int    `json:"runs"`
	Steps map[string]string `json:"steps"`
}

// Reproducible returns an error naming the first thing of a schedule's
// scenario that reproduce cannot honour on the real side: what validate
// refuses (Honourable), a World other than world-local (the one the harness
// runs), and what the plan does not drive yet. Latencies, pools, the
// consumer count and the run interval are not refused: the plan orders the
// calls, so the real side runs with none of them.
func Reproducible(sc model.Scenario) error {
	refuse := func(knob string, v any, why string) error {
		return fmt.Errorf("%s = %v: reproduce cannot honour it: %s", knob, v, why)
	}
	switch {
	case sc.World == "world-postgres":
		return refuse("world", sc.World, "no pinned core runs on a published world-postgres: each refuses 5.0.0-beta.29, which declares spec version 5, where the runtime needs 6 or 7 (slot-numbered event ids; TestNoPinnedCoreRunsOnWorldPostgres, docs/VALIDATION.md)")
	case sc.World != HarnessWorld:
		return refuse("world", sc.World, "the real side runs @workflow/world-local 5.0.0-beta.45; a schedule of another World's rules and atomicity cannot be replayed on it")
	case sc.Faults.Crash > 0:
		return refuse("faults.crash", sc.Faults.Crash, "the plan does not crash a delivery at a call boundary yet")
	case sc.Store.BatchCreates:
		return refuse("store.batch_creates", true, "world-local has no events.createBatch; the plan matches events.create calls one by one")
	}
	// The store model's stale reads are the plan's (each stale read of the
	// History is answered stale), not drawn: Honourable's check of them is
	// moot.
	// Nor are cancellations: the plan cancels each run (Run#cancel) when
	// the History's run_cancelled is due.
	c := sc
	c.Faults.StaleRead = 0
	c.Faults.Cancel, c.Faults.CancelAt, c.Faults.CancelWithin = 0, 0, 0
	if err := Honourable(c); err != nil {
		return fmt.Errorf("%w (reproduce refuses what validate refuses)", err)
	}
	return nil
}

// ReproduceOptions are a reproduction's settings.
type ReproduceOptions struct {
	// Cores are the real runtimes, by version (default: the first pinned).
	Cores []string
	// Timeout bounds one real run.
	Timeout time.Duration
	// OutDir receives each core's spans and call record; Base names them.
	OutDir, Base string
	// WorldLocal is the world-local package the cores run over ("" is
	// @workflow/world-local, the release the schedules were made for).
	WorldLocal string
}

// Reproduction is one schedule forced on the real runtime.
type Reproduction struct {
	Schedule    string `json:"schedule"`
	Property    string `json:"property"`
	HistoryHash string `json:"history_hash"`
	// Violation is the History's first violation of the property.
	Violation string             `json:"violation"`
	Plan      *Plan              `json:"plan"`
	Cores     []CoreReproduction `json:"cores"`
	// WorkAfterEnd is the scenario's budget.work_after_end, which the call
	// record's bounded-work-after-end is judged against.
	WorkAfterEnd int `json:"work_after_end,omitempty"`
}

// Reproduced says every core reproduced the violation.
func (r *Reproduction) Reproduced() bool {
	if len(r.Cores) == 0 {
		return false
	}
	for _, c := range r.Cores {
		if c.Verdict != VerdictReproduced {
			return false
		}
	}
	return true
}

// Verdicts of one core's run.
const (
	VerdictReproduced = "reproduced"
	VerdictDiverged   = "diverged"
	// VerdictHonouredNotViolated: the plan was honoured, yet the real run's
	// spans do not show the property violated (or cannot judge it).
	VerdictHonouredNotViolated = "not reproduced"
)

// CoreReproduction is one core's run of a plan.
type CoreReproduction struct {
	Core string `json:"core"`
	// WorldLocal is the world-local release the run ran on, read from the
	// package the harness loaded.
	WorldLocal string `json:"world_local,omitempty"`
	Verdict    string `json:"verdict"`
	// DivergedAt is the first plan entry the real run did not honour
	// (-1: none); Reason says how.
	DivergedAt int    `json:"diverged_at"`
	Reason     string `json:"reason,omitempty"`
	// Model and Real are both sides' calls around the divergence.
	Model []string `json:"model,omitempty"`
	Real  []string `json:"real,omitempty"`
	// Released entries of the plan, of Entries.
	Released int `json:"released"`
	Entries  int `json:"entries"`
	// Judged says the real run's spans could judge the property (Why:
	// what they read, or why not); Violations are its violations there.
	Judged bool   `json:"judged"`
	Why    string `json:"why"`
	// JudgedOn is what judged it: "spans" (spancheck, as check --trace) or
	// "call record" (judgeCalls), where spans cannot.
	JudgedOn   string   `json:"judged_on,omitempty"`
	Violations []string `json:"violations"`
	// UnplannedReads counts the real calls no entry names that passed
	// through (reads the runtime makes and the model does not).
	UnplannedReads int `json:"unplanned_reads"`
	// Spans and Calls are the files written.
	Spans string `json:"spans"`
	Calls string `json:"calls"`
}

// ErrNotReproducible marks a schedule reproduce refuses before anything
// runs (exit 2).
var ErrNotReproducible = errors.New("not reproducible on the real side")

// Prepare replays a schedule, checks it replays to its hash and violates
// its property, refuses what the real side cannot honour and translates
// its History into a plan. Every error wraps ErrNotReproducible.
func PrepareReproduction(s check.Schedule, file string) (*Reproduction, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrNotReproducible, fmt.Sprintf(format, a...))
	}
	if s.Property == "" {
		return nil, bad("the schedule names no property: reproduce forces one property's violation (save it with simlab check)")
	}
	if s.Base != nil {
		return nil, bad("a differential schedule (with a base scenario) is reproduced as its change alone: not supported yet")
	}
	if err := Reproducible(s.Scenario); err != nil {
		return nil, bad("%v", err)
	}
	res, rep, err := s.Replay()
	if err != nil {
		return nil, bad("replaying the schedule: %v", err)
	}
	got := fmt.Sprintf("%016x", res.History.Hash)
	if rep.Mismatches > 0 || (s.HistoryHash != "" && got != s.HistoryHash) {
		return nil, bad("the schedule no longer replays to its history (history %s, saved %s, %d choice mismatches): the model changed since it was saved; save it again with simlab check",
			got, s.HistoryHash, rep.Mismatches)
	}
	prop, _ := properties.ByName(s.Property)
	vs := prop.Check(res.History)
	if len(vs) == 0 {
		return nil, bad("%s holds on the schedule's history: nothing to reproduce", s.Property)
	}
	plan, err := PlanFrom(res.History)
	if err != nil {
		return nil, bad("translating the history into a plan: %v", err)
	}
	return &Reproduction{Schedule: file, Property: s.Property, HistoryHash: got, Violation: model.RunName(vs[0].Run) + ": " + vs[0].Message, Plan: plan,
		WorkAfterEnd: s.Scenario.Budget.WorkAfterEnd}, nil
}

// planConfig is the harness configuration of a plan: the scenario's
// workflow and runs, no drawn latency, pools, crashes or stale draws, every
// call held by the plan.
func planConfig(sc model.Scenario, plan *Plan) HarnessConfig {
	return HarnessConfig{
		Seed: 1, Fanouts: append([]int(nil), sc.Workflow.Fanouts...), MaxInline: sc.Workflow.MaxInline, Runs: sc.Runs,
		// The workflow's flaky steps throw in the harness as in the model
		// (Honourable admits only the runtime's own retry policy).
		FlakySteps: sc.Workflow.FlakySteps, FlakyTimes: sc.Workflow.FlakyTimes,
		StripRunContext:   slices.Contains(sc.Variants, "legacy-producers"),
		ResilientDispatch: sc.Workflow.ResilientDispatch,
		AwaitInlineClaims: sc.Workflow.AwaitInlineClaims,
		LeaseSeconds:      int(sc.Workflow.InlineOwnershipLease / time.Second),
		// The harness crashes each queued step's first delivery as its
		// claim reaches the World, as the model's crash_first_delivery
		// does before the claim; world-local brings it back after 5 s.
		CrashFirstDelivery: sc.Faults.CrashFirstDelivery,
		// world-local's cap is the runtime's, which can only be lowered.
		MaxQueueDeliveries: queueCap(sc.Store.MaxDeliveries),
		Gate:               &GateConfig{Plan: &planSpec{Entries: plan.Entries, Cut: plan.Cut}},
		RecordBodies:       true, DumpCalls: true,
	}
}

// planTimeout is a real run's default bound for a plan: 2 minutes, or the
// History's span and a minute more when that is longer (the plan waits out
// the runtime's own timers: world-local's 5 s between deliveries).
func planTimeout(p *Plan) time.Duration {
	return max(2*time.Minute, time.Duration(p.Span)+time.Minute)
}

// queueCap is the WORKFLOW_MAX_QUEUE_DELIVERIES the harness sets for the
// model's store.max_deliveries: 0 (the runtime's own 48) unless lower.
func queueCap(n int) int {
	if n > 0 && n < localMaxDeliveries {
		return n
	}
	return 0
}

// Reproduce runs the prepared plan on each core and judges each run.
func Reproduce(ctx context.Context, r *Runner, s check.Schedule, rp *Reproduction, o ReproduceOptions) error {
	cores := o.Cores
	if len(cores) == 0 {
		cores = []string{ReproduceCore}
	}
	if o.Timeout <= 0 {
		o.Timeout = planTimeout(rp.Plan)
	}
	for _, v := range cores {
		core, err := CoreByVersion(v)
		if err != nil {
			return err
		}
		cfg := planConfig(s.Scenario, rp.Plan)
		cfg.WorldLocal = o.WorldLocal
		spans := filepath.Join(o.OutDir, fmt.Sprintf("%s.%s.spans.jsonl", o.Base, core.Version))
		calls := filepath.Join(o.OutDir, fmt.Sprintf("%s.%s.calls.json", o.Base, core.Version))
		cfg.TraceOut = spans
		out, runErr := r.run(ctx, core, cfg, o.Timeout)
		if out == nil {
			return runErr
		}
		cr := judgeReproduction(rp, out, spans, s.Property)
		cr.Core, cr.WorldLocal, cr.Spans, cr.Calls = core.Version, out.WorldLocal, spans, calls
		if runErr != nil && cr.Verdict == VerdictReproduced {
			cr.Verdict, cr.Reason = VerdictDiverged, runErr.Error()
		} else if runErr != nil {
			cr.Reason += "; " + FirstLine(runErr.Error(), 300)
		}
		if err := writeCallRecord(calls, core.Version, out); err != nil {
			return err
		}
		rp.Cores = append(rp.Cores, cr)
	}
	return nil
}

// writeCallRecord writes a real run's call record to path: the plan's
// report, every World call, delivery and body the store wrapper saw, and
// the read-back.
func writeCallRecord(path, core string, out *RealRun) error {
	record := struct {
		Core       string      `json:"core"`
		Plan       *PlanReport `json:"plan"`
		Calls      []Call      `json:"calls"`
		Deliveries []Delivery  `json:"deliveries"`
		Bodies     []Body      `json:"bodies"`
		ReadBack   []ReadBack  `json:"read_back"`
	}{core, out.Plan, out.Calls, out.Deliveries, out.Bodies, out.ReadBack}
	b, err := json.MarshalIndent(record, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the call record: %w", err)
	}
	return nil
}

// judgeReproduction says whether a real run honoured the plan and shows
// the property violated on its own spans.
func judgeReproduction(rp *Reproduction, out *RealRun, spansFile, property string) CoreReproduction {
	cr := CoreReproduction{DivergedAt: -1, Entries: len(rp.Plan.Entries)}
	pr := out.Plan
	if pr == nil {
		cr.Verdict, cr.Reason = VerdictDiverged, "the harness reports no plan: it did not run gated"
		return cr
	}
	cr.Released = pr.Released
	for _, u := range pr.Unplanned {
		if !u.Write {
			cr.UnplannedReads++
		}
	}
	// The first entry the run did not honour, and how.
	at, why := -1, ""
	note := func(k int, reason string) {
		if at < 0 || k < at {
			at, why = k, reason
		}
	}
	if b := pr.Broken; b != nil {
		missing := b.Missing
		if len(missing) == 0 {
			missing = []int{b.Entry}
		}
		note(b.Entry, fmt.Sprintf("entry %d never arrived, and nothing more could (the plan broke there: %s)", missing[0], entryName(rp.Plan, missing[0])))
	} else if pr.Next < len(rp.Plan.Entries) {
		note(pr.Next, fmt.Sprintf("entry %d never arrived before the runtime was done (%s)", pr.Next, entryName(rp.Plan, pr.Next)))
	}
	for _, r := range pr.FsRaces {
		if len(r.Broken) > 0 {
			note(r.First, fmt.Sprintf("the race group at entry %d did not take its I/O in the History's order: the schedule let %s go out of order", r.First, strings.Join(r.Broken, ", ")))
		}
	}
	for _, m := range pr.Mismatches {
		note(m.Entry, fmt.Sprintf("entry %d (%s) was answered %s where the history has %s", m.Entry, m.Call, m.Got, m.Want))
	}
	for _, u := range pr.Unplanned {
		if u.Write {
			note(u.Position, fmt.Sprintf("a write no entry names reached the World while entry %d was next: %s → %s", u.Position, u.Call, u.Result))
		}
	}
	// The property on the real run's own spans, or, where spans cannot
	// judge it, on its call record.
	judged, whyJ, violations, err := judgeSpans(spansFile, property)
	if judged {
		cr.JudgedOn = "spans"
	}
	if err == nil {
		if j, w, v, ok := judgeCalls(property, out, rp.WorkAfterEnd); ok {
			switch {
			case !judged:
				judged, whyJ, violations = j, w, v
				cr.JudgedOn = "call record"
			case j && len(violations) == 0 && len(v) > 0:
				// The harness's own record of the run shows what core's
				// spans do not (a body's span can begin after the body
				// did): the record judges, and the reason says so.
				whyJ = w + "; the real run's own spans hold it (" + whyJ + ")"
				violations = v
				cr.JudgedOn = "call record"
			}
		}
	}
	cr.Judged, cr.Why, cr.Violations = judged, whyJ, violations
	if err != nil {
		cr.Why = err.Error()
	}
	switch {
	case at >= 0:
		cr.Verdict, cr.DivergedAt, cr.Reason = VerdictDiverged, at, why
		cr.Model, cr.Real = around(rp.Plan, pr, at)
	case !judged:
		cr.Verdict, cr.Reason = VerdictHonouredNotViolated, "the plan was honoured, but neither the real run's spans nor its call record can judge "+property+": "+cr.Why
	case len(violations) == 0:
		cr.Verdict, cr.Reason = VerdictHonouredNotViolated, "the plan was honoured, yet "+property+" holds on the real run's "+cr.JudgedOn
	default:
		cr.Verdict = VerdictReproduced
	}
	return cr
}

func entryName(p *Plan, i int) string {
	if i < 0 || i >= len(p.Entries) {
		return "past the plan's end"
	}
	return p.Entries[i].Model
}

// judgeSpans judges property on the spans of file as simlab check --trace
// does (spancheck), returning its violations in one line each.
func judgeSpans(file, property string) (bool, string, []string, error) {
	f, err := os.Open(file)
	if err != nil {
		return false, "", nil, fmt.Errorf("the real run's spans: %w", err)
	}
	defer f.Close()
	spans, err := traces.ReadJSONL(f)
	if err != nil {
		return false, "", nil, fmt.Errorf("the real run's spans %s: %w", file, err)
	}
	spans, _, err = traces.Dedup(spans)
	if err != nil {
		return false, "", nil, fmt.Errorf("the real run's spans %s: %w", file, err)
	}
	rep := spancheck.Check(spans)
	for _, v := range rep.Verdicts {
		if v.Property != property {
			continue
		}
		var out []string
		for _, x := range v.Violations {
			out = append(out, x.Run+": "+x.Message)
		}
		return v.Judged, v.Why, out, nil
	}
	return false, "spancheck has no verdict for " + property, nil, nil
}

// around is both sides' calls around entry k: the plan's entries k-3..k+3,
// and what the real run released or passed from the third release before
// entry k was due to the third event after.
func around(p *Plan, pr *PlanReport, k int) (model, real []string) {
	for i := max(0, k-3); i <= min(len(p.Entries)-1, k+3); i++ {
		mark := "  "
		if i == k {
			mark = "> "
		}
		state := ""
		if i < len(pr.Status) {
			state = pr.Status[i].State
			if pr.Status[i].Result != "" {
				state += " " + pr.Status[i].Result
			}
		}
		model = append(model, fmt.Sprintf("%s%d  %s  [real: %s]", mark, i, p.Entries[i].Model, state))
	}
	// The position in the real sequence where entry k was due: after the
	// release of entry k-1 (or the start).
	pos := 0
	for j, e := range pr.Seq {
		if e.What == "release" && e.Entry != nil && *e.Entry < k {
			pos = j + 1
		}
	}
	for j := max(0, pos-3); j < min(len(pr.Seq), pos+4); j++ {
		e := pr.Seq[j]
		mark := "  "
		if j == pos {
			mark = "> "
		}
		switch e.What {
		case "release":
			real = append(real, fmt.Sprintf("%s%.1f ms  released entry %d: %s", mark, e.At, *e.Entry, e.Call))
		case "pass":
			kind := "read"
			if e.Write {
				kind = "WRITE"
			}
			real = append(real, fmt.Sprintf("%s%.1f ms  unplanned %s passed (entry %d next): %s", mark, e.At, kind, e.Position, e.Call))
		case "act":
			real = append(real, fmt.Sprintf("%s%.1f ms  the harness made entry %d's call: %s", mark, e.At, *e.Entry, e.Call))
		case "break":
			real = append(real, fmt.Sprintf("%s%.1f ms  the plan broke at entry %d: nothing more could arrive", mark, e.At, *e.Entry))
		}
	}
	if pos >= len(pr.Seq) {
		real = append(real, "> (nothing more happened that the gate saw)")
	}
	return model, real
}

// judgeCalls judges, on a real run's own call record (what the store
// wrapper saw of every World call and delivery), a property the spans
// cannot judge. ok is false when it has no rule for the property either.
//
// run-fails-for-a-reason: an accepted run_failed from a delivery whose
// listings of the log before the write held no step_failed, while no
// message of the run reached the runtime's delivery cap (48 on world-local)
// and, world-local having one deployment, none was re-routed. (Spans show
// neither the log a writer loaded nor a retired message; the call record
// holds both.)
func judgeCalls(property string, out *RealRun, workBudget int) (judged bool, why string, violations []string, ok bool) {
	switch property {
	case "run-fails-for-a-reason":
	case "ended-run-reads-ended":
		// Read back once the runtime was done (harness.mjs readRunBack,
		// from the real World itself): the log holds an accepted terminal
		// run event, and runs.get answers a status that is not terminal.
		for _, b := range out.ReadBack {
			if b.TerminalEvents > 0 && b.RunStatus != "completed" && b.RunStatus != "failed" && b.RunStatus != "cancelled" {
				violations = append(violations, fmt.Sprintf("%s: its log holds %s (of %d events), yet runs.get reads it back %q once the runtime was done", b.RunID, b.FirstTerminal, b.Events, b.RunStatus))
			}
		}
		return true, "on the read-back: once the runtime was done, a run whose log holds an accepted terminal event reads back terminal", violations, true
	case "one-lazy-fetch-per-fanout":
		// The harness counts each fan-out's lazy runs.get from the call
		// record (a queued step's delivery's read after its claim: what
		// validate compares): more than one is the finding (the spans name
		// no fan-out a read is about).
		for _, f := range out.Fanouts {
			if f.LazyReads > 1 {
				violations = append(violations, fmt.Sprintf("%s: fan-out %d made %d lazy runs.get (%d last completers)", f.RunID, f.Index, f.LazyReads, f.LastCompleters))
			}
		}
		return true, "on the call record: a fan-out's lazy runs.get (a queued step's delivery's read after its claim), more than one", violations, true
	case "recovery-in-band":
		// A delivery whose claim the World answered "not found" (the step
		// has no step_created) and that threw (the queue saw it fail)
		// without the World accepting that step's create from it.
		failed := map[int]bool{}
		for _, d := range out.Deliveries {
			if d.Status >= 500 {
				failed[d.Index] = true
			}
		}
		created := map[string]bool{}
		for _, c := range out.Calls {
			if c.Op == "events.create" && c.Event == "step_created" && c.Result == "ok" {
				created[fmt.Sprintf("%d %s", c.Delivery, c.Correlation)] = true
			}
		}
		seen := map[string]bool{}
		for _, c := range out.Calls {
			k := fmt.Sprintf("%d %s", c.Delivery, c.Correlation)
			if c.Op != "events.create" || c.Event != "step_started" || c.Result != "WorkflowWorldError" || !strings.Contains(c.Error, "not found") ||
				!failed[c.Delivery] || created[k] || seen[k] {
				continue
			}
			seen[k] = true
			violations = append(violations, fmt.Sprintf("%s: delivery %d found step %s missing (%s) and threw without creating it", c.Run, c.Delivery, c.Correlation, c.Error))
		}
		return true, "on the call record: a delivery whose step_started the World answered not found, that failed (HTTP 500 to the queue), with no step_created of that step accepted from it", violations, true
	case "bounded-work-after-end":
		// Per queue delivery, the runs.get and events.list calls it began
		// after its run's first accepted terminal write answered, and the
		// step bodies it began after: more than the budget. The model
		// counts per actor, an inline step apart from its invocation; the
		// call record cannot split an invocation's calls so, and counts
		// them together (at least the model's count).
		end := map[string]float64{}
		for _, c := range out.Calls {
			if c.Op == "events.create" && c.Result == "ok" && (c.Event == "run_completed" || c.Event == "run_failed" || c.Event == "run_cancelled") {
				if e, seen := end[c.Run]; !seen || c.End < e {
					end[c.Run] = c.End
				}
			}
		}
		work := map[int]int{}
		runOf := map[int]string{}
		for _, c := range out.Calls {
			if e, ended := end[c.Run]; ended && c.Delivery >= 0 && c.Start >= e && (c.Op == "runs.get" || strings.HasPrefix(c.Op, "events.list")) {
				work[c.Delivery]++
				runOf[c.Delivery] = c.Run
			}
		}
		for _, b := range out.Bodies {
			if e, ended := end[b.Run]; ended && b.Delivery >= 0 && b.Begin >= e {
				work[b.Delivery]++
				runOf[b.Delivery] = b.Run
			}
		}
		for _, d := range slices.Sorted(maps.Keys(work)) {
			if work[d] > workBudget {
				violations = append(violations, fmt.Sprintf("%s: delivery %d began %d reads, listings and bodies after the run's end was accepted; the budget is %d", runOf[d], d, work[d], workBudget))
			}
		}
		return true, "on the call record: per queue delivery, the runs.get and events.list it began after its run's first accepted terminal write answered, and the bodies it began after, more than the budget (budget.work_after_end)", violations, true
	case "one-body-at-a-time":
		// The harness records every body: from its release (or its
		// beginning, when nothing held it) to its step function's return.
		start := func(b Body) float64 {
			if b.Held && b.Released > 0 {
				return b.Released
			}
			return b.Begin
		}
		for i, a := range out.Bodies {
			for _, b := range out.Bodies[i+1:] {
				if a.Run != b.Run || a.Step != b.Step || a.Delivery == b.Delivery || a.End < 0 || b.End < 0 {
					continue
				}
				if start(a) < b.End && start(b) < a.End {
					violations = append(violations, fmt.Sprintf("%s: the body of step %s (branch %d/%d) ran in deliveries %d and %d at once (%.1f–%.1f ms and %.1f–%.1f ms)",
						a.Run, a.Step, a.Fanout, a.Index, a.Delivery, b.Delivery, start(a), a.End, start(b), b.End))
				}
			}
		}
		return true, "on the bodies the harness recorded: two of one step's bodies, in two deliveries, each from its release to its step function's return, overlapping", violations, true
	default:
		return false, "", nil, false
	}
	capped := map[string]bool{}
	for _, d := range out.Deliveries {
		if d.Attempt >= localMaxDeliveries {
			capped[d.Run] = true
		}
	}
	for i, c := range out.Calls {
		if c.Op != "events.create" || c.Event != "run_failed" || c.Result != "ok" || capped[c.Run] {
			continue
		}
		// The log the writer holds: every page it listed before the write
		// (a continuation lists on from the cursor of its pending check).
		lists, events, failed := 0, 0, false
		for _, p := range out.Calls[:i] {
			if c.Delivery < 0 || p.Delivery != c.Delivery || !strings.HasPrefix(p.Op, "events.list") {
				continue
			}
			lists++
			events += len(p.Listed)
			for _, e := range p.Listed {
				if strings.HasPrefix(e, "step_failed") {
					failed = true
				}
			}
		}
		if !failed {
			violations = append(violations, fmt.Sprintf("%s: run_failed accepted from delivery %d, whose %d listings of the log before it held %d events, no step_failed; no message of the run reached the delivery cap",
				c.Run, c.Delivery, lists, events))
		}
	}
	return true, "on the call record: an accepted run_failed whose writer's listings of the log held no step_failed, no message retired at the delivery cap, none re-routed (world-local has one deployment)", violations, true
}
