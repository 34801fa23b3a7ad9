package model

import (
	"fmt"
	"time"

	"github.com/simlab/simlab/sim"
)

// Swarm testing (FoundationDB's BUGGIFY, Groce et al.'s swarm testing): a
// scenario with swarm: true draws, at the start of each run and from the
// run's own chooser, the World profile, the version mix, which fault sites
// are on and how hard they fire, a fault window measured in visibility
// timeouts, the fan-out shapes, the inline count, the number of runs and the
// cancels. So one seed is one world, a sweep over seeds is a sweep over
// worlds, and a bug that needs "world-postgres, crashes and a long window"
// is a seed away with no --set. The draws are choices like any other: a
// seeded check reproduces them from the seed, a saved schedule replays
// them, and rapid shrinks them toward choice 0, the plain world
// (world-local, one v2 deployment, no faults, one small fan-out).

// SwarmDraw says what a swarm run drew, for stories and coverage.
type SwarmDraw struct {
	World string
	Mix   string
	// Window is the fault window; Windows is it in visibility timeouts.
	Window  time.Duration
	Windows int
	Sites   []string // fault sites switched on
	Fanouts []int
	Inline  int
	Runs    int
}

func (d SwarmDraw) String() string {
	return fmt.Sprintf("%s, %s, faults %v for %v (%d visibility timeouts), fan-outs %v, inline %d, %d runs",
		d.World, d.Mix, d.Sites, d.Window, d.Windows, d.Fanouts, d.Inline, d.Runs)
}

var swarmWidths = []int{2, 1, 3, 5, 8, 16}

// swarmRates are the rates a switched-on fault site fires at.
var swarmRates = []float64{0.1, 0.05, 0.2, 0.4}

// DrawSwarm returns the scenario one swarm run simulates, drawn from c, and
// what it drew. sc's own world, deployments, workflow shape and faults are
// replaced; its name, variants, limits and body distribution stay.
func DrawSwarm(sc Scenario, c sim.Chooser) (Scenario, SwarmDraw) {
	out := sc
	var d SwarmDraw
	worlds := []string{"world-local", "world-postgres", "world-vercel"}
	d.World = worlds[c.Choose(len(worlds))]
	out.World, out.Store = d.World, Profiles()[d.World]
	out.Store.AtomicCalls = sc.Store.AtomicCalls // a choice of the user's, not the swarm's

	mixes := []struct {
		name string
		deps []DeploymentConfig
	}{
		{"v2 only", []DeploymentConfig{{Name: "dpl-a", Producer: "v2", Consumer: "v2", Share: 1}}},
		{"v1 rolling to v2", []DeploymentConfig{{Name: "dpl-old", Producer: "v1", Consumer: "v1", Share: 1}, {Name: "dpl-new", Producer: "v2", Consumer: "v2", Share: 0}}},
		{"v2 producers, v1 consumers", []DeploymentConfig{{Name: "dpl-a", Producer: "v2", Consumer: "v1", Share: 1}}},
		{"v2 and v1 side by side", []DeploymentConfig{{Name: "dpl-a", Producer: "v2", Consumer: "v2", Share: 0.5}, {Name: "dpl-b", Producer: "v1", Consumer: "v1", Share: 0.5}}},
	}
	mix := mixes[c.Choose(len(mixes))]
	d.Mix = mix.name
	out.Deployments = append([]DeploymentConfig(nil), mix.deps...)
	out.Rollout = Rollout{}
	if mix.name == "v1 rolling to v2" {
		out.Rollout = Rollout{At: time.Duration(c.Choose(8)) * 50 * time.Millisecond, To: "dpl-new"}
	}

	d.Runs = 1 + c.Choose(3)
	out.Runs, out.RunInterval = d.Runs, 50*time.Millisecond
	w := &out.Workflow
	w.Fanouts = []int{swarmWidths[c.Choose(len(swarmWidths))]}
	for c.Choose(3) == 1 && len(w.Fanouts) < 3 {
		w.Fanouts = append(w.Fanouts, swarmWidths[c.Choose(len(swarmWidths))])
	}
	d.Fanouts = w.Fanouts
	w.MaxInline = []int{1, 0, 2, 3, 4}[c.Choose(5)]
	d.Inline = w.MaxInline
	w.FlakySteps, w.FlakyTimes, w.FatalSteps = c.Choose(2), 1, 0

	// The fault window, in visibility timeouts of the drawn World: a crash
	// late in a long window still comes back (and meets whatever happened
	// meanwhile) before the faults stop.
	vt := out.Store.VisibilityTimeout
	d.Windows = []int{1, 3, 6, 10}[c.Choose(4)]
	d.Window = time.Duration(d.Windows) * vt
	f := FaultConfig{Until: d.Window}
	sites := []struct {
		name string
		rate *float64
	}{
		{"crash", &f.Crash}, {"stale_read", &f.StaleRead}, {"lost_create", &f.LostCreate},
		{"body_failure", &f.BodyFailure}, {"misdeliver", &f.Misdeliver}, {"cancel", &f.Cancel},
	}
	for _, s := range sites {
		if c.Choose(2) == 1 {
			*s.rate = swarmRates[c.Choose(len(swarmRates))]
			d.Sites = append(d.Sites, s.name)
		}
	}
	if f.StaleRead > 0 && out.Store.StaleLag == 0 {
		out.Store.StaleLag = 200 * time.Millisecond
	}
	if f.Cancel > 0 {
		// Cancels land anywhere in the window, early ones most often: the
		// run is then still busy.
		f.CancelWithin = []time.Duration{time.Second, 10 * time.Second, d.Window}[c.Choose(3)]
	}
	out.Faults = f
	out.Swarm = false // the drawn scenario is a plain one
	if need := d.Window + 10*vt; out.Limits.MaxTime < need {
		out.Limits.MaxTime = need
	}
	return out, d
}
