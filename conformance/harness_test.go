package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "seq.json")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadFileNamesWhatIsWrong(t *testing.T) {
	cases := []struct{ body, want string }{
		{`{"sequences": []}`, "no sequences"},
		{`{"sequences": [{"calls": [{"op": "event", "run": 0, "type": "run_started"}]}]}`, "run 0 is not created yet"},
		{`{"sequences": [{"calls": [{"op": "create_run", "run": 0}, {"op": "event", "run": 0, "type": "step_begun"}]}]}`, `event type "step_begun"`},
		{`{"sequences": [{"calls": [{"op": "create_run", "run": 0}, {"op": "event", "run": 0, "type": "step_created", "lazy": true}]}]}`, "lazy is only for step_started"},
		{`{"sequences": [{"calls": [{"op": "make_run", "run": 0}]}]}`, `op "make_run"`},
		{`{"sequences": [{"calls": [{"op": "create_run", "run": 0}, {"op": "create_run", "run": 0}]}]}`, "run 0 created twice"},
		{`{"sequences": [{"calls": [], "colour": 1}]}`, `unknown field "colour"`},
		{`{"sequences": [{"calls": [{"op": "create_run", "run": 0}, {"op": "event", "run": 0, "type": "step_created", "step_run": 1}]}]}`, "step_run 1 is not created yet"},
		{`{"sequences": [{"calls": [{"op": "create_run", "run": 0}, {"op": "event", "run": 0, "type": "step_created", "step_run": 0}]}]}`, "leave step_run out"},
		{`{"sequences": [{"calls": [{"op": "create_run", "run": 0}, {"op": "create_run", "run": 1}, {"op": "event", "run": 0, "type": "run_started", "step_run": 1}]}]}`, "step_run is only for step events"},
	}
	for _, c := range cases {
		_, err := ReadFile(writeFile(t, c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.body, err, c.want)
		}
	}
	if _, err := ReadFile("testdata/known.json"); err != nil {
		t.Fatal(err)
	}
}

// The failure report marks the differing call and carries the real message.
func TestTableMarksTheDifference(t *testing.T) {
	calls := []Call{{Op: "create_run"}, {Op: "event", Type: "step_started", Step: 1}}
	real := []Answer{{Res: "ok", Run: "pending"}, {Res: "not_found", Msg: `Step "x" not found`, Run: "cancelled"}}
	model := []Answer{{Res: "ok", Run: "pending"}, {Res: "run_expired", Run: "cancelled"}}
	got := Table(calls, real, model)
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 3 || strings.Contains(lines[1], "differs") || !strings.Contains(lines[2], "<-- differs") ||
		!strings.Contains(lines[2], "r0.s1 step_started") || !strings.Contains(lines[2], `Step "x" not found`) {
		t.Fatalf("table:\n%s", got)
	}
}

// The model answers the way its store rules say, per World: the fence row.
func TestRunModelFollowsTheWorldsFence(t *testing.T) {
	known, err := ReadFile("testdata/known.json")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"wl-fixed": "run_expired", "wl-pre": "ok", "wl-b46": "run_expired", "wpg-pre": "ok", "wpg-b29": "ok"}
	for _, w := range Worlds {
		got := RunModel(w, known.Sequences[0].Calls)
		if r := got[len(got)-1].Res; r != want[w.Name] {
			t.Errorf("%s: model answered %s, want %s", w.Name, r, want[w.Name])
		}
	}
}

// A step id reused in another run: the model keys it by the id alone as
// world-postgres, per run as world-local (the first reuse sequence of
// known.json, whose real answers the differential test compares).
func TestRunModelKeysReusedStepIDsPerWorld(t *testing.T) {
	known, err := ReadFile("testdata/known.json")
	if err != nil {
		t.Fatal(err)
	}
	var calls []Call
	for _, s := range known.Sequences {
		if strings.HasPrefix(s.Name, "a step id reused in another run after its minter created it") {
			calls = s.Calls
		}
	}
	if len(calls) != 17 || calls[7].String() != "r1 step_created with r0.s0's id" || calls[9].String() != "r1 step_started with r0.s0's id" {
		t.Fatalf("known.json's reuse sequence changed: %v", calls)
	}
	for _, w := range Worlds {
		got := RunModel(w, calls)
		created, started := got[7], got[9]
		want := []Answer{{Res: "ok", Run: "running", Step: "pending", PeerStep: "pending"}, {Res: "ok", Run: "running", Step: "running", Attempt: 1, PeerStep: "pending"}}
		if w.Postgres() { // accepted without a row; then no such step in run 1
			want = []Answer{{Res: "ok", Run: "running", PeerStep: "pending"}, {Res: "not_found", Run: "running", PeerStep: "pending"}}
		}
		if !created.Same(want[0]) || !started.Same(want[1]) {
			t.Errorf("%s: step_created, step_started in run 1 under run 0's id: model %v, %v; want %v, %v", w.Name, created, started, want[0], want[1])
		}
	}
}

// A driver that dies is reported with what it wrote to stderr.
func TestCrashedDriverIsReportedWithItsStderr(t *testing.T) {
	if os.Getenv("SIMLAB_NO_REAL_WORLDS") == "1" {
		t.Skip("SIMLAB_NO_REAL_WORLDS=1")
	}
	d, err := StartDriver("no-such-world", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, err = d.Run([]Call{{Op: "create_run"}})
	if err == nil || !strings.Contains(err.Error(), "crashed") || !strings.Contains(err.Error(), "usage: node driver.mjs") {
		t.Fatalf("got %v, want a crash report carrying the driver's usage line", err)
	}
}

// Without node on PATH the error is one line naming what to install.
func TestMissingNodeSaysHowToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := StartDriver("wl-fixed", t.TempDir())
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "node not found") || !strings.Contains(err.Error(), "install Node.js") {
		t.Fatalf("got %v", err)
	}
	if _, err := StartPostgres(); err == nil || !strings.Contains(err.Error(), "initdb not found") || !strings.Contains(err.Error(), "install PostgreSQL") {
		t.Fatalf("got %v", err)
	}
}
