package findings

import (
	"context"
	"fmt"
	"strings"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/realengine"
	"github.com/simlab/simlab/realworld"
)

// StartCancelSchedule is the race "start-overwrites-cancel" of
// realworld/testdata/races.json (a race of world-local, the World this
// harness runs) in the interleaving its outcome names, as gate.mjs's
// schedule: run_started's read of the run file; the cancel's read, write
// and publish; run_started's write and publish. It is checked on the model
// first: model/world's world-local Txns, stepped in that order, end as the
// race file says the real World ends (both accepted, the run running, its
// log run_created, run_cancelled, run_started), one Txn step being one step
// of the schedule (a world-local run event's read, file write and publish:
// worlds/gate.mjs's classifier). racesFile is races.json's path.
func StartCancelSchedule(racesFile string) ([][2]int, error) {
	races, err := realworld.ReadRaces(racesFile)
	if err != nil {
		return nil, err
	}
	w, err := realworld.WorldByName("wl-fixed")
	if err != nil {
		return nil, err
	}
	const outcome = "ok ok | r0 running log=[run_created,run_cancelled,run_started]"
	found := false
	for _, r := range races {
		if r.Name == "start-overwrites-cancel" {
			found = true
			if !r.On(w) || len(r.Setup) != 0 || len(r.Batch) != 2 || r.Batch[0].Type != "run_started" || r.Batch[1].Type != "run_cancelled" || r.Outcome != outcome {
				return nil, fmt.Errorf("race %s: want run_started and run_cancelled on a fresh run of %s ending %q, got %+v on %v ending %q", r.Name, w.Name, outcome, r.Batch, r.Worlds, r.Outcome)
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("%s has no race start-overwrites-cancel", racesFile)
	}
	s := world.NewFor(model.StoreRules(w.Profile), w.Fence)
	id := s.CreateRun(0, 0, 7, -1)
	txns := []world.Txn{s.Begin(world.Event{Type: world.EvRunStarted, Run: id}, 0), s.Begin(world.Event{Type: world.EvRunCancelled, Run: id}, 1)}
	var schedule [][2]int
	next := []int{0, 0}
	for _, c := range []int{0, 1, 1, 1, 0, 0} {
		if !s.Advance(&txns[c], 0) {
			return nil, fmt.Errorf("model: call %d cannot take its step %d", c, next[c])
		}
		schedule = append(schedule, [2]int{c, next[c]})
		next[c]++
	}
	var log []string
	for _, e := range s.Log(id) {
		log = append(log, e.Type.String())
	}
	for i, tx := range txns {
		if res, _, _ := tx.Result(); !tx.Done() || res != world.OK {
			return nil, fmt.Errorf("model: call %d done %v answering %v after its three steps, want done and ok", i, tx.Done(), res)
		}
	}
	if got := fmt.Sprintf("r0 %s log=[%s]", s.Get(id).Status, strings.Join(log, ",")); !strings.HasSuffix(outcome, got) {
		return nil, fmt.Errorf("model: the interleaving ends %q, want %q", got, outcome)
	}
	return schedule, nil
}

// forcedStartCancel is a run's start raced by its cancel, forced: one
// fan-out of `branches` steps (one inline), no drawn latency, no pool
// bound; each run's first run_started and the harness's Run#cancel of the
// run take their real World steps in the model's order. `runs` runs in one
// harness process, raced one after another.
func forcedStartCancel(schedule [][2]int, branches, runs int) realengine.HarnessConfig {
	return realengine.HarnessConfig{
		Seed: 1, Fanouts: []int{branches}, MaxInline: 1, Runs: runs,
		Race:      &realengine.RaceConfig{Kind: "start_cancel", Schedule: schedule},
		DumpCalls: true,
	}
}

// reopenedProblems says how a forced run's read-back differs from a run the
// cancel reopened: the log run_created, run_cancelled, then the accepted
// run_started and every step created, started and completed after the
// run's terminal event, no second terminal event; the row running, every
// row readable. None: reopened.
func reopenedProblems(b realengine.ReadBack, branches int) []string {
	bad := []string{}
	if b.FirstTerminal != "run_cancelled" || b.TerminalEvents != 1 || b.TerminalByType["run_cancelled"] != 1 {
		bad = append(bad, fmt.Sprintf("terminal events %v (first %q), want one run_cancelled", b.TerminalByType, b.FirstTerminal))
	}
	if !sameCounts(b.BeforeTerminal, map[string]int{"run_created": 1}) {
		bad = append(bad, fmt.Sprintf("before it %v, want run_created alone", b.BeforeTerminal))
	}
	want := map[string]int{"run_started": 1, "step_created": branches, "step_started": branches, "step_completed": branches}
	if !sameCounts(b.AfterTerminal, want) {
		bad = append(bad, fmt.Sprintf("after it %v, want %v", b.AfterTerminal, want))
	}
	if b.RunStatus != "running" {
		bad = append(bad, fmt.Sprintf("the run row reads %q, want running", b.RunStatus))
	}
	if len(b.Unreadable) != 0 {
		bad = append(bad, fmt.Sprintf("rows that do not read back: %+v", b.Unreadable))
	}
	return bad
}

func sameCounts(got, want map[string]int) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

func judgeCancelRace(ctx context.Context, r *realengine.Runner, rel realengine.Release, o MatrixOptions) (Judgement, error) {
	schedule, err := StartCancelSchedule(realworld.RacesFile())
	if err != nil {
		return Judgement{}, err
	}
	const branches, runs = 4, 10
	out, err := r.Run(ctx, rel.Core, rel.On(forcedStartCancel(schedule, branches, runs)), o.Timeout)
	if err != nil {
		return Judgement{}, err
	}
	for _, rr := range out.Race {
		if len(rr.Broken) != 0 || rr.CancelMissed {
			return Judgement{Undecided, fmt.Sprintf("run %s: the schedule was not honoured (steps let go out of order %v)", rr.RunID, rr.Broken)}, nil
		}
	}
	reopened, cancelled := 0, 0
	for _, b := range out.ReadBack {
		if len(reopenedProblems(b, branches)) == 0 {
			reopened++
		}
		if b.RunStatus == "cancelled" {
			cancelled++
		}
	}
	client := map[string]int{}
	for _, run := range out.Runs {
		rv := "missing"
		if run.ReturnValue != nil {
			rv = run.ReturnValue.State
		}
		client[rv]++
	}
	ev := fmt.Sprintf("%d of %d forced runs reopened (run_cancelled, then run_started accepted and all %d steps after it, the row running); %d read cancelled; the client's returnValue: %s",
		reopened, len(out.ReadBack), branches, cancelled, countsString(client))
	switch {
	case reopened == len(out.ReadBack) && reopened > 0:
		return Judgement{Holds, ev}, nil
	case reopened == 0 && cancelled == len(out.ReadBack):
		return Judgement{Fixed, ev}, nil
	default:
		return Judgement{Undecided, ev}, nil
	}
}
