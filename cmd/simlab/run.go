package main

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/simlab/simlab/check"
	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/flow"
	"github.com/simlab/simlab/model/program"
	"github.com/simlab/simlab/sim"
)

// exitError carries the exit status a command wants.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }
func (e *exitError) ExitCode() int { return e.code }

// badInput marks an error as the user's input (exit 2).
func badInput(err error) error { return &exitError{code: 2, err: err} }

// scenarioFlags are the flags every command that builds a scenario shares.
type scenarioFlags struct{ spec model.Spec }

func (f *scenarioFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.spec.Scenario, "scenario", "fanout", "built-in scenario name or scenario file (YAML or JSON)")
	cmd.Flags().StringArrayVar(&f.spec.Sets, "set", nil, "override a scenario field, e.g. --set workflow.max_inline=1 (repeatable)")
	// No back-quotes in a usage text: pflag would print the quoted words
	// as the value's name (--variant simlab variants).
	cmd.Flags().StringArrayVar(&f.spec.Variants, "variant", nil, "protocol variant to switch on (repeatable; see simlab variants)")
}

// load builds and validates the scenario; every error is bad input.
func (f *scenarioFlags) load() (model.Scenario, error) {
	sc, err := f.spec.Load()
	if err != nil {
		return sc, badInput(err)
	}
	return sc, nil
}

// loadFanout is load for a command that drives the fan-out engine: a
// program's scenario (simlab check and simlab run take it) is refused.
func (f *scenarioFlags) loadFanout(command string) (model.Scenario, error) {
	sc, err := f.load()
	if err == nil && sc.IsProgram() {
		return sc, badInput(fmt.Errorf("scenario %s: %w (simlab %s)", sc.Name, model.ErrProgramScenario, command))
	}
	return sc, err
}

