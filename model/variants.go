package model

import "fmt"

// Variant is a named switch that changes the protocol, mostly to bring back
// one of its historical bugs so that the properties can be shown to find it.
type Variant struct {
	Name string
	Desc string
	// apply turns the variant's switch on. Listing, validation and
	// behaviour all read this one row, so a variant cannot be listed
	// without a switch or switched without being listed.
	apply func(*variantSet)
}

var variants = []Variant{
	{"pre-fix-fence", "the World accepts step_started on a terminal run while the step reads running (world-local and world-postgres before the fix)",
		func(vs *variantSet) { vs.preFixFence = true }},
	{"strict-running-gate", "the last completer continues only if its lazy read says running, so a stale pending read abandons the continuation",
		func(vs *variantSet) { vs.strictGate = true }},
	{"reroute-drops-input", "the deployment guard's re-route loses stepInput and runContext",
		func(vs *variantSet) { vs.rerouteDropsInput = true }},
	{"attempt-gated-recovery", "a missing step is recreated only when attempt > 1 (prologue re-ensure), never in-band on NotFound",
		func(vs *variantSet) { vs.attemptGatedRecovery = true }},
	{"legacy-producers", "every producer is v1: no message carries runContext",
		func(vs *variantSet) { vs.legacyProducers = true }},
	{"replay-ignores-terminal-log", "a replay goes on when the log it loaded already holds the run's terminal event (core beta.52 exits: hasRecordedTerminalRunEvent), so its writes meet a refusal",
		func(vs *variantSet) { vs.replayIgnoresTerminalLog = true }},
	{"retry-drops-run-context", "a v2 producer's delayed retry publishes without runContext (one dispatch site forgets to stamp)",
		func(vs *variantSet) { vs.retryDropsCtx = true }},
	{"atomic-fan-in", "proposed fix: the World says atomically whether a terminal write was its fan-out's last",
		func(vs *variantSet) { vs.atomicFanIn = true }},
	{"replay-on-stale-pending", "the last completer's replay on a stale pending lazy read completes the run, as DOMAIN §7 and the review fix claim (the published runtime fails the run instead: the replay has no startedAt)",
		func(vs *variantSet) { vs.replayOnStalePending = true }},
}

// Variants lists every protocol variant in a stable order.
func Variants() []Variant { return append([]Variant(nil), variants...) }

// VariantNames lists the variants' names.
func VariantNames() []string {
	out := make([]string, len(variants))
	for i, v := range variants {
		out[i] = v.Name
	}
	return out
}

func variantByName(name string) (Variant, bool) {
	for _, v := range variants {
		if v.Name == name {
			return v, true
		}
	}
	return Variant{}, false
}

// variantSet is the set of switches a run uses, resolved once.
type variantSet struct {
	preFixFence, strictGate, rerouteDropsInput, attemptGatedRecovery, legacyProducers, atomicFanIn bool
	replayIgnoresTerminalLog, retryDropsCtx, replayOnStalePending                                  bool
}

func resolveVariants(names []string) (variantSet, error) {
	var vs variantSet
	for _, n := range names {
		v, ok := variantByName(n)
		if !ok {
			return vs, fmt.Errorf("variant %q: unknown; want one of %v", n, VariantNames())
		}
		v.apply(&vs)
	}
	return vs, nil
}
