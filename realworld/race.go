package realworld

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Race is one race of the real Worlds (testdata/races.json, documented in
// docs/CONFORMANCE.md): a batch whose real outcome no sequential order of
// its calls produces, on the Worlds named, from a set-up of sequential
// calls. Outcome is that outcome as OutcomeKey writes it; the test forces
// the model's interleaving that produces it on the real World, every time.
type Race struct {
	Name    string     `json:"name"`
	Why     string     `json:"why"`
	Worlds  []string   `json:"worlds"`
	Setup   []ConcCall `json:"setup"`
	Batch   []ConcCall `json:"batch"`
	Outcome string     `json:"outcome"`
}

// On reports whether the race is one of World w's.
func (r Race) On(w World) bool {
	for _, n := range r.Worlds {
		if n == w.Name {
			return true
		}
	}
	return false
}

// History is the race as a concurrent history on one run: the set-up one
// call at a time, then the racing batch (without a schedule).
func (r Race) History() History {
	h := History{Name: r.Name, Runs: 1}
	for _, c := range r.Setup {
		h.Batches = append(h.Batches, Batch{Calls: []ConcCall{c}})
	}
	h.Batches = append(h.Batches, Batch{Calls: r.Batch})
	return h
}

// RacesFile is the path of the known races of the real Worlds
// (testdata/races.json), which the differential test forces on each World
// and the real-engine harness reuses to force a race inside a real run.
func RacesFile() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata", "races.json")
}

// ReadRaces reads a races file.
func ReadRaces(path string) ([]Race, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f struct {
		Races []Race `json:"races"`
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i, r := range f.Races {
		if r.Name == "" || r.Outcome == "" || len(r.Batch) < 2 || len(r.Worlds) == 0 {
			return nil, fmt.Errorf("%s: race %d: want a name, worlds, a batch of two calls or more and its outcome", path, i)
		}
		for _, n := range r.Worlds {
			if _, err := WorldByName(n); err != nil {
				return nil, fmt.Errorf("%s: race %s: %w", path, r.Name, err)
			}
		}
		if err := r.History().Validate(); err != nil {
			return nil, fmt.Errorf("%s: race %s: %w", path, r.Name, err)
		}
	}
	return f.Races, nil
}

// FileKind says which sequence file format a file holds: "sequences" (the
// sequential test's), "histories" (the concurrent test's) or "" when
// neither.
func FileKind(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(b, &top) != nil {
		return ""
	}
	for _, k := range []string{"sequences", "histories"} {
		if _, ok := top[k]; ok {
			return k
		}
	}
	return ""
}
