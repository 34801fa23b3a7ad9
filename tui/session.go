package tui

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/simlab/simlab/check"
	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/flow"
	"github.com/simlab/simlab/properties"
	"github.com/simlab/simlab/properties/spancheck"
	"github.com/simlab/simlab/sim"
	"github.com/simlab/simlab/traces"
)

// DefaultSeeds are the seeds `simlab tui` runs when none are given: enough
// to see seeds differ, few enough to read in one screen.
var DefaultSeeds = []uint64{1, 2, 3, 4, 5, 6, 7, 8}

// Config is what a set of simulated runs is built from, in the CLI's terms,
// so that every run can print the command that replays it.
type Config struct {
	Scenario string   // built-in name or scenario file
	Sets     []string // --set key=value, in order
	Variants []string // --variant, in order
	Seeds    []uint64
}

// spec is the config's scenario as the command line names it.
func (c Config) spec() model.Spec {
	return model.Spec{Scenario: c.Scenario, Sets: c.Sets, Variants: c.Variants}
}

// scenario builds and validates the scenario the config names.
func (c Config) scenario() (model.Scenario, error) { return c.spec().Load() }

// Check reports whether the config would simulate, without simulating: the
// CLI calls it so a bad --scenario, --set or --variant fails before the
// screen opens.
func (c Config) Check() error {
	_, err := c.scenario()
	return err
}

// ReplayCommand is the `simlab run` command line that replays seed of c.
func (c Config) ReplayCommand(seed uint64) string { return c.spec().RunCommand(seed) }

// key identifies the simulation a config and seed make, so that running the
// same seed twice adds no duplicate rows.
func (c Config) key(seed uint64) string {
	return fmt.Sprintf("%s\x00%q\x00%q\x00%d", c.Scenario, c.Sets, c.Variants, seed)
}

func (c Config) clone() Config {
	c.Sets = slices.Clone(c.Sets)
	c.Variants = slices.Clone(c.Variants)
	c.Seeds = slices.Clone(c.Seeds)
	return c
}

// Run is one workflow run: one trace, one row of the runs view. Everything
// the views show comes from its spans, so a run read from a file and one
// just simulated look alike; a simulated run also carries its History, for
// what spans cannot tell (property verdicts, the accepted log).
type Run struct {
	No       int // 1-based row number, in load order: what :compare names
	Seed     uint64
	HasSeed  bool
	Scenario string
	Variants []string
	RunID    string
	Status   string
	Spans    []traces.Span
	Start    time.Time // the root span's start: offsets are measured from it
	Duration time.Duration
	// TTLS is the latest step end (its accepted step_completed or
	// step_failed) minus the run's start (DOMAIN §10).
	TTLS    time.Duration
	HasTTLS bool
	// Prologue is run_context, runs_get, mixed or none, as model.Summarize says it.
	Prologue        string
	PrologueFetches int
	LazyFetches     int
	Deliveries      int
	Redeliveries    int
	// AfterEnd counts work after the run's end, from spans: writes the World
	// refused because the run had ended, and step bodies begun after the
	// run's terminal event (model.Counts: writes_refused_ended + bodies_after_end).
	AfterEnd int
	// Violations are this run's property violations; Checked says whether
	// the properties could be checked on a History (not for a file).
	Violations []properties.Violation
	Checked    bool
	// Judged is, for a run read from a file, what its spans say of each
	// property (spancheck, as check --trace judges them): a verdict for
	// those spans can judge, the reason for the others.
	Judged *spancheck.Report

	cfg      Config // the simulation's config; Scenario "" for a file
	file     string
	key      string
	hist     *model.History
	runIndex int
	tree     *traces.Tree
}

// Source names where the run came from, for the header and the replay line.
func (r *Run) Source() string {
	if r.file != "" {
		return r.file
	}
	return r.cfg.Scenario
}

// Label is a run's short name in breadcrumbs and the compare view.
func (r *Run) Label() string {
	s := fmt.Sprintf("#%d %s", r.No, r.RunID)
	if r.HasSeed {
		s += fmt.Sprintf(" seed %d", r.Seed)
	}
	if len(r.Variants) > 0 {
		s += " [" + strings.Join(r.Variants, ",") + "]"
	}
	return s
}

