package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/simlab/simlab/realengine/findings"
)

// engineCopy is a temp engine directory holding a copy of the pinned
// package.json and nothing else: commands that refuse their input, or stop
// at npm, never get further, and the real realengine is untouched.
func engineCopy(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "realengine", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "package.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fakeNPM puts an npm first on PATH that logs its arguments, answers npm
// view for the versions published lists (404 otherwise, as the registry
// does) and makes npm install exit with installExit, changing nothing.
func fakeNPM(t *testing.T, installExit string, published ...string) (log string) {
	t.Helper()
	bin := t.TempDir()
	log = filepath.Join(bin, "npm.log")
	var cases strings.Builder
	for _, p := range published {
		v := p[strings.LastIndex(p, "@")+1:]
		cases.WriteString("    " + p + ") echo " + v + " ;;\n")
	}
	script := "#!/bin/sh\necho \"$@\" >> " + log + "\ncase \"$1\" in\nview)\n  case \"$2\" in\n" + cases.String() +
		"    *) echo 'npm error code E404' >&2; exit 1 ;;\n  esac ;;\ninstall) exit " + installExit + " ;;\nesac\n"
	if err := os.WriteFile(filepath.Join(bin, "npm"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return log
}

func npmLog(t *testing.T, log string) []string {
	t.Helper()
	data, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

func TestReleasesListsWhatPackageJSONInstalls(t *testing.T) {
	out, _, err := runCLI(t, "releases", "--engine-dir", engineCopy(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"5.0.0-beta.50  core-b50               builders-b50", "5.0.0-beta.52  @workflow/core         @workflow/builders",
		"5.0.0-beta.55  core-b55               builders-b55", "5.0.0-beta.46  wl-b46"} {
		if !strings.Contains(out, want) {
			t.Errorf("releases lacks %q:\n%s", want, out)
		}
	}
}

// simlab releases matrix refuses bad input before it installs or runs
// anything (the engine directory holds no node_modules).
func TestReleasesMatrixRefusesBadInput(t *testing.T) {
	dir := engineCopy(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--cores", "5.0.0-beta.54"}, "5.0.0-beta.50, 5.0.0-beta.52, 5.0.0-beta.53, 5.0.0-beta.55"},
		{[]string{"--world-local", "5.0.0-beta.43"}, "5.0.0-beta.45, 5.0.0-beta.46"},
		{[]string{"--cores="}, "--cores is empty"},
		{[]string{"--findings", "nope"}, "lazy-reads"},
		{[]string{"--branches", "0"}, "--branches 0"},
		{[]string{"--repetitions", "0"}, "--repetitions 0"},
		{[]string{"--time-scale", "0.5"}, "--time-scale"},
	} {
		_, _, err := runCLI(t, append([]string{"releases", "matrix", "--engine-dir", dir}, c.args...)...)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("releases matrix %v: %v, want exit 2 naming %q", c.args, err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); !os.IsNotExist(err) {
		t.Errorf("node_modules appeared: %v", err)
	}
}

// simlab releases add: what it refuses without asking anyone, what it asks
// the registry, and the exact npm install it runs, with a fake npm on PATH
// (no network). package.json is left as it was when npm fails or changes
// nothing, and the command says so.
func TestReleasesAddArguments(t *testing.T) {
	dir := engineCopy(t)
	before, _ := os.ReadFile(filepath.Join(dir, "package.json"))
	log := fakeNPM(t, "1", "@workflow/core@5.0.0-beta.57", "@workflow/builders@5.0.0-beta.57", "@workflow/core@5.0.0-beta.58", "@workflow/world-local@5.0.0-beta.47")
	add := func(args ...string) (string, error) {
		_, stderr, err := runCLI(t, append([]string{"releases", "add", "--engine-dir", dir}, args...)...)
		return stderr, err
	}
	// Refused before npm runs at all.
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "name a @workflow/core version"},
		{[]string{"latest"}, "exact version"},
		{[]string{"^5.0.0-beta.57"}, "exact version"},
		{[]string{"5.0.0-beta.57", "5.0.0-beta.58"}, "accepts at most 1 arg"},
		{[]string{"--add-world-local", "5.0"}, "exact version"},
	} {
		if _, err := add(c.args...); exitCode(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("releases add %v: %v, want exit 2 naming %q", c.args, err, c.want)
		}
	}
	if got := npmLog(t, log); len(got) != 0 {
		t.Fatalf("npm ran for input refused up front: %v", got)
	}
	// Refused after asking the registry, or before (installed already).
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"5.0.0-beta.55"}, "installed already"},
		{[]string{"--add-world-local", "5.0.0-beta.46"}, "installed already"},
		{[]string{"5.0.0-beta.59"}, "@workflow/core@5.0.0-beta.59 is not published"},
	} {
		if _, err := add(c.args...); exitCode(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("releases add %v: %v, want exit 2 naming %q", c.args, err, c.want)
		}
	}
	if got := npmLog(t, log); len(got) != 1 || got[0] != "view @workflow/core@5.0.0-beta.59 version" {
		t.Fatalf("npm calls %q, want only the view of 5.0.0-beta.59", got)
	}
	os.Remove(log)
	// A core with builders and a world-local: the view of each, then one
	// install of exact aliases; npm fails here, and that is the error.
	stderr, err := add("5.0.0-beta.57", "--add-world-local", "5.0.0-beta.47")
	wantInstall := "install --save-exact --no-audit --no-fund --loglevel=error core-b57@npm:@workflow/core@5.0.0-beta.57 builders-b57@npm:@workflow/builders@5.0.0-beta.57 wl-b47@npm:@workflow/world-local@5.0.0-beta.47"
	if err == nil || !strings.Contains(err.Error(), "npm install") || !strings.Contains(stderr, "npm "+wantInstall) {
		t.Errorf("releases add 5.0.0-beta.57: %v (stderr %q), want npm install's failure and the command printed", err, stderr)
	}
	got := npmLog(t, log)
	want := []string{"view @workflow/core@5.0.0-beta.57 version", "view @workflow/builders@5.0.0-beta.57 version", "view @workflow/world-local@5.0.0-beta.47 version", wantInstall}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("npm calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	os.Remove(log)
	// A core without builders of its version: installed alone, said so;
	// npm "succeeds" without changing package.json, which the command
	// notices instead of running a matrix without the release.
	log = fakeNPM(t, "0", "@workflow/core@5.0.0-beta.58")
	stderr, err = add("5.0.0-beta.58")
	if err == nil || !strings.Contains(err.Error(), "does not install core 5.0.0-beta.58") || !strings.Contains(stderr, "@workflow/builders 5.0.0-beta.58 is not published") {
		t.Errorf("releases add 5.0.0-beta.58: %v (stderr %q)", err, stderr)
	}
	if got := npmLog(t, log); len(got) != 3 || got[2] != "install --save-exact --no-audit --no-fund --loglevel=error core-b58@npm:@workflow/core@5.0.0-beta.58" {
		t.Errorf("npm calls %q", got)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "package.json"))
	if string(after) != string(before) {
		t.Error("package.json changed")
	}
}

// The matrix's table fits 132 columns with the eight pinned releases, and
// says each cell's verdict under its release.
func TestMatrixTableIsReadable(t *testing.T) {
	res := &findings.MatrixResult{Findings: findings.Findings, Seconds: 12}
	for _, c := range []string{"5.0.0-beta.50", "5.0.0-beta.52", "5.0.0-beta.53", "5.0.0-beta.55"} {
		for _, wl := range []string{"5.0.0-beta.45", "5.0.0-beta.46"} {
			res.Releases = append(res.Releases, struct {
				Core       string `json:"core"`
				WorldLocal string `json:"world_local"`
			}{c, wl})
			for _, f := range findings.Findings {
				v := findings.Holds
				if c == "5.0.0-beta.50" {
					v = findings.NotApplicable
				}
				res.Cells = append(res.Cells, findings.Cell{Finding: f.ID, Core: c, WorldLocal: wl, Judgement: findings.Judgement{Verdict: v, Evidence: "measured"}})
			}
		}
	}
	var b strings.Builder
	printMatrix(&b, res)
	out := b.String()
	lines := strings.Split(out, "\n")
	for _, l := range lines[:len(findings.Findings)+3] {
		if n := len([]rune(l)); n > 132 {
			t.Errorf("a table line of %d columns:\n%s", n, l)
		}
	}
	if !strings.Contains(out, "FINDING  ") || !strings.Contains(out, "b50/wl45") || !strings.Contains(out, "b55/wl46") {
		t.Errorf("the table's header:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^lazy-reads +n/a +n/a +holds`).MatchString(out) {
		t.Errorf("the lazy-reads row:\n%s", out)
	}
	if !strings.Contains(out, "core beta.55 / world-local beta.46: holds (0 s): measured") {
		t.Errorf("the evidence lines:\n%s", out)
	}
}

// A release added to the engine directory's package.json (as simlab
// releases add leaves it) is one validate runs, without a rebuild: --cores
// names it and validate goes on to the install, which it then asks for.
func TestValidateReadsTheReleasesFromTheEngineDir(t *testing.T) {
	dir := engineCopy(t)
	path := filepath.Join(dir, "package.json")
	data, _ := os.ReadFile(path)
	added := strings.Replace(string(data), `"dependencies": {`, `"dependencies": {
    "core-b57": "npm:@workflow/core@5.0.0-beta.57",`, 1)
	if err := os.WriteFile(path, []byte(added), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := runCLI(t, "validate", "--engine-dir", dir, "--cores", "5.0.0-beta.57", "--no-install", "--branches", "4", "--repetitions", "1", "--seeds", "1")
	if err == nil || strings.Contains(err.Error(), "is not installed by") || !strings.Contains(err.Error(), "packages are not installed in "+dir) {
		t.Errorf("validate --cores 5.0.0-beta.57 with it in package.json: %v, want it accepted and the install asked for", err)
	}
	out, _, err := runCLI(t, "releases", "--engine-dir", dir)
	if err != nil || !strings.Contains(out, "5.0.0-beta.57  core-b57               @workflow/builders (none of its version installed)") {
		t.Errorf("releases: %v\n%s", err, out)
	}
}
