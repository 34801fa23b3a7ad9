package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/simlab/simlab/check"
	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/flow"
	"github.com/simlab/simlab/model/program"
	"github.com/simlab/simlab/realengine"
)

// programValidation is simlab validate's run of a program's scenario: the
// program on one pinned core over world-local (--repetitions runs, one
// harness call each) and in simlab on seeds 1..--seeds, judged as simlab
// replays --real judges: the share of runs corrupted and ended more than
// once, and with a time limit the share killed and left with a hung step.
type programValidation struct {
	Scenario   string          `json:"scenario"`
	Rows       []replayRow     `json:"rows"`
	Real       *realReplays    `json:"real,omitempty"`
	Agreements []replayVerdict `json:"agreements"`
}

// validateFlagsForPrograms are validate's flags a program's run honours;
// any other set is refused.
var validateFlagsForPrograms = map[string]bool{
	"scenario": true, "set": true, "cores": true, "repetitions": true, "seeds": true, "timeout": true,
	"engine-dir": true, "no-install": true, "json": true, "gate": true, "gate-min-runs": true,
}

func validateProgram(cmd *cobra.Command, sc model.Scenario, spec model.Spec, cores []string, repetitions, seeds int, timeout time.Duration,
	engineDir string, noInstall, asJSON, gate bool, gateMin int) error {
	var refused error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if refused == nil && !validateFlagsForPrograms[f.Name] {
			refused = badInput(fmt.Errorf("--%s: scenario %s is a program, run on one core over world-local as it is; validate takes --cores (one), --repetitions, --seeds, --timeout, --engine-dir, --no-install, --json and --gate for it", f.Name, sc.Name))
		}
	})
	if refused != nil {
		return refused
	}
	w := &sc.Workflow
	switch {
	case w.Search != "":
		return badInput(fmt.Errorf("workflow.search %s draws a program per seed: validate one case with simlab replays --search --hooks --real N, or a scenario file check wrote", w.Search))
	case w.LogView != "" && w.LogView != model.LogViewPrefix:
		return badInput(fmt.Errorf("workflow.log_view %s: every pinned core runs on slot ids (the prefix view); validate the prefix view", w.LogView))
	case w.CallSiteIDs:
		return badInput(fmt.Errorf("workflow.callsite_ids: no pinned core mints call-site correlation ids (vercel/workflow #3179 is a proposal)"))
	case w.SequentialReplays:
		return badInput(fmt.Errorf("workflow.sequential_replays: the real harness does not switch sequential replays on"))
	case w.MaxRetries != model.DefaultScenario().Workflow.MaxRetries:
		return badInput(fmt.Errorf("workflow.max_retries %d: the real core's step retry budget is its own (%d)", w.MaxRetries, model.DefaultScenario().Workflow.MaxRetries))
	case repetitions < 1 || seeds < 1:
		return badInput(fmt.Errorf("--repetitions %d, --seeds %d: want at least one real run and one simlab seed", repetitions, seeds))
	case gateMin < 1:
		return badInput(fmt.Errorf("--gate-min-runs %d: want at least 1", gateMin))
	}
	core := ""
	switch {
	case len(cores) == 1 && cores[0] != realengine.All:
		core = cores[0]
	case len(cores) == 1 || !cmd.Flags().Changed("cores"):
		// The default ("all") or all: the default pinned core.
	default:
		return badInput(fmt.Errorf("--cores %v: a program is validated on one core at a time (give one, or leave --cores for the default %s)", cores, realengine.Pinned.DefaultCore))
	}
	cfg, err := check.FlowConfig(&sc)
	if err != nil {
		return badInput(fmt.Errorf("scenario %s: %w", sc.Name, err))
	}
	if core != "" {
		c, err := realengine.CoreByVersion(core)
		if err != nil {
			return badInput(fmt.Errorf("--cores: %w", err))
		}
		cfg.Clock, cfg.Conflicts = c.ClockMode(), c.ConflictMode() // simlab replays as that core does
	}
	real := realFlags{runs: repetitions, core: core, engineDir: engineDir, noInstall: noInstall, timeout: timeout}
	if err := real.check(cmd, cfg.Program, cfg.MaxDuration, cfg.InlineLease, false, []flow.View{flow.ViewPrefix}, []bool{false}); err != nil {
		return badInput(err)
	}
	ctx, interrupted, release := onInterrupt(cmd.Context())
	defer release()
	doc := programValidation{Scenario: sc.Name}
	row := replayRow{View: flow.ViewPrefix.String()}
	var runner flow.Runner
	for s := 1; s <= seeds; s++ {
		res, err := runner.Run(cfg, uint64(s))
		if err != nil {
			return err
		}
		row.add(res, s)
	}
	doc.Rows = append(doc.Rows, row)
	rr, realErr := real.run(ctx, cmd, func(uint64) ([]program.Node, flow.Config) { return sc.Workflow.Program, cfg })
	doc.Real = rr
	partial := ctx.Err() != nil
	if rr != nil && rr.Runs > 0 {
		doc.Agreements = rr.judge(doc.Rows, cfg.MaxDuration > 0, false)
		doc.Rows = append(doc.Rows, rr.row())
	}
	out := cmd.OutOrStdout()
	if asJSON {
		if err := writeJSON(out, doc); err != nil {
			return err
		}
	} else {
		shown := append([]replayRow{}, doc.Rows...)
		shown[0].FirstCorrupted = 0 // its story is simlab run's, below
		printReplayRows(out, fmt.Sprintf("scenario %s (a program): simlab seeds 1..%d, the pinned release's view; %d real runs", sc.Name, seeds, repetitions), shown, partial, "")
		if s := row.FirstCorrupted; s > 0 {
			fmt.Fprintf(out, "first corrupted in simlab: seed %d; its story: %s\n", s, spec.RunCommand(uint64(s)))
		}
		for _, v := range doc.Agreements {
			fmt.Fprintln(out, v)
		}
	}
	if partial {
		return interruptError(interrupted(), "the rows cover the seeds and real runs that ran")
	}
	if realErr != nil {
		return realErr
	}
	if gate && rr != nil && rr.Runs < gateMin {
		if asJSON {
			out = cmd.ErrOrStderr() // stdout is the JSON document
		}
		fmt.Fprintf(out, "the gate judged nothing: %d real runs, it wants %d (--gate-min-runs)\n", rr.Runs, gateMin)
	}
	if gate && rr != nil && rr.Runs >= gateMin {
		for _, v := range doc.Agreements {
			if !v.Agrees {
				return &exitError{code: 1, err: fmt.Errorf("simlab disagrees with the real core on %s", v.What)}
			}
		}
	}
	return nil
}
