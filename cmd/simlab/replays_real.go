package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/simlab/simlab/model/flow"
	"github.com/simlab/simlab/model/program"
	"github.com/simlab/simlab/realengine"
)

// realFlags are simlab replays' real side: --real N runs the same program
// N times on a pinned core, one run per harness call, and judges simlab's
// prefix view against it.
type realFlags struct {
	runs      int
	core      string
	engineDir string
	noInstall bool
	timeout   time.Duration
}

func (f *realFlags) flags(fs *pflag.FlagSet) {
	fs.IntVar(&f.runs, "real", 0, "also run the program N times on the real core (the prefix view's, sequential off) and judge simlab against it")
	fs.StringVar(&f.core, "core", "", "with --real: the pinned core to run (default the default pinned core)")
	fs.StringVar(&f.engineDir, "engine-dir", "", "with --real: the realengine directory (default: found upwards from the working directory)")
	fs.BoolVar(&f.noInstall, "no-install", false, "with --real: use the installed packages, install nothing")
	fs.DurationVar(&f.timeout, "timeout", 2*time.Minute, "with --real: the most one real run may take")
}

// check refuses what the real side cannot honour, before anything runs.
func (f *realFlags) check(cmd *cobra.Command, prog *program.Compiled, maxDuration, lease time.Duration, search bool, views []flow.View, seqs []bool) error {
	if f.runs < 0 {
		return fmt.Errorf("--real %d: want a number of real runs", f.runs)
	}
	if f.runs == 0 {
		for _, name := range []string{"core", "engine-dir", "no-install", "timeout"} {
			if cmd.Flags().Changed(name) {
				return fmt.Errorf("--%s is for the real runs: give --real N", name)
			}
		}
		return nil
	}
	switch {
	case cmd.Flags().Changed("seed"):
		return errors.New("--real runs the program on the real core beside simlab's rows: not with --seed")
	case cmd.Flags().Changed("recovery-replays"):
		return errors.New("--real: the real core's recovery budget is its own (3)")
	case !slices.Contains(views, flow.ViewPrefix):
		return errors.New("--real: every pinned core runs on slot ids, the prefix view; add --view prefix (or all)")
	case !slices.Contains(seqs, false):
		return errors.New("--real: the real runs do not switch sequential replays on; add --sequential off (or all)")
	case f.timeout <= 0:
		return fmt.Errorf("--timeout %v: want a positive duration", f.timeout)
	}
	if lease%time.Second != 0 || lease < time.Second || lease > 900*time.Second {
		return fmt.Errorf("--inline-lease %v: the runtime takes whole seconds, 1s..900s (WORKFLOW_INLINE_OWNERSHIP_LEASE_SECONDS)", lease)
	}
	if search && lease >= f.timeout {
		return fmt.Errorf("--search --real: a case may wait out the inline-ownership lease (--inline-lease %v) for its backstop, past --timeout %v: give --inline-lease 10s (both sides run it) or a longer --timeout", lease, f.timeout)
	}
	if n := prog.HangingAttempts(); n > 0 {
		if maxDuration <= 0 {
			return errors.New("--real: the program's step hangs until a time limit kills it; give --max-duration")
		}
		// Each hanging attempt waits out the limit and world-local's 5s
		// backoff before its message comes back.
		if need := time.Duration(n) * (maxDuration + realengine.WorldLocalRedelivery); need >= f.timeout {
			return fmt.Errorf("--real: the program's %d hanging attempts each wait out --max-duration %v and world-local's %v redelivery, %v a run, past --timeout %v: give a shorter --max-duration (it need only outlast the other steps) or a longer --timeout",
				n, maxDuration, realengine.WorldLocalRedelivery, need, f.timeout)
		}
	}
	if f.core != "" {
		if _, err := realengine.CoreByVersion(f.core); err != nil {
			return fmt.Errorf("--core: %w", err)
		}
	}
	return nil
}

