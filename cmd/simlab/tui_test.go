package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Bad input to `simlab tui` is reported with exit status 2 before anything
// is opened: neither the log file nor the screen (go test has no terminal,
// so reaching the screen would fail with a different error).
func TestTUIBadInputExitsTwoBeforeTheScreen(t *testing.T) {
	dir := t.TempDir()
	badTrace := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(badTrace, []byte("{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{\"traceId\":\"QaQMeHCqyKXUK04LrLPJgw==\"}]}]}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "tui.log")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--scenario", "nope"}, `scenario "nope"`},
		{[]string{"--variant", "bogus"}, `"bogus": unknown variant`},
		{[]string{"--set", "workflow.max_inline=-1"}, "workflow.max_inline"},
		{[]string{"--seed", "x"}, `--seed "x"`},
		{[]string{"--trace", filepath.Join(dir, "missing.jsonl")}, "no such file"},
		{[]string{"--trace", badTrace}, "line 1"},
	}
	for _, c := range cases {
		_, _, err := runCLI(t, append([]string{"tui", "--log", log}, c.args...)...)
		if exitCode(err) != 2 || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("simlab tui %v: exit %d, %v; want exit 2 naming %q", c.args, exitCode(err), err, c.want)
		}
	}
	if _, err := os.Stat(log); !os.IsNotExist(err) {
		t.Fatalf("a rejected invocation opened the log file (%v)", err)
	}
}

func TestTUISeedFlag(t *testing.T) {
	got, err := parseTUISeeds([]string{"3", "5..7"})
	if err != nil || len(got) != 4 || got[0] != 3 || got[3] != 7 {
		t.Fatalf("parseTUISeeds = %v, %v", got, err)
	}
	if got, _ := parseTUISeeds(nil); len(got) != 8 || got[0] != 1 {
		t.Fatalf("the default seeds are %v, want 1..8", got)
	}
	if _, err := parseTUISeeds([]string{"9..2"}); err == nil {
		t.Fatal("a reversed range was accepted")
	}
}

// Without a terminal (a CI step, a cron job: no controlling terminal) the
// TUI says so in words and exits 2 before simulating anything; tcell's own
// "open /dev/tty: no such device or address" said neither what nor why.
func TestTUIWithoutATerminal(t *testing.T) {
	bin := buildSimlab(t)
	cmd := exec.Command(bin, "tui", "--seed", "1", "--log", filepath.Join(t.TempDir(), "tui.log"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // a new session has no controlling terminal
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "simlab tui needs a terminal") || strings.Contains(string(out), "open /dev/tty") {
		t.Fatalf("tui without a terminal: %v\n%s", err, out)
	}
}
