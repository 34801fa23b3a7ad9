package realengine

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/simlab/simlab/check"
	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/flow"
	"github.com/simlab/simlab/model/program"
)

// A program's counterexample (check's shrunk scenario and its seed) forced
// on the real core: simlab reproduce FILE.yaml --seed N.
//
// A program's run cannot be replayed call for call as a fan-out schedule's
// is (reproduce.go): its replays make more calls than the History names.
// What its unconsumable log depends on is smaller (flow.Forcing): one
// writer's replay mints an entity from another statement than a fresh
// replay of the log does, because its write lands after events its replay
// had not seen. The real run is held to exactly that: the stale write (that
// entity's create, from that statement) is held at the World until the
// last event its writer had not seen is answered. Every other call goes its
// own way, with each step body pinned to the simulated run's (how long it
// ran and what it returned). A Date.now() choice also depends on time: the
// writer read short of a deadline, a fresh replay reads an event stamped
// past it. The event a fresh replay reads is held until the run's clock is
// past the deadline, and the writer's read is kept short of it by running
// the program dilated (bodies, sleeps and deadlines k times as long) until
// it lies forceMargin short: real timing moves by tens of milliseconds.

// forceMargin is how far the writer's Date.now() read must lie short of
// its deadline on the real run: well over the real runtime's own jitter (a
// claim, a list, a queue hop: a few to tens of milliseconds).
const forceMargin = 150 * time.Millisecond

// maxDilation bounds the slow-down: a 2 s story runs 80 s.
const maxDilation = 40

// ProgramForce is a program's counterexample prepared and forced.
type ProgramForce struct {
	Scenario string `json:"scenario"`
	Seed     uint64 `json:"seed"`
	// Dilation is how many times as slow the forced program runs (1: as
	// written).
	Dilation int `json:"dilation"`
	// Story is simlab's story of its run at Seed; Stale and Missed name the
	// write held and what it waits for.
	Story   []string       `json:"story"`
	Forcing flow.Forcing   `json:"-"`
	Stale   string         `json:"stale_write"`
	Missed  string         `json:"missed"`
	Holds   []HoldRule     `json:"holds"`
	Runs    int            `json:"runs"`
	Cores   []ForcedOnCore `json:"cores"`
	// Partial: the forcing stopped (an interrupt, an error) before every
	// run of every core was judged; Cores hold the runs that were.
	Partial bool `json:"partial,omitempty"`
	// Planned is how many real runs the forcing was to make, on every core.
	Planned int `json:"planned_runs"`
	// Progress, if set, is told of each real run judged (of every core's).
	Progress func(done, total int) `json:"-"`

	name   string
	prog   []program.Node
	cfg    flow.Config
	pinned map[int32][]PinnedBody
}

// ForcedOnCore is one core's forced runs: what simlab predicts for its
// replay (Expect: the log diverges as the story says, or not at all on a
// core whose clock reads as the story's writer did) and each real run.
type ForcedOnCore struct {
	Core       string      `json:"core"`
	Expect     bool        `json:"expect_divergence"`
	ExpectEnd  string      `json:"expect_end"`
	Runs       []ForcedRun `json:"runs"`
	Reproduced int         `json:"reproduced"`
	Agree      int         `json:"agree"`
}

// ForcedRun is one real run: how it ended, whether the hold let the stale
// write go after the missed event (Held), and where core's own replay of
// its log diverges (Divergence, with core's message), judged against the
// story (Reproduced: the same write, type and step, stops it).
type ForcedRun struct {
	End        string   `json:"end"`
	ErrorCodes []string `json:"error_codes,omitempty"`
	Held       string   `json:"held"`
	Divergence string   `json:"divergence"`
	Reproduced bool     `json:"reproduced"`
	Agrees     bool     `json:"agrees"`
	Why        string   `json:"why,omitempty"`
	// TimedOut: the run had not ended at --timeout; it was stopped and
	// read back as it was.
	TimedOut bool `json:"timed_out,omitempty"`
}

