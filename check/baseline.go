package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/simlab/simlab/model/seeds"
)

// A baseline is the shipped protocol's known findings, kept apart from new
// ones: per checked configuration (scenario, --set knobs, variants) the
// seeds it was checked on and, per violated property, the seeds that
// violate it, a digest of them and a one-line reason naming the finding
// (docs/FINDINGS.md, docs/MODEL.md) it belongs to. `simlab check --write-baseline FILE`
// writes an entry; `simlab check --baseline FILE` judges a check against
// it: every violation on a known (property, seed) is known, any other is
// new (exit 1), and a known seed that no longer violates is a note. The
// file is generated, never edited: its reasons come from knownReasons
// below, and a model change that moves histories regenerates it like a
// golden file (BaselineRegenerate).

// BaselineRegenerate is the one command that regenerates the committed
// baseline of every built-in scenario.
const BaselineRegenerate = "go test ./cmd/simlab -run KnownFindings -update-baseline"

// Unexplained starts the reason of a finding knownReasons has no line for.
const Unexplained = "UNEXPLAINED"

// Baseline is a known-findings file.
type Baseline struct {
	Version    int             `json:"version"`
	Regenerate string          `json:"regenerate"`
	Entries    []BaselineEntry `json:"entries"`
}

// BaselineEntry is the known findings of one checked configuration.
type BaselineEntry struct {
	Scenario string   `json:"scenario"`
	Sets     []string `json:"sets,omitempty"`
	Variants []string `json:"variants,omitempty"`
	// Seeds are the seeds the entry was checked on (seeds grammar).
	Seeds    string         `json:"seeds"`
	Findings []KnownFinding `json:"findings"`
}

// KnownFinding is one property the configuration is known to violate.
type KnownFinding struct {
	Property string `json:"property"`
	Seeds    string `json:"seeds"`
	Count    int    `json:"count"`
	// Digest is FNV-1a (64 bits) of the seeds, in hex: two files agree on
	// a finding exactly when their digests do.
	Digest string `json:"digest"`
	Reason string `json:"reason"`
}

// BaselineVerdict is a check judged against a baseline (check --json's
// "baseline" field).
type BaselineVerdict struct {
	File string `json:"file"`
	// Entry names the entry the check was judged against ("" when the file
	// has none for it: every violation is new).
	Entry string `json:"entry"`
	// New lists, per property, the violating seeds that are not known.
	New map[string]string `json:"new"`
	// Known counts, per property, the violating seeds that are.
	Known map[string]int `json:"known"`
	// Reasons are the known findings' reasons, per property.
	Reasons map[string]string `json:"reasons,omitempty"`
	// Gone lists, per property, known seeds that were checked and no longer
	// violate it: the finding (or part of it) no longer happens.
	Gone  map[string]string `json:"gone,omitempty"`
	Notes []string          `json:"notes,omitempty"`
}

