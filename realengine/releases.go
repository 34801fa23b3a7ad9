package realengine

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/simlab/simlab/model/program"
)

// The releases the harness can run are whatever package.json installs, read
// from it, never listed twice: @workflow/core and its npm aliases
// ("core-b50": "npm:@workflow/core@5.0.0-beta.50"), the @workflow/builders
// of each core's version where one is published (its own alias,
// "builders-b50"), and @workflow/world-local and its aliases ("wl-b46"). A
// release published later is added by installing it side by side under
// such an alias (simlab releases add), with no change to this code.

//go:embed package.json
var packageJSON []byte

// Core is one runtime under test: its package version, the npm alias
// package.json installs it under ("" for @workflow/core itself) and the
// package of the @workflow/builders of the same version that compiles the
// workflow it runs ("" when package.json has none of that version: then the
// default @workflow/builders compiles it).
type Core struct {
	Version  string
	Alias    string
	Builders string
}

// Package is the directory under node_modules the core is installed in.
func (c Core) Package() string {
	if c.Alias == "" {
		return "@workflow/core"
	}
	return c.Alias
}

// BuildersPackage is the directory under node_modules of the builders that
// compile the core's workflow.
func (c Core) BuildersPackage() string {
	if c.Builders == "" {
		return "@workflow/builders"
	}
	return c.Builders
}

// FetchFree says whether the core's consumers run the fetch-free prologue
// (runContext on dispatch messages, 5.0.0-beta.52 on); an older core reads
// the run before every claim.
func (c Core) FetchFree() bool { return CompareVersions(c.Version, "5.0.0-beta.52") >= 0 }

// InvokePath says whether the core hands a finished step's replay to the
// workflow queue on a World declaring capabilities.invoke (5.0.0-beta.55
// on; older cores ignore the capability).
func (c Core) InvokePath() bool { return CompareVersions(c.Version, "5.0.0-beta.55") >= 0 }

// ClockMode is when the core's workflow replay moves Date.now() to an
// event's time: as the walk consumes it (to 5.0.0-beta.53: a continuation
// reads the time of the last event of the pass that resolved it), or as the
// program is handed it (5.0.0-beta.55 on).
func (c Core) ClockMode() program.ClockMode {
	if CompareVersions(c.Version, "5.0.0-beta.55") >= 0 {
		return program.ClockPerDelivery
	}
	return program.ClockPerPass
}

// ConflictMode is when the core's replay hands a hook_conflict's rejection
// to the receives awaiting the hook: at once, ahead of the deliveries the
// walk resolved before it (to 5.0.0-beta.53), or in log order behind them
// (5.0.0-beta.55 on: the registration delivery barrier).
func (c Core) ConflictMode() program.ConflictMode {
	if CompareVersions(c.Version, "5.0.0-beta.55") >= 0 {
		return program.ConflictInLogOrder
	}
	return program.ConflictAtOnce
}

// Replay is program p's replay of log as core c replays it (its clock, its
// conflicts' delivery).
func (c Core) Replay(p *program.Compiled, log []program.Event) program.Outcome {
	r := program.Replayer{Clock: c.ClockMode(), Conflicts: c.ConflictMode()}
	return r.Replay(p, log)
}

// WorldLocal is one @workflow/world-local release the harness can run the
// core over: its version and npm alias ("" for @workflow/world-local).
type WorldLocal struct {
	Version string
	Alias   string
}

// Package is the directory under node_modules the World is installed in.
func (w WorldLocal) Package() string {
	if w.Alias == "" {
		return "@workflow/world-local"
	}
	return w.Alias
}

// WorldPostgres is one @workflow/world-postgres release the harness can run
// the core over (reproduce's world-postgres schedules): its version and npm
// alias ("" for @workflow/world-postgres).
type WorldPostgres struct {
	Version string
	Alias   string
}

// Package is the directory under node_modules the World is installed in.
func (w WorldPostgres) Package() string {
	if w.Alias == "" {
		return "@workflow/world-postgres"
	}
	return w.Alias
}

// Catalog is what one package.json installs: the cores and the world-local
// releases, each in version order, the default (unaliased) one named.
type Catalog struct {
	Cores       []Core
	WorldLocals []WorldLocal
	// WorldPostgreses are the world-postgres releases, in version order.
	WorldPostgreses []WorldPostgres
	// DefaultCore and DefaultWorldLocal are the unaliased packages' versions.
	DefaultCore, DefaultWorldLocal string
	// Packages are every dependency's name under node_modules.
	Packages []string
}

