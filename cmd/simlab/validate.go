package main

import (
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/realengine"
)

func newValidateCommand() *cobra.Command {
	var sf scenarioFlags
	var o realengine.Options
	var dir, simStore string
	var noInstall, asJSON, gate bool
	var gateMin int
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Run the same experiment on the real @workflow/core and in simlab, side by side",
		Long: `Run the scenario's workflow at every width (--branches) on the real runtime
(every @workflow/core release realengine/package.json installs side by
side, or those --cores names: 5.0.0-beta.50 runs the legacy prologue, later
ones the fetch-free one; each compiled by its own @workflow/builders; Node.js
over world-local 5.0.0-beta.45, or each release --world-local names, with the
scenario's store model imposed on the real World; simlab releases lists them)
for --repetitions runs each, and in simlab on seeds 1..--seeds with both
prologues (on world-local's rules and atomicity, the World the real side runs,
with the scenario's store model; --sim-world scenario for the scenario's own
World), and print one row per (branches, engine, core and world-local,
prologue): runs.get before claims, lazy reads per fan-out, the share of
fan-outs with concurrent last completers, step_started accepted/rejected,
deliveries and redeliveries, TTFS and TTLS p50/p90, and corruption read
back from each run's log and rows once it is over: runs with more than one
accepted terminal run event, the most in one run, and rows that could not be
read back. --json prints the
contract of docs/VALIDATION.md. A program's scenario (simlab scenarios: storm,
control, inline-hang, or a file's workflow.program) runs on one core
(--cores, default the default pinned one) for --repetitions runs and in
simlab on --seeds seeds, and is judged as simlab replays --real judges: the
share of runs corrupted and ended more than once, and with
workflow.max_duration the share killed and left with a hung step. The first run installs the pinned npm
packages of realengine (npm install --no-save, from the lock file)
unless --no-install. A scenario knob
the real side cannot honour is refused, named, before anything runs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sc, err := sf.load()
			if err != nil {
				return err
			}
			if sc.IsProgram() {
				return validateProgram(cmd, sc, sf.spec, o.Cores, o.Repetitions, o.Seeds, o.Timeout, dir, noInstall, asJSON, gate, gateMin)
			}
			if simStore != "" {
				cal, err := model.Spec{Scenario: simStore}.Load()
				if err != nil {
					return badInput(fmt.Errorf("--sim-store: %w", err))
				}
				o.SimStore = &cal.Store
			}
			if dir == "" {
				if dir, err = realengine.FindDir(); err != nil {
					return badInput(err)
				}
			}
			// The releases are what the engine directory's package.json
			// installs (a release added since this binary was built
			// included); without one, the pinned ones.
			o.Catalog = realengine.Pinned
			if cat, err := realengine.ReadCatalog(dir); err == nil {
				o.Catalog = cat
			}
			if err := o.Check(sc); err != nil {
				return badInput(err)
			}
			if len(o.Cores) == 0 {
				if gate && cmd.Flags().Changed("gate") || cmd.Flags().Changed("gate-min-runs") {
					return badInput(fmt.Errorf("--gate or --gate-min-runs with --cores=: nothing real to judge simlab against"))
				}
				gate = false // simlab alone: nothing to judge
			}
			if cmd.Flags().Changed("gate-min-runs") && !gate {
				return badInput(fmt.Errorf("--gate-min-runs with --gate=false: it sets how many real runs the gate wants"))
			}
			if gateMin < 1 {
				return badInput(fmt.Errorf("--gate-min-runs %d: want at least 1", gateMin))
			}
			if o.TraceDir != "" {
				if err := os.MkdirAll(o.TraceDir, 0o755); err != nil {
					return badInput(fmt.Errorf("--trace-dir: %w", err))
				}
			}
			// Ctrl-C ends the context: the real engine's processes are
			// killed (their process groups) and temp data removed on the
			// way out, and what was measured is printed.
			ctx, interrupted, release := onInterrupt(cmd.Context())
			defer release()
			r := &realengine.Runner{Dir: dir, Log: cmd.ErrOrStderr(), Catalog: o.Catalog}
			defer r.Close()
			if len(o.Cores) > 0 || o.LegacyProducer {
				if progressHook != nil {
					progressHook(ctx, 0) // a test's moment "while preparing"
				}
				cores, _ := o.Catalog.ExpandCores(o.Cores)
				if err := r.Prepare(ctx, !noInstall, cores...); err != nil {
					if ctx.Err() != nil {
						return interruptError(interrupted(), "stopped while preparing the real engine (installing its packages or compiling the workflow); nothing was measured")
					}
					return err
				}
			}
			bar := progress(cmd.ErrOrStderr(), "validating")
			o.Progress = func(done, total int) {
				if bar != nil {
					bar(done, total)
				}
				if progressHook != nil {
					progressHook(ctx, done)
				}
			}
			res, err := realengine.Validate(ctx, r, sc, o)
			if err != nil {
				// Rows already measured are not lost.
				if res != nil && len(res.Rows) > 0 {
					printValidate(cmd.OutOrStdout(), res)
				}
				if ctx.Err() != nil {
					return interruptError(interrupted(), fmt.Sprintf("%d rows measured before it (printed above): %v", rowsOf(res), err))
				}
				return err
			}
			if gate {
				g := realengine.Decide(res.Agreement, gateMin)
				res.Gate = &g
			}
			if asJSON {
				if err := writeJSON(cmd.OutOrStdout(), res); err != nil {
					return err
				}
			} else {
				printValidate(cmd.OutOrStdout(), res)
				if res.Gate != nil {
					printGate(cmd.OutOrStdout(), res.Gate)
				}
			}
			if res.Gate != nil && res.Gate.Disagrees > 0 {
				return &exitError{code: 1, err: fmt.Errorf("simlab disagrees with the real engine on %d verdicts it had the runs to judge", res.Gate.Disagrees)}
			}
			return nil
		},
	}
	sf.register(cmd)
	cmd.Flags().IntSliceVar(&o.Branches, "branches", []int{4, 16, 64, 128}, fmt.Sprintf("fan-out widths (every fan-out takes the width; at most %d)", realengine.MaxBranches))
	cmd.Flags().StringSliceVar(&o.Cores, "cores", []string{realengine.All}, "real @workflow/core versions to run, installed side by side by realengine/package.json, or all ("+strings.Join(coreVersions(), ", ")+"); --cores= runs simlab only")
	cmd.Flags().StringSliceVar(&o.WorldLocals, "world-local", []string{realengine.Pinned.DefaultWorldLocal}, "@workflow/world-local releases every core runs over, or all ("+strings.Join(worldLocalVersions(), ", ")+")")
	cmd.Flags().BoolVar(&o.LegacyProducer, "legacy-producer", false, "also run the first core with runContext stripped from every step message (a v1 producer)")
	cmd.Flags().IntVar(&o.Repetitions, "repetitions", 3, "real runs per (branches, core)")
	cmd.Flags().IntVar(&o.Seeds, "seeds", 20, "simlab seeds 1..N per (branches, prologue)")
	cmd.Flags().Float64Var(&o.TimeScale, "time-scale", 1, "multiply every latency of the scenario (store, queue, bodies) by K on both sides, so the real harness's own per-call CPU time is small against them")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 3*time.Minute, "longest one real run may take before it is stopped and reported")
	cmd.Flags().StringVar(&o.TraceDir, "trace-dir", "", "write each real run's spans to DIR as OTLP JSON Lines")
	cmd.Flags().StringVar(&dir, "engine-dir", "", "the realengine directory (default: found from the working directory upwards)")
	cmd.Flags().BoolVar(&noInstall, "no-install", false, "do not install the pinned packages when they are missing; say what to run instead")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON (docs/VALIDATION.md)")
	cmd.Flags().BoolVar(&gate, "gate", true, "exit 1 when simlab disagrees with the real runs on a verdict they have the runs to judge (--gate-min-runs), and say in one line which were not judged; --gate=false always exits 0 once the runs are done")
	cmd.Flags().IntVar(&gateMin, "gate-min-runs", 5, "with --gate: the real runs (fan-outs for the per-fan-out counts) a verdict needs to be judged")
	cmd.Flags().StringVar(&simStore, "sim-store", "", "run the simlab side on the store model of scenario FILE (simlab calibrate --write) and the real side with no injected latency: the real World's own costs against the model's")
	cmd.Flags().StringVar(&o.SimWorld, "sim-world", realengine.HarnessWorld, "the World whose rules and atomicity the simlab side applies, with the scenario's store model: "+realengine.HarnessWorld+" (the real side's) or "+realengine.SimWorldScenario+" (the scenario's own)")
	return cmd
}

// coreVersions and worldLocalVersions are the releases the pinned
// package.json installs, for the flags' help.
func coreVersions() []string {
	var out []string
	for _, c := range realengine.Pinned.Cores {
		out = append(out, c.Version)
	}
	return out
}

func worldLocalVersions() []string {
	var out []string
	for _, w := range realengine.Pinned.WorldLocals {
		out = append(out, w.Version)
	}
	return out
}

func printValidate(w io.Writer, res *realengine.Result) {
	fmt.Fprintf(w, "scenario %s · time scale ×%g\n", res.Scenario, res.TimeScale)
	if res.SimWorld != "" {
		if res.Calibrated {
			fmt.Fprintf(w, "simlab: %s's rules, %s atomicity, the calibrated store model of --sim-store (real: world-local on its own costs, no latency injected)\n", res.SimWorld, res.SimAtomicity)
		} else {
			fmt.Fprintf(w, "simlab: %s's rules, %s atomicity, the store model of %s (real: world-local with the same store model imposed)\n", res.SimWorld, res.SimAtomicity, res.StoreProfile)
		}
	}
	fmt.Fprintf(w, "per run (mean): READS runs.get before the claim, STARTED/REJ step_started accepted/rejected, DELIVERIES (redelivered);\n")
	fmt.Fprintf(w, "per fan-out: LAZY lazy runs.get (min..max), CONC concurrent last completers; TTFS and TTLS p50/p90 in ms;\n")
	fmt.Fprintf(w, "CORE/WL: a real row's @workflow/core and @workflow/world-local releases\n\n")
	// Pairs share a column (accepted/rejected, p50/p90, a count and its
	// part in parentheses) so that the table fits 132 columns; the
	// corruption counts follow it, real beside simlab.
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "BRANCHES\tENGINE\tCORE/WL\tPROLOGUE\tN\tREADS\tLAZY\tCONC\tSTARTED/REJ\tDELIVERIES\tTTFS\tTTLS\t")
	for _, r := range res.Rows {
		who := r.Core
		if r.WorldLocal != "" {
			who = shortVersion(r.Core) + "/" + shortVersion(r.WorldLocal)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%.1f\t%s (%s..%s)\t%.0f%%\t%.1f/%.1f\t%.1f (%.1f)\t%.0f/%.0f\t%.0f/%.0f\t\n",
			r.Branches, r.Engine, who, r.Prologue, r.Repetitions, r.RunsGetPrologue,
			trim(r.LazyPerFanout), trim(r.LazyPerFanoutMin), trim(r.LazyPerFanoutMax),
			100*r.ConcurrentLastCompleters, r.StepStartedAccepted, r.StepStartedRejected, r.Deliveries, r.Redeliveries,
			r.TTFSP50MS, r.TTFSP90MS, r.TTLSP50MS, r.TTLSP90MS)
	}
	tw.Flush()
	var spans, own []string
	for _, r := range res.Rows {
		if r.Engine == "real" && len(r.DispatchPrologue) > 0 {
			var counts []string
			for _, k := range slices.Sorted(maps.Keys(r.DispatchPrologue)) {
				counts = append(counts, fmt.Sprintf("%s %d", k, r.DispatchPrologue[k]))
			}
			spans = append(spans, fmt.Sprintf("  %d branches, core %s%s: %s", r.Branches, r.Core, onWL(r), strings.Join(counts, ", ")))
		}
		if r.Engine == "real" {
			own = append(own, fmt.Sprintf("  %d branches, core %s%s: p50 %.1f ms, p90 %.1f ms", r.Branches, r.Core, onWL(r), r.RealStoreP50MS, r.RealStoreP90MS))
		}
	}
	if len(own) > 0 {
		fmt.Fprintf(w, "\nthe real World's own time per events.create, on top of the scenario's latency:\n%s\n", strings.Join(own, "\n"))
	}
	printWriteOrder(w, res)
	printAgreement(w, res)
	if len(spans) > 0 {
		fmt.Fprintf(w, "\nworkflow.step.dispatch_prologue on the real spans (total over repetitions):\n%s\n", strings.Join(spans, "\n"))
	}
	printCorruption(w, res)
	printWhoEnds(w, res)
}

// printGate says what --gate decided: the judged disagreements first, then
// how many verdicts agreed and how many were not judged, and why.
func printGate(w io.Writer, g *realengine.GateDecision) {
	fmt.Fprintf(w, "\ngate (verdicts with at least %d real runs):\n", g.MinRuns)
	judged := 0
	for _, v := range g.Verdicts {
		if !v.Judged {
			continue
		}
		judged++
		if !v.Agrees {
			fmt.Fprintf(w, "  DISAGREES  %d branches  %s %s  %s\n", v.Branches, shortVersion(v.Core), v.Prologue, v.What)
		}
	}
	fmt.Fprintf(w, "  %d of %d judged verdicts agree; %d not judged", judged-g.Disagrees, judged, g.NotJudged)
	for _, v := range g.Verdicts {
		if !v.Judged {
			fmt.Fprintf(w, " (%s)", v.Why)
			break
		}
	}
	fmt.Fprintln(w)
}

// printAgreement judges each simlab row against the real row of its width
// and prologue (realengine.Agreements).
func printAgreement(w io.Writer, res *realengine.Result) {
	if len(res.Agreement) == 0 {
		return
	}
	fmt.Fprintf(w, "\nsimlab against the real runs: LAZY simlab's mean inside the real runs' range; CONC simlab's share inside\nthe real share's 95%% interval (Clopper-Pearson, from the real fan-outs); ENDED and CORRUPTED the same for runs\nwhose log holds more than one terminal event, runs failed for their log or whose log simlab's replay\ncannot consume, and runs a queued last completer ended rather than the orchestrator (from the real runs):\n")
	verdict := func(ok bool) string {
		if ok {
			return "agrees"
		}
		return "DISAGREES"
	}
	for _, a := range res.Agreement {
		fmt.Fprintf(w, "  %d branches  %s %s  lazy %s in %s..%s: %s  concurrent %.0f%% in %.0f-%.0f%% (%d of %d): %s\n",
			a.Branches, shortVersion(a.Core), a.Prologue, trim(a.Lazy), trim(a.LazyMin), trim(a.LazyMax), verdict(a.LazyAgrees),
			100*a.Concurrent, 100*a.ConcurrentLow, 100*a.ConcurrentHigh, a.RealConcurrent, a.RealFanouts, verdict(a.ConcurrentAgrees))
		fmt.Fprintf(w, "  %*s  ended twice %.1f%% in %.0f-%.0f%% (%d of %d): %s  corrupted %.1f%% in %.0f-%.0f%% (%d of %d): %s\n",
			len(strconv.Itoa(a.Branches))+len(" branches"), "", 100*a.Ended, 100*a.EndedLow, 100*a.EndedHigh, a.RealEnded, a.RealRuns, verdict(a.EndedAgrees),
			100*a.Corrupted, 100*a.CorruptedLow, 100*a.CorruptedHigh, a.RealCorrupted, a.RealRuns, verdict(a.CorruptedAgree))
		fmt.Fprintf(w, "  %*s  ended by a last completer %.1f%% in %.0f-%.0f%% (%d of %d): %s\n",
			len(strconv.Itoa(a.Branches))+len(" branches"), "", 100*a.EndedByStep, 100*a.EndedByStepLow, 100*a.EndedByStepHigh, a.RealEndedByStep, a.RealRuns, verdict(a.EndedByStepAgrees))
	}
}

// printWriteOrder says, on the World's own costs, how many of a run's
// overlapping writes each side's World answered out of arrival order: the
// store model's write_order, checked against the real World.
func printWriteOrder(w io.Writer, res *realengine.Result) {
	var lines []string
	for _, r := range res.Rows {
		if o := r.WritesOutOfOrder; o != nil {
			who := "real " + shortVersion(r.Core)
			if r.Engine != "real" {
				who = "simlab " + r.Prologue
			}
			lines = append(lines, fmt.Sprintf("  %d branches  %-24s %.2f (%d of %d pairs)", r.Branches, who, o.Share(), o.Reversed, o.Pairs))
		}
	}
	if len(lines) > 0 {
		fmt.Fprintf(w, "\nwrites answered out of arrival order (of a run's writes in the World together, arrived >= 1 ms apart):\n%s\n", strings.Join(lines, "\n"))
	}
}

// printCorruption sets each width's corruption counts side by side, real
// and simlab, one line per row.
func printCorruption(w io.Writer, res *realengine.Result) {
	printSideBySide(w, res, "\ncorruption, real beside simlab: runs whose log holds more than one accepted terminal run event, of the runs\ncounted; the most in one run; run and step rows that could not be read back once the run was over; runs failed\nCORRUPTED_EVENT_LOG or REPLAY_DIVERGENCE; runs whose log simlab's replay of the workflow cannot consume\n",
		func(r realengine.Row) string {
			return fmt.Sprintf("%d/%d runs >1 end\tmax %d\tunreadable %d\tcorrupted %d\tunreplayable %d", r.RunsMultiTerminal, r.RunsCounted, r.TerminalEventsMax, r.UnreadableRows, r.RunsCorrupted, r.RunsUnreplayable)
		})
}

// printWhoEnds sets who ended each width's runs side by side, real and
// simlab: a queued last completer or the orchestrator's invocation.
func printWhoEnds(w io.Writer, res *realengine.Result) {
	printSideBySide(w, res, "\nwho ends the run, real beside simlab: runs whose first accepted end a step message's delivery wrote (a\nqueued last completer's inline replay; the rest the orchestrator's invocation, its inline steps included), and\nthe terminal run writes attempted per run, accepted or not\n",
		func(r realengine.Row) string {
			return fmt.Sprintf("by a last completer %d/%d\tend writes %s per run", r.RunsEndedByStep, r.RunsCounted, trim(r.EndAttempts))
		})
}

// printSideBySide prints head, then one line per row: the width where it
// changes, which side ran it, and what cells says of it.
func printSideBySide(w io.Writer, res *realengine.Result, head string, cells func(realengine.Row) string) {
	if len(res.Rows) == 0 {
		return
	}
	fmt.Fprint(w, head)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	last := -1
	for _, r := range res.Rows {
		lead := ""
		if r.Branches != last {
			lead = fmt.Sprintf("%d branches", r.Branches)
			last = r.Branches
		}
		who := r.Core + onWL(r)
		if r.Engine == "simlab" {
			who = "simlab"
			if r.World != "" {
				who += " (" + r.World + ")"
			}
		}
		fmt.Fprintf(tw, "  %s\t%s %s\t%s\n", lead, who, r.Prologue, cells(r))
	}
	tw.Flush()
}

// shortVersion drops the 5.0.0- of a prerelease version: beta.45.
func shortVersion(v string) string {
	if _, pre, ok := strings.Cut(v, "-"); ok {
		return pre
	}
	return v
}

// onWL names a real row's world-local release.
func onWL(r realengine.Row) string {
	if r.WorldLocal == "" {
		return ""
	}
	return " on world-local " + shortVersion(r.WorldLocal)
}

// trim writes a mean with at most two decimals and no trailing zeros.
func trim(x float64) string { return strconv.FormatFloat(math.Round(x*100)/100, 'f', -1, 64) }

// rowsOf counts a partial result's rows.
func rowsOf(res *realengine.Result) int {
	if res == nil {
		return 0
	}
	return len(res.Rows)
}
