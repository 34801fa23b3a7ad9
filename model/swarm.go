package model

import (
	"fmt"
	"sort"
	"strings"
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
	// Deployments is how many deployments the run has; Features lists
	// every topology feature and fault site switched on (SwarmFeatures
	// names them all), sorted.
	Deployments int
	Features    []string
}

func (d SwarmDraw) String() string {
	return fmt.Sprintf("%s, %s, faults %v for %v (%d visibility timeouts), fan-outs %v, inline %d, %d runs, features %v",
		d.World, d.Mix, d.Sites, d.Window, d.Windows, d.Fanouts, d.Inline, d.Runs, d.Features)
}

var swarmWidths = []int{2, 1, 3, 5, 8, 16}

// swarmRates are the rates a switched-on fault site fires at.
var swarmRates = []float64{0.1, 0.05, 0.2, 0.4}

// SwarmMaxDeployments is how many deployments a swarm run draws at most.
// The scenario format sets no limit; four is enough for every relation
// between two deployments (same or other versions, the run's or another)
// to occur with a third and fourth beside them.
const SwarmMaxDeployments = 4

// swarmSites are the fault sites a swarm run switches on or off, each with
// its feature name.
var swarmSites = []struct {
	name string
	rate func(*FaultConfig) *float64
}{
	{"crash", func(f *FaultConfig) *float64 { return &f.Crash }},
	{"stale_read", func(f *FaultConfig) *float64 { return &f.StaleRead }},
	{"lost_create", func(f *FaultConfig) *float64 { return &f.LostCreate }},
	{"body_failure", func(f *FaultConfig) *float64 { return &f.BodyFailure }},
	{"misdeliver", func(f *FaultConfig) *float64 { return &f.Misdeliver }},
	{"cancel", func(f *FaultConfig) *float64 { return &f.Cancel }},
}

// swarmTopology are the topology features a swarm run switches on or off,
// about half each (Groce et al.: a feature always on can hide the bug
// another needs), in the order they are drawn.
var swarmTopology = []string{
	"rollout",          // runs after a drawn instant start on another deployment
	"side_by_side",     // every deployment starts runs, not only the first
	"cancel_at",        // every run is cancelled at a drawn instant (scripted)
	"quickjs",          // half the runs execute on the QuickJS engine
	"no_resilient",     // step messages are published after their creates (the runtime's default)
	"flaky_step",       // the last step of each fan-out fails once
	"fatal_step",       // the last step of each fan-out fails for good
	"several_runs",     // 2 or 3 runs
	"several_fanouts",  // 2 or 3 fan-outs in sequence
	"retry_delay_zero", // delayed retries are published with no delay
}

// SwarmFeatures names every feature a swarm draw switches on or off: the
// fault sites ("fault:" + site) and the topology features.
func SwarmFeatures() []string {
	var out []string
	for _, s := range swarmSites {
		out = append(out, "fault:"+s.name)
	}
	return append(out, swarmTopology...)
}

