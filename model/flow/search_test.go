package flow

import (
	"slices"
	"testing"
	"time"

	"github.com/simlab/simlab/model/program"
)

// Both searches draw the runtime's knobs beside the program: every
// max_inline of SearchMaxInline and no other, core's default (3) the most
// often and small values more often than large ones, sequential replays
// about one case in four; Config runs a case under them, with a retry for
// its sequential replays when the config it starts from has none.
func TestSearchCasesDrawTheRuntimesKnobs(t *testing.T) {
	const n = 2000
	for _, s := range []struct {
		name string
		draw func(uint64) Case
	}{{"programs", DrawCase}, {"hooks", DrawHookCase}} {
		inline := map[int]int{}
		sequential := 0
		base := Defaults(nil)
		base.SequentialRetry, base.MaxInline = 0, 7
		for seed := uint64(1); seed <= n; seed++ {
			k := s.draw(seed)
			inline[k.MaxInline]++
			if k.SequentialReplays {
				sequential++
			}
			cfg := k.Config(base)
			if cfg.MaxInline != k.MaxInline || cfg.SequentialReplays != k.SequentialReplays {
				t.Fatalf("%s case %d: max_inline %d, sequential %v; its config %d, %v", s.name, seed, k.MaxInline, k.SequentialReplays, cfg.MaxInline, cfg.SequentialReplays)
			}
			if err := cfg.Validate(); err != nil {
				t.Fatalf("%s case %d: %v", s.name, seed, err)
			}
		}
		for m := range inline {
			if !slices.Contains(SearchMaxInline, m) {
				t.Errorf("%s: max_inline %d drawn, not one of %v", s.name, m, SearchMaxInline)
			}
		}
		for _, m := range SearchMaxInline {
			if inline[m] == 0 {
				t.Errorf("%s: max_inline %d never drawn in %d cases", s.name, m, n)
			}
			if m != 3 && inline[m] >= inline[3] {
				t.Errorf("%s: max_inline %d drawn %d times, the default 3 %d: want the default the most often", s.name, m, inline[m], inline[3])
			}
		}
		if small, large := inline[1]+inline[2], inline[8]+inline[16]; small <= large {
			t.Errorf("%s: max_inline 1 or 2 drawn %d times, 8 or 16 %d: want the small ones more often", s.name, small, large)
		}
		if sequential < n/6 || sequential > n/3 {
			t.Errorf("%s: %d of %d cases replay sequentially: want about a quarter", s.name, sequential, n)
		}
	}
	// A case with no knob of its own keeps the config's max_inline.
	if cfg := (Case{Program: []program.Node{{Step: "a"}}}).Config(Defaults(nil)); cfg.MaxInline != 3 || cfg.SequentialReplays {
		t.Errorf("a case without knobs: max_inline %d, sequential %v; want the config's 3, off", cfg.MaxInline, cfg.SequentialReplays)
	}
}

// The hook search's drivers: the cadence (a tick every 20, 50 or 150ms for
// 3s) about half the time, and each of the other patterns (one burst, a
// single resume, the deadlines alone, another count and cadence) some of
// the time; every driver of a case with a hook is valid and resumes
// something, and a case without one has none.
func TestTheHookSearchDrawsDriverPatterns(t *testing.T) {
	const n = 2000
	patterns := map[string]int{}
	hooked := 0
	for seed := uint64(1); seed <= n; seed++ {
		k := DrawHookCase(seed)
		r := k.Resumes
		if !program.MustCompile(k.Program).UsesHooks() {
			if r != (Resumes{}) {
				t.Errorf("case %d creates no hook and has a driver %+v", seed, r)
			}
			continue
		}
		hooked++
		if err := r.Validate(); err != nil || !r.On() {
			t.Errorf("case %d: driver %+v: %v, resumes something %v", seed, r, err, r.On())
		}
		switch {
		case r.Count > 0 && time.Duration(r.Count)*r.Every == 3*time.Second && slices.Contains([]time.Duration{20, 50, 150}, r.Every/time.Millisecond):
			patterns["cadence"]++
		case r.Count == 1 && r.Burst >= 4 && !r.One && !r.AtDeadlines:
			patterns["burst"]++
		case r.Count == 1 && r.Burst == 0 && r.One && !r.AtDeadlines && r.Spread == 0:
			patterns["single"]++
		case r.Count == 0 && r.AtDeadlines:
			patterns["deadlines"]++
		case slices.Contains([]int{2, 5, 20}, r.Count) && slices.Contains([]time.Duration{5, 300, 1000}, r.Every/time.Millisecond):
			patterns["other cadence"]++
		default:
			t.Errorf("case %d: driver %+v is none of the search's patterns", seed, r)
		}
	}
	for _, p := range []string{"cadence", "burst", "single", "deadlines", "other cadence"} {
		if patterns[p] == 0 {
			t.Errorf("no driver of %d cases with a hook is a %s: %v", hooked, p, patterns)
		}
	}
	if c := patterns["cadence"]; 3*c < hooked || 3*c > 2*hooked {
		t.Errorf("%d of %d drivers tick at the cadence: want about half (%v)", c, hooked, patterns)
	}
}
