package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/simlab/simlab/check"
	"github.com/simlab/simlab/properties"
)

// A differential check reports what the change does, not what its base
// already does: pre-fix-fence on faults breaks no-start-on-terminal on
// seeds the shipped protocol holds, while most seeds violating
// one-lazy-fetch-per-fanout with the change violate it without the change
// too (the known finding), so they are not the change's. Both sides take
// the runtime's opt-out of turbo's optimistic inline start: with it on, the
// shipped protocol also runs an inline body after a cancel
// (no-start-on-terminal's body clause, docs/MODEL.md).
func TestDiffCheckReportsOnlyTheChange(t *testing.T) {
	dir := t.TempDir()
	out, _, err := runCLI(t, "check", "--scenario", "faults", "--variant", "pre-fix-fence", "--diff", "--seeds", "300",
		"--set", "workflow.await_inline_claims=true", "--base-set", "workflow.await_inline_claims=true", "--schedules", dir, "--json")
	if exitCode(err) != 1 {
		t.Fatalf("exit %d, want 1:\n%s", exitCode(err), out)
	}
	var rep check.DiffReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.Base, "workflow.await_inline_claims=true") || !strings.Contains(rep.Change, "--variant pre-fix-fence") {
		t.Errorf("change %q, base %q", rep.Change, rep.Base)
	}
	if rep.New["no-start-on-terminal"] == 0 || rep.Both["no-start-on-terminal"] != 0 {
		t.Errorf("no-start-on-terminal: new %d, both %d", rep.New["no-start-on-terminal"], rep.Both["no-start-on-terminal"])
	}
	// A property that fails both with and without the change on some seeds
	// and only with it on others: the plain check's first seed for it fails
	// without the change too, the differential check's first does not.
	prop := ""
	for _, p := range slices.Sorted(maps.Keys(rep.Both)) {
		if rep.Both[p] > 0 && rep.New[p] > 0 {
			prop = p
			break
		}
	}
	if prop == "" {
		t.Fatalf("no property fails both ways on some seeds and only with the change on others in 300 seeds: the test shows nothing about the base (new %v, both %v)", rep.New, rep.Both)
	}
	plain, _, _ := runCLI(t, "check", "--scenario", "faults", "--variant", "pre-fix-fence", "--seeds", "300", "--json")
	var prep check.Report
	if err := json.Unmarshal([]byte(plain), &prep); err != nil {
		t.Fatal(err)
	}
	f, pf := rep.First[prop], prep.First[prop]
	if f == nil || pf == nil {
		t.Fatalf("no %s counterexample to compare (diff %v, plain %v)", prop, f, pf)
	}
	if f.Seed == pf.Seed || !strings.Contains(rep.NewSeeds[prop], fmt.Sprint(f.Seed)) ||
		strings.Contains(","+rep.NewSeeds[prop]+",", fmt.Sprintf(",%d,", pf.Seed)) {
		t.Errorf("%s: the plain check's first seed %d fails without the change too; the differential check's first is %d (new on %s)",
			prop, pf.Seed, f.Seed, rep.NewSeeds[prop])
	}
	for name, f := range rep.First {
		if !f.Kept || f.ScheduleFile == "" {
			t.Errorf("%s: the shrunk schedule did not keep the difference (kept %v, file %q)", name, f.Kept, f.ScheduleFile)
			continue
		}
		// The shrunk schedule fails with the change and holds without it.
		s, err := check.LoadSchedule(f.ScheduleFile)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := properties.ByName(name)
		res, _, err := s.Replay()
		if err != nil || len(properties.Check(res.History, []properties.Property{p})) == 0 {
			t.Errorf("%s: the shrunk schedule holds with the change (%v)", name, err)
		}
		bres, err := s.ReplayBase()
		if err != nil || len(properties.Check(bres.History, []properties.Property{p})) != 0 {
			t.Errorf("%s: the shrunk schedule fails without the change too (%v)", name, err)
		}
		// replay says both verdicts.
		rout, _, rerr := runCLI(t, "replay", f.ScheduleFile)
		want := "with the change: " + name + " violated; without it (the base): " + name + " holds"
		if exitCode(rerr) != 1 || !strings.Contains(rout, want) {
			t.Errorf("replay of %s: exit %d, output lacks %q:\n%s", f.ScheduleFile, exitCode(rerr), want, rout)
		}
	}
}

// A base given as a second set: the fix (atomic-fan-in) against the shipped
// protocol fixes one-lazy-fetch-per-fanout and breaks nothing.
func TestDiffCheckReportsFixed(t *testing.T) {
	out, _, err := runCLI(t, "check", "--scenario", "durabench-256", "--variant", "atomic-fan-in", "--base-set", "runs=1",
		"--seeds", "3", "--schedules", t.TempDir())
	if err != nil {
		t.Fatalf("exit %d:\n%s", exitCode(err), out)
	}
	if !strings.Contains(out, "base durabench-256 --set runs=1") || !regexp.MustCompile(`(?m)^one-lazy-fetch-per-fanout\s+no difference\s+3 \(1\.\.3\)\s+-$`).MatchString(out) {
		t.Errorf("output:\n%s", out)
	}
	if _, _, err := runCLI(t, "check", "--scenario", "golden-t2", "--diff"); exitCode(err) != 2 {
		t.Errorf("an empty change: exit %d, want 2", exitCode(err))
	}
}
