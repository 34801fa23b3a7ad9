package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/realengine"
)

// programReproduceFlags are reproduce's flags for a program's scenario.
type programReproduceFlags struct {
	seed   uint64
	runs   int
	dilate int
}

// isProgramFile says FILE names a scenario (a YAML file), not a saved
// schedule: it then needs --seed.
func (programReproduceFlags) isProgramFile(file string) bool {
	return strings.HasSuffix(file, ".yaml") || strings.HasSuffix(file, ".yml")
}

// reproduceForProgramFlags are reproduce's flags a program's forcing
// honours; any other set is refused.
var reproduceForProgramFlags = map[string]bool{
	"seed": true, "runs": true, "dilate": true, "cores": true, "timeout": true, "engine-dir": true, "no-install": true, "json": true,
}

// reproduceProgram is simlab reproduce FILE --seed N: a program's
// counterexample forced on the real core (realengine.ProgramForce).
func reproduceProgram(cmd *cobra.Command, file string, f programReproduceFlags, coreNames []string, timeout time.Duration, dir string, noInstall, asJSON bool) error {
	var refused error
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if refused == nil && !reproduceForProgramFlags[fl.Name] {
			refused = badInput(fmt.Errorf("--%s: %s is a program's scenario, forced by holds, not by a schedule's plan; reproduce takes --seed, --runs, --dilate, --cores, --timeout, --engine-dir, --no-install and --json for it", fl.Name, file))
		}
	})
	if refused != nil {
		return refused
	}
	if !cmd.Flags().Changed("seed") {
		return badInput(fmt.Errorf("%s is a scenario: give --seed N, the seed its replay line names (simlab check prints it with the shrunk file)", file))
	}
	sc, err := model.LoadScenario(file, model.ReadScenarioFile)
	if err != nil {
		return badInput(err)
	}
	if !cmd.Flags().Changed("cores") {
		coreNames = []string{realengine.Pinned.DefaultCore}
	}
	var cores []realengine.Core
	for _, n := range coreNames {
		c, err := realengine.CoreByVersion(n)
		if err != nil {
			return badInput(fmt.Errorf("--cores: %w", err))
		}
		cores = append(cores, c)
	}
	if timeout == 0 {
		timeout = 3 * time.Minute
	}
	if timeout < 0 {
		return badInput(fmt.Errorf("--timeout %v: want a positive duration", timeout))
	}
	force, err := realengine.PrepareProgramForce(sc, f.seed, cores[0], f.dilate, f.runs)
	if err != nil {
		return badInput(fmt.Errorf("%s: %w", file, err))
	}
	ctx, interrupted, r, done, err := realEngine(cmd, dir, !noInstall, cores...)
	if err != nil {
		return err
	}
	defer done()
	bar := progress(cmd.ErrOrStderr(), "real runs")
	force.Progress = func(done, total int) {
		if bar != nil {
			bar(done, total)
		}
		if progressHook != nil {
			progressHook(ctx, done) // a test's moment: after that many runs
		}
	}
	runErr := r.ForceProgram(ctx, force, cores, timeout)
	force.Partial = runErr != nil
	out := cmd.OutOrStdout()
	if asJSON {
		if err := writeJSON(out, force); err != nil {
			return err
		}
	} else {
		printProgramForce(out, file, force)
	}
	if runErr != nil {
		if ctx.Err() != nil {
			return interruptError(interrupted(), fmt.Sprintf("stopped during the real runs (the runs above ran): %v", runErr))
		}
		return runErr
	}
	for _, c := range force.Cores {
		if c.Agree < len(c.Runs) {
			return &exitError{code: 1, err: fmt.Errorf("core %s: %d of %d real runs disagree with simlab", c.Core, len(c.Runs)-c.Agree, len(c.Runs))}
		}
	}
	return nil
}

func printProgramForce(w io.Writer, file string, f *realengine.ProgramForce) {
	fmt.Fprintf(w, "scenario %s · seed %d\n", file, f.Seed)
	fmt.Fprintf(w, "simlab: %s\n", strings.Join(f.Story, "\n  "))
	fmt.Fprintf(w, "\nforced: the stale write %s\n  waits for %s\n", f.Stale, f.Missed)
	if c := f.Forcing.Clock; c != nil {
		fmt.Fprintf(w, "  a Date.now() choice: the writer read %v, %v short of its %v deadline; a fresh replay reads %v\n", c.Stale, c.StaleGap(), c.Deadline, c.Fresh)
	}
	if f.Dilation > 1 {
		fmt.Fprintf(w, "  the program runs %d times as slow on the real core (bodies, sleeps, deadlines), each step body pinned to simlab's\n", f.Dilation)
	} else {
		fmt.Fprintln(w, "  each step body pinned to simlab's")
	}
	for _, h := range f.Holds {
		fmt.Fprintf(w, "  hold %s: %s\n", h.Name, h)
	}
	if f.Partial {
		fmt.Fprintf(w, "\nPARTIAL: the forcing stopped after %d of %d real runs\n", f.RunsJudged(), f.Planned)
	}
	for _, c := range f.Cores {
		expect := "its log diverges at that write"
		if !c.Expect {
			expect = "its log replays"
		}
		verdict := fmt.Sprintf("REPRODUCED %d of %d", c.Reproduced, len(c.Runs))
		if !c.Expect {
			verdict = fmt.Sprintf("clean, as simlab says, %d of %d", c.Agree, len(c.Runs))
		}
		fmt.Fprintf(w, "\ncore %s (simlab on its replay: %s, the run ends %s): %s\n", c.Core, expect, c.ExpectEnd, verdict)
		for i, r := range c.Runs {
			mark := ""
			if !r.Agrees {
				mark = "  DISAGREES: " + r.Why
			}
			end := r.End
			if r.TimedOut {
				end += " (it had not ended at --timeout: stopped and read back as it was)"
			}
			fmt.Fprintf(w, "  run %d: %s; core's replay of its log: %s%s\n    %s\n", i+1, end, r.Divergence, mark, r.Held)
		}
	}
}