// Replay is the command that reproduces the run, or "" when it cannot be
// known (a file without the simlab.seed attribute).
func (r *Run) Replay() string {
	if r.file == "" {
		return r.cfg.ReplayCommand(r.Seed)
	}
	if !r.HasSeed || r.Scenario == "" {
		return ""
	}
	c := Config{Scenario: r.Scenario, Variants: r.Variants}
	return c.ReplayCommand(r.Seed)
}

// offset is an instant as time since the run's start.
func (r *Run) offset(t time.Time) time.Duration { return t.Sub(r.Start) }

// span finds a span by id.
func (r *Run) span(id string) (int, bool) { return r.tree.Index(id) }

// Simulate runs every seed of cfg with recording on and returns one Run per
// workflow run of each seed, in seed order.
func Simulate(cfg Config) ([]*Run, error) { return SimulateWith(cfg, SimOptions{}) }

// SimOptions watch and bound a simulation of many seeds.
type SimOptions struct {
	// Progress, if set, is told before each seed how many are done, and
	// once all are (a bar filled clears itself: one left at 99 % stays on
	// the terminal after the lab quits).
	Progress func(done, total int)
	// Stop, if set, is asked between seeds and between a seed's stages
	// (simulating, building spans, checking); once it says true the seeds
	// done are returned with ErrStopped.
	Stop func() bool
	// Spans bounds the spans the runs may hold in all (0: MaxSessionSpans).
	Spans int
}

// MaxSessionSpans is the most spans a session holds: every span of every
// run stays in memory for the views (about 5 KB each), so seeds past it are
// not simulated. A fan-out of 20000 branches is 140000 spans a seed.
const MaxSessionSpans = 500_000

// ErrStopped says SimulateWith was stopped; the runs it returns are the
// seeds it finished.
var ErrStopped = errors.New("stopped")

// SpanLimitError says seeds were left unsimulated because the session would
// hold too many spans; the runs returned with it are the seeds before.
type SpanLimitError struct {
	Done, Total int // seeds simulated, seeds asked for
	Spans, Max  int
}

func (e *SpanLimitError) Error() string {
	return fmt.Sprintf("stopped after %d of %d seeds: their runs hold %d spans, the most a session keeps is %d (about 5 KB a span); simulate fewer seeds or narrower fan-outs, or export with simlab run --trace-out --max-spans",
		e.Done, e.Total, e.Spans, e.Max)
}

// SimulateWith is Simulate with progress, a way to stop and a bound on the
// spans held; what it finished is never lost: on ErrStopped or a
// *SpanLimitError the runs of the seeds done come back with the error.
func SimulateWith(cfg Config, o SimOptions) ([]*Run, error) {
	sc, err := cfg.scenario()
	if err != nil {
		return nil, err
	}
	budget := o.Spans
	if budget <= 0 {
		budget = MaxSessionSpans
	}
	stopped := func() bool { return o.Stop != nil && o.Stop() }
	var out []*Run
	spans := 0
	for i, seed := range cfg.Seeds {
		if o.Progress != nil {
			o.Progress(i, len(cfg.Seeds))
		}
		if spans >= budget {
			return out, &SpanLimitError{Done: i, Total: len(cfg.Seeds), Spans: spans, Max: budget}
		}
		if stopped() {
			return out, ErrStopped
		}
		var runs []*Run
		if sc.IsProgram() {
			r, err := programRun(&sc, cfg, seed)
			if err != nil {
				return out, fmt.Errorf("seed %d: %w", seed, err)
			}
			runs = []*Run{r}
		} else {
			s := sc // model.Run does not change the scenario, but each seed gets its own copy anyway
			res, err := model.Run(&s, sim.NewPCG(seed), model.Options{Record: true, Seed: seed})
			if err != nil {
				return out, fmt.Errorf("seed %d: %w", seed, err)
			}
			if stopped() {
				return out, ErrStopped
			}
			if runs, err = runsOf(res.History, cfg, seed); err != nil {
				return out, fmt.Errorf("seed %d: %w", seed, err)
			}
		}
		for _, r := range runs {
			spans += len(r.Spans)
		}
		out = append(out, runs...)
	}
	if o.Progress != nil {
		o.Progress(len(cfg.Seeds), len(cfg.Seeds))
	}
	return out, nil
}

