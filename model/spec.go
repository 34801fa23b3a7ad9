package model

import (
	"fmt"
	"strings"
)

// Spec names a scenario as the command line does: a built-in name or a
// scenario file, then --set overrides in order, then --variant switches.
// Every run built from a Spec can print the one command that rebuilds it.
type Spec struct {
	Scenario string   // built-in name or scenario file
	Sets     []string // key=value, applied in order
	Variants []string
}

// Load builds and validates the scenario the spec names.
func (s Spec) Load() (Scenario, error) {
	sc, err := LoadScenario(s.Scenario, ReadScenarioFile)
	if err != nil {
		return sc, err
	}
	for _, kv := range s.Sets {
		if err := sc.Set(kv); err != nil {
			return sc, err
		}
	}
	if sc.Swarm {
		// A swarm run draws these for every seed: a --set of one would be
		// ignored, and every replay command would repeat it.
		for _, kv := range s.Sets {
			if key, _, _ := strings.Cut(kv, "="); SwarmDraws(strings.TrimSpace(key)) {
				return sc, fmt.Errorf("--set %s: a swarm scenario draws %s for every seed, so the --set would be ignored: drop it, or add --set swarm=false", kv, strings.TrimSpace(key))
			}
		}
	}
	sc.Variants = append(sc.Variants, s.Variants...)
	if err := sc.Validate(); err != nil {
		return sc, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	return sc, nil
}

// RunCommand is the `simlab run` command that replays seed of the spec,
// quoted for a shell.
func (s Spec) RunCommand(seed uint64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "simlab run --scenario %s --seed %d", ShellQuote(s.Scenario), seed)
	for _, kv := range s.Sets {
		fmt.Fprintf(&b, " --set %s", ShellQuote(kv))
	}
	for _, v := range s.Variants {
		fmt.Fprintf(&b, " --variant %s", ShellQuote(v))
	}
	return b.String()
}

// ShellQuote leaves a word of safe characters alone and single-quotes the
// rest, so a printed command can be pasted as it is.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == ',' || r == ':' ||
			r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
