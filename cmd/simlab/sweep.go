package main

import (
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/simlab/simlab/model/seeds"
	"github.com/simlab/simlab/model/sweep"
)

// parseShard reads --shard i/n; "" means the whole sweep (nil).
func parseShard(s string) (*sweep.Shard, error) {
	if s == "" {
		return nil, nil
	}
	sh, err := seeds.ParseShard(s)
	if err != nil {
		return nil, fmt.Errorf("--shard = %w", err)
	}
	return &sh, nil
}

func newSweepCommand() *cobra.Command {
	var sf scenarioFlags
	var branches []int
	var prologues []string
	var seeds, jobs int
	var shard, chart string
	var asJSON bool
	var sensitivity float64
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Measure TTFS, TTLS and runs.get contention across fan-out widths and prologues",
		Long: `Run the scenario at every fan-out width (--branches) with each step-dispatch
prologue (--prologue: legacy = the legacy-producers variant, a runs.get before
every claim; run_context = fetch-free) on seeds 1..N, and print one row per
(branches, prologue): TTFS and TTLS p50/p90, runs.get count and p50/p90
latency, reads and lazy reads per fan-out, and the share of fan-outs with
concurrent last completers. --json prints the contract of docs/SWEEP.md;
--chart writes TTLS p90 and runs.get p90 against branches (SVG or PNG).
--shard i/n runs every n-th cell and keeps its raw samples for simlab merge.
--sensitivity F says what the counts rest on: the sweep again with each
latency (store.runs_get, store.events_create, store.events_list,
store.publish, store.deliver, workflow.body) scaled by 1-F and 1+F, on the
same seeds, and how much lazy reads per fan-out and TTLS p50 move.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sc, err := sf.loadFanout("sweep")
			if err != nil {
				return err
			}
			sh, err := parseShard(shard)
			if err != nil {
				return badInput(err)
			}
			if err := checkChartPath(chart); err != nil {
				return badInput(err)
			}
			if err := checkJobs(jobs); err != nil {
				return err
			}
			ctx, interrupted, release := onInterrupt(cmd.Context())
			defer release()
			opts := sweep.Options{Branches: branches, Prologues: prologues, Seeds: seeds, Shard: sh, Each: parallel(jobs),
				Stop: func() bool { return ctx.Err() != nil }}
			bar := progress(cmd.ErrOrStderr(), "sweeping cells")
			opts.Progress = func(done, total int) {
				if bar != nil {
					bar(done, total)
				}
				if progressHook != nil {
					progressHook(ctx, done)
				}
			}
			if cmd.Flags().Changed("sensitivity") {
				if chart != "" || sh != nil {
					return badInput(fmt.Errorf("--sensitivity runs whole sweeps and prints a table: it takes neither --chart nor --shard"))
				}
				sens, err := sweep.RunSensitivity(sc, opts, sensitivity)
				if err != nil {
					return badInput(err)
				}
				if asJSON {
					if err := writeJSON(cmd.OutOrStdout(), sens); err != nil {
						return err
					}
				} else {
					printSensitivity(cmd.OutOrStdout(), sens)
				}
				if sens.Partial {
					return interruptError(interrupted(), "the rows cover the knobs that ran")
				}
				return nil
			}
			res, err := sweep.Run(sc, opts)
			if err != nil {
				// Run checks the grid and every cell's scenario before it
				// simulates anything, so what it refuses is the input.
				return badInput(err)
			}
			if err := writeSweep(cmd.OutOrStdout(), res, asJSON, chart); err != nil {
				return err
			}
			if res.Partial {
				return interruptError(interrupted(), "the rows cover the cells that ran (SEEDS says how many per row)")
			}
			return nil
		},
	}
	sf.register(cmd)
	// The sweep exists for the durabench calibration; a plain default of
	// fanout would measure a world-local store with no contention at all.
	if f := cmd.Flags().Lookup("scenario"); f != nil {
		f.DefValue = "durabench-256"
		_ = f.Value.Set(f.DefValue)
	}
	cmd.Flags().IntSliceVar(&branches, "branches", []int{16, 64, 128, 256}, "fan-out widths to sweep (every fan-out of the workflow takes the width)")
	cmd.Flags().StringSliceVar(&prologues, "prologue", []string{sweep.Legacy, sweep.RunContext}, "prologues to compare: legacy (variant legacy-producers) and/or run_context")
	cmd.Flags().IntVar(&seeds, "seeds", 10, "seeds 1..N per (branches, prologue)")
	cmd.Flags().StringVar(&shard, "shard", "", "run only shard i of n (i/n) of the (branches, prologue, seed) cells; combine with simlab merge")
	registerJobs(cmd, &jobs, "simulations run at once")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON (docs/SWEEP.md)")
	cmd.Flags().StringVar(&chart, "chart", "", "write a chart of TTLS p90 and runs.get p90 against branches to FILE (.svg or .png)")
	cmd.Flags().Float64Var(&sensitivity, "sensitivity", 0.2, "print how much each latency knob, scaled by 1-F and 1+F, moves lazy reads per fan-out and TTLS p50 (F in (0, 0.9])")
	return cmd
}

// printSensitivity prints the base rows, then per knob and factor how the
// figures moved.
func printSensitivity(w io.Writer, s *sweep.Sensitivity) {
	fmt.Fprintf(w, "scenario %s · seeds 1..%d · every knob scaled by ×%g and ×%g, one at a time, on the same seeds\n", s.Scenario, s.Seeds, 1-s.Change, 1+s.Change)
	if s.Partial {
		fmt.Fprintf(w, "PARTIAL: interrupted; the rows cover the knobs that ran\n")
	}
	fmt.Fprintln(w)
	change := func(c *float64) string {
		if c == nil {
			return "from 0"
		}
		return fmt.Sprintf("%+.0f%%", 100**c)
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "KNOB\tFACTOR\tBRANCHES\tPROLOGUE\tLAZY/FAN-OUT\tΔ\tTTLS p50\tΔ\t")
	for _, r := range s.Base {
		fmt.Fprintf(tw, "(base)\t×1\t%d\t%s\t%.2f\t\t%.0f ms\t\t\n", r.Branches, r.Prologue, r.LazyPerFanout, r.TTLSP50MS)
	}
	for _, r := range s.Rows {
		fmt.Fprintf(tw, "%s\t×%g\t%d\t%s\t%.2f\t%s\t%.0f ms\t%s\t\n", r.Knob, r.Factor, r.Branches, r.Prologue, r.LazyPerFanout, change(r.LazyChange), r.TTLSP50MS, change(r.TTLSP50Change))
	}
	tw.Flush()
}

// writeSweep prints a sweep result as a table or JSON and draws its chart.
func writeSweep(out io.Writer, res *sweep.Result, asJSON bool, chart string) error {
	if chart != "" {
		if err := writeChart(chart, res); err != nil {
			return fmt.Errorf("--chart %s: %w", chart, err)
		}
	}
	if asJSON {
		// The one encoding of every --json output (writeJSON): merge's
		// output must be byte-identical to an unsharded run's.
		return writeJSON(out, res)
	}
	printSweep(out, res)
	return nil
}

func printSweep(w io.Writer, res *sweep.Result) {
	variants := "none"
	if len(res.Variants) > 0 {
		variants = strings.Join(res.Variants, ",")
	}
	fmt.Fprintf(w, "scenario %s · variants: %s · seeds 1..%d · runs.get uncontended p50 %g ms\n", res.Scenario, variants, res.Seeds, res.RunsGetBaseP50MS)
	if res.Partial {
		fmt.Fprintf(w, "PARTIAL: interrupted before every cell ran; each row is over the seeds in its SEEDS column\n")
	}
	if res.Shard != nil {
		fmt.Fprintf(w, "shard %d/%d: rows cover this shard's cells only; combine the shards' --json with simlab merge\n", res.Shard.Index, res.Shard.Count)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "BRANCHES\tPROLOGUE\tSEEDS\tTTFS p50\tp90\tTTLS p50\tp90\tRUNS.GET\tp50\tp90\tREADS/FAN-OUT\tLAZY/FAN-OUT\tCONCURRENT LAST\t")
	for _, r := range res.Rows {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%.0f ms\t%.0f ms\t%.0f ms\t%.0f ms\t%d\t%.0f ms\t%.0f ms\t%.1f\t%.1f\t%.0f%%\t\n",
			r.Branches, r.Prologue, r.Seeds, r.TTFSP50MS, r.TTFSP90MS, r.TTLSP50MS, r.TTLSP90MS,
			r.RunsGetCount, r.RunsGetP50MS, r.RunsGetP90MS, r.ReadsPerFanout, r.LazyPerFanout, 100*r.ConcurrentLastCompleters)
	}
	tw.Flush()
	for _, r := range res.Rows {
		if r.Undrained > 0 {
			fmt.Fprintf(w, "UNDRAINED: %d branches, %s: %d of %d runs stopped at a limit (limits.max_time or limits.max_events) with work left; the row counts only what happened before (raise the limit with --set)\n",
				r.Branches, r.Prologue, r.Undrained, r.Seeds)
		}
	}
}

// checkChartPath refuses a chart format before any simulation runs.
func checkChartPath(path string) error {
	if path == "" {
		return nil
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg", ".png":
		return nil
	}
	return fmt.Errorf("--chart %s: want a file ending in .svg or .png", path)
}

// writeChart draws two panels side by side: TTLS p90 and runs.get p90
// against branches, one line per prologue, so the legacy cliff and the read
// amplification behind it are seen together.
func writeChart(path string, res *sweep.Result) error {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	ttls := newPanel("time to last step (p90)", "TTLS p90 (ms)")
	gets := newPanel("runs.get latency (p90)", "runs.get p90 (ms)")
	colors := []color.Color{color.RGBA{R: 200, G: 60, B: 40, A: 255}, color.RGBA{R: 40, G: 100, B: 200, A: 255}}
	for i, pro := range res.Prologues {
		var a, b plotter.XYs
		for _, r := range res.Rows {
			if r.Prologue == pro {
				a = append(a, plotter.XY{X: float64(r.Branches), Y: r.TTLSP90MS})
				b = append(b, plotter.XY{X: float64(r.Branches), Y: r.RunsGetP90MS})
			}
		}
		// Rows come in the --branches order, which need not be sorted.
		byX := func(p, q plotter.XY) int { return int(p.X - q.X) }
		slices.SortFunc(a, byX)
		slices.SortFunc(b, byX)
		for _, pl := range []struct {
			p   *plot.Plot
			xys plotter.XYs
		}{{ttls, a}, {gets, b}} {
			if len(pl.xys) == 0 {
				continue
			}
			line, points, err := plotter.NewLinePoints(pl.xys)
			if err != nil {
				return err
			}
			line.Color = colors[i%len(colors)]
			line.Width = vg.Points(1.5)
			points.Color = line.Color
			pl.p.Add(line, points)
			pl.p.Legend.Add(pro, line, points)
		}
	}
	if len(res.Rows) > 0 {
		// The calibration's uncontended read, to read the p90 against.
		lo, hi := float64(res.Rows[0].Branches), float64(res.Rows[0].Branches)
		for _, r := range res.Rows {
			lo, hi = min(lo, float64(r.Branches)), max(hi, float64(r.Branches))
		}
		base, err := plotter.NewLine(plotter.XYs{{X: lo, Y: res.RunsGetBaseP50MS}, {X: hi, Y: res.RunsGetBaseP50MS}})
		if err != nil {
			return err
		}
		base.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		base.Color = color.Gray{Y: 120}
		gets.Add(base)
		gets.Legend.Add("uncontended p50", base)
	}
	const w, h = 9 * vg.Inch, 4 * vg.Inch
	c, err := draw.NewFormattedCanvas(w, h, format)
	if err != nil {
		return err
	}
	plots := [][]*plot.Plot{{ttls, gets}}
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Points(20), PadTop: vg.Points(8), PadBottom: vg.Points(8), PadLeft: vg.Points(8), PadRight: vg.Points(8)}
	canvases := plot.Align(plots, tiles, draw.New(c))
	ttls.Draw(canvases[0][0])
	gets.Draw(canvases[0][1])
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func newPanel(title, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "branches"
	p.Y.Label.Text = ylabel
	p.Y.Min = 0
	p.Legend.Top = true
	p.Legend.Left = true
	p.Y.Tick.Marker = plainTicks{}
	p.Add(plotter.NewGrid())
	return p
}

// plainTicks are gonum's default ticks labelled without trailing zeros
// (2500, not 2500.00).
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'f', -1, 64)
		}
	}
	return ticks
}