// PrepareProgramForce derives the forcing of sc's run at seed on core's
// replay: the story, the dilation (dilation 0: the least that puts the
// writer's clock read forceMargin short of its deadline), the hold rules
// and the pinned bodies. It refuses a seed whose log replays, a story the real side
// cannot be held to, and a scenario the real harness cannot run.
func PrepareProgramForce(sc model.Scenario, seed uint64, core Core, dilation, runs int) (*ProgramForce, error) {
	if err := Forceable(sc); err != nil {
		return nil, err
	}
	switch {
	case dilation < 0 || dilation > maxDilation:
		return nil, fmt.Errorf("--dilate %d: want 1..%d (0: the least that keeps the writer's clock read %v short of its deadline)", dilation, maxDilation, forceMargin)
	case runs < 1:
		return nil, fmt.Errorf("--runs %d: want at least one real run", runs)
	}
	return prepareForce(&ProgramForce{Scenario: sc.Name, Seed: seed, Runs: runs, name: "reproduce"}, sc, seed, core, dilation)
}

// Forceable refuses a scenario whose program's runs the real harness cannot
// be held to: not a program, another log view than the pinned release's,
// sequential replays, its own retry budget, drawn crashes.
func Forceable(sc model.Scenario) error { return check.ProgramForceable(sc) }

// prepareForce is PrepareProgramForce past its checks of the scenario and
// the flags.
func prepareForce(f *ProgramForce, sc model.Scenario, seed uint64, core Core, dilation int) (*ProgramForce, error) {
	d, err := forcing(sc, seed, core)
	if err != nil {
		return nil, fmt.Errorf("seed %d: %w", seed, err)
	}
	if c := d.fc.Clock; c != nil && (c.Stale >= c.Deadline || c.Fresh < c.Deadline || c.FreshAt < 0) {
		return nil, fmt.Errorf("seed %d: the writer's Date.now() read %v and a fresh replay's %v at a %v deadline; only a fresh read past the deadline (the clock running ahead with a pass) can be forced", seed, c.Stale, c.Fresh, c.Deadline)
	}
	k := dilation
	if k == 0 {
		k = 1
		if c := d.fc.Clock; c != nil {
			k = int(math.Ceil(float64(forceMargin) / float64(max(c.StaleGap(), time.Millisecond))))
			if k > maxDilation {
				return nil, fmt.Errorf("seed %d: the writer's Date.now() read lies %v short of its deadline; even dilated ×%d a real run's timing cannot be held that close (give --dilate to try)", seed, c.StaleGap(), maxDilation)
			}
		}
	}
	fc := d.fc
	f.Dilation, f.Forcing, f.cfg = k, fc, d.cfg
	f.prog = program.Dilated(sc.Workflow.Program, k)
	f.Story = d.res.Story(d.cfg.Program)
	f.Stale = fmt.Sprintf("event %d %s, minted from statement %d by %s (a fresh replay expects %s there)", fc.StaleAt, fc.Stale, fc.StaleNode, fc.Writer, fc.Expected)
	// What the stale write waits for: the last event its writer had not
	// seen, or, for a clock read, the event whose stamp a fresh replay
	// reads, itself held until the run's clock is past the deadline so
	// that it is stamped there.
	after, afterAt, afterBy := fc.Missed, fc.MissedAt, fc.MissedBy
	if c := fc.Clock; c != nil {
		ev := d.res.Log[c.FreshAt]
		after, afterAt, afterBy = ev.Event, c.FreshAt, d.res.ActorName(ev.By)
		if after.Ordinal < 0 {
			return nil, fmt.Errorf("seed %d: a fresh replay reads the clock from event %d (%s), which names no entity a hold can pick", seed, c.FreshAt, after)
		}
		ord := after.Ordinal
		f.Holds = append(f.Holds, HoldRule{
			Name:  "past_deadline",
			What:  HoldPattern{Kind: "call", Op: "events.create", Event: callEvent(d.res, afterAt), Ordinal: &ord},
			Until: HoldPattern{Kind: "elapsed", MS: (time.Duration(k)*c.Deadline + forceMargin/5).Milliseconds()},
		})
	}
	f.Missed = fmt.Sprintf("event %d %s, by %s", afterAt, after, afterBy)
	stmt, ord := fc.StaleNode, fc.Stale.Ordinal
	stale := HoldRule{
		Name:  "stale_write",
		What:  HoldPattern{Kind: "call", Op: "events.create", Event: callEvent(d.res, fc.StaleAt), Statement: &stmt, Ordinal: &ord},
		Until: HoldPattern{Kind: "answer", Op: "events.create", Event: callEvent(d.res, afterAt), Result: "ok"},
	}
	if after.Ordinal >= 0 {
		mo := after.Ordinal
		stale.Until.Ordinal = &mo
	}
	f.Holds = append(f.Holds, stale)
	f.pinned = map[int32][]PinnedBody{}
	acts := slices.Clone(d.res.Actors)
	slices.SortStableFunc(acts, func(a, b flow.Actor) int { return cmp.Compare(a.BodyStart, b.BodyStart) })
	for _, a := range acts {
		if !a.Body || a.Node < 0 {
			continue
		}
		ms := 0.0
		if a.BodyEnd > 0 {
			ms = float64(k) * float64(a.BodyEnd-a.BodyStart) / float64(time.Millisecond)
		}
		f.pinned[a.Node] = append(f.pinned[a.Node], PinnedBody{MS: ms, Result: a.Result})
	}
	return f, nil
}

