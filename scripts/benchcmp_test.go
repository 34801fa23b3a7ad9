// Package scripts holds the tests of the repository's shell scripts.
package scripts

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchcmp runs scripts/benchcmp in dir with TMPDIR set to tmp and returns
// its exit code, stdout and stderr.
func benchcmp(t *testing.T, dir, tmp string, env []string, args ...string) (int, string, string) {
	t.Helper()
	script, err := filepath.Abs("benchcmp")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", append([]string{script}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append([]string{"TMPDIR=" + tmp, "GOTOOLCHAIN=local"}, env...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// assertClean fails unless the script left nothing behind: no file in its
// TMPDIR and no worktree but the repository's own.
func assertClean(t *testing.T, repo, tmp string) {
	t.Helper()
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
	if wts := git(t, repo, "worktree", "list", "--porcelain"); strings.Count(wts, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", wts)
	}
}

// tinyRepo makes a git repository holding a module with one benchmark (in
// package ./b) in two commits and returns its path and the commits.
func tinyRepo(t *testing.T) (repo, base, head string) {
	t.Helper()
	repo = t.TempDir()
	write := func(name, text string) {
		path := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module tiny\n\ngo 1.21\n")
	bench := func(body string) string {
		return "package b\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\nvar _ = time.Millisecond\n\n" +
			"func BenchmarkTiny(b *testing.B) {\n\tfor b.Loop() {\n\t\t" + body + "\n\t}\n}\n"
	}
	write("b/b_test.go", bench("_ = make([]byte, 8)"))
	git(t, repo, "init", "-q")
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-qm", "base")
	base = git(t, repo, "rev-parse", "HEAD")
	write("b/b_test.go", bench("_ = make([]byte, 64)"))
	git(t, repo, "commit", "-qam", "head")
	head = git(t, repo, "rev-parse", "HEAD")
	return repo, base, head
}

func TestBenchcmpRejectsBadArgumentsAndChecksNothingOut(t *testing.T) {
	repo, _, _ := tinyRepo(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "BASE is missing"},
		{[]string{"-n", "0", "HEAD"}, "-n 0: want a count"},
		{[]string{"-n", "two", "HEAD"}, "-n two: want a count"},
		{[]string{"-z", "HEAD"}, "unknown option -z"},
		{[]string{"-b"}, "option -b needs a value"},
		{[]string{"-b", "", "HEAD"}, "-b is empty"},
		{[]string{"-t", "", "HEAD"}, "-t is empty"},
		{[]string{"-p", "model", "HEAD"}, "starting with ./"},
		{[]string{"-p", "./...", "HEAD"}, "not with ..."},
		{[]string{"no-such-commit"}, "no-such-commit is not a commit"},
		{[]string{"HEAD", "no-such-commit"}, "no-such-commit is not a commit"},
		{[]string{"HEAD", "HEAD~1", "HEAD"}, "too many commits"},
		{[]string{"HEAD~1", "-n", "3"}, "option -n after the commits"},
	} {
		tmp := t.TempDir()
		code, _, stderr := benchcmp(t, repo, tmp, nil, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "usage:") {
			t.Errorf("benchcmp %q: exit %d, stderr %q; want exit 2 naming %q and the usage", c.args, code, stderr, c.want)
		}
		assertClean(t, repo, tmp)
	}
	if code, stdout, _ := benchcmp(t, repo, t.TempDir(), nil, "-h"); code != 0 || !strings.Contains(stdout, "Usage: scripts/benchcmp") {
		t.Errorf("benchcmp -h: exit %d, stdout %q", code, stdout)
	}
}

// fakeBenchstat writes a benchstat stand-in that prints its arguments and
// the inputs it was given, so no test needs the module proxy.
func fakeBenchstat(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "benchstat")
	script := "#!/usr/bin/env bash\necho \"args: $*\"\nfor a; do case $a in *=*) echo \"== ${a%%=*}\"; cat \"${a#*=}\";; esac; done\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestBenchcmpRunsBothCommitsInAlternateOrderAndCleansUp(t *testing.T) {
	repo, base, head := tinyRepo(t)
	tmp, out := t.TempDir(), filepath.Join(t.TempDir(), "raw")
	code, stdout, stderr := benchcmp(t, repo, tmp, []string{"BENCHSTAT=" + fakeBenchstat(t)},
		"-p", "./b", "-b", "Tiny", "-n", "3", "-t", "100x", "-o", out, base, head, "--", "-col", "/x")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	assertClean(t, repo, tmp)
	wantArgs := "args: -col /x base@" + base[:7]
	if !strings.Contains(stdout, wantArgs) || !strings.Contains(stdout, " head@"+head[:7]+"=") {
		t.Errorf("benchstat was not given the extra arguments first and the two labelled inputs:\n%s", stdout)
	}
	sides := strings.Split(stdout, "== ")
	if len(sides) != 3 {
		t.Fatalf("want two inputs, got:\n%s", stdout)
	}
	for _, s := range sides[1:] {
		if n := strings.Count(s, "\nBenchmarkTiny"); n != 3 {
			t.Errorf("input %q: %d BenchmarkTiny lines, want one per round (3)", strings.SplitN(s, "\n", 2)[0], n)
		}
		if !strings.Contains(s, "B/op") {
			t.Errorf("input %q was not run with -benchmem", strings.SplitN(s, "\n", 2)[0])
		}
	}
	var order []string
	sc := bufio.NewScanner(strings.NewReader(stderr))
	for sc.Scan() {
		if _, rest, ok := strings.Cut(sc.Text(), ": round "); ok {
			order = append(order, rest)
		}
	}
	want := []string{"1/3: base ./b", "1/3: head ./b", "2/3: head ./b", "2/3: base ./b", "3/3: base ./b", "3/3: head ./b"}
	if strings.Join(order, "|") != strings.Join(want, "|") {
		t.Errorf("rounds ran in the order %q, want %q", order, want)
	}
	if !strings.Contains(stderr, "load average before:") || !strings.Contains(stderr, "load average after:") {
		t.Errorf("the load was not printed:\n%s", stderr)
	}
	for _, f := range []string{"base.txt", "head.txt"} {
		if b, err := os.ReadFile(filepath.Join(out, f)); err != nil || !bytes.Contains(b, []byte("BenchmarkTiny")) {
			t.Errorf("-o kept no raw %s (%v)", f, err)
		}
	}
}