// realReplays is what the real runs showed, counted as simlab's rows are.
type realReplays struct {
	Core         string `json:"core"`
	WorldLocal   string `json:"world_local"`
	Runs         int    `json:"runs"`
	Completed    int    `json:"completed"`
	Failed       int    `json:"failed"`
	Corrupted    int    `json:"corrupted"`
	Stuck        int    `json:"stuck"`
	Unreplayable int    `json:"unreplayable_logs"`
	HungStepRuns int    `json:"runs_with_hung_step"`
	EndedTwice   int    `json:"ended_more_than_once"`
	// Kills counts deliveries killed at the time limit or crashed (as
	// simlab's KILLS), RunsKilled the runs with one.
	Kills      int `json:"kills"`
	RunsKilled int `json:"runs_killed"`
	// Cases are the runs one by one.
	Cases []realCase `json:"runs_one_by_one"`
}

// realCase is one real run: which case (the search's seed, or the run's
// number), how it ended and how many of its deliveries were killed (at the
// time limit or by a crash).
type realCase struct {
	Seed     uint64 `json:"seed"`
	End      string `json:"end"`
	Kills    int    `json:"kills"`
	TimedOut bool   `json:"timed_out,omitempty"`
	// ErrorCodes are the run's accepted run_failed codes; EndedTwice that
	// more than one end was accepted; Client what the client's
	// returnValue said when it rejected.
	ErrorCodes []string `json:"error_codes,omitempty"`
	EndedTwice bool     `json:"ended_more_than_once,omitempty"`
	Client     string   `json:"client_error,omitempty"`
	// RunRow is the run row's status as runs.get read it back, and
	// Client the client's: for a run whose log shows no end.
	RunRow       string `json:"run_row_status,omitempty"`
	ClientStatus string `json:"client_status,omitempty"`
}