// callEvent is the event type of the World call that wrote log event i:
// an inline step's lazy claim is one step_started call that the World
// records as the step's step_created and step_started.
func callEvent(res *flow.Result, i int) string {
	e := res.Log[i]
	if e.Type == program.StepCreated && e.By >= 0 && res.Actors[e.By].Kind == flow.ActorInline {
		return program.StepStarted.String()
	}
	return e.Type.String()
}

// forced is one simulated run of sc and its forcing.
type forced struct {
	cfg flow.Config
	res *flow.Result
	fc  flow.Forcing
}

func forcing(sc model.Scenario, seed uint64, core Core) (forced, error) {
	cfg, err := check.FlowConfig(&sc)
	if err != nil {
		return forced{}, err
	}
	cfg.Clock, cfg.Conflicts = core.ClockMode(), core.ConflictMode()
	res, err := flow.Run(cfg, seed)
	if err != nil {
		return forced{}, err
	}
	fc, err := res.Forcing(cfg.Program)
	if err != nil {
		return forced{}, fmt.Errorf("on core %s's replay: %w", core.Version, err)
	}
	return forced{cfg: cfg, res: res, fc: fc}, nil
}

// expectOn is what simlab predicts for the forced program on core: whether
// a fresh replay of its log diverges, and how the run ends.
func (f *ProgramForce) expectOn(core Core) (bool, string, error) {
	cfg := f.cfg
	cfg.Clock, cfg.Conflicts = core.ClockMode(), core.ConflictMode()
	res, err := flow.Run(cfg, f.Seed)
	if err != nil {
		return false, "", err
	}
	return res.Fresh.Status == program.Diverged, res.End.String(), nil
}

// ForceProgram makes f.Runs real runs of the forced program on each core
// (one harness call each) and judges each against simlab's prediction for
// that core. r must be prepared with the cores installed.
func (r *Runner) ForceProgram(ctx context.Context, f *ProgramForce, cores []Core, timeout time.Duration) error {
	done := 0
	f.Planned = len(cores) * f.Runs
	for _, core := range cores {
		expect, end, err := f.expectOn(core)
		if err != nil {
			return err
		}
		if err := r.forceOn(ctx, f, core, expect, end, timeout, &done, len(cores)*f.Runs); err != nil {
			return err
		}
	}
	return nil
}

// RunsJudged is how many real runs were judged, on every core.
func (f *ProgramForce) RunsJudged() int {
	n := 0
	for _, c := range f.Cores {
		n += len(c.Runs)
	}
	return n
}

// forceOn makes f.Runs real runs on core, each added to f.Cores as it is
// judged, so that an interrupted forcing keeps the runs that ran; done
// counts the runs of every core for f.Progress.
func (r *Runner) forceOn(ctx context.Context, f *ProgramForce, core Core, expect bool, end string, timeout time.Duration, done *int, total int) error {
	f.Cores = append(f.Cores, ForcedOnCore{Core: core.Version, Expect: expect, ExpectEnd: end})
	oc := &f.Cores[len(f.Cores)-1]
	replayer, err := r.OfflineReplayer(ctx, core, map[string][]program.Node{f.name: f.prog})
	if err != nil {
		return err
	}
	defer replayer.Close()
	for i := 1; i <= f.Runs; i++ {
		cfg := HarnessConfig{Seed: f.Seed, MaxInline: f.cfg.MaxInline, Runs: 1, DefaultDispatch: true,
			MaxDurationMS: float64(time.Duration(f.Dilation)*f.cfg.MaxDuration) / float64(time.Millisecond),
			LeaseSeconds:  int(f.cfg.InlineLease / time.Second), ProgramTimeoutIsOutcome: true,
			Gate: &GateConfig{Holds: f.Holds}, PinnedBodies: f.pinned, NoRetainedVM: !f.cfg.RetainedVM}
		run, err := r.RunProgram(ctx, core, cfg, f.name, f.prog, f.cfg.Body.Scaled(float64(f.Dilation)), timeout)
		if err != nil {
			return fmt.Errorf("core %s, real run %d: %w", core.Version, i, err)
		}
		fr, err := f.judge(run, replayer, expect, end)
		if err != nil {
			return fmt.Errorf("core %s, real run %d: %w", core.Version, i, err)
		}
		if fr.Reproduced {
			oc.Reproduced++
		}
		if fr.Agrees {
			oc.Agree++
		}
		oc.Runs = append(oc.Runs, fr)
		if *done++; f.Progress != nil {
			f.Progress(*done, total)
		}
	}
	return nil
}

