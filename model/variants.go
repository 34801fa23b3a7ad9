package model

import "fmt"

// Variant is a named switch that changes the protocol, mostly to bring back
// one of its historical bugs so that the properties can be shown to find it.
type Variant struct {
	Name string
	Desc string
}

var variants = []Variant{
	{"pre-fix-fence", "the World accepts step_started on a terminal run while the step reads running (world-local and world-postgres before the fix)"},
	{"strict-running-gate", "the last completer continues only if its lazy read says running, so a stale pending read abandons the continuation"},
	{"reroute-drops-input", "the deployment guard's re-route loses stepInput and runContext"},
	{"attempt-gated-recovery", "a missing step is recreated only when attempt > 1 (prologue re-ensure), never in-band on NotFound"},
	{"legacy-producers", "every producer is v1: no message carries runContext"},
	{"atomic-fan-in", "proposed fix: the World says atomically whether a terminal write was its fan-out's last"},
	{"replay-needs-started-at", "as the published runtime (core 5.0.0-beta.52) behaves: a last completer whose lazy read is a stale pending row fails the run, its replay having no startedAt"},
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
	preFixFence, strictGate, rerouteDropsInput, attemptGatedRecovery, legacyProducers, atomicFanIn, replayNeedsStartedAt bool
}

func resolveVariants(names []string) (variantSet, error) {
	var vs variantSet
	for _, n := range names {
		switch n {
		case "pre-fix-fence":
			vs.preFixFence = true
		case "strict-running-gate":
			vs.strictGate = true
		case "reroute-drops-input":
			vs.rerouteDropsInput = true
		case "attempt-gated-recovery":
			vs.attemptGatedRecovery = true
		case "legacy-producers":
			vs.legacyProducers = true
		case "atomic-fan-in":
			vs.atomicFanIn = true
		case "replay-needs-started-at":
			vs.replayNeedsStartedAt = true
		default:
			return vs, fmt.Errorf("variant %q: unknown; want one of %v", n, VariantNames())
		}
	}
	return vs, nil
}
