package properties

import (
	"fmt"
	"time"

	"github.com/simlab/simlab/model"
)

// Story renders a violation as lines a person can act on: what broke, then
// the events that prove it in virtual-time order, one a line.
func Story(v Violation) []string {
	lines := []string{fmt.Sprintf("%s violated in %s: %s", v.Property, runLabel(v), v.Message)}
	for _, e := range v.Evidence {
		lines = append(lines, fmt.Sprintf("  %12s  %s", fmtTime(e), e.Text))
	}
	return lines
}

func runLabel(v Violation) string {
	if v.Run < 0 {
		return "the simulation"
	}
	return model.RunName(v.Run)
}

func fmtTime(e Evidence) string {
	return "+" + time.Duration(e.At).Round(time.Microsecond).String()
}

// Counterexample sizes, for the "small story" check.
type Size struct {
	Branches int // widest fan-out of the scenario
	Faults   int // injected faults in the history
	Runs     int
}

// SizeOf measures a counterexample: its widest fan-out and the faults that
// hit the violating run (faults elsewhere are not part of its story).
func SizeOf(sc *model.Scenario, h *model.History, v Violation) Size {
	s := Size{Runs: sc.Runs}
	for _, f := range h.Faults {
		if v.Run < 0 || f.Run == v.Run {
			s.Faults++
		}
	}
	for _, w := range sc.Workflow.Fanouts {
		s.Branches = max(s.Branches, w)
	}
	return s
}