// knownReasons says, per property, which documented finding of the shipped
// protocol its violations are. A property the shipped protocol newly
// violates (after a model change) gets a line here, with the finding it is
// written up as, before its baseline entry is accepted
// (TestKnownFindingsBaseline rejects an UNEXPLAINED reason).
var knownReasons = map[string]string{
	"one-lazy-fetch-per-fanout": "concurrent last completers: the list-then-decide check is not atomic, and a last completer whose message is redelivered after a crash checks again (docs/FINDINGS.md: one lazy read per fan-out, or many?; docs/MODEL.md findings 1 and 10)",
	"no-start-on-terminal":      "the real Worlds are not atomic: a claim that read the run live writes after a cancel (or the World's run_failed) that landed meanwhile, and a run_started that read the run pending writes a cancelled run back to running (docs/MODEL.md findings 15, 16); and on any World, turbo's optimistic inline start runs an inline step's body after a cancel that landed while the run's first delivery suspended, forced on the real core (docs/MODEL.md, \"Turbo starts inline bodies before their claims\")",
	"single-terminal-event":     "the real Worlds are not atomic: concurrent last completers both write run_completed on world-local, and world-postgres fails a run its racing start reopened and left unreadable (docs/MODEL.md findings 15, 18)",
	"ended-run-reads-ended":     "the real Worlds are not atomic: a run_started that read the run pending writes a cancelled run back to running; core's replay sees run_cancelled in the log and exits, so nothing ends the run again and its row reads running, as on the real core (docs/MODEL.md finding 17)",
	"one-body-at-a-time":        "a second continuation of a fan-out (a queued step that finished before the orchestrator's inline claim, or two redelivered last completers) runs a step another invocation is running: the same body twice at once, on the real core too when forced (docs/MODEL.md finding 21)",
	"readable-run-row":          "world-postgres: run_started's unguarded UPDATE over a cancelled row keeps its completedAt, a row runs.get cannot parse (docs/MODEL.md finding 18)",
	"run-fails-for-a-reason":    "a last completer's lazy read of a stale pending row replays without startedAt and fails the run, as core beta.52 does (docs/FINDINGS.md: the review fix's stale-pending fall-through; docs/MODEL.md finding 4)",
	"liveness":                  "runs stuck for documented causes: a fetch-free consumer looping on a run that ended before its step was created on world-local (docs/FINDINGS.md; docs/MODEL.md finding 9), the legacy prologue dropping steps on stale reads (finding 2), and a replay dying between non-resilient creates and publishes (finding 13)",
	"recovery-in-band":          "a step whose run ended before its step_created landed cannot be created in-band any more (docs/MODEL.md finding 9)",
	"run-context-matches-run":   "a stale lazy read stamps a runContext without startedAt on the next fan-out (docs/MODEL.md finding 4, issue 13); two invocations both start a pending run and its startedAt changes under the runContext stamped from the first (finding 19)",
	"bounded-work-after-end":    "a last completer's stale pending lazy read of a run that already ended replays it: a third piece of work after the end (docs/MODEL.md finding 11)",
	"replayable-log":            "a workflow that branches on Date.now(): up to core beta.53 a replay reads the time of the last event its pass took, so a later replay reads a later time than the one that wrote, takes the other branch and cannot consume the log (CORRUPTED_EVENT_LOG on the real core too; fixed in beta.55; docs/MODEL.md, \"Date.now() branches corrupt the pinned release's logs\")",
}

// reasonsBySignature are the findings a property's violations may be other
// than its knownReasons one, told apart by the first violation's own story:
// the first rule of prop whose words the story holds names the finding.
var reasonsBySignature = []struct {
	prop, words, reason string
}{
	// A program's run (model/flow) ends twice by two invocations, not by
	// a fan-out's last completers: its story names each end's writer.
	{"single-terminal-event", "wrote run_completed (accepted), from a replay of",
		"two invocations of one run (a wait's wake, a hook's resume, a redelivery, a recovery replay) replayed it to its end at once and each wrote run_completed: world-local reads the run's status, then writes its event, so two ends whose calls overlap are both accepted (docs/MODEL.md finding 1, \"Programs as the runtime runs them\")"},
}

// ReasonFor is the reason a baseline records for prop's violations whose
// first is first (nil: not known): the finding its story's signature
// names (reasonsBySignature), else KnownReason's.
func ReasonFor(prop string, first *First) string {
	if first != nil {
		story := strings.Join(first.Story, "\n")
		for _, r := range reasonsBySignature {
			if r.prop == prop && strings.Contains(story, r.words) {
				return r.reason
			}
		}
	}
	return KnownReason(prop)
}

// KnownReason is the reason a baseline records for prop's violations.
func KnownReason(prop string) string {
	if r, ok := knownReasons[prop]; ok {
		return r
	}
	return Unexplained + ": no documented finding; add one to knownReasons in check/baseline.go (and its write-up to docs/MODEL.md)"
}

// EntryName names a configuration as `simlab check` flags do.
func EntryName(scenario string, sets, variants []string) string {
	var b strings.Builder
	b.WriteString(scenario)
	for _, kv := range sets {
		b.WriteString(" --set " + kv)
	}
	for _, v := range variants {
		b.WriteString(" --variant " + v)
	}
	return b.String()
}

func (e *BaselineEntry) name() string { return EntryName(e.Scenario, e.Sets, e.Variants) }

