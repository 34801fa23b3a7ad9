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
	{"replay-ignores-terminal-log", "a replay goes on when the log it loaded already holds the run's terminal event (core beta.52 exits: hasRecordedTerminalRunEvent), so its writes meet a refusal"},
	{"retry-drops-run-context", "a v2 producer's delayed retry publishes without runContext (one dispatch site forgets to stamp)"},
	{"atomic-fan-in", "proposed fix: the World says atomically whether a terminal write was its fan-out's last"},
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
	replayIgnoresTerminalLog, retryDropsCtx                                                        bool
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
		case "replay-ignores-terminal-log":
			vs.replayIgnoresTerminalLog = true
		case "retry-drops-run-context":
			vs.retryDropsCtx = true
		case "atomic-fan-in":
			vs.atomicFanIn = true
		default:
			return vs, fmt.Errorf("variant %q: unknown; want one of %v", n, VariantNames())
		}
	}
	return vs, nil
}
