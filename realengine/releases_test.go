package realengine

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/simlab/simlab/model"
)

// The pinned package.json installs every release the matrix names: four
// cores, each with the builders of its own version, over two world-locals;
// beta.50 is the legacy prologue, the rest fetch-free. No Node.
func TestPinnedCatalog(t *testing.T) {
	type core struct{ Version, Alias, Builders string }
	var got []core
	for _, c := range Pinned.Cores {
		got = append(got, core{c.Version, c.Alias, c.Builders})
	}
	want := []core{
		{"5.0.0-beta.50", "core-b50", "builders-b50"},
		{"5.0.0-beta.52", "", "@workflow/builders"},
		{"5.0.0-beta.53", "core-b53", "builders-b53"},
		{"5.0.0-beta.55", "core-b55", "builders-b55"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pinned cores %+v, want %+v", got, want)
	}
	if wl := Pinned.WorldLocals; len(wl) != 2 || wl[0] != (WorldLocal{"5.0.0-beta.45", ""}) || wl[1] != (WorldLocal{"5.0.0-beta.46", "wl-b46"}) {
		t.Errorf("pinned world-locals %+v, want beta.45 (unaliased) and beta.46 (wl-b46)", wl)
	}
	if Pinned.DefaultCore != "5.0.0-beta.52" || Pinned.DefaultWorldLocal != "5.0.0-beta.45" {
		t.Errorf("defaults %s, %s", Pinned.DefaultCore, Pinned.DefaultWorldLocal)
	}
	for _, c := range Pinned.Cores {
		if c.FetchFree() != (c.Version != "5.0.0-beta.50") {
			t.Errorf("core %s: fetch-free %v", c.Version, c.FetchFree())
		}
	}
	// The embedded package.json is the one on disk (a release added by
	// simlab releases add is read from disk; the tests pin what is here).
	disk, err := ReadCatalog(".")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(disk, Pinned) {
		t.Errorf("package.json on disk %+v differs from the embedded one %+v", disk, Pinned)
	}
}

func TestParseCatalogReadsAliases(t *testing.T) {
	pj := `{"dependencies": {
		"@workflow/core": "5.0.0-beta.52", "@workflow/builders": "5.0.0-beta.52",
		"@workflow/world-local": "5.0.0-beta.45", "workflow": "5.0.0-beta.52",
		"core-b9": "npm:@workflow/core@5.0.0-beta.9",
		"core-b57": "npm:@workflow/core@5.0.0-beta.57", "builders-b57": "npm:@workflow/builders@5.0.0-beta.57",
		"core-5.1.0": "npm:@workflow/core@5.1.0",
		"wl-b47": "npm:@workflow/world-local@5.0.0-beta.47"}}`
	c, err := ParseCatalog([]byte(pj))
	if err != nil {
		t.Fatal(err)
	}
	// Numeric prerelease order (beta.9 before beta.52), a release after
	// its prereleases; a core without builders of its version has none.
	if got := versions(c.Cores); !slices.Equal(got, []string{"5.0.0-beta.9", "5.0.0-beta.52", "5.0.0-beta.57", "5.1.0"}) {
		t.Errorf("cores in order %v", got)
	}
	b57, _ := c.Core("5.0.0-beta.57")
	b9, _ := c.Core("5.0.0-beta.9")
	if b57.Builders != "builders-b57" || b57.Package() != "core-b57" || b9.Builders != "" || b9.BuildersPackage() != "@workflow/builders" || b9.FetchFree() {
		t.Errorf("beta.57 %+v, beta.9 %+v", b57, b9)
	}
	if got := versionsOf(c.WorldLocals); !slices.Equal(got, []string{"5.0.0-beta.45", "5.0.0-beta.47"}) {
		t.Errorf("world-locals %v", got)
	}
	if !slices.Contains(c.Packages, "builders-b57") || !slices.Contains(c.Packages, "workflow") {
		t.Errorf("packages %v", c.Packages)
	}
	all, err := c.ExpandCores([]string{All})
	if err != nil || len(all) != 4 {
		t.Errorf("all cores: %v %v", all, err)
	}
	if _, err := c.ExpandCores([]string{"5.0.0-beta.57", "5.0.0-beta.57"}); err == nil {
		t.Error("a core named twice: accepted")
	}
	if _, err := c.ExpandWorldLocals([]string{"5.0.0-beta.46"}); err == nil || !strings.Contains(err.Error(), "5.0.0-beta.45, 5.0.0-beta.47") || !strings.Contains(err.Error(), "simlab releases add") {
		t.Errorf("unknown world-local: %v, want the installed ones and the way to add one named", err)
	}
	if wl, err := c.ExpandWorldLocals(nil); err != nil || len(wl) != 1 || wl[0].Version != "5.0.0-beta.45" {
		t.Errorf("no world-local named: %v %v, want the default", wl, err)
	}
	for _, bad := range []string{
		`{"dependencies": {"@workflow/core": "5.0.0-beta.52", "@workflow/builders": "5.0.0-beta.52"}}`,
		`{"dependencies": {"@workflow/core": "5.0.0-beta.52", "@workflow/world-local": "5.0.0-beta.45"}}`,
		`{"dependencies": {"@workflow/core": "5.0.0-beta.52", "@workflow/builders": "5.0.0-beta.52", "@workflow/world-local": "5.0.0-beta.45", "x": "npm:@workflow/core@5.0.0-beta.52"}}`,
		`{"dependencies": {"@workflow/core": "5.0.0-beta.52", "@workflow/builders": "5.0.0-beta.52", "@workflow/world-local": "5.0.0-beta.45", "x": "npm:nope"}}`,
		`not json`,
	} {
		if _, err := ParseCatalog([]byte(bad)); err == nil {
			t.Errorf("ParseCatalog(%s): accepted", bad)
		}
	}
}

func TestCompareVersions(t *testing.T) {
	order := []string{"4.9.9", "5.0.0-alpha.1", "5.0.0-beta.2", "5.0.0-beta.10", "5.0.0-beta.10.1", "5.0.0-rc.1", "5.0.0", "5.0.1", "5.10.0", "not-a-version"}
	for i := range order {
		for j := range order {
			got := CompareVersions(order[i], order[j])
			if (i < j && got >= 0) || (i > j && got <= 0) || (i == j && got != 0) {
				t.Errorf("CompareVersions(%s, %s) = %d", order[i], order[j], got)
			}
		}
	}
	for _, bad := range []string{"", "5", "5.0", "^5.0.0", "5.0.0-", "5.0.0-beta..1", "05.0.0", "latest", "5.0.0-beta.1 "} {
		if ValidVersion(bad) {
			t.Errorf("ValidVersion(%q) = true", bad)
		}
	}
	if AliasFor("core", "5.0.0-beta.57") != "core-b57" || AliasFor("wl", "5.1.0") != "wl-5.1.0" || AliasFor("core", "5.0.0-beta.x") != "core-5.0.0-beta.x" {
		t.Error("AliasFor")
	}
}

// simlab releases add's plan, with the registry answered by the test: the
// install specs, builders only where published, and every refusal named
// before anything is installed.
func TestPlanAdd(t *testing.T) {
	published := map[string]bool{
		"@workflow/core@5.0.0-beta.57": true, "@workflow/builders@5.0.0-beta.57": true,
		"@workflow/core@5.0.0-beta.58":        true,
		"@workflow/world-local@5.0.0-beta.47": true,
	}
	var asked []string
	reg := func(pkg, v string) (bool, error) {
		asked = append(asked, pkg+"@"+v)
		if v == "5.0.0-beta.99" {
			return false, errors.New("network down")
		}
		return published[pkg+"@"+v], nil
	}
	p, err := PlanAdd(Pinned, "5.0.0-beta.57", []string{"5.0.0-beta.47"}, reg)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"core-b57@npm:@workflow/core@5.0.0-beta.57", "builders-b57@npm:@workflow/builders@5.0.0-beta.57", "wl-b47@npm:@workflow/world-local@5.0.0-beta.47"}
	if !slices.Equal(p.Specs, want) || p.NoBuilders || p.Core.Builders != "builders-b57" || len(p.WorldLocals) != 1 {
		t.Errorf("plan %+v, want specs %v", p, want)
	}
	if args := p.InstallArgs(); args[0] != "install" || !slices.Contains(args, "--save-exact") || !slices.Equal(args[len(args)-3:], want) {
		t.Errorf("npm args %v", args)
	}
	p, err = PlanAdd(Pinned, "5.0.0-beta.58", nil, reg)
	if err != nil || !p.NoBuilders || !slices.Equal(p.Specs, []string{"core-b58@npm:@workflow/core@5.0.0-beta.58"}) {
		t.Errorf("a core without builders: %+v %v", p, err)
	}
	asked = nil
	for _, c := range []struct {
		core string
		wls  []string
		want string
	}{
		{"", nil, "name a @workflow/core version"},
		{"^5.0.0", nil, "exact version"},
		{"latest", nil, "exact version"},
		{"5.0.0-beta.55", nil, "installed already"},
		{"", []string{"5.0.0-beta.46"}, "installed already"},
		{"", []string{"5.0"}, "exact version"},
	} {
		if _, err := PlanAdd(Pinned, c.core, c.wls, reg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("PlanAdd(%q, %v): %v, want %q", c.core, c.wls, err, c.want)
		}
	}
	if len(asked) != 0 {
		t.Errorf("asked the registry %v before refusing what it need not ask", asked)
	}
	if _, err := PlanAdd(Pinned, "5.0.0-beta.59", nil, reg); err == nil || !strings.Contains(err.Error(), "not published") {
		t.Errorf("unpublished core: %v", err)
	}
	if _, err := PlanAdd(Pinned, "5.0.0-beta.99", nil, reg); err == nil || !strings.Contains(err.Error(), "network down") {
		t.Errorf("registry error: %v", err)
	}
}

