package main

import (
	"bytes"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRootCommand(&out, &errb)
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), errb.String(), err
}

func TestVersion(t *testing.T) {
	out, _, err := runCLI(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "simlab ") || !strings.Contains(out, "go1.") {
		t.Fatalf("version printed %q", out)
	}
}

func TestHelpListsCommands(t *testing.T) {
	out, _, err := runCLI(t, "--help")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "version") {
		t.Fatalf("--help does not list the version command:\n%s", out)
	}
}

func TestUnknownCommandIsAnError(t *testing.T) {
	if _, _, err := runCLI(t, "frobnicate"); err == nil || !strings.Contains(err.Error(), "frobnicate") {
		t.Fatalf("unknown command error = %v", err)
	}
}
