package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/flow"
	"github.com/simlab/simlab/model/program"
	"github.com/simlab/simlab/properties/spancheck"
	"github.com/simlab/simlab/realengine"
	"github.com/simlab/simlab/traces"
)

// replayRow is one (view, sequential replays) cell of simlab replays: how
// its runs ended over the seeds. Its json names are a contract.
type replayRow struct {
	View       string `json:"view"`
	Sequential bool   `json:"sequential_replays"`
	Seeds      int    `json:"seeds"`
	Completed  int    `json:"completed"`
	Failed     int    `json:"failed"`
	Corrupted  int    `json:"corrupted"`
	Stuck      int    `json:"stuck"`
	// Unreplayable counts logs a fresh replay cannot consume.
	Unreplayable int `json:"unreplayable_logs"`
	// MostAtOnce is the most replays of one run in progress at once.
	MostAtOnce  int `json:"most_replays_at_once"`
	Divergences int `json:"divergent_replays"`
	// HungStepRuns counts runs whose log holds a step started more than
	// once and never finished (#4199's production marker); Kills the
	// invocations and steps killed at --max-duration.
	HungStepRuns int `json:"runs_with_hung_step"`
	Kills        int `json:"kills"`
	// RunsKilled counts runs with at least one kill.
	RunsKilled int `json:"runs_killed"`
	// EndedTwice counts runs whose log holds more than one accepted end
	// (concurrent last completers each ending it).
	EndedTwice     int `json:"ended_more_than_once"`
	FirstCorrupted int `json:"first_corrupted_seed,omitempty"`
	// FenceRestarts counts replays the tail fence or the count guard
	// refused a write of and restarted (the tail-fence and count-guard
	// views).
	FenceRestarts int `json:"fence_restarts,omitempty"`
	// Properties are check's properties judged on each run's spans
	// (--properties), in spancheck's order.
	Properties []propertyCount `json:"properties,omitempty"`
	real       bool
}

