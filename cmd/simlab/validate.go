package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/simlab/simlab/conformance/engine"
)

func newValidateCommand() *cobra.Command {
	var sf scenarioFlags
	var o engine.Options
	var dir string
	var noInstall, asJSON bool
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Run the same experiment on the real @workflow/core and in simlab, side by side",
		Long: `Run the scenario's workflow at every width (--branches) on the real runtime
(@workflow/core 5.0.0-beta.52, fetch-free prologue, and 5.0.0-beta.50, legacy
prologue; Node.js over world-local, with the scenario's store model imposed
on the real World) for --repetitions runs each, and in simlab on seeds
1..--seeds with both prologues (on world-local's rules and atomicity, the
World the real side runs, with the scenario's store model; --sim-world
scenario for the scenario's own World), and print one row per (branches, engine,
core, prologue): runs.get before claims, lazy reads per fan-out, the share of
fan-outs with concurrent last completers, step_started accepted/rejected,
deliveries and redeliveries, TTFS and TTLS p50/p90, and corruption read
back from each run's log and rows once it is over: runs with more than one
accepted terminal run event, the most in one run, and rows that could not be
read back. --json prints the
contract of docs/VALIDATION.md. The first run installs the pinned npm
packages of conformance/engine (npm install --no-save, from the lock file)
unless --no-install. A scenario knob
the real side cannot honour is refused, named, before anything runs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sc, err := sf.load()
			if err != nil {
				return err
			}
			if err := o.Check(sc); err != nil {
				return badInput(err)
			}
			if dir == "" {
				if dir, err = engine.FindDir(); err != nil {
					return badInput(err)
				}
			}
			if o.TraceDir != "" {
				if err := os.MkdirAll(o.TraceDir, 0o755); err != nil {
					return badInput(fmt.Errorf("--trace-dir: %w", err))
				}
			}
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			r := &engine.Runner{Dir: dir, Log: cmd.ErrOrStderr()}
			defer r.Close()
			if len(o.Cores) > 0 || o.LegacyProducer {
				if err := r.Prepare(ctx, !noInstall); err != nil {
					return err
				}
			}
			o.Progress = progress(cmd.ErrOrStderr(), "validating")
			res, err := engine.Validate(ctx, r, sc, o)
			if err != nil {
				// Rows already measured are not lost.
				if res != nil && len(res.Rows) > 0 {
					printValidate(cmd.OutOrStdout(), res)
				}
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), res)
			}
			printValidate(cmd.OutOrStdout(), res)
			return nil
		},
	}
	sf.register(cmd)
	cmd.Flags().IntSliceVar(&o.Branches, "branches", []int{4, 16, 64, 128}, fmt.Sprintf("fan-out widths (every fan-out takes the width; at most %d)", engine.MaxBranches))
	cmd.Flags().StringSliceVar(&o.Cores, "cores", []string{engine.Cores[0].Version, engine.Cores[1].Version}, "real @workflow/core versions to run (installed side by side by conformance/engine/package.json); --cores= runs simlab only")
	cmd.Flags().BoolVar(&o.LegacyProducer, "legacy-producer", false, "also run the first core with runContext stripped from every step message (a v1 producer)")
	cmd.Flags().IntVar(&o.Repetitions, "repetitions", 3, "real runs per (branches, core)")
	cmd.Flags().IntVar(&o.Seeds, "seeds", 20, "simlab seeds 1..N per (branches, prologue)")
	cmd.Flags().Float64Var(&o.TimeScale, "time-scale", 1, "multiply every latency of the scenario (store, queue, bodies) by K on both sides, so the real harness's own per-call CPU time is small against them")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 3*time.Minute, "longest one real run may take before it is stopped and reported")
	cmd.Flags().StringVar(&o.TraceDir, "trace-dir", "", "write each real run's spans to DIR as OTLP JSON Lines")
	cmd.Flags().StringVar(&dir, "engine-dir", "", "the conformance/engine directory (default: found from the working directory upwards)")
	cmd.Flags().BoolVar(&noInstall, "no-install", false, "do not install the pinned packages when they are missing; say what to run instead")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON (docs/VALIDATION.md)")
	cmd.Flags().StringVar(&o.SimWorld, "sim-world", engine.HarnessWorld, "the World whose rules and atomicity the simlab side applies, with the scenario's store model: "+engine.HarnessWorld+" (the real side's) or "+engine.SimWorldScenario+" (the scenario's own)")
	return cmd
}

func printValidate(w io.Writer, res *engine.Result) {
	fmt.Fprintf(w, "scenario %s · time scale ×%g · counts are per run (mean), lazy and concurrent per fan-out\n", res.Scenario, res.TimeScale)
	if res.SimWorld != "" {
		fmt.Fprintf(w, "simlab: %s's rules, %s atomicity, the store model of %s (real: world-local with the same store model imposed)\n", res.SimWorld, res.SimAtomicity, res.StoreProfile)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "BRANCHES\tENGINE\tCORE\tPROLOGUE\tN\tPROLOGUE READS\tLAZY/FAN-OUT\t(min..max)\tCONCURRENT LAST\tSTARTED ok\trejected\tDELIVERIES\tredelivered\tTTFS p50\tp90\tTTLS p50\tp90\tRUNS >1 END\tmax\tUNREADABLE\t")
	for _, r := range res.Rows {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%.1f\t%.2f\t%.2f..%.2f\t%.0f%%\t%.1f\t%.1f\t%.1f\t%.1f\t%.0f ms\t%.0f ms\t%.0f ms\t%.0f ms\t%d/%d\t%d\t%d\t\n",
			r.Branches, r.Engine, r.Core, r.Prologue, r.Repetitions, r.RunsGetPrologue, r.LazyPerFanout, r.LazyPerFanoutMin, r.LazyPerFanoutMax,
			100*r.ConcurrentLastCompleters, r.StepStartedAccepted, r.StepStartedRejected, r.Deliveries, r.Redeliveries,
			r.TTFSP50MS, r.TTFSP90MS, r.TTLSP50MS, r.TTLSP90MS, r.RunsMultiTerminal, r.RunsCounted, r.TerminalEventsMax, r.UnreadableRows)
	}
	tw.Flush()
	var spans, own []string
	for _, r := range res.Rows {
		if r.Engine == "real" && len(r.DispatchPrologue) > 0 {
			spans = append(spans, fmt.Sprintf("  %d branches, core %s: %v", r.Branches, r.Core, r.DispatchPrologue))
		}
		if r.Engine == "real" {
			own = append(own, fmt.Sprintf("  %d branches, core %s: p50 %.1f ms, p90 %.1f ms", r.Branches, r.Core, r.RealStoreP50MS, r.RealStoreP90MS))
		}
	}
	if len(own) > 0 {
		fmt.Fprintf(w, "\nthe real World's own time per events.create, on top of the scenario's latency:\n%s\n", strings.Join(own, "\n"))
	}
	if len(spans) > 0 {
		fmt.Fprintf(w, "\nworkflow.step.dispatch_prologue on the real spans (total over repetitions):\n%s\n", strings.Join(spans, "\n"))
	}
	printCorruption(w, res)
	fmt.Fprintf(w, "\nRUNS >1 END: runs whose log holds more than one accepted terminal run event, of the runs counted; max: the most in one run;\nUNREADABLE: run and step rows that could not be read back once the run was over (real: from the World; simlab: its history)\n")
}

// printCorruption sets each width's corruption counts side by side, real
// and simlab, one line per row: the table's last three columns, readable
// without its width.
func printCorruption(w io.Writer, res *engine.Result) {
	if len(res.Rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\ncorruption, real beside simlab (runs with >1 terminal event of runs counted, most in one run, unreadable rows):\n")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	last := -1
	for _, r := range res.Rows {
		lead := ""
		if r.Branches != last {
			lead = fmt.Sprintf("%d branches", r.Branches)
			last = r.Branches
		}
		who := r.Core
		if r.Engine == "simlab" {
			who = "simlab (" + r.World + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s %s\t%d/%d\tmax %d\tunreadable %d\n", lead, who, r.Prologue, r.RunsMultiTerminal, r.RunsCounted, r.TerminalEventsMax, r.UnreadableRows)
	}
	tw.Flush()
}

// signalContext ends on Ctrl-C, so the real engine's processes are killed
// (their process groups) and temp data removed on the way out.
func signalContext(parent context.Context) (context.Context, context.CancelFunc) {
	if parent == nil {
		parent = context.Background()
	}
	return signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
}
