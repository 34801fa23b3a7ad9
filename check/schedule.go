package check

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/simlab/simlab/internal/bounded"
	"github.com/simlab/simlab/properties"

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

// MaxScheduleBytes bounds a schedule file: far more than the recorded
// choices of any run within the event limit, little enough to read.
const MaxScheduleBytes = 256 << 20

// LoadSchedule reads a schedule file and refuses one whose content simlab
// never writes: an unknown field or property, a choice outside its range,
// a malformed hash. Replaying such a file would judge something other than
// what it says.
func LoadSchedule(path string) (Schedule, error) {
	var s Schedule
	f, err := os.Open(path)
	if err != nil {
		return s, fmt.Errorf("schedule %s: %w", path, err)
	}
	defer f.Close()
	// Decoding as it reads fails a file that is no JSON at its first byte
	// (/dev/zero too); the limit bounds one that is.
	lr := &io.LimitedReader{R: f, N: MaxScheduleBytes + 1}
	dec := json.NewDecoder(lr)
	dec.DisallowUnknownFields()
	err = dec.Decode(&s)
	if lr.N <= 0 {
		return s, fmt.Errorf("schedule %s: %w", path, &bounded.TooLargeError{Path: path, Limit: MaxScheduleBytes, What: "a schedule file"})
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			return s, fmt.Errorf("schedule %s: the file is empty: want a schedule simlab check saved (JSON)", path)
		}
		if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return s, fmt.Errorf("schedule %s: unknown field %s: not a field of a schedule or of its scenario", path, f)
		}
		return s, fmt.Errorf("schedule %s: %w", path, err)
	}
	if dec.More() {
		return s, fmt.Errorf("schedule %s: more than one JSON value", path)
	}
	if s.Version != 1 {
		return s, fmt.Errorf("schedule %s: version = %d, want 1", path, s.Version)
	}
	if err := s.check(); err != nil {
		return s, fmt.Errorf("schedule %s: %w", path, err)
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

// check validates what the JSON decoder cannot: the property, the hash and
// every recorded choice.
func (s *Schedule) check() error {
	if s.Property != "" {
		if _, ok := properties.ByName(s.Property); !ok {
			return fmt.Errorf("property = %q: unknown property; want one of %s", s.Property, strings.Join(properties.Names(), ", "))
		}
	}
	if s.HistoryHash != "" {
		if _, err := strconv.ParseUint(s.HistoryHash, 16, 64); err != nil || len(s.HistoryHash) != 16 {
			return fmt.Errorf("history_hash = %q: want 16 hex digits, as simlab check saves it", s.HistoryHash)
		}
	}
	for i, c := range s.Choices {
		switch {
		case c.N < 1:
			return fmt.Errorf("choices[%d]: n = %d: a choice is drawn from n ≥ 1 values", i, c.N)
		case c.V < 0 || c.V >= c.N:
			return fmt.Errorf("choices[%d]: v = %d is outside [0, %d), the range it was drawn from", i, c.V, c.N)
		}
	}
	return nil
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