func newReplaysCommand() *cobra.Command {
	var shape, programFile, views, sequential string
	var branches, rounds, seedCount, maxInline, recovery, hangs int
	var seed uint64
	var watchdog, deadline, maxDuration, replayCost, inlineLease time.Duration
	var asJSON, showLog, judgeProps bool
	var real realFlags
	var tf traceFlags
	var search, hooks, callSite bool
	cmd := &cobra.Command{
		Use:   "replays",
		Short: "Run a workflow program as the runtime replays it and count the runs whose event log is corrupted",
		Long: `Run a workflow program (the storm, the control, or --program FILE) as the
runtime runs one (model/flow): invocations load the run's log, complete due
waits, replay the program and write what it asks for, concurrently, each from
the log it loaded; an entity's id is its position in the order the replay
created it, so a replay of another log can name it differently, later replays
diverge, and after the recovery replays the run fails CORRUPTED_EVENT_LOG.

One row per view and sequential-replays setting, over seeds 1..--seeds:
how the runs ended, how many logs a fresh replay cannot consume, and the most
replays of one run at once. The views: prefix, the pinned release (a write's
answer brings the events below it: every invocation's log is a prefix of the
run's); own-writes, a World without slot ids (an invocation goes on with the
log it loaded and its own writes); tail-fence, a World without slot ids that
refuses a replay's write unless the writer's log is the run's tail (the
team's append-tail-fence experiment, #3177: the runtime restarts the refused
replay in-process, from a fresh list); count-guard, a World without slot ids
that refuses a replay's write when it holds more events stamped at or before
the latest stamp of the writer's log than that log does (the team's
event-count guard, #3145 and #3172; restarted the same way). --seed N runs one seed and tells the story
of a corrupted log: the event a fresh replay stops at, who wrote it from which
log, and what it had not seen. --log prints that run's log; --trace-out FILE
or --otlp URL traces that run (simlab check --trace FILE judges its spans).
--json prints the rows. The exit code is 0 whatever the counts, but for
--properties and --real below.

--properties traces every run and judges simlab check's properties on its
spans, with check --trace's rules (replayable-log, single-terminal-event,
no-start-on-terminal, no-work-after-visible-end, ...): a table of the runs
violating each, per row, and exit 1 when one is violated (in CI, give --view
prefix: a World without slot ids corrupts by design).

storm: --branches branches at once, each for --rounds rounds racing a step
against a --watchdog sleep and running one more step when the step won, then
a final step (the engine team's step-storm). clock-storm: --branches
branches, each for --rounds rounds running a step and then a quick step once
Date.now() is --deadline past the workflow's start, else an extra one: on
cores to beta.53 a replay reads the time of the last event its pass took, so
two replays of different logs may branch differently even with slot ids
(docs/MODEL.md, "Date.now() branches corrupt the pinned release's logs"). control: --rounds rounds of a
step, one more step when its result says so, and a --watchdog sleep: the same
entity counts chosen by what a replay saw, one waker at a time. hook-storm:
--branches branches, each with its own hook raced against a --watchdog sleep
for --rounds rounds, one more step when the hook won, while an outside driver
resumes one live hook every 20ms for 3s (the team's hook-storm, #3147).
wake-loop: one loop of --rounds cycles racing a carried read of one hook
against a 1s heartbeat, wakes every 150ms, two at once and at each deadline
(the team's wake-loop, #4017). inline-hang: a
fan-out exactly --max-inline wide, all run inline by one invocation, whose last
step hangs its first --hangs attempts (2) until the time limit (--max-duration,
800s) kills the invocation, then a final step (the team's open production
report, vercel/workflow #4199): the KILLS column counts invocations killed at
the limit, HUNG STEP the runs whose log keeps a step started more than once and
never finished. A program file's step may hang too (hangs: N). ENDED TWICE counts
runs the World accepted more than one end for (world-local checks the run's
status, then writes: concurrent last completers' ends overlap).

--search draws, per seed, a program up to 3 deep, a time limit, a crash rate
between a claim and its body and max_inline (flow.DrawCase): a search over shapes and faults
for the ones that corrupt; --seed N --search prints case N's program, in the
program file's format, and its story. --search --hooks draws programs with
hooks too (flow.DrawHookCase: a hook raced against a sleep, once or in a
loop, its read carried or not, disposed or not) and a driver that resumes
them (a cadence of 20, 50 or 150ms for 3s, one hook or every one, bursts,
and at each wait's deadline). --search --real N runs cases 1..N on the
real core too, with their time limits and crashes (the harness kills or crashes
the delivery), prints each case's end on both sides, and judges the real
shares against simlab's over its --seeds cases (at least N: the same search,
so more seeds make simlab's share firmer), the share of runs failed too; a
case may wait out the inline-ownership lease, so give --inline-lease 10s (both
sides run it) or a --timeout past it.

--real N also runs the program N times on a pinned core (--core, default the
default pinned one) over world-local, one run per harness call, adds its row,
and judges simlab's prefix view (sequential off) against it: the share of runs
corrupted and of runs ended more than once, each against the real share's 95 %
interval; with --max-duration (the harness kills a delivery at it, as the
platform does) also the share of runs killed and of runs left with a hung
step. Exit 1 when one disagrees. The real row has no replay columns: the
harness does not see replays from inside. A real run waits out each hanging
attempt's limit and world-local's 5s redelivery: give inline-hang a limit a
run can wait out within --timeout (--max-duration 5s: the limit need only
outlast the other steps).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			var prog []program.Node
			var title string
			if cmd.Flags().Changed("hangs") && (search || programFile != "" || shape != "inline-hang") {
				return badInput(fmt.Errorf("--hangs is inline-hang's (a program file says hangs: N on its step)"))
			}
			if hooks && !search {
				return badInput(fmt.Errorf("--hooks draws the search's programs with hooks: give --search too"))
			}
			drawCase := flow.DrawCase
			if hooks {
				drawCase = flow.DrawHookCase
			}
			switch {
			case search:
				for _, f := range []string{"shape", "program", "branches", "rounds", "watchdog", "deadline", "max-duration", "max-inline"} {
					if cmd.Flags().Changed(f) {
						return badInput(fmt.Errorf("--search draws each seed's program, faults and max_inline: --%s does not apply", f))
					}
				}
				prog = []program.Node{{Step: "a"}} // each seed draws its own (flow.DrawCase)
				title = "search: each seed draws a program up to 3 deep (program.Random), a time limit (none, 500ms or 2s), a crash rate between claim and body (0, 5 % or 20 %) and max_inline (1 to 16; the rows set sequential replays)"
				if hooks {
					title = "search with hooks: each seed draws a program up to 3 deep with hooks (program.RandomWithHooks), a driver for them, a time limit (none, 500ms or 2s), a crash rate between claim and body (0, 5 % or 20 %) and max_inline (1 to 16; the rows set sequential replays)"
				}
			case programFile != "":
				if cmd.Flags().Changed("shape") || cmd.Flags().Changed("branches") || cmd.Flags().Changed("rounds") || cmd.Flags().Changed("watchdog") {
					return badInput(fmt.Errorf("--program takes the place of --shape, --branches, --rounds and --watchdog: give one or the other"))
				}
				data, err := os.ReadFile(programFile)
				if err != nil {
					return badInput(fmt.Errorf("--program: %w", err))
				}
				if prog, err = model.ParseProgram(data); err != nil {
					return badInput(fmt.Errorf("--program %s: %w", programFile, err))
				}
				title = "program " + programFile
			case shape == "storm":
				if branches < 1 || branches > 1000 || rounds < 1 || rounds > program.MaxLoop {
					return badInput(fmt.Errorf("--branches %d, --rounds %d: want 1..1000 branches and 1..%d rounds", branches, rounds, program.MaxLoop))
				}
				prog = flow.Storm(branches, rounds, watchdog)
				title = fmt.Sprintf("storm: %d branches × %d rounds, each racing a step against a %v sleep", branches, rounds, watchdog)
			case shape == "hook-storm":
				if branches < 1 || branches > 1000 || rounds < 1 || rounds > program.MaxLoop {
					return badInput(fmt.Errorf("--branches %d, --rounds %d: want 1..1000 branches and 1..%d rounds", branches, rounds, program.MaxLoop))
				}
				prog = flow.HookStorm(branches, rounds, watchdog)
				title = fmt.Sprintf("hook-storm: %d branches × %d rounds, each racing its own hook against a %v sleep; one live hook resumed every 20ms for 3s", branches, rounds, watchdog)
			case shape == "wake-loop":
				for _, f := range []string{"branches", "watchdog"} {
					if cmd.Flags().Changed(f) {
						return badInput(fmt.Errorf("--%s: wake-loop is one loop racing one hook against its 1s heartbeat; give --rounds for its cycles", f))
					}
				}
				if !cmd.Flags().Changed("rounds") {
					rounds = 12
				}
				if rounds < 1 || rounds > program.MaxLoop {
					return badInput(fmt.Errorf("--rounds %d: want 1..%d cycles", rounds, program.MaxLoop))
				}
				prog = flow.WakeLoop(rounds, time.Second)
				title = fmt.Sprintf("wake-loop: %d cycles racing a carried hook read against a 1s heartbeat; wakes every 150ms, two at once, and at each deadline", rounds)
			case shape == "inline-hang":
				for _, f := range []string{"branches", "rounds", "watchdog"} {
					if cmd.Flags().Changed(f) {
						return badInput(fmt.Errorf("--%s: inline-hang is a fan-out exactly --max-inline wide whose last step hangs; it has no %s", f, f))
					}
				}
				if maxInline < 1 || maxInline > 16 {
					return badInput(fmt.Errorf("--max-inline %d: inline-hang's fan-out is that wide: want 1..16 (core's range)", maxInline))
				}
				if !cmd.Flags().Changed("max-duration") {
					maxDuration = 800 * time.Second // the plan's limit in #4199
				}
				if hangs < 0 || hangs > program.MaxHangs {
					return badInput(fmt.Errorf("--hangs %d: want how many attempts of the step hang, 0..%d", hangs, program.MaxHangs))
				}
				if maxDuration <= 0 && hangs > 0 {
					return badInput(fmt.Errorf("--max-duration %v: inline-hang's step hangs until a time limit kills its invocation; want a positive limit", maxDuration))
				}
				prog = flow.InlineHang(maxInline, hangs)
				title = fmt.Sprintf("inline-hang: a fan-out of %d steps run inline, the last hanging its first %d attempts until the time limit (%v) kills the invocation, then a final step",
					maxInline, hangs, maxDuration)
			case shape == "control":
				if cmd.Flags().Changed("branches") {
					return badInput(fmt.Errorf("--branches: the control has one branch (it is the storm's, one waker at a time)"))
				}
				if rounds < 1 || rounds > program.MaxLoop {
					return badInput(fmt.Errorf("--rounds %d: want 1..%d", rounds, program.MaxLoop))
				}
				prog = flow.Control(rounds, watchdog)
				title = fmt.Sprintf("control: %d rounds of a step, maybe one more, and a %v sleep", rounds, watchdog)
			case shape == "clock-storm":
				if cmd.Flags().Changed("watchdog") {
					return badInput(fmt.Errorf("--watchdog: clock-storm races no sleep; its rounds test --deadline"))
				}
				if branches < 1 || branches > 1000 || rounds < 1 || rounds > program.MaxLoop {
					return badInput(fmt.Errorf("--branches %d, --rounds %d: want 1..1000 branches and 1..%d rounds", branches, rounds, program.MaxLoop))
				}
				if deadline < time.Millisecond || deadline%time.Millisecond != 0 {
					return badInput(fmt.Errorf("--deadline %v: want a positive whole number of milliseconds", deadline))
				}
				prog = flow.ClockStorm(branches, rounds, deadline)
				title = fmt.Sprintf("clock-storm: %d branches × %d rounds, each running a step, then a quick step once Date.now() is %v past the start, else an extra one", branches, rounds, deadline)
			default:
				return badInput(fmt.Errorf("--shape %q: want storm, clock-storm, control, hook-storm, wake-loop or inline-hang (or --program FILE)", shape))
			}
			if cmd.Flags().Changed("deadline") && shape != "clock-storm" {
				return badInput(fmt.Errorf("--deadline is clock-storm's: give --shape clock-storm"))
			}
			if watchdog <= 0 && shape != "inline-hang" && shape != "clock-storm" && !search {
				return badInput(fmt.Errorf("--watchdog %v: want a positive duration", watchdog))
			}
			compiled, err := program.Compile(prog)
			if err != nil {
				return badInput(err)
			}
			viewList, err := parseViews(views)
			if err != nil {
				return badInput(err)
			}
			seqList, err := parseSequential(sequential)
			if err != nil {
				return badInput(err)
			}
			if compiled.UsesHooks() && shape != "hook-storm" && shape != "wake-loop" {
				// A hook nobody outside resumes never fires: the driver is a
				// scenario's (workflow.resumes).
				return badInput(fmt.Errorf("--program %s creates a hook, and replays has no driver to resume it: write a scenario with workflow.resumes and run simlab check or validate --scenario FILE", programFile))
			}
			base := flow.Defaults(compiled)
			switch shape {
			case "hook-storm":
				base.Resumes = flow.HookStormResumes
			case "wake-loop":
				base.Resumes = flow.WakeLoopResumes
			}
			base.MaxInline, base.RecoveryReplays, base.MaxDuration, base.InlineLease = maxInline, recovery, maxDuration, inlineLease
			base.CallSiteIDs = callSite
			if cmd.Flags().Changed("replay-cost") {
				if replayCost < 0 {
					return badInput(fmt.Errorf("--replay-cost %v: want a duration of at least 0", replayCost))
				}
				base.Replay.PerEvent = replayCost
			}
			if maxDuration > 0 {
				// Room for the kills and redeliveries a time limit makes.
				base.MaxTime = max(base.MaxTime, time.Duration(base.MaxDeliveries)*(maxDuration+base.Redeliver))
			}
			if err := base.Validate(); err != nil {
				return badInput(err)
			}
			// caseOf is what seed s runs: the program and the base, or with
			// --search the seed's own program and faults.
			caseOf := func(s uint64) ([]program.Node, flow.Config) {
				if search {
					k := drawCase(s)
					return k.Program, k.Config(base)
				}
				return prog, base
			}
			if err := tf.check(cmd); err != nil {
				return err
			}
			if cmd.Flags().Changed("max-spans") {
				return badInput(fmt.Errorf("--max-spans: a program's run is traced whole"))
			}
			if callSite && real.runs > 0 {
				return badInput(fmt.Errorf("--callsite-ids is the team's proposed fix (#3179), in no pinned core: --real cannot run it"))
			}
			if err := real.check(cmd, compiled, maxDuration, inlineLease, search, viewList, seqList); err != nil {
				return badInput(err)
			}
			if real.runs > 0 && real.core != "" {
				// simlab replays as the chosen core does (its clock).
				c, _ := realengine.CoreByVersion(real.core)
				base.Clock, base.Conflicts = c.ClockMode(), c.ConflictMode()
			}
			if search && real.runs > seedCount {
				// The real runs are cases 1..N: simlab's rows must hold them
				// too, for the case-by-case table.
				return badInput(fmt.Errorf("--search --real %d runs cases 1..%d on both sides: --seeds %d must cover them (give --seeds %d or more)", real.runs, real.runs, seedCount, real.runs))
			}
			if cmd.Flags().Changed("seed") {
				if cmd.Flags().Changed("seeds") {
					return badInput(fmt.Errorf("--seed runs one seed and --seeds a range: give one"))
				}
				if judgeProps {
					return badInput(fmt.Errorf("--properties counts violations over seeds; one run's: --seed %d --trace-out run.jsonl, then simlab check --trace run.jsonl", seed))
				}
				if len(viewList) != 1 || len(seqList) != 1 {
					return badInput(fmt.Errorf("--seed tells one run's story: choose one --view (prefix or own-writes) and one --sequential (on or off)"))
				}
				_, cfg := caseOf(seed)
				cfg.View, cfg.SequentialReplays = viewList[0], seqList[0]
				res, err := flow.Run(cfg, seed)
				if err != nil {
					return err
				}
				if search && !asJSON {
					k := drawCase(seed)
					title = fmt.Sprintf("search case %d: time limit %v, crash rate %v, max_inline %d, the program:\n%s", seed, k.MaxDuration, k.Crash, k.MaxInline, strings.TrimRight(program.Format(k.Program), "\n"))
				}
				if tf.toStdout() {
					// The trace is stdout: the story goes to stderr.
					out = cmd.ErrOrStderr()
				}
				story := res.Explain(cfg.Program)
				if err := printReplayRun(out, title, cfg, seed, res, story, showLog, asJSON); err != nil || !tf.wanted() {
					return err
				}
				return tf.emitFlow(traces.FlowRun{Result: res, Config: cfg, Seed: seed, Workflow: shapeName(shape, programFile, search, seed), Story: story},
					cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			if tf.wanted() {
				return badInput(fmt.Errorf("--trace-out and --otlp trace one run: give --seed N (with one --view and one --sequential)"))
			}
			if showLog {
				return badInput(fmt.Errorf("--log prints one run's log: give --seed N"))
			}
			if seedCount < 1 {
				return badInput(fmt.Errorf("--seeds %d: want at least 1", seedCount))
			}
			ctx, interrupted, release := onInterrupt(cmd.Context())
			defer release()
			var rows []replayRow
			// The search's first --real cases as simlab ran them (the
			// pinned release's view, sequential off), for the case table.
			var simCases []searchCase
			partial := false
		cells:
			for _, v := range viewList {
				for _, sq := range seqList {
					row := replayRow{View: v.String(), Sequential: sq}
					var runner flow.Runner
					for s := 1; s <= seedCount; s++ {
						_, cfg := caseOf(uint64(s))
						cfg.View, cfg.SequentialReplays = v, sq
						if ctx.Err() != nil {
							partial = true
							if row.Seeds > 0 {
								rows = append(rows, row)
							}
							break cells
						}
						res, err := runner.Run(cfg, uint64(s))
						if err != nil {
							return err
						}
						row.add(res, s)
						if search && v == flow.ViewPrefix && !sq && s <= real.runs {
							simCases = append(simCases, simCase(uint64(s), cfg, res))
						}
						if judgeProps {
							if err := row.judge(res, cfg, uint64(s), shapeName(shape, programFile, search, uint64(s))); err != nil {
								return err
							}
						}
					}
					rows = append(rows, row)
				}
			}
			// The real core's runs of the same program, once simlab's rows
			// are in hand: an error there loses none of them.
			var rr *realReplays
			var realErr error
			if real.runs > 0 && !partial {
				rr, realErr = real.run(ctx, cmd, caseOf)
				partial = ctx.Err() != nil
			}
			verdicts := rr.judge(rows, maxDuration > 0 || search, search)
			var cases []searchCase
			if search && rr != nil {
				cases = pairCases(simCases, rr.Cases)
			}
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				doc := map[string]any{"title": title, "partial": partial, "rows": rows}
				if rr != nil {
					doc["real"], doc["agreements"] = rr, verdicts
				}
				if cases != nil {
					doc["cases"] = cases
				}
				if err := enc.Encode(doc); err != nil {
					return err
				}
			} else {
				if rr != nil {
					rows = append(rows, rr.row())
				}
				printReplayRows(out, title, rows, partial, sameRun(cmd))
				if cases != nil {
					if err := printSearchCases(out, rr.Core, cases); err != nil {
						return err
					}
				}
				if judgeProps {
					printPropertyCounts(out, rows)
				}
				for _, v := range verdicts {
					fmt.Fprintln(out, v)
				}
			}
			if partial {
				return interruptError(interrupted(), "the rows cover the seeds and real runs that ran (SEEDS says how many)")
			}
			if realErr != nil {
				return realErr
			}
			for _, v := range verdicts {
				if !v.Agrees {
					return &exitError{code: 1, err: fmt.Errorf("simlab disagrees with the real core on %s", v.What)}
				}
			}
			if judgeProps {
				for _, r := range rows {
					var broken []string
					first := uint64(0)
					for _, p := range r.Properties {
						if p.Violated > 0 {
							broken = append(broken, fmt.Sprintf("%s (%d of %d runs, first seed %d)", p.Name, p.Violated, r.Seeds, p.FirstSeed))
							if first == 0 || p.FirstSeed < first {
								first = p.FirstSeed
							}
						}
					}
					if len(broken) > 0 {
						return &exitError{code: 1, err: fmt.Errorf("violated in the %s view, sequential %s: %s; a run's trace: simlab replays --seed %d --view %s --sequential %s%s --trace-out run.jsonl, then simlab check --trace run.jsonl",
							r.View, onOff(r.Sequential), strings.Join(broken, ", "), first, r.View, onOff(r.Sequential), sameRun(cmd))}
					}
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&shape, "shape", "storm", "the program: storm, clock-storm, control, hook-storm, wake-loop or inline-hang")
	f.StringVar(&programFile, "program", "", "a YAML file holding `program:` and its statements (docs/SCENARIOS.md, Programs), in place of --shape")
	f.IntVar(&branches, "branches", 16, "the storm's branches")
	f.IntVar(&rounds, "rounds", 3, "each branch's rounds (the control's rounds)")
	f.DurationVar(&watchdog, "watchdog", 300*time.Millisecond, "the sleep each round races (the control's pause)")
	f.DurationVar(&deadline, "deadline", time.Second, "clock-storm: how long past the workflow's start Date.now() must be for a round's quick step")
	f.StringVar(&views, "view", "all", "prefix, own-writes, tail-fence, count-guard or all")
	f.StringVar(&sequential, "sequential", "all", "sequential replays: off, on or all")
	f.IntVar(&seedCount, "seeds", 100, "run seeds 1..N per row")
	f.Uint64Var(&seed, "seed", 1, "run this one seed and tell its story (with one --view and one --sequential)")
	f.IntVar(&maxInline, "max-inline", 3, "steps an invocation runs itself per suspension (core's MAX_INLINE_STEPS)")
	f.IntVar(&recovery, "recovery-replays", 3, "fresh replays after a divergence before the run fails CORRUPTED_EVENT_LOG")
	f.DurationVar(&replayCost, "replay-cost", program.Beta52ReplayCost.PerEvent, "what a replay costs per event of its log (core beta.52's fit, besides its 1.35ms base and 140µs per entity: simlab calibrate)")
	f.DurationVar(&maxDuration, "max-duration", 0, "kill an invocation that runs longer (the platform's time limit; 0: none; inline-hang: 800s unless set)")
	f.DurationVar(&inlineLease, "inline-lease", 860*time.Second, "the inline-ownership lease (WORKFLOW_INLINE_OWNERSHIP_LEASE_SECONDS; with --real whole seconds, 1s..900s)")
	f.IntVar(&hangs, "hangs", 2, "inline-hang: how many attempts of its last step hang until the time limit kills them")
	f.BoolVar(&asJSON, "json", false, "print the rows (or the one run) as JSON")
	f.BoolVar(&showLog, "log", false, "with --seed: print the run's log, each event with its writer")
	f.BoolVar(&judgeProps, "properties", false, "judge simlab check's properties on each run's spans (the rules of check --trace) and count the runs violating each; exit 1 on a violation")
	f.BoolVar(&callSite, "callsite-ids", false, "mint call-site correlation ids, the team's proposed fix (vercel/workflow #3179): an entity's id is its statement's and its occurrence there, not its place in the replay's order")
	f.BoolVar(&hooks, "hooks", false, "with --search: programs with hooks and a driver resuming them (flow.DrawHookCase)")
	f.BoolVar(&search, "search", false, "search over shapes and faults: each seed draws its own program, time limit and crash rate (with --seed: that case, its program and story)")
	real.flags(f)
	tf.register(cmd)
	return cmd
}

func parseViews(s string) ([]flow.View, error) {
	if s == "all" {
		return []flow.View{flow.ViewPrefix, flow.ViewOwnWrites, flow.ViewTailFence, flow.ViewCountGuard}, nil
	}
	v, err := flow.ParseView(s)
	if err != nil {
		return nil, fmt.Errorf("--view %q: want prefix, own-writes, tail-fence, count-guard or all", s)
	}
	return []flow.View{v}, nil
}

func parseSequential(s string) ([]bool, error) {
	switch s {
	case "all":
		return []bool{false, true}, nil
	case "off":
		return []bool{false}, nil
	case "on":
		return []bool{true}, nil
	}
	return nil, fmt.Errorf("--sequential %q: want off, on or all", s)
}

func (row *replayRow) add(res *flow.Result, seed int) {
	row.Seeds++
	switch res.End {
	case flow.Completed:
		row.Completed++
	case flow.Failed:
		row.Failed++
	case flow.Corrupted:
		row.Corrupted++
		if row.FirstCorrupted == 0 {
			row.FirstCorrupted = seed
		}
	default:
		row.Stuck++
	}
	if res.Fresh.Status == program.Diverged {
		row.Unreplayable++
	}
	row.MostAtOnce = max(row.MostAtOnce, res.MaxConcurrentReplays)
	if res.HungSteps > 0 {
		row.HungStepRuns++
	}
	row.Kills += res.Killed
	if res.Killed > 0 {
		row.RunsKilled++
	}
	if res.RunEnds > 1 {
		row.EndedTwice++
	}
	row.Divergences += res.Divergences
	row.FenceRestarts += res.FenceRestarts
}

// shapeName names the workflow a run's trace calls it by.
func shapeName(shape, programFile string, search bool, seed uint64) string {
	switch {
	case search:
		return fmt.Sprintf("search-case-%d", seed)
	case programFile != "":
		return strings.TrimSuffix(filepath.Base(programFile), filepath.Ext(programFile))
	}
	return shape
}

// propertyCount is one property over a row's runs, judged on each run's
// spans: in how many runs it could be judged and was violated, and the
// first violating seed and why.
type propertyCount struct {
	Name      string `json:"property"`
	Judged    int    `json:"judged_runs"`
	Violated  int    `json:"violated_runs"`
	FirstSeed uint64 `json:"first_seed,omitempty"`
	First     string `json:"first,omitempty"`
}

// judge traces run res (seed's) and judges check's properties on its
// spans, as check --trace does.
func (row *replayRow) judge(res *flow.Result, cfg flow.Config, seed uint64, workflow string) error {
	spans, _, err := traces.BuildFlow(traces.FlowRun{Result: res, Config: cfg, Seed: seed, Workflow: workflow}, traces.Options{})
	if err != nil {
		return err
	}
	rep := spancheck.Check(traces.FromReadOnly(spans))
	if row.Properties == nil {
		for _, v := range rep.Verdicts {
			row.Properties = append(row.Properties, propertyCount{Name: v.Property})
		}
	}
	for i, v := range rep.Verdicts {
		p := &row.Properties[i]
		if !v.Judged {
			continue
		}
		p.Judged++
		if len(v.Violations) > 0 {
			if p.Violated++; p.FirstSeed == 0 {
				p.FirstSeed, p.First = seed, v.Violations[0].Message
			}
		}
	}
	return nil
}

// printPropertyCounts prints, per property judged in some row, each row's
// count; the properties no run's spans could judge in one line.
func printPropertyCounts(w io.Writer, rows []replayRow) {
	if len(rows) == 0 || len(rows[0].Properties) == 0 {
		return
	}
	fmt.Fprintln(w, "check's properties, judged on each run's spans (the rules of simlab check --trace):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "PROPERTY"
	for _, r := range rows {
		if !r.real {
			head += "\t" + r.View + ", sequential " + onOff(r.Sequential)
		}
	}
	fmt.Fprintln(tw, head)
	var never []string
	for i, p := range rows[0].Properties {
		judged := false
		line := p.Name
		for _, r := range rows {
			if r.real {
				continue
			}
			q := r.Properties[i]
			switch {
			case q.Judged == 0:
				line += "\tnot judged"
			case q.Violated == 0:
				judged = true
				line += fmt.Sprintf("\tholds (%d judged)", q.Judged)
			default:
				judged = true
				line += fmt.Sprintf("\tVIOLATED in %d of %d (first seed %d)", q.Violated, r.Seeds, q.FirstSeed)
			}
		}
		if !judged {
			never = append(never, p.Name)
			continue
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	if len(never) > 0 {
		fmt.Fprintf(w, "not judged on these spans (simlab check --trace says why): %s\n", strings.Join(never, ", "))
	}
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func printReplayRows(w io.Writer, title string, rows []replayRow, partial bool, same string) {
	fmt.Fprintln(w, title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VIEW\tSEQUENTIAL\tSEEDS\tCOMPLETED\tFAILED\tCORRUPTED\tSTUCK\tUNREPLAYABLE LOGS\tDIVERGENT REPLAYS\tMOST REPLAYS AT ONCE\tKILLS\tHUNG STEP\tENDED TWICE")
	for _, r := range rows {
		if r.real {
			// The harness sees no replay from inside: those columns are
			// simlab's alone.
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t-\t-\t%d\t%d\t%d\n", r.View, onOff(r.Sequential), r.Seeds, r.Completed, r.Failed, r.Corrupted, r.Stuck, r.Unreplayable, r.Kills, r.HungStepRuns, r.EndedTwice)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", r.View, onOff(r.Sequential), r.Seeds, r.Completed, r.Failed, r.Corrupted, r.Stuck, r.Unreplayable, r.Divergences, r.MostAtOnce, r.Kills, r.HungStepRuns, r.EndedTwice)
	}
	tw.Flush()
	for _, r := range rows {
		if r.FirstCorrupted > 0 {
			fmt.Fprintf(w, "first corrupted, %s view, sequential %s: seed %d; its story: simlab replays --seed %d --view %s --sequential %s%s\n",
				r.View, onOff(r.Sequential), r.FirstCorrupted, r.FirstCorrupted, r.View, onOff(r.Sequential), same)
		}
	}
	if partial {
		fmt.Fprintln(w, "PARTIAL: interrupted; each row is over the seeds in its SEEDS column")
	}
}

func printReplayRun(w io.Writer, title string, cfg flow.Config, seed uint64, res *flow.Result, story []string, showLog, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"title": title, "seed": seed, "view": cfg.View.String(),
			"sequential_replays": cfg.SequentialReplays, "end": res.End.String(), "events": len(res.Log),
			"fresh_replay": res.Fresh.String(), "divergent_replays": res.Divergences,
			"most_replays_at_once": res.MaxConcurrentReplays, "story": story})
	}
	fmt.Fprintln(w, title)
	fmt.Fprintf(w, "seed %d, %s view, sequential replays %s: %s; %d events, %d invocations and steps, %d divergent replays, most replays at once %d; a fresh replay of the log: %s\n",
		seed, cfg.View, onOff(cfg.SequentialReplays), res.End, len(res.Log), len(res.Actors), res.Divergences, res.MaxConcurrentReplays, res.Fresh)
	for _, l := range story {
		fmt.Fprintln(w, l)
	}
	if showLog {
		fmt.Fprintln(w, "log:")
		for i, e := range res.Log {
			fmt.Fprintf(w, "  %3d +%v %s, by %s\n", i, time.Duration(e.At).Round(time.Microsecond), e.Event, res.ActorName(e.By))
		}
	}
	return nil
}

// sameRun is the flags a command that replays one of these runs must
// repeat: every flag set but the ones that choose rows and output.
func sameRun(cmd *cobra.Command) string {
	var b strings.Builder
	cmd.Flags().Visit(func(f *pflag.Flag) {
		switch f.Name {
		case "seeds", "seed", "view", "sequential", "json", "log", "properties",
			// The real runs' flags: one run's story is simlab's alone.
			"real", "core", "engine-dir", "no-install", "timeout":
			return
		}
		if f.Value.Type() == "bool" {
			// A bool flag takes no separate word: --search true is two.
			fmt.Fprintf(&b, " --%s=%s", f.Name, f.Value.String())
			return
		}
		fmt.Fprintf(&b, " --%s %s", f.Name, model.ShellQuote(f.Value.String()))
	})
	return b.String()
}
