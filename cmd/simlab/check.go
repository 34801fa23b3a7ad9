package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/simlab/simlab/check"
	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/seeds"
	"github.com/simlab/simlab/properties"
	"github.com/simlab/simlab/realengine"
	"github.com/simlab/simlab/report"
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

// untilStableSeeds bounds a check --until-stable given no --seeds.
const untilStableSeeds = 100000

// seedsText writes seeds in the grammar --seed-range reads.
func seedsText(list []uint64) string { return seeds.Format(list) }

// maxListedSeeds bounds the seeds a check lists one by one, which a
// baseline and --diff do (each names its seeds); the rest of check streams
// them.
const maxListedSeeds = 1_000_000

// listSeeds lists the shard's seeds, in order, refusing more than
// maxListedSeeds for what needs them listed.
func listSeeds(list seeds.List, sh seeds.Shard, what string) ([]uint64, error) {
	if n := sh.Len(list); n > maxListedSeeds {
		return nil, fmt.Errorf("%s checks at most %d seeds one by one, and these are %d: give fewer with --seeds or --seed-range", what, maxListedSeeds, n)
	}
	return slices.Collect(list.Seeds(sh)), nil
}

func newCheckCommand() *cobra.Command {
	var sf scenarioFlags
	var seeds, jobs, untilStable int
	var seedRange, shard, schedules, baseline, writeBaseline, engineDir string
	var asJSON, diff, reproduce bool
	var junitFile, reportFile string
	var baseSets, baseVariants []string
	var tf judgeFlags
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check every property over many seeds; print a replayable counterexample per violated property",
		Long: `Run the scenario on every seed and check every property (see simlab properties).
Exit 0 when everything holds, 1 when a property is violated or a declared
outcome never happened (coverage), 2 on bad input.

With --trace FILE.jsonl (or --jaeger URL --service S), judge recorded spans
instead: simlab's own export or a real engine's trace. Every property that
spans can judge gets a verdict; the others are listed with the reason.

A scenario whose workflow.program is a program (a race, sleep, if, loop or
pool: docs/SCENARIOS.md) runs as the runtime replays it (model/flow), and
each run's spans are judged with --trace's rules; a counterexample is
shrunk to a smaller program and saved as a scenario file that
simlab run --scenario FILE --seed N replays.`,
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
			if untilStable < 0 || untilStable == 0 && cmd.Flags().Changed("until-stable") {
				return badInput(fmt.Errorf("--until-stable = %d: want a number of seeds, at least 1", untilStable))
			}
			if seedRange != "" && cmd.Flags().Changed("seeds") {
				return badInput(fmt.Errorf("--seeds %d and --seed-range %s both choose the seeds: give one", seeds, seedRange))
			}
			if untilStable > 0 && !cmd.Flags().Changed("seeds") && seedRange == "" {
				seeds = untilStableSeeds // --until-stable decides when to stop
			}
			list, shardOf, err := parseSeeds(seeds, seedRange, shard)
			if err != nil {
				return badInput(err)
			}
			if err := checkJobs(jobs); err != nil {
				return err
			}
			cfg := check.SweepConfig{Scenario: sc, Seeds: list, Shard: shardOf, Props: properties.All(),
				Spec: sf.spec, Each: parallel(jobs), UntilStable: untilStable}
			if schedules == "" {
				// Made when the first schedule is saved (check.Sweep).
				// Without a cache directory the check runs all the same:
				// a counterexample is reported, only not saved.
				cfg.ScheduleDir, cfg.ScheduleDirErr = defaultScheduleDir()
			} else if err := os.MkdirAll(schedules, 0o755); err != nil {
				// A directory the user named is checked before anything runs.
				return badInput(fmt.Errorf("--schedules: cannot create the directory %w", userPathError(schedules, err)))
			} else {
				cfg.ScheduleDir = schedules
			}
			if sc.IsProgram() {
				// A program's runs are judged on their spans; these flags
				// need a fan-out run's History or its schedule.
				for _, f := range []struct {
					set  bool
					flag string
					why  string
				}{
					{diff || len(baseSets) > 0 || len(baseVariants) > 0, "--diff", "compares two fan-out configurations seed by seed"},
					{reportFile != "", "--report", "draws a fan-out run's waterfall from its schedule"},
				} {
					if f.set {
						return badInput(fmt.Errorf("%s %s: scenario %s is a program, judged on each run's spans", f.flag, f.why, sc.Name))
					}
				}
				if reproduce {
					if err := realengine.Forceable(sc); err != nil {
						return badInput(fmt.Errorf("--reproduce: scenario %s is a program whose runs the real core cannot be held to: %w", sc.Name, err))
					}
				}
			}
			total := shardOf.Len(list)
			if reproduce && (diff || len(baseSets) > 0 || len(baseVariants) > 0 || writeBaseline != "") {
				return badInput(fmt.Errorf("--reproduce forces a check's saved counterexamples on the real engine: --diff and --write-baseline save none it can take"))
			}
			if diff || len(baseSets) > 0 || len(baseVariants) > 0 {
				if baseline != "" || writeBaseline != "" {
					return badInput(fmt.Errorf("--diff compares a change with its base seed by seed: --baseline and --write-baseline do not apply"))
				}
				checked, err := listSeeds(list, shardOf, "--diff")
				if err != nil {
					return badInput(err)
				}
				return checkDiff(cmd, sc, sf.spec, model.Spec{Scenario: sf.spec.Scenario, Sets: baseSets, Variants: baseVariants},
					checked, cfg.ScheduleDir, jobs, asJSON, ciFiles{junitFile, reportFile})
			}
			var known *check.Baseline
			if baseline != "" {
				if writeBaseline != "" {
					return badInput(fmt.Errorf("--baseline and --write-baseline: give one (write the baseline, then check against it)"))
				}
				if known, err = check.LoadBaseline(baseline); err != nil {
					return badInput(err)
				}
				cfg.Known = known.Knower(sf.spec.Scenario, sf.spec.Sets, sf.spec.Variants)
			}
			var writing *check.Baseline
			if writeBaseline != "" {
				if writing, err = check.LoadBaselineOrEmpty(writeBaseline); err != nil {
					return badInput(err)
				}
				// Known findings need no minimized schedule.
				cfg.ScheduleDir, cfg.ScheduleDirErr = "", nil
			}
			if known != nil || writing != nil {
				// A baseline names its seeds one by one: bounded here.
				if _, err := listSeeds(list, shardOf, "a baseline"); err != nil {
					return badInput(err)
				}
			}
			ctx, interrupted, release := onInterrupt(cmd.Context())
			defer release()
			cfg.Stop = func() bool { return ctx.Err() != nil }
			bar := progress(cmd.ErrOrStderr(), "checking seeds")
			cfg.Progress = func(done int) {
				if bar != nil {
					bar(done, int(min(total, math.MaxInt32)))
				}
				if progressHook != nil {
					progressHook(ctx, done)
				}
			}
			rep, err := check.Sweep(cfg)
			if err != nil {
				return err
			}
			// The seeds the report covers: every seed of the shard up to
			// the last checked (a check stops early only when interrupted
			// or, with --until-stable, when its coverage was stable).
			checked := func() []uint64 {
				l, _ := listSeeds(list, shardOf, "")
				return l[:min(len(l), rep.Seeds)]
			}
			if known != nil {
				if err := known.Judge(baseline, sf.spec.Scenario, sf.spec.Sets, sf.spec.Variants, checked(), rep); err != nil {
					return err
				}
			}
			out := cmd.OutOrStdout()
			if err := (ciFiles{junitFile, reportFile}).write(report.FromReport(check.EntryName(sf.spec.Scenario, sf.spec.Sets, sf.spec.Variants), rep)); err != nil {
				return err
			}
			if writing != nil && !rep.Partial {
				if err := writing.Record(sf.spec.Scenario, sf.spec.Sets, sf.spec.Variants, checked(), rep); err != nil {
					return err
				}
				if err := writing.Save(writeBaseline); err != nil {
					return badInput(err)
				}
				n := 0
				for _, s := range rep.ViolatingSeeds {
					if s != "" {
						n++
					}
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "simlab: wrote %d known findings of %s on seeds %s to %s\n",
					n, check.EntryName(sf.spec.Scenario, sf.spec.Sets, sf.spec.Variants), seedsText(checked()), writeBaseline)
				if asJSON {
					return writeJSON(out, rep)
				}
				printReport(out, rep, total)
				return nil
			}
			if reproduce {
				if rep.Partial {
					return interruptError(interrupted(), fmt.Sprintf("%d of %d seeds checked; nothing was reproduced", rep.Seeds, total))
				}
				// The check's report is printed whatever the real side
				// does: a reproduction that cannot run loses nothing.
				if !asJSON {
					printReport(out, rep, total)
				}
				repros, rerr := reproduceFirsts(ctx, cmd, rep, engineDir)
				if asJSON {
					if err := writeJSON(out, struct {
						Report       *check.Report       `json:"report"`
						Reproduction []firstReproduction `json:"reproductions"`
					}{rep, repros}); err != nil {
						return err
					}
				} else if rerr == nil || len(repros) > 0 {
					printFirstReproductions(out, repros)
				}
				if rerr != nil {
					if ctx.Err() != nil {
						return interruptError(interrupted(), fmt.Sprintf("stopped while reproducing: %v", rerr))
					}
					return rerr
				}
			} else if asJSON {
				if err := writeJSON(out, rep); err != nil {
					return err
				}
			} else {
				printReport(out, rep, total)
			}
			warnUnsavedSchedules(cmd.ErrOrStderr(), rep)
			if rep.Partial {
				what := "the report covers those only"
				if writing != nil {
					what += "; the baseline was not written"
				}
				return interruptError(interrupted(), fmt.Sprintf("%d of %d seeds checked; %s", rep.Seeds, total, what))
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
	cmd.Flags().StringVar(&baseline, "baseline", "", "judge violations against the known findings in FILE: exit 0 when every one is known, 1 naming the new (property, seeds); notes a known finding that no longer happens")
	cmd.Flags().StringVar(&writeBaseline, "write-baseline", "", "record this check's violations as the known findings of its scenario, --set knobs and variants in FILE (made or updated; other entries kept), and exit 0")
	cmd.Flags().StringVar(&junitFile, "junit", "", "also write the verdicts as JUnit XML to FILE: a testcase per scenario × property, a failure carrying the story, the replay command and the schedule file")
	cmd.Flags().StringVar(&reportFile, "report", "", "also write one self-contained HTML page to FILE.html: per violated property the story, a waterfall of the shrunk counterexample on virtual time and the replay command")
	cmd.Flags().IntVar(&untilStable, "until-stable", 0, "stop once every declared outcome has happened and the coverage (outcomes; for swarm its features and their pairs) has not grown for N seeds, and say which signal stopped it; --seeds or --seed-range bounds it (default 100000 seeds)")
	cmd.Flags().BoolVar(&reproduce, "reproduce", false, "then force each violated property's first counterexample (its saved schedule; a program's shrunk replayable-log file, once) on the real @workflow/core over world-local, as simlab reproduce does, and print each verdict; the exit code stays the check's")
	cmd.Flags().StringVar(&engineDir, "engine-dir", "", "with --reproduce: the realengine directory (default: found from the working directory upwards)")
	cmd.Flags().BoolVar(&diff, "diff", false, "differential check: compare the scenario with its --set and --variant flags (the change) against the same scenario without them (or with --base-set/--base-variant) seed by seed; report only what fails with the change and holds without it (and the reverse, as fixed)")
	cmd.Flags().StringArrayVar(&baseSets, "base-set", nil, "with --diff (implied): a --set of the base configuration (repeatable)")
	cmd.Flags().StringArrayVar(&baseVariants, "base-variant", nil, "with --diff (implied): a variant of the base configuration (repeatable)")
	tf.register(cmd)
	return cmd
}

// ciFiles are the files a CI reads besides the exit code.
type ciFiles struct{ junit, html string }

func (f ciFiles) write(c report.Check) error {
	write := func(path string, do func(w io.Writer) error) error {
		if path == "" {
			return nil
		}
		var b bytes.Buffer
		if err := do(&b); err != nil {
			return err
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			return badInput(fmt.Errorf("cannot write %w", userPathError(path, err)))
		}
		return nil
	}
	if err := write(f.junit, func(w io.Writer) error { return report.JUnit(w, c) }); err != nil {
		return err
	}
	return write(f.html, func(w io.Writer) error { return report.HTML(w, report.NewPage(c)) })
}

// checkDiff is check --diff: the change against its base, seed by seed.
func checkDiff(cmd *cobra.Command, change model.Scenario, changeSpec, baseSpec model.Spec, list []uint64, schedules string, jobs int, asJSON bool, ci ciFiles) error {
	base, err := baseSpec.Load()
	if err != nil {
		return badInput(fmt.Errorf("the base configuration: %w", err))
	}
	if reflect.DeepEqual(change, base) {
		return badInput(fmt.Errorf("--diff: the change and the base are the same configuration (%s): give the change as --variant/--set, or the base as --base-variant/--base-set",
			check.EntryName(changeSpec.Scenario, changeSpec.Sets, changeSpec.Variants)))
	}
	cfg := check.DiffConfig{Change: change, Base: base, Seeds: list, Props: properties.All(),
		ChangeSpec: changeSpec, BaseSpec: baseSpec, ScheduleDir: schedules, Each: parallel(jobs)}
	if bar := progress(cmd.ErrOrStderr(), "checking seeds with and without the change"); bar != nil {
		cfg.Progress = func(done int) { bar(done, len(list)) }
	}
	rep, err := check.DiffSweep(cfg)
	if err != nil {
		return err
	}
	if err := ci.write(report.FromDiff(rep.Change+" against "+rep.Base, rep)); err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if asJSON {
		if err := writeJSON(out, rep); err != nil {
			return err
		}
	} else {
		printDiffReport(out, rep)
	}
	if rep.Failed() {
		return &exitError{code: 1, err: fmt.Errorf("the change breaks a property its base holds")}
	}
	return nil
}

func printDiffReport(w interface{ Write([]byte) (int, error) }, rep *check.DiffReport) {
	fmt.Fprintf(w, "change %s · base %s · %d seeds, each with and without the change\n\n", rep.Change, rep.Base, rep.Seeds)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROPERTY\tWITH THE CHANGE\tFIXED\tFAILS IN BOTH")
	for _, name := range properties.Names() {
		verdict := "no difference"
		if n := rep.New[name]; n > 0 {
			verdict = fmt.Sprintf("NEW: fails on %d seeds the base holds (%s)", n, rep.NewSeeds[name])
		}
		fixed := "-"
		if n := rep.Fixed[name]; n > 0 {
			fixed = fmt.Sprintf("%d (%s)", n, rep.FixedSeeds[name])
		}
		both := "-"
		if n := rep.Both[name]; n > 0 {
			both = fmt.Sprint(n)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, verdict, fixed, both)
	}
	tw.Flush()
	for _, name := range properties.Names() {
		f := rep.First[name]
		if f == nil {
			continue
		}
		kept := "the shrunk schedule fails with the change and holds without it"
		if !f.Kept {
			kept = "no shrunk schedule kept the difference: the seed's own run is saved"
		}
		fmt.Fprintf(w, "\nfirst seed the change breaks (seed %d; %s):\n%s\nreplay: %s\nbase:   %s\n",
			f.Seed, kept, strings.Join(f.Story, "\n"), f.Replay, f.BaseReplay)
	}
	var cov []string
	for _, k := range slices.Sorted(maps.Keys(rep.Coverage)) {
		cov = append(cov, fmt.Sprintf("%s=%d", k, rep.Coverage[k]))
	}
	fmt.Fprintf(w, "\ncoverage with the change: %s\n", strings.Join(cov, " "))
	if len(rep.Missing) > 0 {
		fmt.Fprintf(w, "coverage FAILED: never happened: %s\n", strings.Join(rep.Missing, ", "))
	}
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
func warnUnsavedSchedules(w io.Writer, rep *check.Report) {
	for _, name := range properties.Names() {
		if f := rep.First[name]; f != nil && f.ScheduleError != "" {
			fmt.Fprintf(w, "simlab: warning: the minimized schedule of %s (seed %d) was not saved: %s; the seed replays it: %s\n",
				name, f.Seed, f.ScheduleError, f.Replay)
		}
	}
}

func printReport(w io.Writer, rep *check.Report, total uint64) {
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
		if _, ok := rep.NotJudged[name]; ok {
			verdict = "not judged (below)"
		}
		if n > 0 {
			verdict = fmt.Sprintf("VIOLATED in %d of %d runs", n, rep.Seeds)
		}
		if b := rep.Baseline; b != nil && n > 0 {
			switch {
			case b.New[name] == "":
				verdict += " (all known)"
			case b.Known[name] > 0:
				verdict += fmt.Sprintf(" (%d known, NEW on seeds %s)", b.Known[name], b.New[name])
			default:
				verdict += fmt.Sprintf(" (NEW on seeds %s)", b.New[name])
			}
		}
		fmt.Fprintf(tw, "%s\t%s\n", name, verdict)
	}
	tw.Flush()
	if len(rep.NotJudged) > 0 {
		fmt.Fprintln(w, "\na program's runs are judged on their spans, with check --trace's rules; not judged there:")
		for _, name := range properties.Names() {
			if why, ok := rep.NotJudged[name]; ok {
				fmt.Fprintf(w, "  %s: %s\n", name, why)
			}
		}
	}
	for _, name := range properties.Names() {
		f := rep.First[name]
		if f == nil {
			continue
		}
		label := "first counterexample"
		if rep.Baseline != nil {
			label = "first new counterexample"
		}
		fmt.Fprintf(w, "\n%s (seed %d):\n%s\nreplay: %s\n", label, f.Seed, strings.Join(f.Story, "\n"), f.Replay)
		if f.ScheduleError != "" {
			fmt.Fprintf(w, "schedule not saved: %s\n", f.ScheduleError)
		}
	}
	if b := rep.Baseline; b != nil {
		printBaseline(w, rep)
	}
	if sw := rep.SwarmCoverage; sw != nil {
		reached := 0
		for _, n := range sw.Features {
			if n > 0 {
				reached++
			}
		}
		fmt.Fprintf(w, "\nswarm coverage: %d features and %d pairs of features reached in %d seeds", reached, len(sw.Combinations), sw.Seeds)
		if len(sw.Unreached) > 0 {
			fmt.Fprintf(w, "; never reached: %s", strings.Join(sw.Unreached, ", "))
		}
		fmt.Fprintln(w)
	}
	if rep.StoppedBy != "" {
		fmt.Fprintf(w, "\nuntil-stable: %s: %s\n", rep.StoppedBy, rep.StoppedReason)
	}
	var cov, pairs []string
	for _, k := range slices.Sorted(maps.Keys(rep.Coverage)) {
		if p, ok := strings.CutPrefix(k, "pair:"); ok {
			// A search's pairs of features: a line of their own.
			pairs = append(pairs, fmt.Sprintf("%s=%d", p, rep.Coverage[k]))
			continue
		}
		cov = append(cov, fmt.Sprintf("%s=%d", k, rep.Coverage[k]))
	}
	fmt.Fprintf(w, "\ncoverage: %s\n", strings.Join(cov, " "))
	if len(pairs) > 0 {
		fmt.Fprintf(w, "pairs of features (%d): %s\n", len(pairs), strings.Join(pairs, " "))
	}
	if len(rep.Missing) > 0 {
		fmt.Fprintf(w, "coverage FAILED: never happened: %s\n", strings.Join(rep.Missing, ", "))
	}
}

// printBaseline says what the baseline made of the check: the new findings
// by (scenario, property, seeds), the known ones with their reasons, and
// notes (a known finding that no longer happens).
func printBaseline(w interface{ Write([]byte) (int, error) }, rep *check.Report) {
	b := rep.Baseline
	fmt.Fprintf(w, "\nbaseline %s", b.File)
	if b.Entry != "" {
		fmt.Fprintf(w, " (entry %s)", b.Entry)
	}
	fmt.Fprintln(w, ":")
	for _, name := range properties.Names() {
		if s := b.New[name]; s != "" {
			fmt.Fprintf(w, "  NEW    %s  %s  seeds %s\n", rep.Scenario, name, s)
		}
	}
	for _, name := range properties.Names() {
		if n := b.Known[name]; n > 0 {
			fmt.Fprintf(w, "  known  %s  %s  %d seeds: %s\n", rep.Scenario, name, n, b.Reasons[name])
		}
	}
	for _, n := range b.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	if len(b.New) == 0 {
		fmt.Fprintln(w, "  every violation is a known finding")
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
			// A differential counterexample also replays without the change.
			baseVerdict := ""
			if s.Base != nil {
				bres, err := s.ReplayBase()
				if err != nil {
					return badInput(err)
				}
				baseVerdict = "holds"
				for _, v := range properties.Check(bres.History, properties.All()) {
					if s.Property == "" || v.Property == s.Property {
						baseVerdict = "violated"
					}
				}
			}
			if asJSON {
				if err := writeJSON(out, struct {
					HistoryHash  string                 `json:"history_hash"`
					Saved        string                 `json:"saved_history_hash"`
					Mismatches   int                    `json:"choice_mismatches"`
					Property     string                 `json:"property"`
					Verdict      string                 `json:"verdict"`
					ModelChanged bool                   `json:"model_changed"`
					Violations   []properties.Violation `json:"violations"`
					BaseVerdict  string                 `json:"base_verdict,omitempty"`
				}{got, s.HistoryHash, rep.Mismatches, s.Property, verdict, changed, all, baseVerdict}); err != nil {
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
				if baseVerdict != "" {
					fmt.Fprintf(out, "with the change: %s %s; without it (the base): %s %s\n", name, verdict, name, baseVerdict)
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