// programRun is seed of a program's scenario (model/flow, as the runtime
// replays it) as a run of the lab: its trace, judged on its spans as a
// trace file's runs are (a program's run has no History).
func programRun(sc *model.Scenario, cfg Config, seed uint64) (*Run, error) {
	drawn := sc.SeedScenario(seed) // a search's seed runs the program it draws
	sc = &drawn
	fcfg, err := check.FlowConfig(sc)
	if err != nil {
		return nil, err
	}
	res, err := flow.Run(fcfg, seed)
	if err != nil {
		return nil, err
	}
	ro, _, err := traces.BuildFlow(check.ProgramTrace(sc, fcfg, res, seed, res.Explain(fcfg.Program)), traces.Options{})
	if err != nil {
		return nil, err
	}
	spans := traces.FromReadOnly(ro)
	r, err := newRun(spans)
	if err != nil {
		return nil, err
	}
	r.cfg, r.Seed, r.HasSeed, r.Scenario = cfg.clone(), seed, true, sc.Name
	r.key = cfg.key(seed)
	r.Judged = spancheck.Check(spans)
	return r, nil
}

func runsOf(h *model.History, cfg Config, seed uint64) ([]*Run, error) {
	ro, err := traces.Build(h, traces.Options{})
	if err != nil {
		return nil, err
	}
	byTrace := groupByTrace(traces.FromReadOnly(ro))
	violations := properties.Check(h, properties.All())
	out := make([]*Run, 0, len(h.Runs))
	for i := range h.Runs {
		tid := traces.TraceID(h, traces.Options{}, i).String()
		spans := byTrace[tid]
		if len(spans) == 0 {
			return nil, fmt.Errorf("run %s: no spans in trace %s", model.RunName(h.Runs[i].ID), tid)
		}
		r, err := newRun(spans)
		if err != nil {
			return nil, err
		}
		r.cfg, r.hist, r.runIndex = cfg.clone(), h, i
		r.Seed, r.HasSeed, r.Scenario = seed, true, h.Scenario
		r.Variants = slices.Clone(h.Variants)
		r.key = cfg.key(seed) + "\x00" + strconv.Itoa(i)
		r.Checked = true
		for _, v := range violations {
			if v.Run < 0 || int(v.Run) == i {
				r.Violations = append(r.Violations, v)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// LoadTrace reads an OTLP JSON Lines file: one Run per trace in it. Its
// errors say, in the user's terms, what is wrong with the file and how to
// get a good one.
func LoadTrace(path string) ([]*Run, error) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("--trace %s: no such file; write one with simlab run --trace-out %s", path, path)
	case err != nil:
		return nil, fmt.Errorf("--trace %s: %w", path, errors.Unwrap(err))
	case st.IsDir():
		return nil, fmt.Errorf("--trace %s is a directory: name a .jsonl file written by simlab run --trace-out", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--trace %s: %w", path, errors.Unwrap(err))
	}
	defer f.Close()
	runs, err := ReadTrace(f, path)
	if err != nil {
		return nil, fmt.Errorf("--trace %s: %w", path, err)
	}
	return runs, nil
}

// ReadTrace reads OTLP JSON Lines from r; name is what the views call it.
func ReadTrace(r io.Reader, name string) ([]*Run, error) {
	spans, err := traces.ReadJSONL(r)
	if err != nil {
		return nil, err
	}
	// A span read twice (a file concatenated with itself) is one span.
	if spans, _, err = traces.Dedup(spans); err != nil {
		return nil, err
	}
	if len(spans) == 0 {
		return nil, fmt.Errorf("no spans in it: want OTLP JSON Lines, one {\"resourceSpans\":[...]} object per line, as simlab run --trace-out FILE.jsonl writes")
	}
	var out []*Run
	byTrace := groupByTrace(spans)
	// Walk the spans rather than the map so that runs keep the file's
	// canonical trace order.
	for _, s := range spans {
		tr, ok := byTrace[s.TraceID]
		if !ok {
			continue
		}
		delete(byTrace, s.TraceID)
		run, err := newRun(tr)
		if err != nil {
			return nil, fmt.Errorf("trace %s: %w", s.TraceID, err)
		}
		run.file, run.key = name, name+"\x00"+s.TraceID
		run.Judged = spancheck.Check(tr)
		root := &run.Spans[run.tree.Root]
		if v, ok := root.Attr(traces.KeySeed); ok {
			if n, err := strconv.ParseUint(v, 10, 64); err == nil {
				run.Seed, run.HasSeed = n, true
			}
		}
		run.Scenario, _ = root.Attr(traces.KeyScenario)
		if v, ok := root.Attr(traces.KeyVariants); ok {
			// A string slice is rendered as JSON by traces.ReadJSONL.
			if err := json.Unmarshal([]byte(v), &run.Variants); err != nil {
				run.Variants = []string{v}
			}
		}
		out = append(out, run)
	}
	return out, nil
}

// groupByTrace splits spans (in SortSpans order) by trace, keeping order.
func groupByTrace(spans []traces.Span) map[string][]traces.Span {
	out := map[string][]traces.Span{}
	for _, s := range spans {
		out[s.TraceID] = append(out[s.TraceID], s)
	}
	return out
}

// newRun indexes one trace's spans and derives the runs view's columns
// from them.
func newRun(spans []traces.Span) (*Run, error) {
	tree, err := traces.NewTree(spans)
	if err != nil {
		return nil, err
	}
	r := &Run{Spans: spans, tree: tree, Prologue: "none"}

	root := &spans[tree.Root]
	r.Start, r.Duration = root.Start, root.End.Sub(root.Start)
	r.RunID, _ = root.Attr(traces.KeyRunID)
	if r.RunID == "" {
		r.RunID = root.Name
	}
	r.Status, _ = root.Attr(traces.KeyRunStatus)
	var ctx, get int
	var writes []*traces.Span
	var bodies []time.Time
	for i := range spans {
		s := &spans[i]
		r.Duration = max(r.Duration, s.End.Sub(r.Start))
		switch {
		case strings.HasPrefix(s.Name, traces.StepSpanPrefix):
			if t, ok := bodyStart(s); ok {
				bodies = append(bodies, t)
			}
		case s.Name == traces.RunsGetSpanName:
			switch reason, _ := s.Attr(traces.KeyRunsGetReason); reason {
			case "prologue":
				r.PrologueFetches++
			case "last_completer":
				r.LazyFetches++
			}
		case s.Name == traces.ExecuteSpanName:
			r.Deliveries++
			if a, _ := s.Attr(traces.KeyDeliveryAttempt); a != "" && a != "1" {
				r.Redeliveries++
			}
			switch p, _ := s.Attr(traces.KeyDispatchPrologue); p {
			case "run_context":
				ctx++
			case "runs_get":
				get++
			}
		case strings.HasPrefix(s.Name, "world.events.create "):
			writes = append(writes, s)
			// A step's end is its accepted terminal write (as sweep's
			// StepTimes): not its span's, which an inline step that
			// continued the workflow stretches over the next fan-out.
			typ, _ := s.Attr(traces.KeyEventType)
			if res, _ := s.Attr(traces.KeyEventResult); res == "ok" && (typ == "step_completed" || typ == "step_failed") {
				if ttls := s.End.Sub(r.Start); !r.HasTTLS || ttls > r.TTLS {
					r.TTLS, r.HasTTLS = ttls, true
				}
			}
		}
	}
	r.AfterEnd = workAfterEnd(writes, bodies)
	switch {
	case ctx > 0 && get > 0:
		r.Prologue = "mixed"
	case ctx > 0:
		r.Prologue = "run_context"
	case get > 0:
		r.Prologue = "runs_get"
	}
	return r, nil
}

// session is the set of runs the TUI shows and the config new runs are
// made from.
type session struct {
	runs []*Run
	cfg  Config
	// origin says what the session was opened on, for the header.
	origin string
	// simulated says whether the session has simulated since it opened.
	simulated bool
}

// add appends runs not already present (same config, seed and run) and
// returns the rows that stand for the given runs, new or existing.
func (s *session) add(runs []*Run) []*Run {
	byKey := map[string]*Run{}
	for _, r := range s.runs {
		byKey[r.key] = r
	}
	out := make([]*Run, 0, len(runs))
	for _, r := range runs {
		if old, ok := byKey[r.key]; ok {
			out = append(out, old)
			continue
		}
		r.No = len(s.runs) + 1
		s.runs = append(s.runs, r)
		byKey[r.key] = r
		out = append(out, r)
	}
	return out
}

// byNo finds the run with row number n.
func (s *session) byNo(n int) (*Run, bool) {
	if n < 1 || n > len(s.runs) {
		return nil, false
	}
	return s.runs[n-1], true
}

// bodyStart is when a step span's body began, if it did.
func bodyStart(s *traces.Span) (time.Time, bool) {
	for _, e := range s.Events {
		if e.Name == traces.BodyStartEvent {
			return e.Time, true
		}
	}
	return time.Time{}, false
}

// workAfterEnd counts, among a run's events.create spans and step body
// starts, the work done after its end: writes refused because the run had
// ended (run_expired; a conflict on a run event or step_created once the
// run's terminal event was accepted) and bodies begun after that event.
func workAfterEnd(writes []*traces.Span, bodies []time.Time) int {
	var end time.Time
	ended := false
	for _, w := range writes {
		switch strings.TrimPrefix(w.Name, "world.events.create ") {
		case "run_completed", "run_failed", "run_cancelled":
			if res, _ := w.Attr(traces.KeyEventResult); res == "ok" && (!ended || w.End.Before(end)) {
				end, ended = w.End, true
			}
		}
	}
	n := 0
	for _, w := range writes {
		res, _ := w.Attr(traces.KeyEventResult)
		ev := strings.TrimPrefix(w.Name, "world.events.create ")
		switch {
		case res == "run_expired":
			n++
		case res == "entity_conflict" && ended && !w.End.Before(end) && (strings.HasPrefix(ev, "run_") || ev == "step_created"):
			n++
		}
	}
	for _, b := range bodies {
		if ended && b.After(end) {
			n++
		}
	}
	return n
}

// verdictOf is what is known of property name on run r: judged or not,
// and its violations as story lines (message, then evidence), whether from
// the History or, for a file, from the spans; why says how it was judged,
// or why it could not be.
func (r *Run) verdictOf(name string) (judged bool, violations [][]string, why string) {
	if r.Checked {
		for _, v := range r.Violations {
			if v.Property == name {
				violations = append(violations, properties.Story(v))
			}
		}
		return true, violations, "judged on the simulation's history"
	}
	if r.Judged == nil {
		return false, nil, "no history and no spans to judge"
	}
	for _, v := range r.Judged.Verdicts {
		if v.Property != name {
			continue
		}
		for _, x := range v.Violations {
			violations = append(violations, append([]string{name + " violated in " + x.Run + ": " + x.Message}, x.Evidence...))
		}
		return v.Judged, violations, v.Why
	}
	return false, nil, "spans have no rule for it"
}

// violationCount is how many properties r is known to violate, and
// whether anything was judged at all.
func (r *Run) violationCount() (int, bool) {
	// Counted as simlab check counts: properties violated, not violations
	// (one property broken four times in a run is one).
	if r.Checked {
		seen := map[string]bool{}
		for _, v := range r.Violations {
			seen[v.Property] = true
		}
		return len(seen), true
	}
	if r.Judged == nil {
		return 0, false
	}
	n := 0
	for _, v := range r.Judged.Verdicts {
		if len(v.Violations) > 0 {
			n++
		}
	}
	return n, true
}