// DrawSwarm returns the scenario one swarm run simulates, drawn from c, and
// what it drew. sc's own world, deployments, workflow shape and faults are
// replaced; its name, variants, limits, budget and body distribution stay.
// Choice 0 of every draw is the plain world: world-local, one v2
// deployment, every feature and fault site off, one small fan-out.
func DrawSwarm(sc Scenario, c sim.Chooser) (Scenario, SwarmDraw) {
	out := sc
	var d SwarmDraw
	worlds := ProfileNames()
	d.World = worlds[c.Choose(len(worlds))]
	out.World, out.Store = d.World, Profiles()[d.World]
	// Choices of the user's, not the swarm's.
	out.Store.AtomicCalls, out.Store.SharedWrites = sc.Store.AtomicCalls, sc.Store.SharedWrites
	if out.Store.MaxConcurrentWrites > 0 {
		out.Store.WriteOrder = sc.Store.WriteOrder // random needs a pool to wait in
	}

	// The fault sites come first: each fully on or off, about half each.
	// The fault window, in visibility timeouts of the drawn World: a crash
	// late in a long window still comes back (and meets whatever happened
	// meanwhile) before the faults stop.
	vt := out.Store.VisibilityTimeout
	d.Windows = []int{1, 3, 6, 10}[c.Choose(4)]
	d.Window = time.Duration(d.Windows) * vt
	f := FaultConfig{Until: d.Window}
	on := map[string]bool{}
	for _, s := range swarmSites {
		if c.Choose(2) == 1 {
			*s.rate(&f) = swarmRates[c.Choose(len(swarmRates))]
			d.Sites = append(d.Sites, s.name)
			on["fault:"+s.name] = true
		}
	}
	// Every topology the format expresses: 1..SwarmMaxDeployments
	// deployments, each with its own producer and consumer version.
	d.Deployments = 1 + c.Choose(SwarmMaxDeployments)
	versions := []string{"v2", "v1"}
	out.Deployments = nil
	var mix []string
	for i := 0; i < d.Deployments; i++ {
		dep := DeploymentConfig{Name: fmt.Sprintf("dpl-%c", 'a'+i), Producer: versions[c.Choose(2)], Consumer: versions[c.Choose(2)]}
		out.Deployments = append(out.Deployments, dep)
		mix = append(mix, dep.Producer+"/"+dep.Consumer)
	}
	for _, f := range swarmTopology {
		on[f] = c.Choose(2) == 1
	}
	for i := range out.Deployments {
		out.Deployments[i].Share = 0
		if i == 0 || on["side_by_side"] {
			out.Deployments[i].Share = 1 / float64(map[bool]int{true: d.Deployments, false: 1}[on["side_by_side"]])
		}
	}
	out.Rollout = Rollout{}
	if on["rollout"] {
		out.Rollout = Rollout{At: time.Duration(c.Choose(8)) * 50 * time.Millisecond, To: out.Deployments[c.Choose(d.Deployments)].Name}
	}
	d.Mix = fmt.Sprintf("%d deployments (producer/consumer %s)", d.Deployments, strings.Join(mix, ", "))

	d.Runs = 1
	if on["several_runs"] {
		d.Runs = 2 + c.Choose(2)
	}
	out.Runs, out.RunInterval = d.Runs, 50*time.Millisecond
	w := &out.Workflow
	w.Fanouts = []int{swarmWidths[c.Choose(len(swarmWidths))]}
	if on["several_fanouts"] {
		for n := 1 + c.Choose(2); n > 0; n-- {
			w.Fanouts = append(w.Fanouts, swarmWidths[c.Choose(len(swarmWidths))])
		}
	}
	d.Fanouts = w.Fanouts
	w.MaxInline = []int{1, 0, 2, 3, 4}[c.Choose(5)]
	d.Inline = w.MaxInline
	w.FlakySteps, w.FlakyTimes, w.FatalSteps = 0, 1, 0
	if on["flaky_step"] {
		w.FlakySteps = 1
	}
	if on["fatal_step"] {
		w.FatalSteps = 1
	}
	w.QuickJSShare = 0
	if on["quickjs"] {
		w.QuickJSShare = 0.5
	}
	w.ResilientDispatch = !on["no_resilient"]
	if on["retry_delay_zero"] {
		w.RetryDelay = 0
	}

	if f.StaleRead > 0 && out.Store.StaleLag == 0 {
		out.Store.StaleLag = 200 * time.Millisecond
	}
	if f.Cancel > 0 {
		// Cancels land anywhere in the window, early ones most often: the
		// run is then still busy.
		f.CancelWithin = []time.Duration{time.Second, 10 * time.Second, d.Window}[c.Choose(3)]
	}
	if on["cancel_at"] {
		// A scripted cancel at any moment of the run's life: in its
		// first steps, mid fan-out, or once it may have ended.
		f.CancelAt = []time.Duration{5 * time.Millisecond, 50 * time.Millisecond, 500 * time.Millisecond, 5 * time.Second, d.Window / 2}[c.Choose(5)]
	}
	out.Faults = f
	out.Swarm = false // the drawn scenario is a plain one
	if need := d.Window + 10*vt; out.Limits.MaxTime < need {
		out.Limits.MaxTime = need
	}
	for _, name := range SwarmFeatures() {
		if on[name] {
			d.Features = append(d.Features, name)
		}
	}
	sort.Strings(d.Features)
	return out, d
}

// swarmDrawn are the scenario keys DrawSwarm replaces for every seed (a
// key, or the start of one: deployments[0].producer); swarmKept are keys
// under them it keeps from the scenario.
var (
	swarmDrawn = []string{"world", "store", "faults", "deployments", "rollout", "runs", "run_interval",
		"workflow.fanouts", "workflow.program", "workflow.max_inline", "workflow.flaky_steps", "workflow.flaky_times",
		"workflow.fatal_steps", "workflow.quickjs_share", "workflow.resilient_dispatch", "workflow.retry_delay"}
	swarmKept = []string{"store.atomic_calls", "store.shared_writes", "store.write_order"}
)

// SwarmDraws reports whether a swarm scenario draws key for every seed, so
// that a --set of it would be ignored.
func SwarmDraws(key string) bool {
	under := func(prefix string) bool {
		return key == prefix || strings.HasPrefix(key, prefix+".") || strings.HasPrefix(key, prefix+"[")
	}
	for _, k := range swarmKept {
		if under(k) {
			return false
		}
	}
	for _, k := range swarmDrawn {
		if under(k) {
			return true
		}
	}
	return false
}
