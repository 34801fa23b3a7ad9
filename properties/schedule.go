package properties

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/sim"
)

// Schedule is a saved counterexample: the scenario and every recorded choice
// of the run. Replaying it needs no seed, so it keeps reproducing after the
// code changes (a changed choice point falls back to the plain outcome and
// is counted as a mismatch).
type Schedule struct {
	Version     int            `json:"version"`
	Property    string         `json:"property,omitempty"`
	Seed        uint64         `json:"seed,omitempty"` // when it came from a seeded sweep
	HistoryHash string         `json:"history_hash"`
	Scenario    model.Scenario `json:"scenario"`
	Choices     []sim.Choice   `json:"choices"`
	// Base, for a differential check's counterexample, is the scenario
	// without the change: the same choices replayed on it hold the
	// property (BaseHistoryHash is that run's hash when saved).
	Base            *model.Scenario `json:"base,omitempty"`
	BaseHistoryHash string          `json:"base_history_hash,omitempty"`
}

// SaveSchedule writes s as indented JSON.
func SaveSchedule(path string, s Schedule) error {
	s.Version = 1
	b, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("saving schedule: %w", err)
	}
	return nil
}

// LoadSchedule reads a schedule file.
func LoadSchedule(path string) (Schedule, error) {
	var s Schedule
	b, err := os.ReadFile(path)
	if err != nil {
		return s, fmt.Errorf("schedule %s: %w", path, err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("schedule %s: %w", path, err)
	}
	if s.Version != 1 {
		return s, fmt.Errorf("schedule %s: version = %d, want 1", path, s.Version)
	}
	if err := s.Scenario.Validate(); err != nil {
		return s, fmt.Errorf("schedule %s: scenario: %w", path, err)
	}
	if s.Base != nil {
		if err := s.Base.Validate(); err != nil {
			return s, fmt.Errorf("schedule %s: base: %w", path, err)
		}
	}
	return s, nil
}

// Replay runs the schedule's scenario on its recorded choices.
func (s Schedule) Replay() (*model.Result, *sim.Replayer, error) {
	rep := sim.NewReplayer(s.Choices)
	sc := s.Scenario
	res, err := model.Run(&sc, rep, model.Options{Record: true, Seed: s.Seed})
	return res, rep, err
}

// ReplayBase runs the schedule's base scenario (a differential
// counterexample's "without the change") on the same recorded choices.
func (s Schedule) ReplayBase() (*model.Result, error) {
	if s.Base == nil {
		return nil, fmt.Errorf("the schedule has no base scenario")
	}
	sc := *s.Base
	res, err := model.Run(&sc, sim.NewReplayer(s.Choices), model.Options{Record: true, Seed: s.Seed})
	return res, err
}

// Record runs sc with chooser c, keeping every choice, so the run can be
// saved as a schedule.
func Record(sc *model.Scenario, c sim.Chooser, seed uint64) (*model.Result, []sim.Choice, error) {
	rec := &sim.Recorder{Inner: c}
	res, err := model.Run(sc, rec, model.Options{Record: true, Seed: seed})
	return res, rec.Choices, err
}
