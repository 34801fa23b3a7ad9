package tui

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEndToEndUnderTmux runs the real binary in a 120×40 tmux pane: open the
// run, filter the timeline on the dispatch prologue, open the first match,
// see the attribute, and quit with status 0.
func TestEndToEndUnderTmux(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(root, "scripts", "ensure-tmux")).Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 3 {
		msg := "!!! SKIPPED: the TUI end-to-end test needs tmux, and neither tmux nor apt-get is available: " + string(exit.Stderr)
		fmt.Fprintln(os.Stderr, msg)
		t.Skip(msg)
	}
	if err != nil {
		t.Fatalf("scripts/ensure-tmux: %v\n%s", err, errStderr(err))
	}
	tmux := strings.TrimSpace(string(out))

	dir := t.TempDir()
	bin := filepath.Join(dir, "simlab")
	build := exec.Command("go", "build", "-o", bin, "./cmd/simlab")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	// A private server (-L) with its own config, so no user's tmux setup or
	// sessions are involved; remain-on-exit keeps the pane to read after.
	conf := filepath.Join(dir, "tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g remain-on-exit on\nset -g status off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sock := fmt.Sprintf("simlab-e2e-%d", os.Getpid())
	tm := func(args ...string) (string, error) {
		cmd := exec.Command(tmux, append([]string{"-L", sock, "-f", conf}, args...)...)
		cmd.Env = append(os.Environ(), "TZ=UTC")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() { _, _ = tm("kill-server") })
	logFile := filepath.Join(dir, "tui.log")
	rcFile := filepath.Join(dir, "rc")
	// Temporary paths hold no single quote, so quoting them is enough.
	line := fmt.Sprintf("'%s' tui --scenario golden-t2 --seed 1 --log '%s'; echo $? > '%s'", bin, logFile, rcFile)
	if out, err := tm("new-session", "-d", "-s", "e2e", "-x", "120", "-y", "40", line); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	screen := func() string {
		out, _ := tm("capture-pane", "-p", "-t", "e2e")
		return out
	}
	// waitFor polls the pane until cond holds, for at most 10 s.
	waitFor := func(what string, cond func(string) bool) string {
		t.Helper()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		deadline := time.After(10 * time.Second)
		for {
			s := screen()
			if cond(s) {
				return s
			}
			select {
			case <-tick.C:
			case <-deadline:
				log, _ := os.ReadFile(logFile)
				t.Fatalf("waited 10 s for %s; the pane shows:\n%s\nlog:\n%s", what, s, log)
			}
		}
	}
	keys := func(args ...string) {
		t.Helper()
		if out, err := tm(append([]string{"send-keys", "-t", "e2e"}, args...)...); err != nil {
			t.Fatalf("tmux send-keys %v: %v\n%s", args, err, out)
		}
	}
	contains := func(parts ...string) func(string) bool {
		return func(s string) bool {
			for _, p := range parts {
				if !strings.Contains(s, p) {
					return false
				}
			}
			return true
		}
	}

	waitFor("the runs view", contains("runs (1)", "wrun_0000", "golden-t2"))
	keys("Enter")
	waitFor("the timeline", contains("timeline", "DEPLOY/VER", "step.execute branch fanout0"))
	keys("-l", "/workflow.step.dispatch_prologue=run_context")
	keys("Enter")
	waitFor("the filtered timeline", contains("timeline /workflow.step.dispatch_prologue=run_context"))
	keys("Enter")
	s := waitFor("the span detail", contains("› span workflow.execute", "ATTRIBUTES"))
	found := false
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "workflow.step.dispatch_prologue") && strings.Contains(l, "run_context") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no line shows workflow.step.dispatch_prologue run_context:\n%s", s)
	}
	keys("q")
	// The exit status comes from the wrapper's file: tmux 3.3 sometimes
	// reports an empty #{pane_dead_status} for a pane that exited cleanly.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for {
		b, err := os.ReadFile(rcFile)
		if rc := strings.TrimSpace(string(b)); err == nil && rc != "" {
			if rc != "0" {
				t.Fatalf("simlab tui exited with status %s after q; pane:\n%s", rc, screen())
			}
			break
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("simlab tui still running 10 s after q; pane:\n%s", screen())
		}
	}
	log, err := os.ReadFile(logFile)
	if err != nil || !strings.Contains(string(log), "msg=quit") {
		t.Fatalf("the log file %s lacks the quit (err %v):\n%s", logFile, err, log)
	}
}

func errStderr(err error) string {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(exit.Stderr)
	}
	return ""
}