// ParseCatalog reads a package.json's dependencies.
func ParseCatalog(data []byte) (*Catalog, error) {
	var pj struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(data, &pj); err != nil {
		return nil, fmt.Errorf("package.json: %w", err)
	}
	c := &Catalog{}
	builders := map[string]string{} // version -> package
	for name, spec := range pj.Dependencies {
		c.Packages = append(c.Packages, name)
		pkg, version := name, spec
		if rest, ok := strings.CutPrefix(spec, "npm:"); ok {
			at := strings.LastIndex(rest, "@")
			if at <= 0 {
				return nil, fmt.Errorf("package.json: %s: %q is not npm:PACKAGE@VERSION", name, spec)
			}
			pkg, version = rest[:at], rest[at+1:]
		}
		alias := ""
		if pkg != name {
			alias = name
		}
		switch pkg {
		case "@workflow/core":
			c.Cores = append(c.Cores, Core{Version: version, Alias: alias})
			if alias == "" {
				c.DefaultCore = version
			}
		case "@workflow/world-local":
			c.WorldLocals = append(c.WorldLocals, WorldLocal{Version: version, Alias: alias})
			if alias == "" {
				c.DefaultWorldLocal = version
			}
		case "@workflow/world-postgres":
			c.WorldPostgreses = append(c.WorldPostgreses, WorldPostgres{Version: version, Alias: alias})
		case "@workflow/builders":
			// The unaliased builders stands for its version unless an alias
			// of the same version exists (it never needs to).
			if _, ok := builders[version]; !ok || alias == "" {
				builders[version] = alias
			}
		}
	}
	if c.DefaultCore == "" || c.DefaultWorldLocal == "" {
		return nil, fmt.Errorf("package.json installs no @workflow/core or no @workflow/world-local under its own name")
	}
	if _, ok := builders[c.DefaultCore]; !ok {
		return nil, fmt.Errorf("package.json: @workflow/builders %s, the default core's, is not installed", c.DefaultCore)
	}
	for i := range c.Cores {
		if b, ok := builders[c.Cores[i].Version]; ok {
			c.Cores[i].Builders = b
			if b == "" {
				c.Cores[i].Builders = "@workflow/builders"
			}
		}
	}
	for _, dup := range [][]string{versions(c.Cores), versionsOf(c.WorldLocals)} {
		for i := 1; i < len(dup); i++ {
			if slices.Contains(dup[:i], dup[i]) {
				return nil, fmt.Errorf("package.json installs version %s twice", dup[i])
			}
		}
	}
	slices.SortFunc(c.Cores, func(a, b Core) int { return CompareVersions(a.Version, b.Version) })
	slices.SortFunc(c.WorldLocals, func(a, b WorldLocal) int { return CompareVersions(a.Version, b.Version) })
	slices.SortFunc(c.WorldPostgreses, func(a, b WorldPostgres) int { return CompareVersions(a.Version, b.Version) })
	slices.Sort(c.Packages)
	return c, nil
}

// ReadCatalog reads dir/package.json.
func ReadCatalog(dir string) (*Catalog, error) {
	data, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return nil, err
	}
	return ParseCatalog(data)
}

// Pinned is the catalog of the package.json this source tree embeds: what
// the tests and the flags' defaults name. simlab reads the engine
// directory's own package.json when it runs (Runner.Catalog), so a release
// added since is run without a rebuild.
var Pinned = func() *Catalog {
	c, err := ParseCatalog(packageJSON)
	if err != nil {
		panic(err)
	}
	return c
}()

// Cores are the runtimes the embedded package.json pins, in version order.
var Cores = Pinned.Cores

// ReproduceCore and ReproduceLegacyCore are the releases simlab reproduce
// forces schedules on by default and beside it: the fetch-free runtime the
// model follows (beta.52) and the legacy one before it (beta.50).
const (
	ReproduceCore       = "5.0.0-beta.52"
	ReproduceLegacyCore = "5.0.0-beta.50"
)

// CoreByVersion finds a pinned core by its version.
func CoreByVersion(v string) (Core, error) { return Pinned.Core(v) }

