package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/simlab/simlab/conformance"
	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/properties"
)

// The release matrix: each finding of the README, decided on each release
// (a pinned core over a pinned world-local) by a real run of that release,
// never by reading its code. simlab releases matrix prints it;
// docs/RELEASES.md is filled from it.

// Release is one real runtime pair: a core over a world-local release.
type Release struct {
	Core       Core
	WorldLocal WorldLocal
}

func (r Release) String() string { return r.Core.Version + "/world-local-" + r.WorldLocal.Version }

// On is cfg run over the release's world-local.
func (r Release) On(cfg harnessConfig) harnessConfig {
	cfg.WorldLocal = r.WorldLocal.Package()
	return cfg
}

// Verdict is what a real run says of a finding on a release.
type Verdict string

const (
	// Holds: the release does what the finding says.
	Holds Verdict = "holds"
	// Fixed: the release no longer does it.
	Fixed Verdict = "fixed"
	// NotApplicable: the finding is about a path the release does not take
	// (the evidence says which and how the run showed it).
	NotApplicable Verdict = "n/a"
	// NotSeen: an unforced finding the runs did not meet (not a fix: too
	// few runs to tell).
	NotSeen Verdict = "not seen"
	// Undecided: the check could not force what it needed (a gate that had
	// to escape, a schedule not honoured); the evidence says what.
	Undecided Verdict = "undecided"
)

// Judgement is a verdict with what the run measured.
type Judgement struct {
	Verdict  Verdict `json:"verdict"`
	Evidence string  `json:"evidence"`
}

// MatrixOptions are the matrix's knobs.
type MatrixOptions struct {
	// Branches, Repetitions and TimeScale are the unforced check's real
	// runs (durabench-256's store); 0 is 48, 5 and 5.
	Branches, Repetitions int
	TimeScale             float64
	// Timeout bounds one real run; 0 is 3 minutes.
	Timeout time.Duration
	// Findings picks findings by id; none is all.
	Findings []string
	// Progress is called after each cell.
	Progress func(done, total int)
}

func (o MatrixOptions) withDefaults() MatrixOptions {
	if o.Branches == 0 {
		o.Branches = 48
	}
	if o.Repetitions == 0 {
		o.Repetitions = 5
	}
	if o.TimeScale == 0 {
		o.TimeScale = 5
	}
	if o.Timeout == 0 {
		o.Timeout = 3 * time.Minute
	}
	return o
}

// Finding is one README finding and how a release is judged on it.
type Finding struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Test names the go test that asserts the same on every pinned
	// release, where there is one.
	Test  string `json:"test,omitempty"`
	judge func(ctx context.Context, r *Runner, rel Release, o MatrixOptions) (Judgement, error)
}

// Findings are the README's findings, in its order, with the invoke note.
var Findings = []Finding{
	{ID: "lazy-reads", Title: "many lazy runs.get per fan-out under read contention, not one", judge: judgeUnforced(false)},
	{ID: "stale-pending", Title: "a stale pending lazy read fails the run (no startedAt)", Test: "TestStalePendingLazyReadFailsTheRealRun", judge: judgeStalePendingRun},
	{ID: "ended-run-claim", Title: "a claim of a never-created step on an ended run: NotFound first, and the delivery throws (loops on world-local)", judge: judgeGhost},
	{ID: "double-end-forced", Title: "concurrent last completers each write run_completed, all accepted (gated)", Test: "TestGatedLastCompletersCorruptTheRealLog", judge: judgeGated},
	{ID: "double-end-unforced", Title: "concurrent last completers corrupt the log unforced too (48 branches, durabench-256 ×5)", judge: judgeUnforced(true)},
	{ID: "cancel-reopens", Title: "a cancel racing the run's start reopens the run (forced)", Test: "TestForcedCancelRacingStartReopensTheRealRun", judge: judgeCancelRace},
	{ID: "turbo-body-after-cancel", Title: "a cancelled run still runs its inline step's body: turbo's optimistic start (forced)", Test: "TestTurboRunsAnInlineBodyOnACancelledRun", judge: judgeTurboBody},
	{ID: "body-twice", Title: "one step's body runs twice at once: a queued step's early completion makes its consumer a last completer that runs the inline step too (forced)", Test: "TestForcedEarlyQueuedCompletionAgainstTheInlineStep", judge: judgeBodyTwice},
	{ID: "turbo-body-after-completion", Title: "a completed run still runs an inline step's body: the orchestrator's continuation, turbo (reproduced from simlab's schedule)", Test: "TestReproduceTurboBodyAfterTheRunCompleted", judge: judgeSchedule("turbo-body-after-completion.json")},
	{ID: "default-dispatch", Title: "the runtime's default dispatch is not resilient: step_created lands before the publish", judge: judgeDefaultDispatch},
	{ID: "invoke", Title: "core beta.55's capabilities.invoke path (queued replay), on a World given the capability", judge: judgeInvoke},
}