// run runs real runs 1..f.runs, run i the program and knobs caseOf(i)
// gives (the same for every run but with --search), one harness call each.
func (f *realFlags) run(ctx context.Context, cmd *cobra.Command, caseOf func(i uint64) ([]program.Node, flow.Config)) (*realReplays, error) {
	r, err := engineRunner(cmd, f.engineDir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	version := f.core
	if version == "" {
		version = realengine.Pinned.DefaultCore
	}
	core, err := realengine.CoreByVersion(version)
	if err != nil {
		return nil, badInput(err)
	}
	if err := r.Prepare(ctx, !f.noInstall, core); err != nil {
		return nil, err
	}
	out := &realReplays{Core: core.Version, WorldLocal: realengine.Pinned.DefaultWorldLocal}
	bar := progress(cmd.ErrOrStderr(), "real runs")
	for i := 1; i <= f.runs; i++ {
		prog, sim := caseOf(uint64(i))
		cfg := realengine.HarnessConfig{Seed: uint64(i), MaxInline: sim.MaxInline, Runs: 1, DefaultDispatch: true,
			MaxDurationMS: float64(sim.MaxDuration) / float64(time.Millisecond), BodyCrash: sim.Crash,
			LeaseSeconds: int(sim.InlineLease / time.Second), ProgramTimeoutIsOutcome: true, NoRetainedVM: !sim.RetainedVM,
			Resumes: realengine.ResumesOf(sim.Resumes)}
		run, err := r.RunProgram(ctx, core, cfg, "replays", prog, sim.Body, f.timeout)
		if err != nil {
			return out, fmt.Errorf("real run %d: %w", i, err)
		}
		for j, b := range run.ReadBack {
			out.add(b, sim.Program, core)
			c := realCase{Seed: uint64(i), End: b.End().String(), Kills: run.Counts.Kills + run.Counts.Crashes, TimedOut: run.TimedOut,
				ErrorCodes: b.ErrorCodes, EndedTwice: b.TerminalEvents > 1}
			if j < len(run.Runs) && run.Runs[j].ReturnValue != nil && run.Runs[j].ReturnValue.State == "rejected" {
				c.Client = run.Runs[j].ReturnValue.Error + ": " + run.Runs[j].ReturnValue.Message
			}
			if b.End() == flow.Stuck {
				c.RunRow = b.RunStatus
				if j < len(run.Runs) {
					c.ClientStatus = run.Runs[j].Status
				}
			}
			out.Cases = append(out.Cases, c)
		}
		// Killed as simlab counts them: at the time limit or by a crash.
		out.Kills += run.Counts.Kills + run.Counts.Crashes
		if run.Counts.Kills+run.Counts.Crashes > 0 {
			out.RunsKilled++ // one run per harness call
		}
		if bar != nil {
			bar(i, f.runs)
		}
	}
	return out, nil
}

func (o *realReplays) add(b realengine.ReadBack, p *program.Compiled, core realengine.Core) {
	o.Runs++
	switch b.End() {
	case flow.Corrupted:
		o.Corrupted++
	case flow.Completed:
		o.Completed++
	case flow.Stuck:
		o.Stuck++
	default:
		o.Failed++
	}
	if b.TerminalEvents > 1 {
		o.EndedTwice++
	}
	log, err := realengine.ProgramEvents(b.Log)
	if err != nil || core.Replay(p, program.BeforeEnd(log)).Status == program.Diverged {
		o.Unreplayable++
	}
	if err == nil && hungStep(log) {
		o.HungStepRuns++
	}
}

// hungStep reports whether log holds a step started more than once, never
// retried and never finished (flow.Result.HungSteps on a real log).
func hungStep(log []program.Event) bool {
	starts, done := map[int32]int{}, map[int32]bool{}
	for _, e := range log {
		if e.Kind != program.EntityStep {
			continue
		}
		switch e.Type {
		case program.StepStarted:
			starts[e.Ordinal]++
		case program.StepCompleted, program.StepFailed, program.StepRetrying:
			done[e.Ordinal] = true
		}
	}
	for k, n := range starts {
		if n > 1 && !done[k] {
			return true
		}
	}
	return false
}

func (o *realReplays) row() replayRow {
	return replayRow{View: "real " + o.Core, Seeds: o.Runs, Completed: o.Completed, Failed: o.Failed, Corrupted: o.Corrupted,
		Stuck: o.Stuck, Unreplayable: o.Unreplayable, HungStepRuns: o.HungStepRuns, EndedTwice: o.EndedTwice,
		Kills: o.Kills, RunsKilled: o.RunsKilled, real: true}
}

// replayVerdict is one share simlab's prefix view predicts, against the
// real runs' 95 % interval.
type replayVerdict struct {
	What    string  `json:"what"`
	Simlab  float64 `json:"simlab_share"`
	Real    int     `json:"real"`
	Runs    int     `json:"real_runs"`
	Low     float64 `json:"real_low"`
	High    float64 `json:"real_high"`
	Agrees  bool    `json:"agrees"`
	simK    int
	simSeed int
}

func (v replayVerdict) String() string {
	verdict := "agrees"
	if !v.Agrees {
		verdict = "DISAGREES"
	}
	return fmt.Sprintf("%s: simlab %d of %d (%.2f), the real core %d of %d (95 %% interval %.2f-%.2f): %s",
		v.What, v.simK, v.simSeed, v.Simlab, v.Real, v.Runs, v.Low, v.High, verdict)
}

// judge holds simlab's prefix view, sequential off, to the real runs: the
// share of runs corrupted (failed for their log, or whose log no replay
// consumes) and of runs ended more than once; with a time limit (limited)
// also the share of runs killed at it and of runs left with a hung step;
// for a search (whose cases differ, and may crash) the share of runs that
// never ended too. A nil o judges nothing.
func (o *realReplays) judge(rows []replayRow, limited, search bool) []replayVerdict {
	if o == nil || o.Runs == 0 {
		return nil
	}
	i := slices.IndexFunc(rows, func(r replayRow) bool { return r.View == flow.ViewPrefix.String() && !r.Sequential })
	if i < 0 {
		return nil
	}
	sim := rows[i]
	var out []replayVerdict
	type share struct {
		what      string
		sim, real int
	}
	shares := []share{
		{"runs corrupted", max(sim.Corrupted, sim.Unreplayable), max(o.Corrupted, o.Unreplayable)},
		{"runs ended more than once", sim.EndedTwice, o.EndedTwice},
	}
	if limited {
		shares = append(shares, share{"runs killed (time limit or crash)", sim.RunsKilled, o.RunsKilled},
			share{"runs left with a hung step", sim.HungStepRuns, o.HungStepRuns})
	}
	if search {
		shares = append(shares, share{"runs failed", sim.Failed, o.Failed}, share{"runs that never ended", sim.Stuck, o.Stuck})
	}
	for _, c := range shares {
		lo, hi := realengine.ShareInterval(c.real, o.Runs, 0.05)
		share := float64(c.sim) / float64(sim.Seeds)
		out = append(out, replayVerdict{What: c.what, Simlab: share, Real: c.real, Runs: o.Runs, Low: lo, High: hi,
			Agrees: share >= lo && share <= hi, simK: c.sim, simSeed: sim.Seeds})
	}
	return out
}

// searchCase is one case of a search run on both sides: simlab's run of it
// (the pinned release's view, sequential replays off) beside the real one.
type searchCase struct {
	Seed        uint64  `json:"seed"`
	TimeLimit   string  `json:"time_limit"`
	Crash       float64 `json:"crash"`
	SimlabEnd   string  `json:"simlab_end"`
	SimlabCode  string  `json:"simlab_error_code,omitempty"`
	SimlabKills int     `json:"simlab_killed"`
	realCase
}

// simCase is seed's case as simlab ran it (cfg's time limit and crash rate,
// how the run ended), the real side left for pairCases.
func simCase(seed uint64, cfg flow.Config, res *flow.Result) searchCase {
	limit := "none"
	if cfg.MaxDuration > 0 {
		limit = cfg.MaxDuration.String()
	}
	code, _ := res.FailureCode()
	return searchCase{Seed: seed, TimeLimit: limit, Crash: cfg.Crash, SimlabEnd: res.End.String(), SimlabCode: code, SimlabKills: res.Killed}
}

// pairCases puts each real case beside simlab's run of the same seed.
func pairCases(sim []searchCase, real []realCase) []searchCase {
	var out []searchCase
	for _, c := range real {
		if i := int(c.Seed) - 1; i >= 0 && i < len(sim) && sim[i].Seed == c.Seed {
			p := sim[i]
			p.realCase = c
			out = append(out, p)
		}
	}
	return out
}

func printSearchCases(w io.Writer, core string, cases []searchCase) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CASE\tTIME LIMIT\tCRASH\tSIMLAB\tREAL "+core)
	for _, c := range cases {
		real := fmt.Sprintf("%s, %d killed", c.End, c.Kills)
		if len(c.ErrorCodes) > 0 {
			real += " (" + strings.Join(c.ErrorCodes, ", ") + ")"
		}
		if c.EndedTwice {
			real += ", ended more than once"
		}
		if c.TimedOut {
			real += " (still running at --timeout)"
		} else if c.End == flow.Stuck.String() {
			// No end in the log read back: what the run row and the client
			// said tell a run still going from a log read short.
			real += fmt.Sprintf(" (its log shows no end; the run row says %q, the client %q", c.RunRow, c.ClientStatus)
			if c.Client != "" {
				real += ": " + c.Client
			}
			real += ")"
		}
		sim := fmt.Sprintf("%s, %d killed", c.SimlabEnd, c.SimlabKills)
		if c.SimlabCode != "" {
			sim += " (" + c.SimlabCode + ")"
		}
		fmt.Fprintf(tw, "%d\t%s\t%g\t%s\t%s\n", c.Seed, c.TimeLimit, c.Crash, sim, real)
	}
	return tw.Flush()
}
