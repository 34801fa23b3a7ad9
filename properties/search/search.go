package search

import (
	"time"

	"pgregory.net/rapid"

	"github.com/simlab/simlab/model"
)

// RapidChooser is a sim.Chooser backed by rapid: every choice of a run is a
// rapid draw, so rapid's shrinker, which drives draws toward 0, drives a
// failing schedule toward the plain outcome of each choice and so toward the
// smallest story.
type RapidChooser struct {
	T    *rapid.T
	gens map[int]*rapid.Generator[int]
}

// NewRapidChooser returns a chooser drawing from t.
func NewRapidChooser(t *rapid.T) *RapidChooser {
	return &RapidChooser{T: t, gens: map[int]*rapid.Generator[int]{}}
}

// Choose draws a value in [0, n).
func (c *RapidChooser) Choose(n int) int {
	if n <= 1 {
		return 0
	}
	g, ok := c.gens[n]
	if !ok {
		g = rapid.IntRange(0, n-1)
		c.gens[n] = g
	}
	return g.Draw(c.T, "choice")
}

// Family is a family of scenarios whose knobs rapid draws (swarm testing, as
// TigerBeetle's VOPR: every knob comes from the draw, so each test case is a
// different world). Draws shrink toward the smallest, plainest scenario.
type Family struct {
	Name string
	Desc string
	Draw func(t *rapid.T) model.Scenario
}

// percent draws a probability in steps of 1%, shrinking toward 0.
func percent(t *rapid.T, label string, max int) float64 {
	return float64(rapid.IntRange(0, max).Draw(t, label)) / 100
}

func drawCommon(t *rapid.T, sc *model.Scenario) {
	worlds := model.ProfileNames()
	w := worlds[rapid.IntRange(0, len(worlds)-1).Draw(t, "world")]
	sc.World, sc.Store = w, model.Profiles()[w]
	width := rapid.IntRange(1, 6).Draw(t, "branches")
	sc.Workflow.Fanouts = []int{width}
	if rapid.IntRange(0, 1).Draw(t, "second fan-out") == 1 {
		sc.Workflow.Fanouts = append(sc.Workflow.Fanouts, rapid.IntRange(1, 4).Draw(t, "second fan-out branches"))
	}
	sc.Workflow.MaxInline = rapid.IntRange(0, 3).Draw(t, "max inline")
	sc.Workflow.FlakySteps = rapid.IntRange(0, 1).Draw(t, "flaky steps")
	sc.Workflow.FlakyTimes = 1
	sc.Workflow.QuickJSShare = percent(t, "quickjs share", 100)
	sc.Runs = rapid.IntRange(1, 2).Draw(t, "runs")
	sc.RunInterval = 50 * time.Millisecond
	f := &sc.Faults
	f.Crash = percent(t, "crash rate", 20)
	f.StaleRead = percent(t, "stale read rate", 50)
	sc.Store.StaleLag = time.Duration(rapid.IntRange(0, 500).Draw(t, "stale lag ms")) * time.Millisecond
	f.LostCreate = percent(t, "lost create rate", 20)
	f.BodyFailure = percent(t, "body failure rate", 20)
	f.Cancel = percent(t, "cancel rate", 100)
	f.CancelWithin = time.Duration(1+rapid.IntRange(0, 10000).Draw(t, "cancel within ms")) * time.Millisecond
	// A fault window of 3-12 visibility timeouts of the drawn World, so a
	// crash's redelivery can land inside it, after a cancel, or both.
	vt := sc.Store.VisibilityTimeout
	f.Until = time.Duration(rapid.IntRange(3, 12).Draw(t, "fault window in visibility timeouts")) * vt
	sc.Limits.MaxTime = max(sc.Limits.MaxTime, f.Until+10*vt)
}

// Families are the scenario families the property tests search.
var Families = []Family{
	{"swarm", "the swarm scenario: every knob (world, version mix, fault sites, window, shapes, cancels) is a draw of the run", func(t *rapid.T) model.Scenario {
		sc, err := model.Spec{Scenario: "swarm"}.Load()
		if err != nil {
			t.Fatalf("swarm: %v", err)
		}
		sc.Name = "rapid-swarm"
		return sc
	}},
	{"fanout", "one deployment (v2), any world, fan-outs of 1–6 branches, every fault", func(t *rapid.T) model.Scenario {
		sc := model.DefaultScenario()
		sc.Name = "rapid-fanout"
		drawCommon(t, &sc)
		return sc
	}},
	{"skew", "two deployments whose versions, shares and rollout are drawn, with misdeliveries", func(t *rapid.T) model.Scenario {
		sc := model.DefaultScenario()
		sc.Name = "rapid-skew"
		drawCommon(t, &sc)
		vers := []string{"v2", "v1"}
		sc.Deployments = []model.DeploymentConfig{
			{Name: "dpl-a", Producer: vers[rapid.IntRange(0, 1).Draw(t, "a producer")], Consumer: vers[rapid.IntRange(0, 1).Draw(t, "a consumer")], Share: 1},
			{Name: "dpl-b", Producer: "v2", Consumer: "v2", Share: percent(t, "b share", 100)},
		}
		sc.Runs = rapid.IntRange(1, 3).Draw(t, "runs")
		sc.Rollout = model.Rollout{At: time.Duration(rapid.IntRange(0, 200).Draw(t, "rollout ms")) * time.Millisecond, To: "dpl-b"}
		sc.Faults.Misdeliver = percent(t, "misdeliver rate", 50)
		return sc
	}},
}
