package realworld

import (
	"fmt"
	"strings"

	"github.com/simlab/simlab/model/world"
)

// World is one real World the test drives and the model configuration that
// claims to be it.
type World struct {
	Name    string // driver.mjs --world
	Package string // the real package, exactly pinned
	Profile string // the model profile (scenario field "world")
	Fence   world.Fence
	Variant string // the simlab variant that selects Fence ("" = the default)
}

// Worlds are the real Worlds observable here. world-vercel is not: its store
// runs behind Vercel's API (docs/CONFORMANCE.md).
var Worlds = []World{
	{Name: "wl-fixed", Package: "@workflow/world-local@5.0.0-beta.45", Profile: "world-local", Fence: world.FenceFixed},
	{Name: "wl-pre", Package: "@workflow/world-local@5.0.0-beta.43", Profile: "world-local", Fence: world.FencePreFix, Variant: "pre-fix-fence"},
	{Name: "wpg-pre", Package: "@workflow/world-postgres@5.0.0-beta.27", Profile: "world-postgres", Fence: world.FencePreFix, Variant: "pre-fix-fence"},
	{Name: "wl-b46", Package: "@workflow/world-local@5.0.0-beta.46", Profile: "world-local", Fence: world.FenceFixed},
	{Name: "wpg-b29", Package: "@workflow/world-postgres@5.0.0-beta.29", Profile: "world-postgres", Fence: world.FencePreFix, Variant: "pre-fix-fence"},
}

// Postgres reports whether the World stores in PostgreSQL (the test starts
// a cluster and applies the package's migrations for it).
func (w World) Postgres() bool { return w.Profile == "world-postgres" }

// WorldByName finds a World by its driver name.
func WorldByName(name string) (World, error) {
	for _, w := range Worlds {
		if w.Name == name {
			return w, nil
		}
	}
	names := make([]string, len(Worlds))
	for i, w := range Worlds {
		names[i] = w.Name
	}
	return World{}, fmt.Errorf("world %q: want one of %s", name, strings.Join(names, ", "))
}