func TestBenchcmpCleansUpWhenABuildOrTheBenchmarksFail(t *testing.T) {
	repo, base, _ := tinyRepo(t)
	if err := os.WriteFile(filepath.Join(repo, "b", "b_test.go"), []byte("package b\n\nfunc broken( {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "commit", "-qam", "broken")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"build", []string{"-p", "./b", "-n", "1", base, "HEAD"}, "cannot build the tests of ./b at HEAD"},
		{"no match", []string{"-p", "./b", "-b", "NoSuch", "-n", "1", base, base}, "no benchmark matched -b 'NoSuch'"},
		{"no package", []string{"-p", "./nosuch", "-n", "1", base, base}, "cannot build the tests of ./nosuch"},
	} {
		tmp := t.TempDir()
		code, _, stderr := benchcmp(t, repo, tmp, []string{"BENCHSTAT=false"}, c.args...)
		if code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant exit 1 naming %q", c.name, code, stderr, c.want)
		}
		assertClean(t, repo, tmp)
	}
}

func TestBenchcmpCleansUpWhenInterrupted(t *testing.T) {
	repo := t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module slow\n\ngo 1.21\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A benchmark that takes a while, so the interrupt lands mid-round.
	src := "package slow\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\nfunc BenchmarkSlow(b *testing.B) {\n\tfor b.Loop() {\n\t\ttime.Sleep(10 * time.Millisecond)\n\t}\n}\n"
	if err := os.WriteFile(filepath.Join(repo, "slow_test.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "init", "-q")
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-qm", "slow")
	script, _ := filepath.Abs("benchcmp")
	tmp := t.TempDir()
	cmd := exec.Command("bash", script, "-p", ".", "-t", "30s", "-n", "1", "HEAD")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "GOTOOLCHAIN=local", "BENCHSTAT=false")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() && !strings.Contains(sc.Text(), "round 1/1") {
	}
	time.Sleep(300 * time.Millisecond) // the benchmark binary is running
	// Ctrl-C in a terminal signals the whole foreground process group.
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
	}
	if err := cmd.Wait(); err == nil {
		t.Fatal("benchcmp exited 0 after an interrupt")
	}
	assertClean(t, repo, tmp)
}
