package report

import (
	"bytes"
	"encoding/xml"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simlab/simlab/check"
	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/seeds"
	"github.com/simlab/simlab/properties"
)

// checked runs a small check of spec (schedules saved in dir) the way
// simlab check does.
func checked(t *testing.T, spec model.Spec, n int, dir string) *check.Report {
	t.Helper()
	sc, err := spec.Load()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := check.Sweep(check.SweepConfig{Scenario: sc, Seeds: seeds.Count(uint64(n)), Props: properties.All(), Spec: spec, ScheduleDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// The JUnit file reads back as JUnit: a testcase per property plus
// coverage, a failure carrying the story, the replay command and the
// schedule file, and a property whose violations are all known findings
// skipped with its reason.
func TestJUnitCarriesStoryReplayAndSchedule(t *testing.T) {
	dir := t.TempDir()
	rep := checked(t, model.Spec{Scenario: "golden-t5", Variants: []string{"pre-fix-fence"}}, 3, dir)
	var b bytes.Buffer
	if err := JUnit(&b, FromReport("golden-t5 --variant pre-fix-fence", rep)); err != nil {
		t.Fatal(err)
	}
	var got junitSuites
	if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b.String())
	}
	if len(got.Suites) != 1 || len(got.Suites[0].Cases) != len(properties.Names())+1 || got.Tests != len(properties.Names())+1 {
		t.Fatalf("want one suite of %d testcases:\n%s", len(properties.Names())+1, b.String())
	}
	var fence *junitCase
	for i, c := range got.Suites[0].Cases {
		if c.Classname != "simlab.golden-t5" {
			t.Errorf("testcase %s has classname %q", c.Name, c.Classname)
		}
		if c.Name == "no-start-on-terminal" {
			fence = &got.Suites[0].Cases[i]
		}
	}
	if fence == nil || fence.Failure == nil {
		t.Fatalf("no failure for no-start-on-terminal:\n%s", b.String())
	}
	schedule := filepath.Join(dir, "golden-t5+pre-fix-fence-no-start-on-terminal-seed1.json")
	for _, want := range []string{"no-start-on-terminal violated in wrun_0000", "step_started(fanout0.branch0) → ok",
		"replay: simlab run --scenario golden-t5 --seed 1 --variant pre-fix-fence", "schedule: " + schedule} {
		if !strings.Contains(fence.Failure.Text, want) {
			t.Errorf("failure text lacks %q:\n%s", want, fence.Failure.Text)
		}
	}
	if got.Failures != countViolated(rep) {
		t.Errorf("failures = %d, violated properties = %d", got.Failures, countViolated(rep))
	}

	// Against a baseline that knows golden-t3's finding: skipped, with the reason.
	known := checked(t, model.Spec{Scenario: "golden-t3"}, 2, "")
	bl := &check.Baseline{}
	if err := bl.Record("golden-t3", nil, nil, []uint64{1, 2}, known); err != nil {
		t.Fatal(err)
	}
	rep = checked(t, model.Spec{Scenario: "golden-t3"}, 2, "")
	if err := bl.Judge("known.json", "golden-t3", nil, nil, []uint64{1, 2}, rep); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := JUnit(&b, FromReport("golden-t3", rep)); err != nil {
		t.Fatal(err)
	}
	got = junitSuites{}
	if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Failures != 0 || got.Skipped != 1 || !strings.Contains(b.String(), `<skipped message="known finding: a last completer`) {
		t.Errorf("a known finding: failures %d, skipped %d:\n%s", got.Failures, got.Skipped, b.String())
	}
}

func countViolated(rep *check.Report) int {
	n := 0
	for _, v := range rep.Violations {
		if v > 0 {
			n++
		}
	}
	return n
}