func newRunCommand() *cobra.Command {
	var sf scenarioFlags
	var tf traceFlags
	var seed uint64
	var asJSON, twice bool
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Simulate one seed of a scenario and summarize what happened",
		Long: `Simulate one seed of a scenario. Without --json, print a short summary; with
--json, print one object (the contract in docs/CLI.md). The same seed always
prints the same history_hash; --twice runs it twice and names the first
event where the two runs differ, if they ever do. A program's scenario
(docs/SCENARIOS.md, Programs) runs as the runtime replays it: the run's
end and its story (a corrupted log's writers, a run ended more than once).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sc, err := sf.load()
			if err != nil {
				return err
			}
			if err := tf.check(cmd); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if tf.toStdout() {
				if asJSON {
					return badInput(fmt.Errorf("--trace-out - and --json both print to stdout: give --trace-out a file, e.g. --trace-out run.jsonl"))
				}
				// The trace owns stdout; the summary moves to stderr.
				out = cmd.ErrOrStderr()
			}
			if sc.IsProgram() {
				return runProgram(cmd, sc, sf.spec, seed, &tf, out, asJSON, twice)
			}
			res, err := model.Run(&sc, sim.NewPCG(seed), model.Options{Record: true, RecordStream: twice, Seed: seed})
			if err != nil {
				return badInput(err)
			}
			if twice {
				again, err := model.Run(&sc, sim.NewPCG(seed), model.Options{Record: true, RecordStream: true, Seed: seed})
				if err != nil {
					return err
				}
				if d, differ := sim.FirstDifference(res.Stream, again.Stream); differ {
					return &exitError{code: 1, err: fmt.Errorf("seed %d is not deterministic: %v", seed, d)}
				}
			}
			sum := model.Summarize(res)
			if asJSON {
				if err := writeJSON(out, sum); err != nil {
					return err
				}
			} else {
				printRunSummary(out, sum, sf.spec.RunCommand(seed), twice)
			}
			// The summary is out before the export, which is the step that
			// can fail: nothing computed is lost.
			if tf.wanted() {
				return tf.emit(res.History, cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			return nil
		},
	}
	sf.register(cmd)
	tf.register(cmd)
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed of the run: one seed, one history")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the run as one JSON object")
	cmd.Flags().BoolVar(&twice, "twice", false, "run the seed twice and prove the histories are identical")
	return cmd
}

// runProgram is simlab run of a program's scenario: the run as the
// runtime replays it (model/flow), its story (a corrupted log's writers, a
// run's several ends) and, with --trace-out or --otlp, its trace.
func runProgram(cmd *cobra.Command, sc model.Scenario, spec model.Spec, seed uint64, tf *traceFlags, out io.Writer, asJSON, twice bool) error {
	if sc.Workflow.Search != "" && !asJSON && !tf.toStdout() {
		// A search's seed runs the program it draws: say which.
		drawn := sc.SeedScenario(seed)
		fmt.Fprintf(out, "%s, case %d: time limit %v, crash rate %v, resumes %+v, max_inline %d, sequential replays %s, the program:\n%s", sc.Name, seed, drawn.Workflow.MaxDuration, drawn.Faults.Crash, drawn.Workflow.Resumes,
			drawn.Workflow.MaxInline, onOff(drawn.Workflow.SequentialReplays), program.Format(drawn.Workflow.Program))
	}
	sc = sc.SeedScenario(seed)
	cfg, err := check.FlowConfig(&sc)
	if err != nil {
		return badInput(fmt.Errorf("scenario %s: %w", sc.Name, err))
	}
	res, err := flow.Run(cfg, seed)
	if err != nil {
		return err
	}
	if twice {
		again, err := flow.Run(cfg, seed)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(res, again) {
			return &exitError{code: 1, err: fmt.Errorf("seed %d is not deterministic: two runs of the program differ", seed)}
		}
	}
	story := res.Explain(cfg.Program)
	title := fmt.Sprintf("scenario %s (a program, run as the runtime replays it)", sc.Name)
	if err := printReplayRun(out, title, cfg, seed, res, story, false, asJSON); err != nil {
		return err
	}
	if !asJSON {
		end := "did not end"
		if w := res.FirstEnd(); w != nil {
			end = w.Type.String()
			if code, _ := res.FailureCode(); code != "" {
				end += " " + code
			}
		}
		fmt.Fprintf(out, "run: %s; ends accepted %d; killed %d, crashed %d\nreplay: %s\n", end, res.RunEnds, res.Killed-res.Crashes, res.Crashes, spec.RunCommand(seed))
	}
	if tf.wanted() {
		return tf.emitFlow(check.ProgramTrace(&sc, cfg, res, seed, story), cmd.OutOrStdout(), cmd.ErrOrStderr())
	}
	return nil
}

func printRunSummary(w io.Writer, s model.Summary, replay string, twice bool) {
	variants := "none"
	if len(s.Variants) > 0 {
		variants = strings.Join(s.Variants, ",")
	}
	fmt.Fprintf(w, "scenario %s · seed %d · %s · variants: %s\n", s.Scenario, s.Seed, s.World, variants)
	state := "drained"
	if !s.Drained {
		state = "stopped at a limit"
	}
	fmt.Fprintf(w, "history %s · %d events · %v virtual · %s\n", s.HistoryHash, s.Events, time.Duration(s.VirtualNS), state)
	if twice {
		fmt.Fprintln(w, "deterministic: a second run produced the identical event stream")
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nRUN\tSTATUS\tDEPLOYMENT\tENGINE\tPROLOGUE")
	for _, r := range s.Runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.RunID, r.Status, r.Deployment, r.Engine, r.Prologue)
	}
	fmt.Fprintln(tw, "\nFAN-OUT\tBRANCHES\tINLINE\tQUEUED\tPROLOGUE READS\tLAZY READS\tLAST COMPLETERS\tCONTINUED BY")
	for _, f := range s.Fanouts {
		fmt.Fprintf(tw, "%s#%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", f.RunID, f.Index, f.Branches, f.Inline, f.Queued,
			f.PrologueFetches, f.LazyFetches, f.LastCompleters, f.ContinuedBy)
	}
	tw.Flush()
	c := s.Counts
	fmt.Fprintf(w, "\ndeliveries %d (redeliveries %d) · runs.get %d · step_started accepted %d, rejected %d · crashes %d · re-routes %d · stale reads %d\n",
		c.Deliveries, c.Redeliveries, c.RunsGet, c.StepStartedAccepted, c.StepStartedRejected, c.Crashes, c.Reroutes, c.StaleReads)
	var fired []string
	for _, f := range s.FaultSites {
		if f.Fired > 0 {
			fired = append(fired, fmt.Sprintf("%s×%d", f.Name, f.Fired))
		}
	}
	if len(fired) > 0 {
		fmt.Fprintf(w, "faults: %s\n", strings.Join(fired, ", "))
	}
	fmt.Fprintf(w, "replay: %s\n", replay)
}

// newListCommand is a command that prints one line per item: a name and
// what it is.
func newListCommand(use, short string, rows func() [][2]string) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
			for _, r := range rows() {
				fmt.Fprintf(tw, "%s\t%s\n", r[0], r[1])
			}
			return tw.Flush()
		},
	}
}

func newScenariosCommand() *cobra.Command {
	return newListCommand("scenarios", "List the built-in scenarios", func() (rows [][2]string) {
		for _, n := range model.BuiltinNames() {
			sc, _ := model.Builtin(n)
			rows = append(rows, [2]string{n, sc.Description})
		}
		for _, n := range model.BuiltinProgramNames() {
			sc, _ := model.Builtin(n)
			rows = append(rows, [2]string{n, "(a program) " + sc.Description})
		}
		return rows
	})
}

func newVariantsCommand() *cobra.Command {
	return newListCommand("variants", "List the protocol variants (historical bugs and proposed fixes)", func() (rows [][2]string) {
		for _, v := range model.Variants() {
			rows = append(rows, [2]string{v.Name, v.Desc})
		}
		return rows
	})
}

// writeJSON prints v as indented JSON, the form of every --json output.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