// FindingByID finds a finding.
func FindingByID(id string) (Finding, error) {
	var ids []string
	for _, f := range Findings {
		if f.ID == id {
			return f, nil
		}
		ids = append(ids, f.ID)
	}
	return Finding{}, fmt.Errorf("finding %q: want one of %s", id, strings.Join(ids, ", "))
}

// Cell is one finding on one release.
type Cell struct {
	Finding    string `json:"finding"`
	Core       string `json:"core"`
	WorldLocal string `json:"world_local"`
	Judgement
	Seconds float64 `json:"seconds"`
}

// MatrixResult is the whole matrix: its releases (columns), findings
// (rows) and cells, findings outer.
type MatrixResult struct {
	Releases []struct {
		Core       string `json:"core"`
		WorldLocal string `json:"world_local"`
	} `json:"releases"`
	Findings []Finding `json:"findings"`
	Cells    []Cell    `json:"cells"`
	Seconds  float64   `json:"seconds"`
}

// Cell finds a cell.
func (m *MatrixResult) Cell(finding, core, wl string) (Cell, bool) {
	for _, c := range m.Cells {
		if c.Finding == finding && c.Core == core && c.WorldLocal == wl {
			return c, true
		}
	}
	return Cell{}, false
}

// Matrix judges every finding on every release, one real run (or a few) at a
// time, r prepared.
func Matrix(ctx context.Context, r *Runner, rels []Release, o MatrixOptions) (*MatrixResult, error) {
	o = o.withDefaults()
	findings := Findings
	if len(o.Findings) > 0 {
		findings = nil
		for _, id := range o.Findings {
			f, err := FindingByID(id)
			if err != nil {
				return nil, err
			}
			findings = append(findings, f)
		}
	}
	start := time.Now()
	res := &MatrixResult{Findings: findings}
	for _, rel := range rels {
		res.Releases = append(res.Releases, struct {
			Core       string `json:"core"`
			WorldLocal string `json:"world_local"`
		}{rel.Core.Version, rel.WorldLocal.Version})
	}
	total, done := len(findings)*len(rels), 0
	// A run that serves two findings runs once per release.
	ctx = context.WithValue(ctx, cacheKey{}, map[string]any{})
	for _, f := range findings {
		for _, rel := range rels {
			t0 := time.Now()
			j, err := f.judge(ctx, r, rel, o)
			if err != nil {
				res.Seconds = time.Since(start).Seconds()
				return res, fmt.Errorf("%s on %s: %w", f.ID, rel, err)
			}
			res.Cells = append(res.Cells, Cell{Finding: f.ID, Core: rel.Core.Version, WorldLocal: rel.WorldLocal.Version, Judgement: j,
				Seconds: time.Since(t0).Round(100 * time.Millisecond).Seconds()})
			done++
			if o.Progress != nil {
				o.Progress(done, total)
			}
		}
	}
	res.Seconds = time.Since(start).Round(100 * time.Millisecond).Seconds()
	return res, nil
}

// ---- lazy reads and unforced double ends: durabench-256's store

type cacheKey struct{}

// cached runs f once per key and matrix (Matrix puts the cache in ctx).
func cached[T any](ctx context.Context, key string, f func() (T, error)) (T, error) {
	cache, _ := ctx.Value(cacheKey{}).(map[string]any)
	if v, ok := cache[key].(T); ok {
		return v, nil
	}
	v, err := f()
	if err == nil && cache != nil {
		cache[key] = v
	}
	return v, err
}

type unforced struct {
	row Row
	// terminal is every run's accepted terminal run events.
	terminal []int
}

// unforcedRuns runs the release o.Repetitions times at o.Branches on
// durabench-256's store scaled by o.TimeScale (the table's conditions in
// docs/VALIDATION.md), once per release and matrix.
func unforcedRuns(ctx context.Context, r *Runner, rel Release, o MatrixOptions) (*unforced, error) {
	return cached(ctx, "unforced "+rel.String(), func() (*unforced, error) { return runUnforced(ctx, r, rel, o) })
}

