package model

import (
	"sort"
	"time"

	"github.com/simlab/simlab/sim"
)

// builtins are the named scenarios `simlab scenarios` lists. Each starts from
// DefaultScenario and changes only what makes it itself.
var builtins = map[string]func() Scenario{
	"fanout": DefaultScenario,
	"durabench-256": func() Scenario {
		s := DefaultScenario()
		s.Name = "durabench-256"
		s.Description = "one 256-branch fan-out against a contended remote store (DOMAIN §10 calibration)"
		s.World = "world-vercel"
		s.Store = DurabenchProfile()
		s.Workflow.Fanouts = []int{256}
		s.Workflow.Body = dist(2, 5, 10, 20, 40)
		// The published runtime's default (WORKFLOW_RESILIENT_STEP_DISPATCH
		// is opt-in): the figures' creates land in chunks of 32, which the
		// runtime only writes without resilient dispatch.
		s.Workflow.ResilientDispatch = false
		return s
	},
	"skew-rollout": func() Scenario {
		s := DefaultScenario()
		s.Name = "skew-rollout"
		s.Description = "v1 and v2 deployments side by side, new runs move to v2 mid-run, some messages misdelivered"
		s.World = "world-vercel"
		s.Store = VercelProfile()
		s.Runs = 6
		s.RunInterval = 60 * time.Millisecond
		s.Workflow.Fanouts = []int{6, 4}
		s.Deployments = []DeploymentConfig{
			{Name: "dpl-old", Producer: "v1", Consumer: "v1", Share: 1},
			{Name: "dpl-new", Producer: "v2", Consumer: "v2", Share: 0},
		}
		s.Rollout = Rollout{At: 150 * time.Millisecond, To: "dpl-new"}
		s.Faults.Misdeliver = 0.1
		s.Faults.Until = 30 * time.Second
		return s
	},
	"faults": func() Scenario {
		s := DefaultScenario()
		s.Name = "faults"
		s.Description = "crashes, redeliveries, stale reads, lost creates, body failures and cancellations"
		s.World = "world-vercel"
		s.Store = VercelProfile()
		s.Store.VisibilityTimeout = 30 * time.Second
		s.Runs = 4
		s.RunInterval = 100 * time.Millisecond
		s.Workflow.Fanouts = []int{8, 4}
		s.Faults = FaultConfig{Until: 2 * time.Minute, Crash: 0.03, StaleRead: 0.3, LostCreate: 0.05,
			BodyFailure: 0.05, Cancel: 0.25, CancelWithin: time.Second}
		return s
	},
	"golden-t1": func() Scenario {
		s := goldenBase("golden-t1", "a step message with runContext whose run has another step pending: no runs.get on the start path")
		s.Workflow.MaxInline = 0
		// The second step fails once, so it is still pending (retrying)
		// when the first completes: the first is never the last completer.
		s.Workflow.FlakySteps, s.Workflow.FlakyTimes = 1, 1
		s.Faults.CrashFirstDelivery = false
		return s
	},
	"golden-t2": func() Scenario {
		return goldenBase("golden-t2", "2-step fan-out, maxInline 1: the published step's redelivery is the last completer with one lazy read")
	},
	"golden-t3": func() Scenario {
		s := goldenBase("golden-t3", "as t2, but the lazy read returns a stale pending: the replay has no startedAt and the run fails, as core 5.0.0-beta.52 does (replay-on-stale-pending: it completes, as DOMAIN §7 claims)")
		s.Store.StaleLag = time.Hour
		s.Faults.StaleRead = 1
		return s
	},
	"swarm": func() Scenario {
		s := DefaultScenario()
		s.Name = "swarm"
		s.Description = "each seed draws its own world: World profile, version mix, fault sites and rates, a fault window of 1-10 visibility timeouts, fan-out shapes, inline count, runs, cancels"
		s.Swarm = true
		s.Limits.MaxTime = 2 * time.Hour
		return s
	},
	"golden-t4": func() Scenario {
		s := goldenBase("golden-t4", "as t2, but the run is cancelled before the lazy read: no replay, no further writes "+
			"(it declares end_seen, not gone: on the fetch-free path no claim meets the cancelled run; the last completer's lazy read does)")
		s.Workflow.Body = sim.Fixed(2 * time.Second)
		s.Faults.CancelAt = 6 * time.Second
		return s
	},
	"golden-t5": func() Scenario {
		s := goldenBase("golden-t5", "a run is cancelled while its step runs; the step's redelivered step_started meets the fence")
		s.World = "world-postgres"
		s.Store = PostgresProfile()
		s.Store.VisibilityTimeout = 2 * time.Second
		s.Workflow.Fanouts = []int{1}
		s.Workflow.MaxInline = 0
		s.Workflow.Body = sim.Fixed(10 * time.Second)
		s.Faults.CrashFirstDelivery = false
		s.Faults.CancelAt = time.Second
		return s
	},
}

// goldenBase is the shape shared by the golden scenarios, taken from the real
// change's own tests: a 2-step fan-out on world-local, maxInline 1, the
// published step's first delivery crashing before its claim.
func goldenBase(name, desc string) Scenario {
	s := DefaultScenario()
	s.Name = name
	s.Description = desc
	s.Workflow.Fanouts = []int{2}
	s.Workflow.MaxInline = 1
	s.Workflow.Body = sim.Fixed(20 * time.Millisecond)
	s.Faults.CrashFirstDelivery = true
	return s
}

// DurabenchProfile is world-vercel calibrated to DOMAIN §10: a runs.get of
// 30–80 ms uncontended, served a few at a time, so a burst of one read per
// branch queues up.
func DurabenchProfile() Profile {
	p := VercelProfile()
	p.RunsGet = dist(25, 50, 70, 80, 120)
	p.EventsList = dist(20, 40, 60, 80, 120)
	p.EventsWrite = dist(15, 30, 50, 80, 150)
	p.MaxConcurrentReads = 4
	p.MaxConcurrentWrites = 16
	p.StaleLag = 0
	return p
}

// Builtin returns the named built-in scenario (a fan-out's or a
// program's).
func Builtin(name string) (Scenario, bool) {
	f, ok := builtins[name]
	if !ok {
		if f, ok = programBuiltins[name]; !ok {
			return Scenario{}, false
		}
	}
	return f(), true
}

// BuiltinNames lists the built-in fan-out scenarios in a stable order, the
// default first (BuiltinProgramNames lists the programs').
func BuiltinNames() []string {
	names := make([]string, 0, len(builtins))
	for n := range builtins {
		if n != "fanout" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return append([]string{"fanout"}, names...)
}

func init() {
	builtinScenario = Builtin
	builtinScenarioNames = func() []string { return append(BuiltinNames(), BuiltinProgramNames()...) }
}
