package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/simlab/simlab/check"
	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/realengine"
)

func newReproduceCommand() *cobra.Command {
	var o realengine.ReproduceOptions
	var dir, worldLocal string
	var noInstall, asJSON bool
	var whatIf int
	var prog programReproduceFlags
	cmd := &cobra.Command{
		Use:   "reproduce FILE",
		Short: "Force a saved schedule's (or a program's shrunk) violation on the real @workflow/core",
		Long: `Replay a schedule simlab check saved, translate its History into a plan (every
World call and step body the real runtime makes too, named by run, delivery,
operation, event, step and occurrence, with the History's answer) and run the
pinned real core over world-local with every call held until its turn in the
History's order: no injected latency, pools, crashes or random faults.

It reports "reproduced" when every plan entry was released in order with the
History's answer, no write the plan does not name reached the World, and the
schedule's property is violated on the real run's own spans (judged as check
--trace judges them); otherwise "diverged at entry K" with both sides' calls
around K. The real run's spans (OTLP JSON Lines) and call record are written
next to the schedule, or to --out DIR.

A schedule that no longer replays to its history, or whose scenario the real
side cannot honour, is refused before anything runs (exit 2), with the reason.
Exit 0 reproduced (on every core given), 1 diverged or not violated, 2 bad
input.

With --what-if N it does not force the History's interleaving inside a race
group (writes of one run the History had in flight at once): it releases the
group's members together N times and lets the real World's own I/O decide,
and prints, per group, the History's answers, every answer the model's
world-local gives the members over every interleaving of their steps (from the
store as the History had it when the group began), and the real answers with
how many runs gave each and how many of those violated the property. Exit 0
when every real answer is one the model can give, 1 when the real World gave
one the model cannot (the model lacks it), 2 bad input (a plan with no race
group included).

With --seed N, FILE is a program's scenario (the file simlab check shrinks a
program's replayable-log counterexample to, or any program scenario) and N
the seed its replay line names. simlab runs it, finds what its unconsumable
log depends on (the write a fresh replay stops at, from which statement, and
the event below it its writer had not seen; for a Date.now() choice, the
event whose stamp a fresh replay reads) and makes --runs real runs on the
pinned core with those writes held at the World in that order, every step
body pinned to simlab's (how long it ran, what it returned). A Date.now()
story is also held in time: the event a fresh replay reads is held until the
run's clock is past the deadline, and the program runs --dilate times as
slow (by default the least that puts the writer's read 150 ms short of the
deadline). A run is reproduced when core's own replay of its log stops at
the same write (type, step, entity) and it ends as simlab's does. Exit 0
when every run on every core agrees with simlab (reproduced where simlab's
replay on that core diverges, clean where it does not), 1 otherwise.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := args[0]
			if cmd.Flags().Changed("seed") || prog.isProgramFile(file) {
				return reproduceProgram(cmd, file, prog, o.Cores, o.Timeout, dir, noInstall, asJSON)
			}
			for _, f := range []string{"runs", "dilate"} {
				if cmd.Flags().Changed(f) {
					return badInput(fmt.Errorf("--%s is for a program's scenario (with --seed N): %s is a saved schedule", f, file))
				}
			}
			s, err := loadSchedule(file)
			if err != nil {
				return badInput(err)
			}
			if whatIf < 0 {
				return badInput(fmt.Errorf("--what-if %d: want a number of real runs, at least 1", whatIf))
			}
			var rp *realengine.Reproduction
			var wi *realengine.WhatIf
			if whatIf > 0 {
				rp, wi, err = realengine.PrepareWhatIf(s, file)
			} else {
				rp, err = realengine.PrepareReproduction(s, file)
			}
			if err != nil {
				return badInput(err)
			}
			for _, c := range o.Cores {
				if _, err := realengine.CoreByVersion(c); err != nil {
					return badInput(fmt.Errorf("--cores: %w", err))
				}
			}
			if worldLocal != "" {
				w, err := realengine.Pinned.WorldLocal(worldLocal)
				if err != nil {
					return badInput(fmt.Errorf("--world-local: %w", err))
				}
				o.WorldLocal = w.Package()
			}
			if o.OutDir == "" {
				o.OutDir = filepath.Dir(file)
			}
			if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
				return badInput(fmt.Errorf("--out: %w", err))
			}
			o.Base = strings.TrimSuffix(filepath.Base(file), ".json")
			ctx, interrupted, r, done, err := realEngine(cmd, dir, !noInstall)
			if err != nil {
				return err
			}
			defer done()
			if wi != nil {
				return runWhatIf(cmd, ctx, interrupted, r, s, rp, wi,
					realengine.WhatIfOptions{Cores: o.Cores, Runs: whatIf, Timeout: o.Timeout, OutDir: o.OutDir, Base: o.Base, WorldLocal: o.WorldLocal}, asJSON)
			}
			if err := realengine.Reproduce(ctx, r, s, rp, o); err != nil {
				if ctx.Err() != nil {
					return interruptError(interrupted(), fmt.Sprintf("stopped while running the plan: %v", err))
				}
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if err := writeJSON(out, rp); err != nil {
					return err
				}
			} else {
				printReproduction(out, rp)
			}
			if !rp.Reproduced() {
				return &exitError{code: 1, err: errors.New("not reproduced on the real engine")}
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&o.Cores, "cores", []string{realengine.ReproduceCore}, "real @workflow/core versions to run the plan on (installed side by side by realengine/package.json)")
	cmd.Flags().StringVar(&worldLocal, "world-local", "", "the @workflow/world-local release to run over, by version (installed side by side by realengine/package.json; default the schedules' own, "+realengine.Pinned.DefaultWorldLocal+")")
	cmd.Flags().StringVar(&o.OutDir, "out", "", "write each core's spans and call record to DIR (default: the schedule's directory)")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 0, "longest one real run may take before it is stopped and reported (0: 2m, or the schedule's History span and 1m more when longer)")
	cmd.Flags().StringVar(&dir, "engine-dir", "", "the realengine directory (default: found from the working directory upwards)")
	cmd.Flags().BoolVar(&noInstall, "no-install", false, "do not install the pinned packages when they are missing; say what to run instead")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the reproduction as JSON")
	cmd.Flags().Uint64Var(&prog.seed, "seed", 0, "FILE is a program's scenario: force the run of this seed (the seed its replay line names)")
	cmd.Flags().IntVar(&prog.runs, "runs", 10, "with --seed: real runs per core")
	cmd.Flags().IntVar(&prog.dilate, "dilate", 0, "with --seed: run the program this many times as slow on the real core (0: the least that keeps a Date.now() read 150 ms from its deadline)")
	cmd.Flags().IntVar(&whatIf, "what-if", 0, "instead: make N real runs with every race group's members released together and the World's own I/O in its own order, and set each group's real answers beside every answer the model's World gives it in some interleaving (exit 1 when the real World gives one the model cannot)")
	return cmd
}

// coreLabel names the release a reproduction ran on: the core, and the
// world-local release when it is not the schedules' own.
func coreLabel(c realengine.CoreReproduction) string {
	if c.WorldLocal != "" && c.WorldLocal != realengine.Pinned.DefaultWorldLocal {
		return c.Core + " over world-local " + c.WorldLocal
	}
	return c.Core
}

func printReproduction(w io.Writer, rp *realengine.Reproduction) {
	var rules []string
	for _, r := range rp.Plan.Rules {
		rules = append(rules, fmt.Sprintf("%s %d", r.Name, r.Count))
	}
	if len(rules) == 0 {
		rules = []string{"none"}
	}
	fmt.Fprintf(w, "schedule %s · %s · history %s replays\n", rp.Schedule, rp.Property, rp.HistoryHash)
	fmt.Fprintf(w, "simlab: %s violated in %s\n", rp.Property, rp.Violation)
	bodies := 0
	for _, e := range rp.Plan.Entries {
		if e.Kind == "body" {
			bodies++
		}
	}
	fmt.Fprintf(w, "plan: %d entries (%d World calls of the History's %d, %d step bodies); translation rules: %s\n",
		len(rp.Plan.Entries), len(rp.Plan.Entries)-bodies, rp.Plan.Calls, bodies, strings.Join(rules, ", "))
	for _, c := range rp.Cores {
		fmt.Fprintln(w)
		switch c.Verdict {
		case realengine.VerdictReproduced:
			fmt.Fprintf(w, "core %s: REPRODUCED: %d of %d entries released in order with the History's answers; %s violated on the real run's %s:\n",
				coreLabel(c), c.Released, c.Entries, rp.Property, c.JudgedOn)
			for _, v := range c.Violations {
				fmt.Fprintf(w, "  %s\n", v)
			}
		case realengine.VerdictDiverged:
			fmt.Fprintf(w, "core %s: DIVERGED at entry %d of %d: %s\n", coreLabel(c), c.DivergedAt, c.Entries, c.Reason)
			fmt.Fprintf(w, "  simlab (the plan, > the entry):\n")
			for _, l := range c.Model {
				fmt.Fprintf(w, "    %s\n", l)
			}
			fmt.Fprintf(w, "  real (what the gate saw, > where the entry was due):\n")
			for _, l := range c.Real {
				fmt.Fprintf(w, "    %s\n", l)
			}
			if len(c.Violations) > 0 {
				fmt.Fprintf(w, "  (%s is violated on the real run's %s all the same: %s)\n", rp.Property, c.JudgedOn, strings.Join(c.Violations, "; "))
			}
		default:
			fmt.Fprintf(w, "core %s: NOT REPRODUCED: %s\n", coreLabel(c), c.Reason)
		}
		if c.UnplannedReads > 0 {
			fmt.Fprintf(w, "  %d reads the plan does not name passed through (the runtime's, not the model's: e.g. the client polling for the return value)\n", c.UnplannedReads)
		}
		fmt.Fprintf(w, "  wrote %s, %s\n", c.Spans, c.Calls)
	}
}

// firstReproduction is check --reproduce's verdict on one violated
// property's first counterexample: its reproduction, or why there is none
// (no schedule was saved, or the real side cannot honour it).
type firstReproduction struct {
	Property     string                   `json:"property"`
	Schedule     string                   `json:"schedule,omitempty"`
	Refused      string                   `json:"refused,omitempty"`
	Reproduction *realengine.Reproduction `json:"reproduction,omitempty"`
	// Program is a program's shrunk counterexample forced by holds, one
	// real run on the default pinned core.
	Program *realengine.ProgramForce `json:"program,omitempty"`
}

// reproduceFirsts forces the saved schedule of each violated property's
// first counterexample on the real engine (the first pinned reproduce
// core), in property order, preparing the engine once; a schedule the real
// side cannot honour is reported as refused, not as an error.
func reproduceFirsts(ctx context.Context, cmd *cobra.Command, rep *check.Report, dir string) ([]firstReproduction, error) {
	var out []firstReproduction
	var r *realengine.Runner
	defer func() {
		if r != nil {
			r.Close()
		}
	}()
	for _, prop := range slices.Sorted(maps.Keys(rep.First)) {
		f := rep.First[prop]
		fr := firstReproduction{Property: prop, Schedule: f.ScheduleFile}
		if f.ScheduleFile == "" {
			fr.Refused = "no schedule was saved: " + cmp.Or(f.ScheduleError, "the check saved none")
			out = append(out, fr)
			continue
		}
		if f.ShrunkSeed > 0 {
			if err := forceFirstProgram(ctx, cmd, &r, dir, f, &fr); err != nil {
				return out, err
			}
			out = append(out, fr)
			continue
		}
		s, err := loadSchedule(f.ScheduleFile)
		if err != nil {
			return out, err
		}
		rp, err := realengine.PrepareReproduction(s, f.ScheduleFile)
		if err != nil {
			fr.Refused = err.Error()
			out = append(out, fr)
			continue
		}
		if r == nil {
			if r, err = engineRunner(cmd, dir); err != nil {
				return out, err
			}
			if err := r.Prepare(ctx, true); err != nil {
				return out, err
			}
		}
		o := realengine.ReproduceOptions{OutDir: filepath.Dir(f.ScheduleFile), Base: strings.TrimSuffix(filepath.Base(f.ScheduleFile), ".json")}
		if err := realengine.Reproduce(ctx, r, s, rp, o); err != nil {
			return out, err
		}
		fr.Reproduction = rp
		out = append(out, fr)
	}
	return out, nil
}

// forceFirstProgram is check --reproduce of a program's first
// counterexample: its shrunk file forced by holds once on the default
// pinned core (simlab reproduce FILE --seed N --runs 10 for more), or why
// it cannot be (only replayable-log's story is a write to hold).
func forceFirstProgram(ctx context.Context, cmd *cobra.Command, r **realengine.Runner, dir string, f *check.First, fr *firstReproduction) error {
	if fr.Property != check.ReplayableLog {
		fr.Refused = "a program's counterexample is forced by holding the write its log cannot be replayed past: only replayable-log has one"
		return nil
	}
	sc, err := model.LoadScenario(f.ScheduleFile, model.ReadScenarioFile)
	if err != nil {
		return err
	}
	core, err := realengine.CoreByVersion(realengine.Pinned.DefaultCore)
	if err != nil {
		return err
	}
	force, err := realengine.PrepareProgramForce(sc, f.ShrunkSeed, core, 0, 1)
	if err != nil {
		fr.Refused = err.Error()
		return nil
	}
	if *r == nil {
		if *r, err = engineRunner(cmd, dir); err != nil {
			return err
		}
	}
	if err := (*r).Prepare(ctx, true, core); err != nil {
		return err
	}
	if err := (*r).ForceProgram(ctx, force, []realengine.Core{core}, 3*time.Minute); err != nil {
		return err
	}
	fr.Program = force
	return nil
}

// printFirstReproductions writes check --reproduce's verdicts after the
// check's report.
func printFirstReproductions(w io.Writer, rs []firstReproduction) {
	if len(rs) == 0 {
		fmt.Fprintln(w, "\nreproduce: nothing was violated, nothing to force on the real engine")
		return
	}
	for _, fr := range rs {
		fmt.Fprintf(w, "\nreproduce %s", fr.Property)
		if fr.Refused != "" {
			fmt.Fprintf(w, ": not reproducible on the real side: %s\n", fr.Refused)
			continue
		}
		fmt.Fprintln(w, ":")
		if fr.Program != nil {
			printProgramForce(w, fr.Schedule, fr.Program)
			continue
		}
		printReproduction(w, fr.Reproduction)
	}
}

// realEngine is what a command that runs the real engine does first: it
// finds the engine directory (dir, or upwards from the working directory),
// makes an interruptible context and prepares the pinned packages
// (installing them unless told not to). done releases both.
func realEngine(cmd *cobra.Command, dir string, install bool, cores ...realengine.Core) (ctx context.Context, interrupted func() os.Signal, r *realengine.Runner, done func(), err error) {
	if r, err = engineRunner(cmd, dir); err != nil {
		return nil, nil, nil, nil, err
	}
	ctx, interrupted, release := onInterrupt(cmd.Context())
	done = func() {
		r.Close()
		release()
	}
	if err := r.Prepare(ctx, install, cores...); err != nil {
		// Only a signal is an interrupt: done cancels the context too, so
		// ask before it whether one came.
		sig := interrupted()
		done()
		if sig != nil {
			return nil, nil, nil, nil, interruptError(sig, "stopped while preparing the real engine; nothing was run")
		}
		return nil, nil, nil, nil, err
	}
	return ctx, interrupted, r, done, nil
}

// engineRunner is a Runner on the engine directory dir, or on the one found
// upwards from the working directory.
func engineRunner(cmd *cobra.Command, dir string) (*realengine.Runner, error) {
	if dir == "" {
		d, err := realengine.FindDir()
		if err != nil {
			return nil, badInput(err)
		}
		dir = d
	}
	return &realengine.Runner{Dir: dir, Log: cmd.ErrOrStderr()}, nil
}

// runWhatIf runs and prints a --what-if.
func runWhatIf(cmd *cobra.Command, ctx context.Context, interrupted func() os.Signal, r *realengine.Runner, s check.Schedule,
	rp *realengine.Reproduction, wi *realengine.WhatIf, o realengine.WhatIfOptions, asJSON bool) error {
	if err := realengine.RunWhatIf(ctx, r, s, rp, wi, o); err != nil {
		if ctx.Err() != nil {
			return interruptError(interrupted(), fmt.Sprintf("stopped during the what-if runs: %v", err))
		}
		return err
	}
	out := cmd.OutOrStdout()
	if asJSON {
		if err := writeJSON(out, wi); err != nil {
			return err
		}
	} else {
		printWhatIf(out, wi)
	}
	if only := wi.OnlyReal(); len(only) > 0 {
		return &exitError{code: 1, err: fmt.Errorf("the real World gave answers the model's World cannot: %s", strings.Join(only, "; "))}
	}
	return nil
}

func printWhatIf(w io.Writer, wi *realengine.WhatIf) {
	fmt.Fprintf(w, "schedule %s · %s · history %s replays\n", wi.Schedule, wi.Property, wi.HistoryHash)
	fmt.Fprintf(w, "what-if: %d real runs per core, each race group's members released together, the World's own I/O in its own order\n", wi.Runs)
	for _, g := range wi.Groups {
		if len(g.Model) == 1 && len(g.Real) == 1 && g.Real[0].InModel && g.ModelNote == "" {
			// Nothing to choose between: one line.
			r := g.Real[0]
			fmt.Fprintf(w, "\nrace group %d (plan entries %d..%d, %d writes): the one answer of the model (%s) and of the real core %s ×%d (%s violated in %d)\n",
				g.Group, g.First, g.First+len(g.Members)-1, len(g.Members), g.Model[0], r.Core, r.Runs, wi.Property, r.Violated)
			continue
		}
		fmt.Fprintf(w, "\nrace group %d (plan entries %d..%d):\n", g.Group, g.First, g.First+len(g.Members)-1)
		for _, m := range g.Members {
			fmt.Fprintf(w, "  %s\n", m)
		}
		fmt.Fprintf(w, "  history: %s\n", g.History)
		model := make([]string, len(g.Model))
		for i, m := range g.Model {
			model[i] = m.String()
		}
		fmt.Fprintf(w, "  model, every interleaving of world-local's steps: %s\n", strings.Join(model, "; "))
		if g.ModelNote != "" {
			fmt.Fprintf(w, "    (%s)\n", g.ModelNote)
		}
		for _, r := range g.Real {
			mark := "in the model"
			switch {
			case !r.Released():
				mark = "not compared: the plan broke before the group was released"
			case !r.InModel:
				mark = "NOT IN THE MODEL"
			}
			fmt.Fprintf(w, "  real core %s: %s ×%d (%s violated in %d) · %s\n", r.Core, r.Answers, r.Runs, wi.Property, r.Violated, mark)
		}
	}
	only := wi.OnlyReal()
	if len(only) == 0 {
		only = []string{"none"}
	}
	fmt.Fprintf(w, "\nanswers only the real World gave: %s\n", strings.Join(only, "; "))
}
