package realengine

// Release is one real runtime pair: a core over a world-local release.
type Release struct {
	Core       Core
	WorldLocal WorldLocal
}

func (r Release) String() string { return r.Core.Version + "/world-local-" + r.WorldLocal.Version }

// On is cfg run over the release's world-local.
func (r Release) On(cfg HarnessConfig) HarnessConfig {
	cfg.WorldLocal = r.WorldLocal.Package()
	return cfg
}

// PinnedReleases is every pinned core over every pinned world-local
// release, cores outer.
func PinnedReleases() []Release {
	var out []Release
	for _, c := range Pinned.Cores {
		for _, w := range Pinned.WorldLocals {
			out = append(out, Release{c, w})
		}
	}
	return out
}