// Core finds a core by its version.
func (c *Catalog) Core(v string) (Core, error) {
	for _, k := range c.Cores {
		if k.Version == v {
			return k, nil
		}
	}
	return Core{}, fmt.Errorf("core %q is not installed by realengine/package.json: want one of %s (a release published later: simlab releases add %s)",
		v, strings.Join(versions(c.Cores), ", "), v)
}

// WorldLocal finds a world-local release by its version.
func (c *Catalog) WorldLocal(v string) (WorldLocal, error) {
	for _, w := range c.WorldLocals {
		if w.Version == v {
			return w, nil
		}
	}
	return WorldLocal{}, fmt.Errorf("world-local %q is not installed by realengine/package.json: want one of %s (a release published later: simlab releases add --world-local %s)",
		v, strings.Join(versionsOf(c.WorldLocals), ", "), v)
}

// All is the word --cores and --world-local take for every release
// package.json installs.
const All = "all"

// ExpandCores resolves a --cores list ("all" is every installed core).
func (c *Catalog) ExpandCores(vs []string) ([]Core, error) {
	var out []Core
	for _, v := range vs {
		if v == All {
			for _, k := range c.Cores {
				if !slices.Contains(out, k) {
					out = append(out, k)
				}
			}
			continue
		}
		k, err := c.Core(v)
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, k) {
			return nil, fmt.Errorf("core %s named twice", v)
		}
		out = append(out, k)
	}
	return out, nil
}

// ExpandWorldLocals resolves a --world-local list ("all" is every installed
// release; none is the default one).
func (c *Catalog) ExpandWorldLocals(vs []string) ([]WorldLocal, error) {
	if len(vs) == 0 {
		vs = []string{c.DefaultWorldLocal}
	}
	var out []WorldLocal
	for _, v := range vs {
		if v == All {
			for _, w := range c.WorldLocals {
				if !slices.Contains(out, w) {
					out = append(out, w)
				}
			}
			continue
		}
		w, err := c.WorldLocal(v)
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, w) {
			return nil, fmt.Errorf("world-local %s named twice", v)
		}
		out = append(out, w)
	}
	return out, nil
}

func versions(cs []Core) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Version
	}
	return out
}

func versionsOf(ws []WorldLocal) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Version
	}
	return out
}