// LoadBaseline reads a baseline file.
func LoadBaseline(path string) (*Baseline, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("baseline %s: %w", path, err)
	}
	var b Baseline
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("baseline %s: %w", path, err)
	}
	if b.Version != 1 {
		return nil, fmt.Errorf("baseline %s: version = %d, want 1", path, b.Version)
	}
	for i, e := range b.Entries {
		if _, err := seeds.Parse(e.Seeds, 0); err != nil {
			return nil, fmt.Errorf("baseline %s: entries[%d] (%s).seeds = %w", path, i, e.name(), err)
		}
		for j, f := range e.Findings {
			if _, err := seeds.Parse(f.Seeds, 0); err != nil {
				return nil, fmt.Errorf("baseline %s: entries[%d] (%s).findings[%d].seeds = %w", path, i, e.name(), j, err)
			}
		}
	}
	return &b, nil
}

// LoadBaselineOrEmpty reads path, or returns an empty baseline when it does
// not exist yet (the first --write-baseline makes it).
func LoadBaselineOrEmpty(path string) (*Baseline, error) {
	b, err := LoadBaseline(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Baseline{Version: 1, Regenerate: BaselineRegenerate}, nil
	}
	return b, err
}

// Save writes the baseline, entries in a stable order, as indented JSON.
func (b *Baseline) Save(path string) error {
	b.Version, b.Regenerate = 1, BaselineRegenerate
	sort.SliceStable(b.Entries, func(i, j int) bool { return b.Entries[i].name() < b.Entries[j].name() })
	raw, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(raw, '\n'), 0o644); err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	return nil
}

