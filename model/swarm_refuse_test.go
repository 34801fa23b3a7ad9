package model

import (
	"strings"
	"testing"
)

// A --set of what swarm draws for every seed is refused, naming the key;
// what it keeps from the scenario, and anything with swarm off, is taken.
func TestSwarmRefusesASetItWouldIgnore(t *testing.T) {
	for _, kv := range []string{"world=world-local", "store.events_create.p50=5ms", "deployments[0].producer=v1", "workflow.fanouts=4", "workflow.max_inline=2", "faults.crash=0.1", "runs=3"} {
		_, err := Spec{Scenario: "swarm", Sets: []string{kv}}.Load()
		key, _, _ := strings.Cut(kv, "=")
		if err == nil || !strings.Contains(err.Error(), "draws "+key+" for every seed") {
			t.Errorf("--set %s on swarm: %v, want a refusal naming %s", kv, err, key)
		}
	}
	for _, sets := range [][]string{{"store.atomic_calls=true"}, {"workflow.body.p50=5ms"}, {"swarm=false", "world=world-local"}} {
		if _, err := (Spec{Scenario: "swarm", Sets: sets}).Load(); err != nil {
			t.Errorf("--set %v on swarm: %v, want it taken", sets, err)
		}
	}
}