// CompareVersions orders two semver versions (MAJOR.MINOR.PATCH with an
// optional -PRERELEASE of dot-separated identifiers, numeric ones compared
// as numbers; a release sorts after its prereleases). Anything that does not
// parse sorts by its text, after every version that does.
func CompareVersions(a, b string) int {
	pa, oka := parseVersion(a)
	pb, okb := parseVersion(b)
	switch {
	case !oka && !okb:
		return strings.Compare(a, b)
	case !oka:
		return 1
	case !okb:
		return -1
	}
	for i := 0; i < 3; i++ {
		if pa.core[i] != pb.core[i] {
			if pa.core[i] < pb.core[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(pa.pre) == 0 && len(pb.pre) == 0:
		return 0
	case len(pa.pre) == 0:
		return 1
	case len(pb.pre) == 0:
		return -1
	}
	for i := 0; i < len(pa.pre) && i < len(pb.pre); i++ {
		x, y := pa.pre[i], pb.pre[i]
		nx, ex := strconv.Atoi(x)
		ny, ey := strconv.Atoi(y)
		switch {
		case ex == nil && ey == nil:
			if nx != ny {
				if nx < ny {
					return -1
				}
				return 1
			}
		case ex == nil:
			return -1
		case ey == nil:
			return 1
		default:
			if c := strings.Compare(x, y); c != 0 {
				return c
			}
		}
	}
	return len(pa.pre) - len(pb.pre)
}

type version struct {
	core [3]int
	pre  []string
}

// parseVersion parses an exact semver version (no range, no build
// metadata).
func parseVersion(s string) (version, bool) {
	var v version
	main, pre, hasPre := strings.Cut(s, "-")
	parts := strings.Split(main, ".")
	if len(parts) != 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || p == "" || (len(p) > 1 && p[0] == '0') {
			return v, false
		}
		v.core[i] = n
	}
	if hasPre {
		v.pre = strings.Split(pre, ".")
		for _, id := range v.pre {
			if id == "" || strings.Trim(id, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-") != "" {
				return v, false
			}
		}
	}
	return v, true
}

// ValidVersion says whether s is an exact semver version (what npm installs
// with --save-exact and what an alias is named after).
func ValidVersion(s string) bool {
	_, ok := parseVersion(s)
	return ok
}

// AliasFor is the npm alias a release of kind (core, builders, wl) is
// installed under: core-b57 for 5.0.0-beta.57, core-5.1.0 for 5.1.0.
func AliasFor(kind, v string) string {
	if n, ok := strings.CutPrefix(v, "5.0.0-beta."); ok {
		if _, err := strconv.Atoi(n); err == nil {
			return kind + "-b" + n
		}
	}
	return kind + "-" + strings.ToLower(v)
}

// AddPlan is what installing releases published later takes: the npm
// install specs, each an alias of an exact version, and the releases they
// add.
type AddPlan struct {
	Core        *Core
	WorldLocals []WorldLocal
	// Specs are npm install's arguments: alias@npm:package@version.
	Specs []string
	// NoBuilders says the core has no @workflow/builders of its version
	// on the registry: the default builders compile its workflow.
	NoBuilders bool
}

// InstallArgs is the npm command line that installs the plan into the
// engine directory, pinned exactly in package.json and its lock file.
func (p *AddPlan) InstallArgs() []string {
	return append([]string{"install", "--save-exact", "--no-audit", "--no-fund", "--loglevel=error"}, p.Specs...)
}

// Published answers whether the registry serves package@version (simlab
// asks npm view; a test answers without the network).
type Published func(pkg, version string) (bool, error)

// PlanAdd checks a release to add (a core version, world-local versions, or
// both; exact versions, not installed yet) and plans its install: the core
// under AliasFor("core", v) with the builders of its version where one is
// published, each world-local under AliasFor("wl", v).
func PlanAdd(c *Catalog, core string, wls []string, published Published) (*AddPlan, error) {
	if core == "" && len(wls) == 0 {
		return nil, fmt.Errorf("name a @workflow/core version to add (simlab releases add 5.0.0-beta.57), or --add-world-local VERSION")
	}
	p := &AddPlan{}
	taken := map[string]bool{}
	for _, name := range c.Packages {
		taken[name] = true
	}
	need := func(pkg, v string) error {
		ok, err := published(pkg, v)
		if err != nil {
			return fmt.Errorf("asking the registry for %s@%s: %w", pkg, v, err)
		}
		if !ok {
			return fmt.Errorf("%s@%s is not published on the registry", pkg, v)
		}
		return nil
	}
	alias := func(kind, v string) (string, error) {
		a := AliasFor(kind, v)
		if taken[a] {
			return "", fmt.Errorf("package.json already has a dependency named %s", a)
		}
		taken[a] = true
		return a, nil
	}
	if core != "" {
		if !ValidVersion(core) {
			return nil, fmt.Errorf("core %q: want an exact version such as 5.0.0-beta.57 (no range, no tag)", core)
		}
		if _, err := c.Core(core); err == nil {
			return nil, fmt.Errorf("core %s is installed already (package.json)", core)
		}
		if err := need("@workflow/core", core); err != nil {
			return nil, err
		}
		a, err := alias("core", core)
		if err != nil {
			return nil, err
		}
		k := Core{Version: core, Alias: a}
		p.Specs = append(p.Specs, a+"@npm:@workflow/core@"+core)
		ok, err := published("@workflow/builders", core)
		if err != nil {
			return nil, fmt.Errorf("asking the registry for @workflow/builders@%s: %w", core, err)
		}
		if ok {
			b, err := alias("builders", core)
			if err != nil {
				return nil, err
			}
			k.Builders = b
			p.Specs = append(p.Specs, b+"@npm:@workflow/builders@"+core)
		} else {
			p.NoBuilders = true
		}
		p.Core = &k
	}
	for _, v := range wls {
		if !ValidVersion(v) {
			return nil, fmt.Errorf("world-local %q: want an exact version such as 5.0.0-beta.47 (no range, no tag)", v)
		}
		if _, err := c.WorldLocal(v); err == nil {
			return nil, fmt.Errorf("world-local %s is installed already (package.json)", v)
		}
		if err := need("@workflow/world-local", v); err != nil {
			return nil, err
		}
		a, err := alias("wl", v)
		if err != nil {
			return nil, err
		}
		p.WorldLocals = append(p.WorldLocals, WorldLocal{Version: v, Alias: a})
		p.Specs = append(p.Specs, a+"@npm:@workflow/world-local@"+v)
	}
	return p, nil
}
