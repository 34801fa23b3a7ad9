package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/simlab/simlab/model/seeds"
	"github.com/simlab/simlab/properties"
)

// parseSeeds turns --seeds, --seed-range and --shard into the check's seeds
// and the shard of them this process checks: the list split evenly by
// position, so n shards of one check together check every seed exactly
// once. The list is never expanded: a check streams its seeds.
func parseSeeds(count int, rng, shard string) (seeds.List, seeds.Shard, error) {
	var list seeds.List
	if rng == "" {
		if count < 1 {
			return list, seeds.Shard{}, fmt.Errorf("--seeds = %d: want at least 1", count)
		}
		list = seeds.Count(uint64(count))
	} else {
		var err error
		if list, err = seeds.ParseList(rng); err != nil {
			return list, seeds.Shard{}, fmt.Errorf("--seed-range = %w", err)
		}
	}
	sh, err := seeds.ParseShard(shard)
	if err != nil {
		return list, sh, fmt.Errorf("--shard = %w", err)
	}
	return list, sh, nil
}

func newCheckCommand() *cobra.Command {
	var sf scenarioFlags
	var seeds, jobs int
	var seedRange, shard, schedules string
	var asJSON bool
	var tf judgeFlags
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check every property over many seeds; print a replayable counterexample per violated property",
		Long: `Run the scenario on every seed and check every property (see simlab properties).
Exit 0 when everything holds, 1 when a property is violated or a declared
outcome never happened (coverage), 2 on bad input.

With --trace FILE.jsonl (or --jaeger URL --service S), judge recorded spans
instead: simlab's own export or a real engine's trace. Every property that
spans can judge gets a verdict; the others are listed with the reason.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := tf.refuse(cmd); err != nil {
				return badInput(err)
			}
			if tf.set() {
				return checkTrace(cmd, &tf, asJSON)
			}
			sc, err := sf.load()
			if err != nil {
				return err
			}
			if seedRange != "" && cmd.Flags().Changed("seeds") {
				return badInput(fmt.Errorf("--seeds %d and --seed-range %s both choose the seeds: give one", seeds, seedRange))
			}
			list, shardOf, err := parseSeeds(seeds, seedRange, shard)
			if err != nil {
				return badInput(err)
			}
			if err := checkJobs(jobs); err != nil {
				return err
			}
			cfg := properties.SweepConfig{Scenario: sc, Seeds: list, Shard: shardOf, Props: properties.All(),
				Spec: sf.spec, Each: parallel(jobs)}
			if schedules == "" {
				// Made when the first schedule is saved (properties.Sweep).
				// Without a cache directory the check runs all the same:
				// a counterexample is reported, only not saved.
				cfg.ScheduleDir, cfg.ScheduleDirErr = defaultScheduleDir()
			} else if err := os.MkdirAll(schedules, 0o755); err != nil {
				// A directory the user named is checked before anything runs.
				return badInput(fmt.Errorf("--schedules: cannot create the directory %w", userPathError(schedules, err)))
			} else {
				cfg.ScheduleDir = schedules
			}
			ctx, interrupted, release := onInterrupt(cmd.Context())
			defer release()
			cfg.Stop = func() bool { return ctx.Err() != nil }
			total := shardOf.Len(list)
			bar := progress(cmd.ErrOrStderr(), "checking seeds")
			cfg.Progress = func(done int) {
				if bar != nil {
					bar(done, int(min(total, math.MaxInt32)))
				}
				if progressHook != nil {
					progressHook(ctx, done)
				}
			}
			rep, err := properties.Sweep(cfg)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if err := writeJSON(out, rep); err != nil {
					return err
				}
			} else {
				printReport(out, rep, total)
			}
			warnUnsavedSchedules(cmd.ErrOrStderr(), rep)
			if rep.Partial {
				return interruptError(interrupted(), fmt.Sprintf("%d of %d seeds checked; the report covers those only", rep.Seeds, total))
			}
			if rep.Failed() {
				return &exitError{code: 1, err: fmt.Errorf("check failed")}
			}
			return nil
		},
	}
	sf.register(cmd)
	cmd.Flags().IntVar(&seeds, "seeds", 100, "check seeds 1..N")
	cmd.Flags().StringVar(&seedRange, "seed-range", "", "check these seeds instead: A..B (inclusive), N, or a list such as 1..100,250")
	cmd.Flags().StringVar(&shard, "shard", "", "check only shard i of n (i/n): seeds split evenly by position")
	cmd.Flags().StringVar(&schedules, "schedules", "", "directory for minimized counterexample schedules (default: simlab/schedules in the user's cache directory, $XDG_CACHE_HOME or else ~/.cache)")
	registerJobs(cmd, &jobs, "seeds checked at once")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	tf.register(cmd)
	return cmd
}

// defaultScheduleDir is where check saves schedules unless --schedules says
// otherwise: the user's own cache, not a /tmp directory every user of the
// machine shares (and may not be able to write to after another created it).
func defaultScheduleDir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for schedules (%v): name one with --schedules DIR", err)
	}
	return filepath.Join(cache, "simlab", "schedules"), nil
}

// progressHook, when set (by a test), is told after each seed a check
// checks (or cell a sweep runs) how many are done, with the context the
// command's interrupt ends; in the product it is nil. It may be called
// from several goroutines.
var progressHook func(ctx context.Context, done int)

// warnUnsavedSchedules says, on stderr, which counterexamples' schedules
// could not be saved and why: the report already holds them, so nothing
// is lost but the file.
func warnUnsavedSchedules(w io.Writer, rep *properties.Report) {
	for _, name := range properties.Names() {
		if f := rep.First[name]; f != nil && f.ScheduleError != "" {
			fmt.Fprintf(w, "simlab: warning: the minimized schedule of %s (seed %d) was not saved: %s; the seed replays it: %s\n",
				name, f.Seed, f.ScheduleError, f.Replay)
		}
	}
}

func printReport(w io.Writer, rep *properties.Report, total uint64) {
	variants := "none"
	if len(rep.Variants) > 0 {
		variants = strings.Join(rep.Variants, ",")
	}
	fmt.Fprintf(w, "scenario %s · variants: %s · %d seeds\n", rep.Scenario, variants, rep.Seeds)
	if rep.Partial {
		fmt.Fprintf(w, "PARTIAL: interrupted after %d of %d seeds; every verdict below is over those seeds only\n", rep.Seeds, total)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROPERTY\tVERDICT")
	for _, name := range properties.Names() {
		n := rep.Violations[name]
		verdict := "holds"
		if n > 0 {
			verdict = fmt.Sprintf("VIOLATED in %d of %d runs", n, rep.Seeds)
		}
		fmt.Fprintf(tw, "%s\t%s\n", name, verdict)
	}
	tw.Flush()
	for _, name := range properties.Names() {
		f := rep.First[name]
		if f == nil {
			continue
		}
		fmt.Fprintf(w, "\nfirst counterexample (seed %d):\n%s\nreplay: %s\n", f.Seed, strings.Join(f.Story, "\n"), f.Replay)
		if f.ScheduleError != "" {
			fmt.Fprintf(w, "schedule not saved: %s\n", f.ScheduleError)
		}
	}
	var cov []string
	for _, k := range slices.Sorted(maps.Keys(rep.Coverage)) {
		cov = append(cov, fmt.Sprintf("%s=%d", k, rep.Coverage[k]))
	}
	fmt.Fprintf(w, "\ncoverage: %s\n", strings.Join(cov, " "))
	if len(rep.Missing) > 0 {
		fmt.Fprintf(w, "coverage FAILED: never happened: %s\n", strings.Join(rep.Missing, ", "))
	}
}

func newReplayCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Replay a saved schedule (scenario + recorded choices) to the same history",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := loadSchedule(args[0])
			if err != nil {
				return badInput(err)
			}
			res, rep, err := s.Replay()
			if err != nil {
				return badInput(err)
			}
			out := cmd.OutOrStdout()
			got := fmt.Sprintf("%016x", res.History.Hash)
			all := properties.Check(res.History, properties.All())
			// The verdict is the saved property's: violated again (exit 1)
			// or now holding (exit 0). A schedule saved without one is
			// judged by every property.
			var saved []properties.Violation
			for _, v := range all {
				if s.Property == "" || v.Property == s.Property {
					saved = append(saved, v)
				}
			}
			name := s.Property
			if name == "" {
				name = "every property"
			}
			verdict := "holds"
			if len(saved) > 0 {
				verdict = "violated"
			}
			changed := s.HistoryHash != "" && got != s.HistoryHash
			if asJSON {
				if err := writeJSON(out, struct {
					HistoryHash  string                 `json:"history_hash"`
					Saved        string                 `json:"saved_history_hash"`
					Mismatches   int                    `json:"choice_mismatches"`
					Property     string                 `json:"property"`
					Verdict      string                 `json:"verdict"`
					ModelChanged bool                   `json:"model_changed"`
					Violations   []properties.Violation `json:"violations"`
				}{got, s.HistoryHash, rep.Mismatches, s.Property, verdict, changed, all}); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(out, "replayed %s: history %s (saved %s), %d recorded choices, %d mismatches\n",
					args[0], got, s.HistoryHash, len(s.Choices), rep.Mismatches)
				if changed {
					fmt.Fprintf(out, "the history differs from the saved one: the model or the schedule changed since it was saved\n")
				}
				for _, v := range all {
					fmt.Fprintln(out, strings.Join(properties.Story(v), "\n"))
				}
			}
			if verdict == "violated" {
				return &exitError{code: 1, err: fmt.Errorf("%s is violated again (%d violations)", name, len(saved))}
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "simlab: %s now holds on this schedule\n", name)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the replay as JSON")
	return cmd
}

func newPropertiesCommand() *cobra.Command {
	return newListCommand("properties", "List the properties simlab checks", func() (rows [][2]string) {
		for _, p := range properties.All() {
			rows = append(rows, [2]string{p.Name, p.Desc})
		}
		return rows
	})
}