func runUnforced(ctx context.Context, r *Runner, rel Release, o MatrixOptions) (*unforced, error) {
	sc, ok := model.Builtin("durabench-256")
	if !ok {
		return nil, errors.New("no built-in scenario durabench-256")
	}
	sc = Scaled(sc, o.TimeScale)
	cfg, err := harnessFor(sc, o.Branches)
	if err != nil {
		return nil, err
	}
	cfg = rel.On(cfg)
	var runs []*RealRun
	for rep := 1; rep <= o.Repetitions; rep++ {
		cfg.Seed = uint64(rep)
		run, err := r.Run(ctx, rel.Core, cfg, o.Timeout)
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	u := &unforced{row: realRow(o.Branches, rel.Core, rel.WorldLocal, false, runs)}
	for _, run := range runs {
		for _, b := range run.ReadBack {
			u.terminal = append(u.terminal, b.TerminalEvents)
		}
	}
	return u, nil
}

func judgeUnforced(doubleEnd bool) func(ctx context.Context, r *Runner, rel Release, o MatrixOptions) (Judgement, error) {
	return func(ctx context.Context, r *Runner, rel Release, o MatrixOptions) (Judgement, error) {
		u, err := unforcedRuns(ctx, r, rel, o)
		if err != nil {
			return Judgement{}, err
		}
		row := u.row
		where := fmt.Sprintf("%d runs at %d branches, durabench-256 ×%g", row.Repetitions, row.Branches, o.TimeScale)
		if doubleEnd {
			ev := fmt.Sprintf("%d of %d runs with >1 terminal event (max %d; %.0f%% of fan-outs with concurrent last completers), %s",
				row.RunsMultiTerminal, row.RunsCounted, row.TerminalEventsMax, 100*row.ConcurrentLastCompleters, where)
			if row.RunsMultiTerminal > 0 {
				return Judgement{Holds, ev}, nil
			}
			return Judgement{NotSeen, ev}, nil
		}
		ev := fmt.Sprintf("%s lazy runs.get per fan-out (%s..%s), %.0f%% of fan-outs with concurrent last completers, %s prologue reads per run, %s",
			trimf(row.LazyPerFanout), trimf(row.LazyPerFanoutMin), trimf(row.LazyPerFanoutMax), 100*row.ConcurrentLastCompleters, trimf(row.RunsGetPrologue), where)
		switch {
		case !rel.Core.FetchFree() && row.LazyPerFanout == 0:
			return Judgement{NotApplicable, "no lazy read: the legacy prologue reads the run before each claim and the last completer reuses that row; " + ev}, nil
		case row.LazyPerFanout > 1:
			return Judgement{Holds, ev}, nil
		default:
			return Judgement{Fixed, ev}, nil
		}
	}
}

func trimf(x float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", x), "0"), ".")
}

// ---- the stale pending lazy read

// stalePendingConfig is 8 branches of fanout with every runs.get stale,
// reaching back before run_started (a pending row without startedAt).
func stalePendingConfig() (harnessConfig, error) {
	sc, ok := model.Builtin("fanout")
	if !ok {
		return harnessConfig{}, errors.New("no built-in scenario fanout")
	}
	sc.Workflow.ResilientDispatch = false
	sc.Faults.StaleRead = 1
	sc.Store.StaleLag = time.Minute // every stale read reaches back before run_started
	cfg, err := harnessFor(sc, 8)
	if err != nil {
		return cfg, err
	}
	cfg.Seed = 1
	return cfg, nil
}

// judgeStalePending reads the stale-pending run's outcome: failed for want
// of startedAt (holds), or completed (fixed).
func judgeStalePending(err error) Judgement {
	var re *RunError
	switch {
	case err == nil:
		return Judgement{Fixed, "the run completed although every runs.get answered a stale pending row"}
	case errors.As(err, &re) && strings.Contains(re.Msg, `no "startedAt"`) && len(re.RunIDs) == 1:
		msg := re.Msg
		if i := strings.Index(msg, "failed: "); i >= 0 {
			msg = msg[i+len("failed: "):]
		}
		return Judgement{Holds, "the run failed: " + firstLine(msg, 160)}
	default:
		return Judgement{Undecided, "the run ended otherwise: " + firstLine(err.Error(), 200)}
	}
}

// legacyStaleWait bounds the legacy path's stale-pending run: its
// consumers ack without claiming, and nothing is left to end the run.
const legacyStaleWait = 20 * time.Second

func judgeStalePendingRun(ctx context.Context, r *Runner, rel Release, o MatrixOptions) (Judgement, error) {
	cfg, err := stalePendingConfig()
	if err != nil {
		return Judgement{}, err
	}
	timeout := o.Timeout
	if !rel.Core.FetchFree() {
		cfg.DumpCalls = true
		timeout = min(timeout, legacyStaleWait)
	}
	_, err = r.Run(ctx, rel.Core, rel.On(cfg), timeout)
	if ctx.Err() != nil {
		return Judgement{}, err
	}
	var re *RunError
	if !rel.Core.FetchFree() && errors.As(err, &re) && re.Summary != nil && strings.Contains(re.Msg, "timed out") {
		return Judgement{NotApplicable, "no lazy read on the legacy path; " + legacySkips(re.Summary, timeout)}, nil
	}
	return judgeStalePending(err), nil
}

// legacySkips says what the legacy consumers did with a stale pending
// prologue read: how many queued deliveries acked without a claim.
func legacySkips(out *RealRun, waited time.Duration) string {
	byDelivery := map[int][]Call{}
	for _, c := range out.Calls {
		byDelivery[c.Delivery] = append(byDelivery[c.Delivery], c)
	}
	steps, skipped, pending := 0, 0, 0
	for _, d := range out.Deliveries {
		if d.Step == "" {
			continue
		}
		steps++
		claimed := false
		for _, c := range byDelivery[d.Index] {
			claimed = claimed || (c.Op == "events.create" && c.Event == "step_started")
			if c.Op == "runs.get" && c.Status == "pending" {
				pending++
			}
		}
		if !claimed && d.Status == 200 {
			skipped++
		}
	}
	return fmt.Sprintf("its prologue runs.get answered a stale pending row %d times, and %d of %d queued deliveries acked without claiming their step (the runtime's \"skipping background step\"): %d steps started (the inline ones), the run had not ended after %v",
		pending, skipped, steps, out.Counts.StepStartedAccepted, waited)
}

func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// ---- a claim of a never-created step on an ended run

// ghostCap is the runtime's delivery cap (WORKFLOW_MAX_QUEUE_DELIVERIES)
// in the ghost runs: 48 by default, lowered so that the loop's end is seen
// in a few of world-local's 5 s backoffs.
const ghostCap = 2

// ghostConfig is one run of 8 branches, then, once it has ended, one step
// message of a step that was never created (a fresh step id in the first
// queued step's message): with resilient dispatch its stepInput is kept,
// without it the message has none (a bare claim). Every redelivery is
// recorded until one is acked.
func ghostConfig(resilient bool) harnessConfig {
	kind := "ghost_bare"
	if resilient {
		kind = "ghost"
	}
	return harnessConfig{Seed: 1, Fanouts: []int{8}, MaxInline: 3, Runs: 1, ResilientDispatch: resilient,
		ProbeReplay: true, ProbeKinds: []string{kind}, ProbeUntilAcked: true, MaxQueueDeliveries: ghostCap}
}

// ghostStory is one ghost message's deliveries: each attempt's calls and
// answer, runs of equal attempts folded ("attempts 1-3: ...").
func ghostStory(ps []Probe) string {
	var parts []string
	for i := 0; i < len(ps); {
		j := i
		for j+1 < len(ps) && ps[j+1].story() == ps[i].story() {
			j++
		}
		at := fmt.Sprintf("attempt %d", ps[i].Attempt)
		if j > i {
			at = fmt.Sprintf("attempts %d-%d", ps[i].Attempt, ps[j].Attempt)
		}
		parts = append(parts, at+": "+ps[i].story())
		i = j + 1
	}
	return strings.Join(parts, "; ")
}

// judgeGhostRuns judges the two ghost runs (bare, then with stepInput):
// holds when the first delivery throws and world-local delivers it again.
func judgeGhostRuns(outs []*RealRun) Judgement {
	var parts []string
	loops, worldFirst := 0, ""
	for _, out := range outs {
		ps := out.Probes
		if len(ps) == 0 {
			return Judgement{Undecided, "no probe was delivered"}
		}
		what := "bare message (default dispatch)"
		if ps[0].StepInput {
			what = "message with stepInput (resilient dispatch)"
		}
		parts = append(parts, fmt.Sprintf("%s, %d deliveries: %s", what, len(ps), ghostStory(ps)))
		switch {
		case ps[0].Status >= 400 && len(ps) > 1:
			loops++
		case ps[0].Status >= 400:
			return Judgement{Undecided, "the first delivery threw and no redelivery was recorded: " + ghostStory(ps)}
		}
		for _, c := range ps[0].Calls {
			if c.Op == "events.create" && c.Event == "step_started" && worldFirst == "" {
				worldFirst = c.Result
				if strings.Contains(strings.ToLower(c.Error), "not found") {
					worldFirst += " (not found)"
				}
			}
		}
	}
	ev := strings.Join(parts, " | ")
	if loops > 0 {
		return Judgement{Holds, fmt.Sprintf("the claim answers %s and the delivery throws; world-local delivers it again, the same way, until the runtime's delivery cap (WORKFLOW_MAX_QUEUE_DELIVERIES=%d here, 48 by default) writes run_failed, refused on the ended run, and acks: %s", worldFirst, ghostCap, ev)}
	}
	return Judgement{NotApplicable, "the runtime acks at once (the legacy prologue reads the run first and sees it ended): " + ev}
}

func judgeGhost(ctx context.Context, r *Runner, rel Release, o MatrixOptions) (Judgement, error) {
	var outs []*RealRun
	for _, resilient := range []bool{false, true} {
		out, err := r.Run(ctx, rel.Core, rel.On(ghostConfig(resilient)), o.Timeout)
		if err != nil {
			return Judgement{}, err
		}
		if len(out.Probes) > 0 && out.Probes[0].StepInput != resilient {
			return Judgement{Undecided, fmt.Sprintf("the probe's message carried stepInput %v with resilient dispatch %v", out.Probes[0].StepInput, resilient)}, nil
		}
		outs = append(outs, out)
	}
	return judgeGhostRuns(outs), nil
}

// ---- forced races

// gatedRace is the fan-in race of a fan-out's concurrent last completers,
// forced by the gate (gate.mjs) instead of met by timing: one fan-out of
// `branches` steps (one inline, the rest queued), no drawn latency, no pool
// bound; every delivery's pending check after its own step_completed is
// held until all the fan-out's step_completed were written, so every branch
// sees an empty pending set and continues the workflow; their run_completed
// writes are held until all `branches` are pending and released in one
// tick. `runs` runs in one harness process, each gated on its own.
func gatedRace(branches, runs int) harnessConfig {
	return harnessConfig{
		Seed: 1, Fanouts: []int{branches}, MaxInline: 1, Runs: runs,
		Gate:        &gateConfig{FanIn: branches, RunCompleted: branches},
		ProbeReplay: true,
	}
}

// gatedCorrupt counts the gated runs whose log holds more than one accepted
// run_completed, and the accepted run_completed per run.
func gatedCorrupt(out *RealRun) (corrupt int, accepted []int) {
	for _, b := range out.ReadBack {
		n := b.TerminalByType["run_completed"]
		accepted = append(accepted, n)
		if n > 1 {
			corrupt++
		}
	}
	return corrupt, accepted
}

func judgeGated(ctx context.Context, r *Runner, rel Release, o MatrixOptions) (Judgement, error) {
	const branches, runs = 4, 10
	out, err := r.Run(ctx, rel.Core, rel.On(gatedRace(branches, runs)), o.Timeout)
	if err != nil {
		return Judgement{}, err
	}
	if out.Gate == nil || len(out.Gate.Escapes) > 0 {
		return Judgement{Undecided, fmt.Sprintf("the gate escaped %d times: the race was not forced", len(out.Gate.Escapes))}, nil
	}
	corrupt, accepted := gatedCorrupt(out)
	ev := fmt.Sprintf("%d of %d gated runs hold more than one accepted run_completed (per run: %v)", corrupt, len(out.ReadBack), accepted)
	switch corrupt {
	case len(out.ReadBack):
		return Judgement{Holds, ev}, nil
	case 0:
		return Judgement{Fixed, ev}, nil
	default:
		return Judgement{Undecided, ev}, nil
	}
}

// StartCancelSchedule is the race "start-overwrites-cancel" of
// conformance/testdata/races.json (a race of world-local, the World this
// harness runs) in the interleaving its outcome names, as gate.mjs's
// schedule: run_started's read of the run file; the cancel's read, write
// and publish; run_started's write and publish. It is checked on the model
// first: model/world's world-local Txns, stepped in that order, end as the
// race file says the real World ends (both accepted, the run running, its
// log run_created, run_cancelled, run_started), one Txn step being one step
// of the schedule (a world-local run event's read, file write and publish:
// worlds/gate.mjs's classifier). racesFile is races.json's path.
func StartCancelSchedule(racesFile string) ([][2]int, error) {
	races, err := conformance.ReadRaces(racesFile)
	if err != nil {
		return nil, err
	}
	w, err := conformance.WorldByName("wl-fixed")
	if err != nil {
		return nil, err
	}
	const outcome = "ok ok | r0 running log=[run_created,run_cancelled,run_started]"
	found := false
	for _, r := range races {
		if r.Name == "start-overwrites-cancel" {
			found = true
			if !r.On(w) || len(r.Setup) != 0 || len(r.Batch) != 2 || r.Batch[0].Type != "run_started" || r.Batch[1].Type != "run_cancelled" || r.Outcome != outcome {
				return nil, fmt.Errorf("race %s: want run_started and run_cancelled on a fresh run of %s ending %q, got %+v on %v ending %q", r.Name, w.Name, outcome, r.Batch, r.Worlds, r.Outcome)
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("%s has no race start-overwrites-cancel", racesFile)
	}
	s := world.NewFor(model.StoreRules(w.Profile), w.Fence)
	id := s.CreateRun(0, 0, 7, -1)
	txns := []world.Txn{s.Begin(world.Event{Type: world.EvRunStarted, Run: id}, 0), s.Begin(world.Event{Type: world.EvRunCancelled, Run: id}, 1)}
	var schedule [][2]int
	next := []int{0, 0}
	for _, c := range []int{0, 1, 1, 1, 0, 0} {
		if !s.Advance(&txns[c], 0) {
			return nil, fmt.Errorf("model: call %d cannot take its step %d", c, next[c])
		}
		schedule = append(schedule, [2]int{c, next[c]})
		next[c]++
	}
	var log []string
	for _, e := range s.Log(id) {
		log = append(log, e.Type.String())
	}
	for i, tx := range txns {
		if res, _, _ := tx.Result(); !tx.Done() || res != world.OK {
			return nil, fmt.Errorf("model: call %d done %v answering %v after its three steps, want done and ok", i, tx.Done(), res)
		}
	}
	if got := fmt.Sprintf("r0 %s log=[%s]", s.Get(id).Status, strings.Join(log, ",")); !strings.HasSuffix(outcome, got) {
		return nil, fmt.Errorf("model: the interleaving ends %q, want %q", got, outcome)
	}
	return schedule, nil
}

// forcedStartCancel is a run's start raced by its cancel, forced: one
// fan-out of `branches` steps (one inline), no drawn latency, no pool
// bound; each run's first run_started and the harness's Run#cancel of the
// run take their real World steps in the model's order. `runs` runs in one
// harness process, raced one after another.
func forcedStartCancel(schedule [][2]int, branches, runs int) harnessConfig {
	return harnessConfig{
		Seed: 1, Fanouts: []int{branches}, MaxInline: 1, Runs: runs,
		Race:      &raceConfig{Kind: "start_cancel", Schedule: schedule},
		DumpCalls: true,
	}
}

// reopenedProblems says how a forced run's read-back differs from a run the
// cancel reopened: the log run_created, run_cancelled, then the accepted
// run_started and every step created, started and completed after the
// run's terminal event, no second terminal event; the row running, every
// row readable. None: reopened.
func reopenedProblems(b ReadBack, branches int) []string {
	bad := []string{}
	if b.FirstTerminal != "run_cancelled" || b.TerminalEvents != 1 || b.TerminalByType["run_cancelled"] != 1 {
		bad = append(bad, fmt.Sprintf("terminal events %v (first %q), want one run_cancelled", b.TerminalByType, b.FirstTerminal))
	}
	if !sameCounts(b.BeforeTerminal, map[string]int{"run_created": 1}) {
		bad = append(bad, fmt.Sprintf("before it %v, want run_created alone", b.BeforeTerminal))
	}
	want := map[string]int{"run_started": 1, "step_created": branches, "step_started": branches, "step_completed": branches}
	if !sameCounts(b.AfterTerminal, want) {
		bad = append(bad, fmt.Sprintf("after it %v, want %v", b.AfterTerminal, want))
	}
	if b.RunStatus != "running" {
		bad = append(bad, fmt.Sprintf("the run row reads %q, want running", b.RunStatus))
	}
	if len(b.Unreadable) != 0 {
		bad = append(bad, fmt.Sprintf("rows that do not read back: %+v", b.Unreadable))
	}
	return bad
}

func sameCounts(got, want map[string]int) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

func judgeCancelRace(ctx context.Context, r *Runner, rel Release, o MatrixOptions) (Judgement, error) {
	schedule, err := StartCancelSchedule(filepath.Join(r.Dir, "..", "testdata", "races.json"))
	if err != nil {
		return Judgement{}, err
	}
	const branches, runs = 4, 10
	out, err := r.Run(ctx, rel.Core, rel.On(forcedStartCancel(schedule, branches, runs)), o.Timeout)
	if err != nil {
		return Judgement{}, err
	}
	for _, rr := range out.Race {
		if len(rr.Broken) != 0 || rr.CancelMissed {
			return Judgement{Undecided, fmt.Sprintf("run %s: the schedule was not honoured (steps let go out of order %v)", rr.RunID, rr.Broken)}, nil
		}
	}
	reopened, cancelled := 0, 0
	for _, b := range out.ReadBack {
		if len(reopenedProblems(b, branches)) == 0 {
			reopened++
		}
		if b.RunStatus == "cancelled" {
			cancelled++
		}
	}
	client := map[string]int{}
	for _, run := range out.Runs {
		rv := "missing"
		if run.ReturnValue != nil {
			rv = run.ReturnValue.State
		}
		client[rv]++
	}
	ev := fmt.Sprintf("%d of %d forced runs reopened (run_cancelled, then run_started accepted and all %d steps after it, the row running); %d read cancelled; the client's returnValue: %s",
		reopened, len(out.ReadBack), branches, cancelled, countsString(client))
	switch {
	case reopened == len(out.ReadBack) && reopened > 0:
		return Judgement{Holds, ev}, nil
	case reopened == 0 && cancelled == len(out.ReadBack):
		return Judgement{Fixed, ev}, nil
	default:
		return Judgement{Undecided, ev}, nil
	}
}

// judgeTurboBody forces a cancel into each run's first (turbo) delivery
// while it suspends on a two-step fan-out (cancelBeforeTheFanOut) and reads
// whether the inline step's body still began after the cancel, its claim
// refused: the optimistic start of every release that forces it in turbo.
func judgeTurboBody(ctx context.Context, r *Runner, rel Release, o MatrixOptions) (Judgement, error) {
	const runs = 10
	out, err := r.Run(ctx, rel.Core, rel.On(cancelBeforeTheFanOut(runs)), o.Timeout)
	if err != nil {
		return Judgement{}, err
	}
	if out.Gate == nil || len(out.Gate.Escapes) > 0 {
		return Judgement{Undecided, "the gate escaped: the cancel was not forced into the suspension"}, nil
	}
	forced, noBody := 0, 0
	var first error
	for i := range out.Runs {
		switch err := judgeBodyAfterCancel(out, i); {
		case err == nil:
			forced++
		case strings.Contains(err.Error(), "never began"):
			noBody++
		case first == nil:
			first = err
		}
	}
	ev := fmt.Sprintf("%d of %d runs: the inline body began after the cancel, its claim refused, no step completed; %d ran no body", forced, len(out.Runs), noBody)
	switch {
	case forced == len(out.Runs) && forced > 0:
		return Judgement{Holds, ev}, nil
	case noBody == len(out.Runs):
		return Judgement{Fixed, ev}, nil
	case first != nil:
		return Judgement{Undecided, ev + "; " + first.Error()}, nil
	default:
		return Judgement{Undecided, ev}, nil
	}
}

func countsString(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// ---- the runtime's default dispatch

// defaultDispatchConfig is one run of 8 branches with
// WORKFLOW_RESILIENT_STEP_DISPATCH unset, every call recorded.
func defaultDispatchConfig() harnessConfig {
	return harnessConfig{Seed: 1, Fanouts: []int{8}, MaxInline: 3, Runs: 1, DefaultDispatch: true, DumpCalls: true}
}

// dispatchOrder reads a run's step publishes: how many there were, how many
// carried stepInput (resilient dispatch) and how many began before their
// step's step_created was accepted.
func dispatchOrder(out *RealRun) (publishes, withInput, early int) {
	created := map[string]float64{} // step -> when its step_created answered ok
	for _, c := range out.Calls {
		if c.Op == "events.create" && c.Event == "step_created" && c.Result == "ok" {
			if _, ok := created[c.Correlation]; !ok {
				created[c.Correlation] = c.End
			}
		}
	}
	for _, c := range out.Calls {
		if c.Op != "queue" || c.Step == "" {
			continue
		}
		publishes++
		if c.StepInput {
			withInput++
		}
		if at, ok := created[c.Step]; !ok || c.Start < at {
			early++
		}
	}
	return publishes, withInput, early
}

// defaultRun is the release's default-dispatch run, once per matrix.
func defaultRun(ctx context.Context, r *Runner, rel Release, o MatrixOptions) (*RealRun, error) {
	return cached(ctx, "default "+rel.String(), func() (*RealRun, error) {
		return r.Run(ctx, rel.Core, rel.On(defaultDispatchConfig()), o.Timeout)
	})
}

func judgeDefaultDispatch(ctx context.Context, r *Runner, rel Release, o MatrixOptions) (Judgement, error) {
	out, err := defaultRun(ctx, r, rel, o)
	if err != nil {
		return Judgement{}, err
	}
	pubs, input, early := dispatchOrder(out)
	ev := fmt.Sprintf("WORKFLOW_RESILIENT_STEP_DISPATCH unset: %d step publishes, %d with stepInput, %d before their step_created was accepted", pubs, input, early)
	switch {
	case pubs == 0:
		return Judgement{Undecided, ev}, nil
	case input == 0 && early == 0:
		return Judgement{Holds, ev}, nil
	default:
		return Judgement{Fixed, ev + " (the default dispatch changed)"}, nil
	}
}

// ---- the invoke capability

// judgeInvoke runs the default dispatch's run on a wrapped World that
// declares capabilities.invoke (harness.mjs keeps its one runner per run)
// and reads whether the core took the queued-replay path: every queued step
// that finished hands the replay to the run's workflow lane (a workflow
// message published from the step's delivery), the run's own message is
// delivered once more per hand-off, and no delivery makes a lazy runs.get.
// A core before beta.55 ignores the capability: not applicable.
func judgeInvoke(ctx context.Context, r *Runner, rel Release, o MatrixOptions) (Judgement, error) {
	out, err := cached(ctx, "invoke "+rel.String(), func() (*RealRun, error) {
		cfg := defaultDispatchConfig()
		cfg.Invoke = true
		return r.Run(ctx, rel.Core, rel.On(cfg), o.Timeout)
	})
	if err != nil {
		return Judgement{}, err
	}
	runMsgs, queued := 0, 0
	fromStep := map[int]bool{}
	for _, d := range out.Deliveries {
		if d.Step == "" {
			runMsgs++
		} else {
			queued++
			fromStep[d.Index] = true
		}
	}
	handOffs := 0
	for _, c := range out.Calls {
		if c.Op == "queue" && c.Step == "" && fromStep[c.Delivery] {
			handOffs++
		}
	}
	ev := fmt.Sprintf("the World declared [%s]; %d queued step deliveries, %d hand-offs to the workflow lane, %d deliveries of the run's own message, %d lazy runs.get",
		strings.Join(out.WorldCapabilities, ", "), queued, handOffs, runMsgs, out.Counts.RunsGetLazy)
	switch {
	case !slices.Contains(out.WorldCapabilities, "invoke"):
		return Judgement{Undecided, "the harness did not declare the capability: " + ev}, nil
	case !rel.Core.InvokePath():
		if handOffs != 0 {
			return Judgement{Undecided, "a core before beta.55 handed off: " + ev}, nil
		}
		return Judgement{NotApplicable, "core before beta.55 ignores the capability: " + ev}, nil
	case handOffs > 0 && handOffs == queued && runMsgs == 1+handOffs && out.Counts.RunsGetLazy == 0:
		return Judgement{Holds, ev}, nil
	default:
		return Judgement{Undecided, "not the queued-replay path as modelled: " + ev}, nil
	}
}

// ---- one body twice at once (finding 21)

// judgeBodyTwice forces finding 21's interleaving (earlyQueuedCompletion)
// in 10 runs: holds when in every run the inline step's body ran in both
// deliveries at once, fixed when in every run it ran once.
func judgeBodyTwice(ctx context.Context, r *Runner, rel Release, o MatrixOptions) (Judgement, error) {
	const runs = 10
	out, err := r.Run(ctx, rel.Core, rel.On(earlyQueuedCompletion(runs)), o.Timeout)
	if err != nil {
		return Judgement{}, err
	}
	if out.Gate == nil || len(out.Gate.Escapes) > 0 {
		return Judgement{Undecided, "the gate escaped: the queued step's completion was not forced before the inline claim"}, nil
	}
	twice, once := 0, 0
	outcomes := map[string]int{}
	for i := range out.Runs {
		res, bad := judgeInlineRace(out, i, !rel.Core.FetchFree())
		if len(bad) > 0 {
			return Judgement{Undecided, fmt.Sprintf("run %d was not the forced interleaving: %s", i, strings.Join(bad, "; "))}, nil
		}
		outcomes[res.outcome()]++
		switch {
		case len(res.bodies) == 2 && res.overlap:
			twice++
		case len(res.bodies) == 1:
			once++
		}
	}
	ev := fmt.Sprintf("%d of %d runs: two bodies of the inline step at once (%s)", twice, len(out.Runs), countsString(outcomes))
	switch {
	case twice == len(out.Runs):
		return Judgement{Holds, ev}, nil
	case once == len(out.Runs):
		return Judgement{Fixed, ev}, nil
	}
	return Judgement{Undecided, ev}, nil
}

// ---- a saved schedule, reproduced

// judgeSchedule reproduces a saved schedule (testdata/reproduce/name) on
// the release three times: holds when every time every plan entry was
// released in order with the History's answers and the property was
// violated on the real run; fixed when every time the plan was honoured and
// the property held; undecided when the release did not make the
// History's calls (it diverged: the finding cannot be judged by this
// schedule there).
func judgeSchedule(name string) func(ctx context.Context, r *Runner, rel Release, o MatrixOptions) (Judgement, error) {
	return func(ctx context.Context, r *Runner, rel Release, o MatrixOptions) (Judgement, error) {
		const times = 3
		s, err := properties.LoadSchedule(filepath.Join(r.Dir, "testdata", "reproduce", name))
		if err != nil {
			return Judgement{}, err
		}
		dir, err := os.MkdirTemp("", "simlab-matrix-reproduce-")
		if err != nil {
			return Judgement{}, err
		}
		defer os.RemoveAll(dir)
		verdicts := map[string]int{}
		var last CoreReproduction
		for range times {
			rp, err := PrepareReproduction(s, name)
			if err != nil {
				return Judgement{}, err
			}
			if err := Reproduce(ctx, r, s, rp, ReproduceOptions{Cores: []string{rel.Core.Version}, WorldLocal: rel.WorldLocal.Package(), Timeout: o.Timeout, OutDir: dir, Base: "matrix"}); err != nil {
				return Judgement{}, err
			}
			last = rp.Cores[0]
			verdicts[last.Verdict]++
		}
		return scheduleVerdict(name, s.Property, verdicts, times, last), nil
	}
}

// scheduleVerdict is judgeSchedule's verdict from its reproductions'
// verdicts (times in all) and the last one.
func scheduleVerdict(name, property string, verdicts map[string]int, times int, last CoreReproduction) Judgement {
	ev := fmt.Sprintf("reproduce %s, %d times: %s", name, times, countsString(verdicts))
	switch {
	case verdicts[VerdictReproduced] == times:
		return Judgement{Holds, ev + "; " + property + " violated on the real run's " + last.JudgedOn}
	case verdicts[VerdictHonouredNotViolated] == times:
		return Judgement{Fixed, ev + "; " + last.Reason}
	case last.Verdict == VerdictDiverged:
		return Judgement{Undecided, fmt.Sprintf("%s; diverged at entry %d: %s", ev, last.DivergedAt, firstLine(last.Reason, 300))}
	}
	return Judgement{Undecided, ev}
}
