package check

import (
	"sort"
	"strings"

	"github.com/simlab/simlab/model"
)

// SwarmCoverage is what a swarm check's seeds reached (check --json
// "swarm_coverage"): per feature (every fault site and topology feature a
// draw turns on or off, each World, each deployment count, v1 producers
// and consumers, two or more fetch-free deployments, long windows, and
// what only a run shows: a misdelivery between two fetch-free
// deployments) the seeds that had it, per pair of drawn features the seeds
// that had both, and the features and pairs no seed reached.
type SwarmCoverage struct {
	Seeds        int            `json:"seeds"`
	Features     map[string]int `json:"features"`
	Combinations map[string]int `json:"combinations"`
	Unreached    []string       `json:"unreached"`
}

// SwarmCoverageFeatures lists every feature swarm_coverage tracks.
func SwarmCoverageFeatures() []string {
	out := append([]string{}, model.SwarmFeatures()...)
	for _, w := range model.ProfileNames() {
		out = append(out, "world:"+w)
	}
	for n := 1; n <= model.SwarmMaxDeployments; n++ {
		out = append(out, "deployments:"+string(rune('0'+n)))
	}
	return append(out, "producer:v1", "consumer:v1", "fetch_free_deployments>=2", "long_window", "misdelivered_between_fetch_free")
}

// pairFeatures are the drawn features whose pairs are tracked: every fault
// site and topology feature, each World, and two fetch-free deployments.
func pairFeatures() []string {
	out := append([]string{}, model.SwarmFeatures()...)
	for _, w := range model.ProfileNames() {
		out = append(out, "world:"+w)
	}
	return append(out, "fetch_free_deployments>=2")
}

// SwarmFeaturesOf lists the features one swarm run reached, sorted; nil
// for a run that is not a swarm draw. h may be nil: then only the draw's
// features are listed.
func SwarmFeaturesOf(d *model.SwarmDraw, deployments []model.DeploymentConfig, h *model.History) []string {
	if d == nil {
		return nil
	}
	out := append([]string{}, d.Features...)
	out = append(out, "world:"+d.World, "deployments:"+string(rune('0'+d.Deployments)))
	fetchFree := map[string]bool{}
	v1p, v1c := false, false
	for _, dep := range deployments {
		v1p = v1p || dep.Producer == "v1"
		v1c = v1c || dep.Consumer == "v1"
		if dep.Producer == "v2" && dep.Consumer == "v2" {
			fetchFree[dep.Name] = true
		}
	}
	if v1p {
		out = append(out, "producer:v1")
	}
	if v1c {
		out = append(out, "consumer:v1")
	}
	if len(fetchFree) >= 2 {
		out = append(out, "fetch_free_deployments>=2")
	}
	if d.Windows >= 3 {
		out = append(out, "long_window")
	}
	if h != nil {
		for i := range h.Deliveries {
			del := &h.Deliveries[i]
			if del.Msg >= 0 && del.Deployment != del.Target && h.Messages[del.Msg].HasCtx &&
				fetchFree[h.Deployments[del.Deployment].Name] && fetchFree[h.Deployments[del.Target].Name] {
				out = append(out, "misdelivered_between_fetch_free")
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// deploymentConfigs is a History's deployments as a scenario names them.
func deploymentConfigs(h *model.History) []model.DeploymentConfig {
	out := make([]model.DeploymentConfig, len(h.Deployments))
	for i, d := range h.Deployments {
		out[i] = model.DeploymentConfig{Name: d.Name, Producer: d.Producer.String(), Consumer: d.Consumer.String()}
	}
	return out
}

// add counts one seed's features and the pairs among them.
func (c *SwarmCoverage) add(features []string) {
	c.Seeds++
	has := map[string]bool{}
	for _, f := range features {
		c.Features[f]++
		has[f] = true
	}
	pf := pairFeatures()
	for i, a := range pf {
		for _, b := range pf[i+1:] {
			if has[a] && has[b] && !exclusive(a, b) {
				c.Combinations[pairName(a, b)]++
			}
		}
	}
}

// exclusive says two features can never be on together: one World each.
func exclusive(a, b string) bool {
	return strings.HasPrefix(a, "world:") && strings.HasPrefix(b, "world:")
}

func pairName(a, b string) string {
	if b < a {
		a, b = b, a
	}
	return a + " & " + b
}

// finish lists what no seed reached: every feature, then every pair.
func (c *SwarmCoverage) finish() {
	c.Unreached = nil
	for _, f := range SwarmCoverageFeatures() {
		if c.Features[f] == 0 {
			c.Unreached = append(c.Unreached, f)
		}
	}
	pf := pairFeatures()
	var pairs []string
	for i, a := range pf {
		for _, b := range pf[i+1:] {
			if !exclusive(a, b) && c.Combinations[pairName(a, b)] == 0 {
				pairs = append(pairs, pairName(a, b))
			}
		}
	}
	sort.Strings(pairs)
	c.Unreached = append(c.Unreached, pairs...)
}

func newSwarmCoverage() *SwarmCoverage {
	return &SwarmCoverage{Features: map[string]int{}, Combinations: map[string]int{}}
}

// mergeSwarmCoverage sums shards' coverage.
func mergeSwarmCoverage(parts []*SwarmCoverage) *SwarmCoverage {
	var out *SwarmCoverage
	for _, p := range parts {
		if p == nil {
			continue
		}
		if out == nil {
			out = newSwarmCoverage()
		}
		out.Seeds += p.Seeds
		for k, n := range p.Features {
			out.Features[k] += n
		}
		for k, n := range p.Combinations {
			out.Combinations[k] += n
		}
	}
	if out != nil {
		out.finish()
	}
	return out
}

// swarmKeys are a seed's coverage keys for --until-stable: its features
// and their pairs.
func swarmKeys(features []string) []string {
	out := append([]string{}, features...)
	for i, a := range features {
		for _, b := range features[i+1:] {
			out = append(out, pairName(a, b))
		}
	}
	return out
}
