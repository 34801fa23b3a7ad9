package realengine

import (
	"math"
	"testing"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// The interval is Clopper-Pearson's: the published values for 0, 1 and 5
// of 10 at 95 %, and n = 0 knows nothing.
func TestShareIntervalIsClopperPearson(t *testing.T) {
	for _, tc := range []struct {
		k, n   int
		lo, hi float64
	}{
		{0, 10, 0, 0.3085},
		{1, 10, 0.0025, 0.4450},
		{5, 10, 0.1871, 0.8129},
		{10, 10, 0.6915, 1},
		{0, 30, 0, 0.1157},
		{0, 0, 0, 1},
	} {
		lo, hi := ShareInterval(tc.k, tc.n, 0.05)
		if math.Abs(lo-tc.lo) > 5e-4 || math.Abs(hi-tc.hi) > 5e-4 {
			t.Errorf("%d of %d: [%.4f, %.4f], want [%.4f, %.4f]", tc.k, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
}

// Each simlab row is judged against the real row of its width and
// prologue: inside the real runs' range of lazy reads and the real share's
// interval it agrees, outside it does not; rows of another prologue or
// width are not compared.
func TestAgreementsJudgeSimlabAgainstTheRealRows(t *testing.T) {
	real := Row{Branches: 16, Engine: "real", Core: "5.0.0-beta.52", Prologue: RunContext, LazyPerFanoutMin: 0, LazyPerFanoutMax: 1, Fanouts: 10}
	rows := []Row{
		real,
		{Branches: 16, Engine: "simlab", Prologue: RunContext, LazyPerFanout: 0.6, ConcurrentLastCompleters: 0.05},
		{Branches: 16, Engine: "simlab", Prologue: RunsGet, LazyPerFanout: 0},
		{Branches: 48, Engine: "simlab", Prologue: RunContext, LazyPerFanout: 9},
	}
	got := Agreements(rows)
	if len(got) != 1 || !got[0].LazyAgrees || !got[0].ConcurrentAgrees {
		t.Fatalf("%+v: want one agreeing row", got)
	}
	rows[1].LazyPerFanout, rows[1].ConcurrentLastCompleters = 1.4, 0.45
	got = Agreements(rows)
	if got[0].LazyAgrees || got[0].ConcurrentAgrees {
		t.Errorf("lazy 1.4 against 0..1 and 45 %% against 0 of 10: %+v, want neither to agree", got[0])
	}
}

// The ends: 6 of 12 real runs that ended more than once admit 17-83 %;
// simlab's 5.5 % is outside it (the 96-branch disagreement validate
// printed "agrees" over), 50 % inside. A real run failed for its log is
// judged against simlab's failed or unreplayable runs the same way.
func TestAgreementsJudgeTheEnds(t *testing.T) {
	real := Row{Branches: 96, Engine: "real", Core: "5.0.0-beta.52", Prologue: RunContext, Fanouts: 12, RunsCounted: 12, RunsMultiTerminal: 6}
	sim := Row{Branches: 96, Engine: "simlab", Prologue: RunContext, RunsCounted: 200, RunsMultiTerminal: 11}
	got := Agreements([]Row{real, sim})
	if len(got) != 1 || got[0].EndedAgrees || got[0].RealEnded != 6 || got[0].RealRuns != 12 || math.Abs(got[0].Ended-0.055) > 1e-9 {
		t.Fatalf("%+v: want 5.5 %% judged outside 6 of 12", got)
	}
	sim.RunsMultiTerminal = 100
	if got := Agreements([]Row{real, sim}); !got[0].EndedAgrees || !got[0].CorruptedAgree {
		t.Fatalf("%+v: want 50 %% inside 6 of 12, and no corruption on either side agreeing", got[0])
	}
	real.RunsCorrupted = 12
	if got := Agreements([]Row{real, sim}); got[0].CorruptedAgree || got[0].RealCorrupted != 12 {
		t.Fatalf("%+v: every real run corrupted against none of simlab's agrees", got[0])
	}
	sim.RunsUnreplayable = 200
	if got := Agreements([]Row{real, sim}); !got[0].CorruptedAgree {
		t.Fatalf("%+v: simlab's unreplayable logs count as its corrupted runs", got[0])
	}
}

// Who ends the run: every one of 17 real runs ended by a queued last
// completer admits 80-100 %; simlab's orchestrator ending 36 of 40 (10 %
// by a step) is outside it, 39 of 40 inside.
func TestAgreementsJudgeWhoEndsTheRun(t *testing.T) {
	real := Row{Branches: 96, Engine: "real", Core: "5.0.0-beta.52", Prologue: RunContext, Fanouts: 17, RunsCounted: 17, RunsEndedByStep: 17}
	sim := Row{Branches: 96, Engine: "simlab", Prologue: RunContext, RunsCounted: 40, RunsEndedByStep: 4}
	got := Agreements([]Row{real, sim})
	if len(got) != 1 || got[0].EndedByStepAgrees || got[0].RealEndedByStep != 17 || math.Abs(got[0].EndedByStep-0.1) > 1e-9 || got[0].EndedByStepHigh != 1 {
		t.Fatalf("%+v: want 10 %% judged outside 17 of 17", got)
	}
	sim.RunsEndedByStep = 39
	if got := Agreements([]Row{real, sim}); !got[0].EndedByStepAgrees {
		t.Fatalf("%+v: want 97.5 %% inside 17 of 17", got[0])
	}
}

// A real run's log, as the harness reads it back, is judged by simlab's
// replay of the harness workflow: the fan-out list it ran, up to the log's
// end; an entity no replay mints, another step's name or an event type the
// replay does not know makes it unreplayable.
func TestReplayableJudgesTheRealLog(t *testing.T) {
	var r RealRun
	r.Fanouts = append(r.Fanouts, RealFanout{RunID: "wrun_a", Branches: 2})
	ev := func(typ string, k int32) ReplayEvent {
		if k < 0 {
			return ReplayEvent{Type: typ, Ordinal: -1}
		}
		return ReplayEvent{Type: typ, Kind: "step", Ordinal: k, Name: HarnessStep}
	}
	good := []ReplayEvent{ev("run_created", -1), ev("run_started", -1), ev("step_created", 0), ev("step_created", 1),
		ev("step_completed", 1), ev("step_completed", 0), ev("run_completed", -1), ev("run_completed", -1), {Type: "noop", Ordinal: -1}}
	if !r.Replayable(ReadBack{RunID: "wrun_a", Log: good}) {
		t.Fatal("a whole fan-out's log, ended twice, is replayable")
	}
	for name, log := range map[string][]ReplayEvent{
		"an id the replay never mints":     append(good[:4:4], ev("step_created", 2)),
		"an id outside the run's sequence": append(good[:2:2], ev("step_created", -1)),
		"another step's name":              append(good[:2:2], ReplayEvent{Type: "step_created", Kind: "step", Ordinal: 0, Name: "other"}),
		"a hook":                           append(good[:2:2], ReplayEvent{Type: "hook_created", Kind: "hook", Ordinal: 0}),
	} {
		if log[len(log)-1].Type == "step_created" && log[len(log)-1].Kind == "" {
			log[len(log)-1].Kind = "step"
		}
		if r.Replayable(ReadBack{RunID: "wrun_a", Log: log}) {
			t.Errorf("%s: judged replayable", name)
		}
	}
	if !(ReadBack{ErrorCodes: []string{"CORRUPTED_EVENT_LOG"}}).Corrupted() || (ReadBack{ErrorCodes: []string{"USER_ERROR"}}).Corrupted() {
		t.Error("Corrupted reads the run_failed error codes")
	}
}

// Who ended a simlab run is the message behind the first accepted terminal
// write (by its answer): an inline step counts as its orchestrator's, a
// refused write is an attempt that ended nothing.
func TestSimWhoEndedReadsTheFirstAcceptedEnd(t *testing.T) {
	h := &model.History{
		Runs: make([]model.RunInfo, 2),
		Deliveries: []model.Delivery{
			{Msg: 0, Kind: model.MsgWorkflow, Parent: -1},
			{Msg: -1, Kind: model.MsgStep, Parent: 0}, // an inline step of d0
			{Msg: 1, Kind: model.MsgStep, Parent: -1},
			{Msg: 2, Kind: model.MsgStep, Parent: -1},
		},
	}
	end := func(run world.RunID, d int32, res world.Result, at sim.Time) model.Call {
		return model.Call{Op: model.OpEventsCreate, Event: world.EvRunCompleted, Run: run, Caller: model.Caller{Kind: model.CallerConsumer, Delivery: d}, Result: res, End: at}
	}
	h.Calls = []model.Call{
		// Run 0: the queued d2 answered first though the inline step issued
		// first; d3's write was refused.
		end(0, 1, world.OK, 20), end(0, 2, world.OK, 10), end(0, 3, world.EntityConflict, 15),
		// Run 1: ended by the inline step, its orchestrator's.
		end(1, 1, world.OK, 30),
	}
	byStep, attempts := simWhoEnded(h)
	if byStep != 1 || attempts != 4 {
		t.Fatalf("ended by a step %d, attempts %d; want 1 (run 0's d2) and 4", byStep, attempts)
	}
}
