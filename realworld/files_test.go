package realworld

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simlab/simlab/internal/testreal"
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

// A driver that dies is reported with what it wrote to stderr.
func TestCrashedDriverIsReportedWithItsStderr(t *testing.T) {
	testreal.Need(t, testreal.Worlds)
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

func TestReadConcurrentFileNamesWhatIsWrong(t *testing.T) {
	cases := []struct{ body, want string }{
		{`{"histories": []}`, "no histories"},
		{`{"histories": [{"runs": 0, "batches": [{"calls": [{"op": "get_run", "run": 0}]}]}]}`, "runs 0"},
		{`{"histories": [{"runs": 1, "batches": []}]}`, "no batches"},
		{`{"histories": [{"runs": 1, "batches": [{"calls": [{"op": "get_run", "run": 3}]}]}]}`, "run 3"},
		{`{"histories": [{"runs": 1, "batches": [{"calls": [{"op": "event", "run": 0, "type": "step_begun"}]}]}]}`, `event type "step_begun"`},
		{`{"histories": [{"runs": 1, "batches": [{"calls": [{"op": "get_run", "run": 0, "delay_us": -1}]}]}]}`, "delay_us -1"},
		{`{"histories": [{"runs": 1, "batches": [{"calls": [{"op": "read_all", "run": 0}]}]}]}`, `op "read_all"`},
		{`{"histories": [], "colour": 1}`, `unknown field "colour"`},
	}
	for _, c := range cases {
		_, err := ReadConcurrentFile(writeFile(t, c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.body, err, c.want)
		}
	}
	if FileKind(writeFile(t, `{"histories": []}`)) != "histories" || FileKind(writeFile(t, `{"sequences": []}`)) != "sequences" {
		t.Error("FileKind tells the two formats apart")
	}
}