// judge holds one real run to the story: core's own replay of its log
// must stop at the stale write's entity with an event of its type and step
// name (expect), or consume it (not expect), and the run end as simlab's.
func (f *ProgramForce) judge(run *RealRun, o *OfflineReplayer, expect bool, end string) (ForcedRun, error) {
	if len(run.ReadBack) != 1 {
		return ForcedRun{}, fmt.Errorf("%d runs read back, want 1", len(run.ReadBack))
	}
	b := run.ReadBack[0]
	fr := ForcedRun{End: b.End().String(), ErrorCodes: b.ErrorCodes, TimedOut: run.TimedOut,
		Held: "nothing held: the writes the holds name never came (the run's replays minted those entities otherwise)"}
	if run.Gate != nil {
		var held []string
		for _, rel := range run.Gate.Releases {
			switch rel.Why {
			case "until", "elapsed":
				held = append(held, rel.Gate+" held until "+rel.By)
			case "already":
				held = append(held, rel.Gate+" not held: what it waits for came first")
			default:
				held = append(held, rel.Gate+" released by "+rel.Why)
			}
		}
		for _, e := range run.Gate.Escapes {
			held = append(held, e.Gate+" escaped: nothing more could arrive while it held "+e.What)
		}
		if len(held) > 0 {
			fr.Held = strings.Join(held, "; ")
		}
	}
	log, err := ProgramEvents(b.Log)
	if err != nil {
		return fr, err
	}
	rr, err := o.Replay(f.name, program.BeforeEnd(log))
	if err != nil {
		return fr, err
	}
	before := program.BeforeEnd(log)
	switch {
	case rr.Outcome != "diverged":
		fr.Divergence = "none: core's replay of the log " + rr.Outcome
	case rr.At >= 0 && rr.At < len(before):
		fr.Divergence = fmt.Sprintf("at event %d %s: %s", rr.At, before[rr.At], rr.Message)
	default:
		fr.Divergence = fmt.Sprintf("at event %d: %s", rr.At, rr.Message)
	}
	same := rr.Outcome == "diverged" && rr.At >= 0 && rr.At < len(before) &&
		before[rr.At].Type == f.Forcing.Stale.Type && before[rr.At].Name == f.Forcing.Stale.Name && before[rr.At].Ordinal == f.Forcing.Stale.Ordinal
	fr.Reproduced = same && fr.End == end
	switch {
	case expect:
		fr.Agrees = fr.Reproduced
		if !fr.Reproduced {
			fr.Why = fmt.Sprintf("simlab's story stops at %s and the run ends %s", f.Forcing.Stale, end)
		}
	default:
		fr.Agrees = rr.Outcome != "diverged" && fr.End == end
		if !fr.Agrees {
			fr.Why = fmt.Sprintf("simlab's replay on this core consumes the log and the run ends %s", end)
		}
	}
	return fr, nil
}

// End is how real run b ended, as flow.End names a simulated run's:
// corrupted (CORRUPTED_EVENT_LOG or REPLAY_DIVERGENCE), completed, stuck
// (no terminal event) or failed.
func (b ReadBack) End() flow.End {
	switch {
	case b.Corrupted():
		return flow.Corrupted
	case b.FirstTerminal == "run_completed":
		return flow.Completed
	case b.FirstTerminal == "":
		return flow.Stuck
	}
	return flow.Failed
}