func seedDigest(list []uint64) string {
	h := fnv.New64a()
	for _, s := range list {
		fmt.Fprintf(h, "%d,", s)
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// Record puts the findings of rep (checked on seeds checked) into the
// baseline as the entry of (scenario, sets, variants), replacing any entry
// of that configuration.
func (b *Baseline) Record(scenario string, sets, variants []string, checked []uint64, rep *Report) error {
	e := BaselineEntry{Scenario: scenario, Sets: slices.Clone(sets), Variants: slices.Clone(variants),
		Seeds: seeds.Format(sortedSeeds(checked)), Findings: []KnownFinding{}}
	for _, prop := range sortedKeys(rep.ViolatingSeeds) {
		list, err := seeds.Parse(rep.ViolatingSeeds[prop], 0)
		if err != nil {
			return fmt.Errorf("violating seeds of %s: %w", prop, err)
		}
		list = sortedSeeds(list)
		e.Findings = append(e.Findings, KnownFinding{Property: prop, Seeds: seeds.Format(list), Count: len(list),
			Digest: seedDigest(list), Reason: ReasonFor(prop, rep.First[prop])})
	}
	for i := range b.Entries {
		if b.Entries[i].name() == e.name() {
			b.Entries[i] = e
			return nil
		}
	}
	b.Entries = append(b.Entries, e)
	return nil
}

// entryFor finds the entry a check of (scenario, sets, variants) is judged
// against: its own, or, for a check with variants, the shipped protocol's
// entry of the same scenario and knobs (a variant's violations on seeds
// the shipped protocol is known to violate the same property on are the
// old finding, not the variant's).
func (b *Baseline) entryFor(scenario string, sets, variants []string) (*BaselineEntry, string) {
	want := EntryName(scenario, sets, variants)
	for i := range b.Entries {
		if b.Entries[i].name() == want {
			return &b.Entries[i], ""
		}
	}
	if len(variants) > 0 {
		base := EntryName(scenario, sets, nil)
		for i := range b.Entries {
			if b.Entries[i].name() == base {
				return &b.Entries[i], fmt.Sprintf("no entry for %s: judged against the shipped protocol's known findings (%s)", want, base)
			}
		}
	}
	return nil, fmt.Sprintf("no entry for %s in the baseline: every violation is new (write one with --write-baseline)", want)
}

// Knower returns the Known function of SweepConfig for a check of (scenario,
// sets, variants): a violation of prop at seed is known when the entry
// lists it.
func (b *Baseline) Knower(scenario string, sets, variants []string) func(prop string, seed uint64) bool {
	e, _ := b.entryFor(scenario, sets, variants)
	known := map[string]map[uint64]bool{}
	if e != nil {
		for _, f := range e.Findings {
			list, _ := seeds.Parse(f.Seeds, 0)
			known[f.Property] = map[uint64]bool{}
			for _, s := range list {
				known[f.Property][s] = true
			}
		}
	}
	return func(prop string, seed uint64) bool { return known[prop][seed] }
}

// Judge sets rep.Baseline: rep (checked on seeds checked) against the
// baseline's entry for (scenario, sets, variants).
func (b *Baseline) Judge(file, scenario string, sets, variants []string, checked []uint64, rep *Report) error {
	e, note := b.entryFor(scenario, sets, variants)
	v := &BaselineVerdict{File: file, New: map[string]string{}, Known: map[string]int{}}
	if note != "" {
		v.Notes = append(v.Notes, note)
	}
	inEntry := map[uint64]bool{}
	known := map[string]map[uint64]bool{}
	var entrySeeds string
	if e != nil {
		v.Entry = e.name()
		entrySeeds = e.Seeds
		list, _ := seeds.Parse(e.Seeds, 0)
		for _, s := range list {
			inEntry[s] = true
		}
		for _, f := range e.Findings {
			list, _ := seeds.Parse(f.Seeds, 0)
			known[f.Property] = map[uint64]bool{}
			for _, s := range list {
				known[f.Property][s] = true
			}
			if v.Reasons == nil {
				v.Reasons = map[string]string{}
			}
			v.Reasons[f.Property] = f.Reason
		}
	}
	isChecked := map[uint64]bool{}
	for _, s := range checked {
		isChecked[s] = true
	}
	outside := 0
	for _, prop := range sortedKeys(rep.ViolatingSeeds) {
		list, err := seeds.Parse(rep.ViolatingSeeds[prop], 0)
		if err != nil {
			return fmt.Errorf("violating seeds of %s: %w", prop, err)
		}
		var fresh []uint64
		for _, s := range list {
			if known[prop][s] {
				v.Known[prop]++
				continue
			}
			fresh = append(fresh, s)
			if e != nil && !inEntry[s] {
				outside++
			}
		}
		if len(fresh) > 0 {
			v.New[prop] = seeds.Format(sortedSeeds(fresh))
		}
	}
	if outside > 0 {
		v.Notes = append(v.Notes, fmt.Sprintf("%d violating seeds lie outside the seeds the baseline entry was checked on (%s): they count as new", outside, entrySeeds))
	}
	if e != nil {
		violated := map[string]map[uint64]bool{}
		for prop, list := range rep.ViolatingSeeds {
			got, _ := seeds.Parse(list, 0)
			violated[prop] = map[uint64]bool{}
			for _, s := range got {
				violated[prop][s] = true
			}
		}
		for _, f := range e.Findings {
			list, _ := seeds.Parse(f.Seeds, 0)
			var gone []uint64
			for _, s := range list {
				if isChecked[s] && !violated[f.Property][s] {
					gone = append(gone, s)
				}
			}
			if len(gone) == 0 {
				continue
			}
			if v.Gone == nil {
				v.Gone = map[string]string{}
			}
			v.Gone[f.Property] = seeds.Format(sortedSeeds(gone))
			what := "no longer happens"
			if len(gone) < len(list) {
				what = fmt.Sprintf("no longer happens on %d of its %d seeds", len(gone), len(list))
			}
			then := "regenerate the baseline (" + BaselineRegenerate + ")"
			if v.Entry != EntryName(scenario, sets, variants) {
				// Judged against the shipped protocol's entry: the change
				// checked is what moved the finding, not the model.
				then = "with this change"
			}
			v.Notes = append(v.Notes, fmt.Sprintf("known finding %s %s (%s): %s", f.Property, what, seeds.Format(sortedSeeds(gone)), then))
		}
	}
	rep.Baseline = v
	return nil
}

func sortedSeeds(list []uint64) []uint64 {
	out := slices.Clone(list)
	slices.Sort(out)
	return slices.Compact(out)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
