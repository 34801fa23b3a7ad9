package realengine

import "fmt"

// Verdict is one judgement of an Agreement, as a CI gate reads it: what
// it compares, whether simlab agrees, and whether the real runs were
// enough to judge it at all.
type Verdict struct {
	Branches int    `json:"branches"`
	Core     string `json:"core"`
	Prologue string `json:"prologue"`
	What     string `json:"what"`
	Agrees   bool   `json:"agrees"`
	// Judged: the real side counted at least the gate's minimum (fan-outs
	// for the per-fan-out counts, runs for the per-run ones); Why says so
	// when it did not.
	Judged bool   `json:"judged"`
	Why    string `json:"why,omitempty"`
}

// GateDecision is what validate --gate decides: every verdict, and the judged
// ones that disagree, which make it exit 1.
type GateDecision struct {
	MinRuns   int       `json:"min_runs"`
	Verdicts  []Verdict `json:"verdicts"`
	Disagrees int       `json:"disagrees"`
	NotJudged int       `json:"not_judged"`
}

// Decide judges the agreements: a verdict counts only when its real
// sample holds at least minRuns (a handful of real runs admits almost any
// share, so a disagreement on fewer is not one a CI job should fail on).
func Decide(agreements []Agreement, minRuns int) GateDecision {
	g := GateDecision{MinRuns: minRuns}
	for _, a := range agreements {
		for _, v := range []struct {
			what   string
			agrees bool
			n      int
			unit   string
		}{
			{"lazy reads per fan-out", a.LazyAgrees, a.RealFanouts, "fan-outs"},
			{"concurrent last completers", a.ConcurrentAgrees, a.RealFanouts, "fan-outs"},
			{"runs ended twice", a.EndedAgrees, a.RealRuns, "runs"},
			{"corrupted runs", a.CorruptedAgree, a.RealRuns, "runs"},
			{"runs ended by a last completer", a.EndedByStepAgrees, a.RealRuns, "runs"},
		} {
			vd := Verdict{Branches: a.Branches, Core: a.Core, Prologue: a.Prologue, What: v.what, Agrees: v.agrees, Judged: v.n >= minRuns}
			if !vd.Judged {
				vd.Why = fmt.Sprintf("not judged: too few runs (%d real %s, the gate wants %d)", v.n, v.unit, minRuns)
				g.NotJudged++
			} else if !vd.Agrees {
				g.Disagrees++
			}
			g.Verdicts = append(g.Verdicts, vd)
		}
	}
	return g
}
