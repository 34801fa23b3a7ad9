package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/simlab/simlab/internal/testreal"
)

// tmuxSession is the real binary in a 120×40 pane of a private tmux server
// (its own socket, in the test's temp dir, and its own config, so no user's
// tmux setup or sessions are involved and nothing is left in /tmp/tmux-UID:
// -L put a socket there that kill-server does not remove).
type tmuxSession struct {
	t                        *testing.T
	tmux, sock, conf         string
	dir, bin                 string
	logFile, rcFile, ttyFile string
}

// startTUI builds simlab and runs `simlab tui args...` in a pane, then
// records its exit status and the terminal's settings (stty -a) and tells
// the server "exited" (tmux wait-for), so a test can wait for the end
// without polling.
func startTUI(t *testing.T, args ...string) *tmuxSession {
	t.Helper()
	testreal.Need(t, testreal.Tmux)
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
	s := &tmuxSession{t: t, tmux: strings.TrimSpace(string(out)), dir: t.TempDir()}
	s.bin = filepath.Join(s.dir, "simlab")
	build := exec.Command("go", "build", "-o", s.bin, "./cmd/simlab")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// remain-on-exit keeps the pane to read after.
	s.conf = filepath.Join(s.dir, "tmux.conf")
	if err := os.WriteFile(s.conf, []byte("set -g remain-on-exit on\nset -g status off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.sock = filepath.Join(s.dir, "tmux.sock")
	t.Cleanup(func() { _, _ = s.tm("kill-server") })
	s.logFile, s.rcFile, s.ttyFile = filepath.Join(s.dir, "tui.log"), filepath.Join(s.dir, "rc"), filepath.Join(s.dir, "stty")
	// Temporary paths hold no single quote, so quoting them is enough.
	q := func(p string) string { return "'" + p + "'" }
	line := fmt.Sprintf("%s tui %s --log %s; echo $? > %s; stty -a > %s; %s -S %s wait-for -S exited",
		q(s.bin), strings.Join(args, " "), q(s.logFile), q(s.rcFile), q(s.ttyFile), q(s.tmux), q(s.sock))
	if out, err := s.tm("new-session", "-d", "-s", "e2e", "-x", "120", "-y", "40", line); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	return s
}

func (s *tmuxSession) tm(args ...string) (string, error) {
	cmd := exec.Command(s.tmux, append([]string{"-S", s.sock, "-f", s.conf}, args...)...)
	cmd.Env = append(os.Environ(), "TZ=UTC")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (s *tmuxSession) screen() string {
	out, _ := s.tm("capture-pane", "-p", "-t", "e2e")
	return out
}

// waitFor polls the pane until cond holds. There is no event to wait on
// for what a screen shows. The bound only ends a failing test: two minutes
// (a loaded machine draws a screen in well under a second), or the test's
// deadline if that comes first; it was 10 s, which a loaded machine can
// miss.
func (s *tmuxSession) waitFor(what string, cond func(string) bool) string {
	s.t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	bound := 2 * time.Minute
	if d, ok := s.t.Deadline(); ok {
		bound = min(bound, time.Until(d)-30*time.Second)
	}
	deadline := time.After(bound)
	for {
		sc := s.screen()
		if cond(sc) {
			return sc
		}
		select {
		case <-tick.C:
		case <-deadline:
			log, _ := os.ReadFile(s.logFile)
			s.t.Fatalf("waited %v for %s; the pane shows:\n%s\nlog:\n%s", bound, what, sc, log)
		}
	}
}

func (s *tmuxSession) keys(args ...string) {
	s.t.Helper()
	if out, err := s.tm(append([]string{"send-keys", "-t", "e2e"}, args...)...); err != nil {
		s.t.Fatalf("tmux send-keys %v: %v\n%s", args, err, out)
	}
}

// waitExit waits (tmux wait-for, no polling) until the pane's command has
// ended and returns its exit status.
func (s *tmuxSession) waitExit() string {
	s.t.Helper()
	ctx := s.t.Context()
	if d, ok := s.t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-30*time.Second))
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, s.tmux, "-S", s.sock, "-f", s.conf, "wait-for", "exited")
	if out, err := cmd.CombinedOutput(); err != nil {
		s.t.Fatalf("simlab tui did not end: tmux wait-for: %v %s; pane:\n%s", err, out, s.screen())
	}
	b, err := os.ReadFile(s.rcFile)
	if err != nil {
		s.t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func contains(parts ...string) func(string) bool {
	return func(s string) bool {
		for _, p := range parts {
			if !strings.Contains(s, p) {
				return false
			}
		}
		return true
	}
}

// TestEndToEndUnderTmux runs the real binary in a 120×40 tmux pane: open the
// run, filter the timeline on the dispatch prologue, open the first match,
// see the attribute, and quit with status 0.
func TestEndToEndUnderTmux(t *testing.T) {
	s := startTUI(t, "--scenario", "golden-t2", "--seed", "1")
	s.waitFor("the runs view", contains("runs (1)", "wrun_0000", "golden-t2"))
	s.keys("Enter")
	s.waitFor("the timeline", contains("timeline", "DEPLOY/VER", "execute branch fanout0.branch"))
	s.keys("-l", "/workflow.step.dispatch_prologue=run_context")
	s.keys("Enter")
	s.waitFor("the filtered timeline", contains("timeline /workflow.step.dispatch_prologue=run_context"))
	s.keys("Enter")
	sc := s.waitFor("the span detail", contains("› span workflow.execute", "ATTRIBUTES"))
	found := false
	for _, l := range strings.Split(sc, "\n") {
		if strings.Contains(l, "workflow.step.dispatch_prologue") && strings.Contains(l, "run_context") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no line shows workflow.step.dispatch_prologue run_context:\n%s", sc)
	}
	s.keys("q")
	if rc := s.waitExit(); rc != "0" {
		t.Fatalf("simlab tui exited with status %s after q; pane:\n%s", rc, s.screen())
	}
	log, err := os.ReadFile(s.logFile)
	if err != nil || !strings.Contains(string(log), "msg=quit") {
		t.Fatalf("the log file %s lacks the quit (err %v):\n%s", s.logFile, err, log)
	}
}

// SIGTERM (a kill, a closing session manager) ends the TUI as q does: the
// terminal comes back in cooked mode with echo, off the alternate screen,
// and the exit status is 143 (128 + SIGTERM). It used to die on the signal
// and leave the terminal raw on the alternate screen.
func TestSIGTERMRestoresTheTerminal(t *testing.T) {
	s := startTUI(t, "--scenario", "golden-t2", "--seed", "1")
	s.waitFor("the runs view", contains("runs (1)", "wrun_0000"))
	log, err := os.ReadFile(s.logFile)
	m := regexp.MustCompile(`msg="tui started".* pid=(\d+)`).FindSubmatch(log)
	if err != nil || m == nil {
		t.Fatalf("no pid in the log (%v):\n%s", err, log)
	}
	pid, _ := strconv.Atoi(string(m[1]))
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatalf("kill -TERM %d: %v", pid, err)
	}
	s.exitedRestored("SIGTERM", "143")
}

// exitedRestored waits for the lab to end after what (a signal, a key) and
// checks its exit status is want and the terminal came back in cooked mode
// with echo, off the alternate screen.
func (s *tmuxSession) exitedRestored(what, want string) {
	s.t.Helper()
	if rc := s.waitExit(); rc != want {
		s.t.Fatalf("exit status %s after %s, want %s; pane:\n%s", rc, what, want, s.screen())
	}
	stty, err := os.ReadFile(s.ttyFile)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, flag := range []string{"icanon", "echo", "isig"} {
		if !regexp.MustCompile(`(^|\s)` + flag + `(\s|$)`).Match(stty) {
			s.t.Errorf("the terminal is left without %s after %s (raw mode):\n%s", flag, what, stty)
		}
	}
	if alt, _ := s.tm("display-message", "-p", "-t", "e2e", "#{alternate_on}"); strings.TrimSpace(alt) != "0" {
		s.t.Errorf("the pane is still on the alternate screen after %s (alternate_on %q)", what, alt)
	}
}

// Ctrl-C in the lab (a key in raw mode, no signal of its own) ends it as
// an interrupt does: simlab tui raises SIGINT at itself, restores the
// terminal and exits 130. It used to quit as q does, exit 0.
func TestCtrlCExits130AndRestoresTheTerminal(t *testing.T) {
	s := startTUI(t, "--scenario", "golden-t2", "--seed", "1")
	s.waitFor("the runs view", contains("runs (1)", "wrun_0000"))
	s.keys("C-c")
	s.exitedRestored("Ctrl-C", "130")
}

func errStderr(err error) string {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(exit.Stderr)
	}
	return ""
}

// The progress bar of the simulation before the screen opens is gone
// from the terminal once the lab quits: it was left at 99 % (199/200)
// because the last report came before the last seed ended. Whether the
// bar had drawn that step before the lab opened moves with timing, so this
// sees the old fault in some runs only; TestSimulateReportsAllSeedsDone
// holds its cause every time.
func TestQuitLeavesNoProgressBar(t *testing.T) {
	s := startTUI(t, "--scenario", "fanout", "--seed", "1..200")
	s.waitFor("the runs view", contains("runs (200)"))
	s.keys("q")
	if rc := s.waitExit(); rc != "0" {
		t.Fatalf("exit %s after q", rc)
	}
	if sc := s.screen(); strings.Contains(sc, "simulating seeds") {
		t.Errorf("after quitting, the terminal still shows the progress bar:\n%s", sc)
	}
}
