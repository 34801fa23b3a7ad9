package sim

import (
	"fmt"
	"slices"
	"strings"
)

// SiteConfig sets how a fault site behaves in a run, in the style of
// FoundationDB's BUGGIFY: the site is switched on for the whole run with
// probability Enable and, when on, fires with probability Fire each time the
// code reaches it. Both are decided by the run's Chooser.
type SiteConfig struct {
	Enable float64 `json:"enable" yaml:"enable"`
	Fire   float64 `json:"fire" yaml:"fire"`
}

// Validate checks that both probabilities lie in [0, 1].
func (s SiteConfig) Validate() error {
	if !(s.Enable >= 0 && s.Enable <= 1) {
		return fmt.Errorf("enable = %v: want a probability in [0, 1]", s.Enable)
	}
	if !(s.Fire >= 0 && s.Fire <= 1) {
		return fmt.Errorf("fire = %v: want a probability in [0, 1]", s.Fire)
	}
	return nil
}

// Site is a handle to a registered fault site.
type Site int

type siteState struct {
	name    string
	cfg     SiteConfig
	decided bool
	on      bool
	checks  int
	fired   int
}

// Faults is the set of fault sites of one run.
type Faults struct {
	chooser  Chooser
	sites    []siteState
	byName   map[string]Site
	stopped  bool
	fallback SiteConfig
}

// NewFaults returns an empty set of sites drawing from c. Sites registered
// without their own configuration use fallback.
func NewFaults(c Chooser, fallback SiteConfig) *Faults {
	return &Faults{chooser: c, byName: map[string]Site{}, fallback: fallback}
}

// Reset makes f an empty set of sites drawing from c, as NewFaults would,
// keeping its tables' room for the next run.
func (f *Faults) Reset(c Chooser, fallback SiteConfig) {
	clear(f.byName)
	if f.byName == nil {
		f.byName = map[string]Site{}
	}
	*f = Faults{chooser: c, sites: f.sites[:0], byName: f.byName, fallback: fallback}
}

// Register returns the handle of the named site, creating it with the
// fallback configuration on first use.
func (f *Faults) Register(name string) Site {
	if s, ok := f.byName[name]; ok {
		return s
	}
	s := Site(len(f.sites))
	f.sites = append(f.sites, siteState{name: name, cfg: f.fallback})
	f.byName[name] = s
	return s
}

// Configure sets the named site's probabilities, registering it if needed.
func (f *Faults) Configure(name string, cfg SiteConfig) (Site, error) {
	if err := cfg.Validate(); err != nil {
		return 0, fmt.Errorf("fault site %q: %w", name, err)
	}
	s := f.Register(name)
	f.sites[s].cfg = cfg
	return s, nil
}

// Fire reports whether the site misbehaves this time. The first call of a run
// decides whether the site is on at all. After Stop, nothing fires and no
// choice is drawn.
func (f *Faults) Fire(s Site) bool {
	st := &f.sites[s]
	if f.stopped {
		return false
	}
	st.checks++
	if !st.decided {
		st.decided = true
		st.on = Chance(f.chooser, st.cfg.Enable)
	}
	if !st.on || !Chance(f.chooser, st.cfg.Fire) {
		return false
	}
	st.fired++
	return true
}

// Stop ends the fault phase of a run: from now on no site fires. A liveness
// check runs after Stop.
func (f *Faults) Stop() { f.stopped = true }

// Stopped reports whether Stop was called.
func (f *Faults) Stopped() bool { return f.stopped }

// SiteReport says what one site did in a run.
type SiteReport struct {
	Name   string `json:"name"`
	On     bool   `json:"on"`
	Checks int    `json:"checks"`
	Fired  int    `json:"fired"`
}

// Report lists every registered site, sorted by name.
func (f *Faults) Report() []SiteReport { return f.ReportTo(make([]SiteReport, 0, len(f.sites))) }

// ReportTo is Report written over dst's room (dst[:0]), so that a reused
// History's report allocates nothing.
func (f *Faults) ReportTo(dst []SiteReport) []SiteReport {
	out := dst[:0]
	for _, st := range f.sites {
		out = append(out, SiteReport{Name: st.name, On: st.on, Checks: st.checks, Fired: st.fired})
	}
	// Names are unique (Register), so any sort gives this order.
	slices.SortFunc(out, func(a, b SiteReport) int { return strings.Compare(a.Name, b.Name) })
	return out
}