// The bundle's node_modules resolves @workflow/core, and what the core
// itself depends on, to the release under test, everything else to the
// top level.
func TestOverlayModules(t *testing.T) {
	top := t.TempDir()
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(top, p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(top, p, "package.json"), []byte(`{"name":"`+p+`"}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"@workflow/core", "@workflow/world", "@workflow/errors", "workflow", "core-b55", "core-b55/node_modules/@workflow/world", ".bin"} {
		mk(p)
	}
	dst := filepath.Join(t.TempDir(), "node_modules")
	if err := overlayModules(dst, top, "core-b55"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"@workflow/core":   "core-b55",
		"@workflow/world":  "core-b55/node_modules/@workflow/world",
		"@workflow/errors": "@workflow/errors",
		"workflow":         "workflow",
		"core-b55":         "core-b55",
	} {
		got, err := os.Readlink(filepath.Join(dst, name))
		if err != nil || got != filepath.Join(top, want) {
			t.Errorf("%s → %s (%v), want %s", name, got, err, filepath.Join(top, want))
		}
	}
	if _, err := os.Lstat(filepath.Join(dst, ".bin")); !os.IsNotExist(err) {
		t.Errorf(".bin laid out: %v", err)
	}
	if err := overlayModules(filepath.Join(t.TempDir(), "nm"), top, "core-b99"); err == nil {
		t.Error("a core that is not installed: laid out")
	}
}

// validate's --cores and --world-local refuse what package.json does not
// install, naming what it does; all expands. No Node.
func TestOptionsCheckReleases(t *testing.T) {
	sc, _ := model.Builtin("fanout")
	ok := Options{Branches: []int{4}, Cores: []string{All}, WorldLocals: []string{All}, Repetitions: 1, Seeds: 1}
	if err := ok.Check(sc); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Cores: []string{"5.0.0-beta.54"}}, "5.0.0-beta.50, 5.0.0-beta.52, 5.0.0-beta.53, 5.0.0-beta.55"},
		{Options{Cores: []string{All}, WorldLocals: []string{"5.0.0-beta.43"}}, "5.0.0-beta.45, 5.0.0-beta.46"},
		{Options{Cores: []string{"5.0.0-beta.50"}, LegacyProducer: true}, "nothing to strip"},
	} {
		c.o.Branches, c.o.Repetitions, c.o.Seeds = []int{4}, 1, 1
		if err := c.o.Check(sc); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
}
