package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/simlab/simlab/internal/npminstall"
	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/realengine"
	"github.com/simlab/simlab/realworld"
)

func newCalibrateCommand() *cobra.Command {
	var o realengine.CalibrateOptions
	var dir, write, worldName string
	var noInstall, asJSON bool
	cmd := &cobra.Command{
		Use:   "calibrate",
		Short: "Measure the real World's own cost per call kind under concurrency, for simlab's store model",
		Long: `Run the real @workflow/core over the real world-local at each width with no
injected latency, pool or fault, record every World call, and print per call
kind (runs.get, events.list, each events.create class, the queue's publish):
the World's own time per call (min, p50, p90, p99, max in ms), its
uncontended time (calls that met no other of their kind), the most and the
mean in the World at once, and the concurrency it served bursts with (the
busy-period throughput times the uncontended time: 1 for a World that serves
a kind one at a time).

It also times core's own workflow.replay.execute spans and fits what a
replay costs: a fixed part, a part per entity the workflow code mints and a
part per event of the log it loaded, on the replays that overlapped no other
in the harness's one Node process.

--write FILE saves the store model that follows (service times from the
uncontended calls, the read and write pools from the served concurrency, and
the replay's costs as workflow.replay_*) as a scenario file for simlab
validate --sim-store FILE.

--world world-postgres measures world-postgres instead, which no published
core runs on: a real PostgreSQL on 127.0.0.1 (started in a temp directory and
stopped by its pid), and the World driven alone (realworld/node), each
width's writes of one run issued at once, a kind at a time, then as many
events.list and runs.get: each kind's own time, the gaps between answers,
the order the writes were answered in and the concurrency served. --write
then saves each kind's time, the two pools and the write order.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(o.Branches) == 0 {
				return badInput(fmt.Errorf("--branches is empty: want at least one width"))
			}
			for _, b := range o.Branches {
				if b < 1 || b > realengine.MaxBranches {
					return badInput(fmt.Errorf("--branches %d: want 1..%d", b, realengine.MaxBranches))
				}
			}
			if o.Repetitions < 1 {
				return badInput(fmt.Errorf("--repetitions %d: want at least 1", o.Repetitions))
			}
			// The calibration takes minutes: a file it could not write
			// is refused before, not after (its model would be lost).
			if err := checkWritePath(write); err != nil {
				return badInput(fmt.Errorf("--write: %w", err))
			}
			switch worldName {
			case "world-local":
			case "world-postgres":
				if o.Core != "" || o.WorldLocal != "" {
					return badInput(fmt.Errorf("--core and --world-local choose the runtime and world-local release of a world-local calibration; --world world-postgres runs no runtime (none published runs on it)"))
				}
				return calibrateBursts(cmd, o, write, asJSON, noInstall)
			default:
				return badInput(fmt.Errorf("--world %q: want world-local (under the real runtime) or world-postgres (driven alone)", worldName))
			}
			if o.Core != "" {
				if _, err := realengine.CoreByVersion(o.Core); err != nil {
					return badInput(fmt.Errorf("--core: %w", err))
				}
			}
			if o.WorldLocal != "" {
				if _, err := realengine.Pinned.WorldLocal(o.WorldLocal); err != nil {
					return badInput(fmt.Errorf("--world-local: %w", err))
				}
			}
			ctx, interrupted, r, done, err := realEngine(cmd, dir, !noInstall)
			if err != nil {
				return err
			}
			defer done()
			start := time.Now()
			o.Progress = func(done int) {
				if progressHook != nil {
					progressHook(ctx, done)
				}
			}
			cal, err := realengine.Calibrate(ctx, r, o)
			if err != nil {
				// What was measured before is printed, not lost; a partial
				// calibration writes no model (--write).
				if cal != nil && len(cal.Rows) > 0 {
					if asJSON {
						_ = writeJSON(cmd.OutOrStdout(), cal)
					} else {
						printCalibration(cmd.OutOrStdout(), cal, time.Since(start))
					}
				}
				if ctx.Err() != nil {
					return interruptError(interrupted(), fmt.Sprintf("stopped while calibrating: %v", err))
				}
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if err := writeJSON(out, cal); err != nil {
					return err
				}
			} else {
				printCalibration(out, cal, time.Since(start))
			}
			if write != "" {
				command := "simlab calibrate " + strings.Join(os.Args[2:], " ")
				if err := os.WriteFile(write, []byte(cal.Profile().ScenarioYAML(cal, command)), 0o644); err != nil {
					return badInput(fmt.Errorf("--write: %w", userPathError(write, err)))
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "simlab: wrote the calibrated store model to %s\n", write)
			}
			return nil
		},
	}
	cmd.Flags().IntSliceVar(&o.Branches, "branches", []int{16, 48, 128}, "fan-out widths to burst the World at")
	cmd.Flags().IntVar(&o.Repetitions, "repetitions", 2, "real runs per width")
	cmd.Flags().StringVar(&o.Core, "core", "", "the @workflow/core version (default: the pinned default)")
	cmd.Flags().StringVar(&o.WorldLocal, "world-local", "", "the @workflow/world-local version (default: the pinned default)")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 3*time.Minute, "longest one real run may take")
	cmd.Flags().StringVar(&write, "write", "", "save the calibrated store model as a scenario file")
	cmd.Flags().StringVar(&dir, "engine-dir", "", "the realengine directory (default: found from the working directory upwards)")
	cmd.Flags().BoolVar(&noInstall, "no-install", false, "do not install the pinned packages when they are missing; say what to run instead")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the calibration as JSON")
	cmd.Flags().StringVar(&worldName, "world", "world-local", "the World to measure: world-local (under the real runtime) or world-postgres (driven alone, on a real PostgreSQL)")
	return cmd
}

// burstWorld is the world-postgres release calibrate --world world-postgres
// drives (realworld/node pins it).
const burstWorld = "wpg-b29"

// calibrateBursts measures world-postgres driven alone (realworld.Burst):
// PostgreSQL and the driver are started here and stopped, by pid, on every
// way out.
func calibrateBursts(cmd *cobra.Command, o realengine.CalibrateOptions, write string, asJSON, noInstall bool) (err error) {
	w, err := realworld.WorldByName(burstWorld)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "simlab-calibrate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// A signal is caught from here on, so every way out runs the deferred
	// stops below: npm, PostgreSQL and the driver are never left behind
	// (a Ctrl-C while PostgreSQL started killed simlab and left it).
	ctx, interrupted, release := onInterrupt(cmd.Context())
	defer release()
	stopped := func(while string) error {
		return interruptError(interrupted(), "stopped while "+while+"; nothing was measured")
	}
	if noInstall && (!realworld.Installed(realworld.NodeDir()) || npminstall.Unfinished(realworld.NodeDir())) {
		return fmt.Errorf("the pinned World packages are not installed in %s and --no-install is set: run npm install --no-save --legacy-peer-deps there, or drop --no-install", realworld.NodeDir())
	}
	if err := realworld.EnsurePackages(ctx, realworld.NodeDir(), filepath.Join(tmp, "npm")); err != nil {
		if ctx.Err() != nil {
			return stopped("installing the World packages")
		}
		return err
	}
	if progressHook != nil {
		progressHook(ctx, 0) // a test's moment "while PostgreSQL starts"
	}
	pg, err := realworld.StartPostgres()
	if err != nil {
		return fmt.Errorf("world-postgres needs a PostgreSQL: %w", err)
	}
	defer pg.Stop()
	if ctx.Err() != nil {
		return stopped("starting PostgreSQL")
	}
	if err := realworld.Migrate(pg, w.Name, tmp); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return stopped("migrating the database")
	}
	d, err := realworld.StartDriver(w.Name, tmp, "WORKFLOW_POSTGRES_URL="+pg.URL())
	if err != nil {
		return err
	}
	defer d.Close()
	if ctx.Err() != nil {
		return stopped("starting the driver")
	}
	start := time.Now()
	type result struct {
		cal *realworld.BurstCalibration
		err error
	}
	got := make(chan result, 1)
	go func() {
		cal, err := realworld.CalibrateBursts(d, o.Branches, o.Repetitions, 8)
		got <- result{cal, err}
	}()
	var cal *realworld.BurstCalibration
	select {
	case <-ctx.Done():
		_ = d.Close()
		<-got
		return interruptError(interrupted(), "stopped while bursting "+w.Package)
	case r := <-got:
		if r.err != nil {
			return fmt.Errorf("bursting %s: %w", w.Package, r.err)
		}
		cal = r.cal
	}
	out := cmd.OutOrStdout()
	if asJSON {
		if err := writeJSON(out, cal); err != nil {
			return err
		}
	} else {
		printBursts(out, w.Package, cal, time.Since(start))
	}
	if write != "" {
		command := "simlab calibrate " + strings.Join(os.Args[2:], " ")
		if err := os.WriteFile(write, []byte(cal.ScenarioYAML("world-postgres", command)), 0o644); err != nil {
			return badInput(fmt.Errorf("--write: %w", userPathError(write, err)))
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "simlab: wrote the calibrated store model to %s\n", write)
	}
	return nil
}

func printBursts(w io.Writer, pkg string, cal *realworld.BurstCalibration, took time.Duration) {
	fmt.Fprintf(w, "the real %s driven alone on PostgreSQL, a burst of one run's calls at a time, own time per call (ms) (%s)\n\n", pkg, took.Round(time.Second))
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "WRITES\tKIND\tCALLS\tOK\tP50\tP90\tMAX\tANSWER GAP P50\tA BURST'S SPAN\tOUT OF ORDER\tSERVED AT ONCE\t")
	for _, row := range append([]realworld.BurstRow{cal.Alone}, cal.Rows...) {
		for ki, k := range row.Kinds {
			fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.2f\t%.1f\t%.2f\t%.1f\t\n", row.Width, k.Kind, k.Calls, k.OK,
				realworld.Median(k.Own), realworld.PercentileMS(k.Own, 90), slices.Max(k.Own), realworld.Median(k.Gaps), k.MeanSpan(), k.Order.Share(), cal.Served(row, ki))
		}
	}
	tw.Flush()
	o := cal.Order()
	fmt.Fprintf(w, "\nstore model: each kind a lone call's time; writes %d at once, reads %d at once; %.2f of the overlapping writes (%d of %d pairs) answered out of arrival order\n",
		cal.WriteLimit(), cal.ReadLimit(), o.Share(), o.Reversed, o.Pairs)
}

func printCalibration(w io.Writer, cal *realengine.Calibration, took time.Duration) {
	fmt.Fprintf(w, "the real world-local %s under core %s, its own time per call (ms), no injected latency (%s)\n\n",
		cal.WorldLocal, cal.Core, took.Round(time.Second))
	if cal.Partial {
		fmt.Fprintln(w, "PARTIAL: stopped before every width ran all its repetitions; a width cut short is over the runs it finished")
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "BRANCHES\tKIND\tCALLS\tMIN\tP50\tP90\tP99\tMAX\tUNCONTENDED P50\tPEAK IN WORLD\tMEAN IN WORLD\tSERVED AT ONCE\t")
	for _, row := range cal.Rows {
		for _, k := range row.Kinds {
			fmt.Fprintf(tw, "%d\t%s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%d\t%.1f\t%.2f\t\n", row.Branches, k.Kind, k.Calls,
				k.Own.Min, k.Own.P50, k.Own.P90, k.Own.P99, k.Own.Max, k.Uncontended.P50, k.PeakInWorld, k.MeanInWorld, k.Served)
		}
		fmt.Fprintf(tw, "%d\tqueue → delivery\t\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t\t\t\t\t\n", row.Branches,
			row.DeliverMS.Min, row.DeliverMS.P50, row.DeliverMS.P90, row.DeliverMS.P99, row.DeliverMS.Max)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nwrites answered out of arrival order (of a run's writes in the World together, arrived >= 1 ms apart):\n")
	for _, row := range cal.Rows {
		o := row.WritesOutOfOrder
		fmt.Fprintf(w, "  %d branches: %.2f (%d of %d pairs)\n", row.Branches, o.Share(), o.Reversed, o.Pairs)
	}
	p := cal.Profile()
	fmt.Fprintf(w, "\nstore model (uncontended calls, fitted): runs.get p50 %.2f ms; events.list p50 %.2f ms + %.4f ms per logged event + %.4f ms per write of its run in the World; events.create p50 %.2f ms + %.4f ms per write of its run in the World (R² %.2f; on the log's length instead %.2f); pools: %d reads, %d writes at once%s\n",
		p.RunsGet.P50, p.EventsList.P50, p.ListPerEventMS, p.ListPerContenderMS, p.EventsWrite.P50, p.WritePerContenderMS, p.R2, p.R2Log, p.MaxConcurrentReads, p.MaxConcurrentWrites, orderNote(p.WriteOrder, p.OutOfOrder))
	rc := cal.Replay()
	fmt.Fprintf(w, "replay (core's workflow.replay.execute, fitted on the %d of %d replays that overlapped no other): %.3f ms + %.4f ms per entity minted + %.4f ms per event loaded (R² %.2f)",
		rc.Solo, rc.Samples, rc.BaseMS, rc.PerEntityMS, rc.PerEventMS, rc.R2)
	if len(rc.Unfitted) > 0 {
		fmt.Fprintf(w, "; %s held at 0: every solo replay had the same", strings.Join(rc.Unfitted, " and "))
	}
	if rc.OverlappedRatio > 0 {
		fmt.Fprintf(w, "; an overlapped replay took %.1f× its fit (median: replays share the harness's one Node process)", rc.OverlappedRatio)
	}
	fmt.Fprintln(w)
}

// orderNote says in which order the one write at a time is given out.
func orderNote(order string, share float64) string {
	switch order {
	case "":
		return ""
	case model.WriteOrderRandom:
		return fmt.Sprintf(", served in random order (%.2f of the overlapping writes answered out of arrival order)", share)
	}
	return fmt.Sprintf(", served in arrival order (%.2f answered out of it)", share)
}

// checkWritePath says why a file could not be written at path ("" is no
// file): a directory, a read-only file, or a directory that is missing or
// does not let a file be made in it (tried with a temporary one).
func checkWritePath(path string) error {
	if path == "" {
		return nil
	}
	if st, err := os.Stat(path); err == nil {
		switch {
		case st.IsDir():
			return fmt.Errorf("%s is a directory: name a file in it", path)
		case st.Mode().IsRegular() && !writable(path, st):
			return fmt.Errorf("%s is read-only (mode %v): make it writable (chmod u+w) or name another file", path, st.Mode().Perm())
		}
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".check*")
	if err != nil {
		return userPathError(path, err)
	}
	tmp.Close()
	return os.Remove(tmp.Name())
}
