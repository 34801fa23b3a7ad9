package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// goldenT2Trace is the trace file of `run --scenario golden-t2` written to a
// new regular file: what every other kind of target must receive too.
func goldenT2Trace(t *testing.T) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t2.jsonl")
	if _, _, err := runCLI(t, "run", "--scenario", "golden-t2", "--trace-out", path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		t.Fatalf("trace file: %d bytes, %v", len(b), err)
	}
	return b
}

func TestTraceOutReplacesARegularFileAtomically(t *testing.T) {
	want := goldenT2Trace(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "t2.jsonl")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "run", "--scenario", "golden-t2", "--trace-out", path); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
		t.Fatalf("the regular file holds %d bytes, want the %d of the trace", len(got), len(want))
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("the directory holds %d entries, want only the trace (no temporary file left)", len(ents))
	}
}

func TestTraceOutWritesThroughASymlink(t *testing.T) {
	want := goldenT2Trace(t)
	dir := t.TempDir()
	target, link := filepath.Join(dir, "target.jsonl"), filepath.Join(dir, "link.jsonl")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "run", "--scenario", "golden-t2", "--trace-out", link); err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(link)
	if err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced (mode %v, %v)", st.Mode(), err)
	}
	if got, _ := os.ReadFile(target); !bytes.Equal(got, want) {
		t.Fatalf("the link's target holds %d bytes, want the %d of the trace", len(got), len(want))
	}
	// A link whose target does not exist yet gets its target written.
	newTarget, dangling := filepath.Join(dir, "new.jsonl"), filepath.Join(dir, "dangling.jsonl")
	if err := os.Symlink(newTarget, dangling); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "run", "--scenario", "golden-t2", "--trace-out", dangling); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(newTarget); !bytes.Equal(got, want) {
		t.Fatalf("the dangling link's target holds %d bytes, want the %d of the trace", len(got), len(want))
	}
}

func TestTraceOutWritesIntoAFIFO(t *testing.T) {
	want := goldenT2Trace(t)
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte, 1)
	go func() {
		// Opening blocks until the command opens the FIFO for writing.
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- b
	}()
	if _, _, err := runCLI(t, "run", "--scenario", "golden-t2", "--trace-out", fifo); err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-got:
		if !bytes.Equal(b, want) {
			t.Fatalf("the FIFO's reader got %d bytes, want the %d of the trace", len(b), len(want))
		}
	case <-time.After(time.Minute):
		t.Fatal("the FIFO's reader never got end of file")
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced (mode %v, %v)", st.Mode(), err)
	}
}

func TestTraceOutDashIsStdout(t *testing.T) {
	want := goldenT2Trace(t)
	out, errOut, err := runCLI(t, "run", "--scenario", "golden-t2", "--trace-out", "-")
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Fatalf("stdout holds %d bytes, want exactly the %d of the trace (the summary belongs on stderr)", len(out), len(want))
	}
	if !strings.Contains(errOut, "history ") {
		t.Fatalf("the run summary is not on stderr:\n%s", errOut)
	}
	if _, _, err := runCLI(t, "run", "--json", "--trace-out", "-"); exitCode(err) != 2 || !strings.Contains(err.Error(), "--trace-out") {
		t.Fatalf("--json with --trace-out -: %v (exit %d), want exit 2 naming --trace-out", err, exitCode(err))
	}
}

// fullDevice behaves like /dev/full: every write fails with ENOSPC.
type fullDevice struct{}

func (fullDevice) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// A full device (simulated: tests never touch real device nodes) fails the
// command with exit 2, naming the path the user gave and no temporary file;
// for a regular file the old content survives.
func TestTraceOutFullDevice(t *testing.T) {
	defer func(w func(io.Writer) io.Writer) { wrapTraceWriter = w }(wrapTraceWriter)
	wrapTraceWriter = func(io.Writer) io.Writer { return fullDevice{} }
	dir := t.TempDir()
	fifo := filepath.Join(dir, "full")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		if f, err := os.Open(fifo); err == nil {
			io.Copy(io.Discard, f)
			f.Close()
		}
	}()
	regular := filepath.Join(dir, "keep.jsonl")
	if err := os.WriteFile(regular, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, regular} {
		_, _, err := runCLI(t, "run", "--scenario", "golden-t2", "--trace-out", path)
		if exitCode(err) != 2 || err == nil {
			t.Fatalf("%s: exit %d (%v), want 2", path, exitCode(err), err)
		}
		msg := err.Error()
		if !strings.Contains(msg, path+": no space left on device") || strings.Contains(msg, ".tmp") {
			t.Fatalf("%s: error %q, want the user's path and the reason, no temporary name", path, msg)
		}
	}
	if b, _ := os.ReadFile(regular); string(b) != "old" {
		t.Fatalf("a failed write changed the regular file to %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Fatalf("%d entries in the directory, want the FIFO and the file (no temporary file left)", len(ents))
	}
}

func TestTraceOutBadPathsSayWhatToDo(t *testing.T) {
	dir := t.TempDir()
	for path, want := range map[string]string{
		dir:                                 "is a directory",
		filepath.Join(dir, "no", "t.jsonl"): "does not exist",
	} {
		_, _, err := runCLI(t, "run", "--scenario", "golden-t2", "--trace-out", path)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
			t.Errorf("--trace-out %s: %v (exit %d), want exit 2 saying %q", path, err, exitCode(err), want)
		}
	}
}

// A file its owner made read-only is not replaced: the shell's > would
// refuse it, and renaming over it (allowed by the directory) would quietly
// discard the protection. It is left as it was; the command exits 2 naming
// it, the summary already printed. (Root ignores permissions, so the rule
// is the mode itself: no write bit at all.)
func TestTraceOutRefusesAReadOnlyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kept.jsonl")
	if err := os.WriteFile(path, []byte("keep me"), 0o444); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, "run", "--scenario", "golden-t2", "--trace-out", path)
	if exitCode(err) != 2 || err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("exit %d (%v), want 2 naming %s as read-only", exitCode(err), err, path)
	}
	if !strings.Contains(out, "history ") {
		t.Errorf("the run's summary was not printed before the refusal:\n%s", out)
	}
	st, serr := os.Stat(path)
	if got, _ := os.ReadFile(path); string(got) != "keep me" || serr != nil || st.Mode().Perm() != 0o444 {
		t.Fatalf("the read-only file was changed: %q, mode %v", got, st.Mode().Perm())
	}
}
