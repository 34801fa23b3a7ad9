package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// execute carries out one `:` command. Anything that simulates lives here
// (or behind the knobs form's Run button), never on a navigation key.
func (a *App) execute(line string) error {
	a.log.Info("command", "line", line)
	name, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	arg = strings.TrimSpace(arg)
	cfg := a.sess.cfg.clone()
	switch name {
	case "q", "q!", "quit":
		a.quit()
		return nil
	case "seed":
		n, err := strconv.ParseUint(arg, 10, 64)
		if err != nil {
			return fmt.Errorf(":seed %q: want one unsigned integer, like :seed 42", arg)
		}
		run := cfg.clone()
		run.Seeds = []uint64{n}
		err = a.simulate(run, func() {
			// One more seed is an addition to the session's seeds: the
			// header names it with the others, and :set or :variant
			// re-simulate it too.
			a.sess.cfg.Seeds = cfg.Seeds
			if !slices.Contains(cfg.Seeds, n) {
				a.sess.cfg.Seeds = append(cfg.Seeds, n)
			}
		})
		if err != nil {
			return fmt.Errorf(":seed %d: %w", n, err)
		}
		return nil
	case "seeds":
		seeds, err := parseSeeds(arg)
		if err != nil {
			return fmt.Errorf(":seeds: %w", err)
		}
		cfg.Seeds = seeds
	case "scenario":
		if arg == "" {
			return fmt.Errorf(":scenario: name a built-in scenario or a file, like :scenario durabench-256")
		}
		cfg.Scenario, cfg.Sets, cfg.Variants = arg, nil, nil
	case "variant", "variants":
		cfg.Variants = nil
		if arg != "" && arg != "none" {
			cfg.Variants = strings.Split(arg, ",")
		}
	case "set":
		if !strings.Contains(arg, "=") {
			return fmt.Errorf(":set %q: want key=value, like :set workflow.fanouts=64", arg)
		}
		cfg.Sets = append(cfg.Sets, arg)
	case "compare":
		return a.compareCommand(arg)
	default:
		return fmt.Errorf(":%s: unknown command; want seed, seeds, scenario, variant, set, compare or q (? lists them)", name)
	}
	if err := a.simulate(cfg, nil); err != nil {
		return fmt.Errorf(":%s: %w", name, err)
	}
	return nil
}

func (a *App) compareCommand(arg string) error {
	f := strings.Fields(arg)
	if len(f) != 2 {
		return fmt.Errorf(":compare %q: want two run numbers from the # column, like :compare 3 4", arg)
	}
	var runs [2]*Run
	for i, s := range f {
		n, err := strconv.Atoi(strings.TrimPrefix(s, "#"))
		r, ok := a.sess.byNo(n)
		if err != nil || !ok {
			return fmt.Errorf(":compare: no run #%s; runs are numbered 1 to %d", s, len(a.sess.runs))
		}
		runs[i] = r
	}
	a.push(newCompareView(runs[0], runs[1]))
	return nil
}
