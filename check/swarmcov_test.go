package check

import (
	"strings"
	"testing"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/seeds"
	"github.com/simlab/simlab/properties"
	"github.com/simlab/simlab/sim"
)

// In 10,000 seeds the swarm draw reaches every feature swarm_coverage
// tracks and every pair of drawn features: each fault site and topology
// feature on and off, every World, 1 to 4 deployments, v1 producers and
// consumers, two fetch-free deployments. The one feature only a run can
// show, a misdelivery between two fetch-free deployments, is simulated on
// the first seeds whose draw can have it.
func TestSwarmReachesEveryShapeIn10000Seeds(t *testing.T) {
	sc, err := model.Spec{Scenario: "swarm"}.Load()
	if err != nil {
		t.Fatal(err)
	}
	cov := newSwarmCoverage()
	off := map[string]int{}
	var candidates []uint64
	for seed := uint64(1); seed <= 10000; seed++ {
		drawn, d := model.DrawSwarm(sc, sim.NewPCG(seed))
		f := SwarmFeaturesOf(&d, drawn.Deployments, nil)
		cov.add(f)
		for _, name := range model.SwarmFeatures() {
			if !strings.Contains(" "+strings.Join(f, " ")+" ", " "+name+" ") {
				off[name]++
			}
		}
		if len(candidates) < 200 && drawn.Faults.Misdeliver > 0 && strings.Contains(strings.Join(f, " "), "fetch_free_deployments>=2") {
			candidates = append(candidates, seed)
		}
	}
	for _, seed := range candidates {
		res, err := model.Run(&sc, sim.NewPCG(seed), model.Options{Record: true, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		h := res.History
		if f := SwarmFeaturesOf(h.Swarm, deploymentConfigs(h), h); strings.Contains(strings.Join(f, " "), "misdelivered_between_fetch_free") {
			cov.Features["misdelivered_between_fetch_free"]++
			break
		}
	}
	cov.finish()
	if len(cov.Unreached) > 0 {
		t.Fatalf("never reached in 10,000 seeds: %v", cov.Unreached)
	}
	// Swarm testing turns each feature fully on or off, about half each.
	for _, name := range model.SwarmFeatures() {
		if on := cov.Features[name]; on < 4000 || on > 6000 || off[name] != 10000-on {
			t.Errorf("%s on in %d of 10,000 seeds, off in %d: want about half each", name, on, off[name])
		}
	}
	for n := 1; n <= model.SwarmMaxDeployments; n++ {
		if got := cov.Features["deployments:"+string(rune('0'+n))]; got < 2000 {
			t.Errorf("%d deployments in %d seeds", n, got)
		}
	}
}

// check --until-stable stops on its own signal and says which.
func TestUntilStableSaysWhatStoppedIt(t *testing.T) {
	sc, err := model.Spec{Scenario: "fanout"}.Load()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Sweep(SweepConfig{Scenario: sc, Seeds: seeds.Count(500), Props: properties.All(), UntilStable: 20})
	if err != nil {
		t.Fatal(err)
	}
	if rep.StoppedBy != "stable" || rep.Seeds >= 500 || !strings.Contains(rep.StoppedReason, "has not grown for 20 seeds") {
		t.Fatalf("stopped by %q after %d seeds: %s", rep.StoppedBy, rep.Seeds, rep.StoppedReason)
	}
	// A declared outcome that never happens: the seeds run out first.
	sc.Faults.Crash, sc.Faults.Until = 0.000001, 1
	rep, err = Sweep(SweepConfig{Scenario: sc, Seeds: seeds.Count(50), Props: properties.All(), UntilStable: 20})
	if err != nil {
		t.Fatal(err)
	}
	if rep.StoppedBy != "seeds" || rep.Seeds != 50 || !strings.Contains(rep.StoppedReason, "declared outcomes never happened: crash") {
		t.Fatalf("stopped by %q after %d seeds: %s", rep.StoppedBy, rep.Seeds, rep.StoppedReason)
	}
}
