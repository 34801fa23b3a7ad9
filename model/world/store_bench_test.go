package world

import "testing"

// BenchmarkApplyRules measures Store.Apply, per rule set, on the engine's own path: every step id
// is the run's own (the engine never names another run's step), a 64-branch
// fan-out per run, 8 runs per store generation, through Reset as the engine
// reuses a store. BenchmarkApply is the same on RulesDomain alone.
func BenchmarkApplyRules(b *testing.B) {
	const runs, steps = 8, 64
	phases := [...]EventType{EvStepCreated, EvStepStarted, EvStepCompleted}
	for _, rules := range []Rules{RulesLocal, RulesPostgres, RulesDomain} {
		b.Run(rules.String(), func(b *testing.B) {
			s := NewFor(rules, FenceFixed)
			var calls int
			b.ReportAllocs()
			for b.Loop() {
				s.Reset(FenceFixed)
				for r := 0; r < runs; r++ {
					id := s.CreateRun(0, 0, 7, -1)
					s.Apply(1, Event{Type: EvRunStarted, Run: id, Step: NoStep})
					for _, t := range phases {
						for st := StepID(0); st < steps; st++ {
							if res, _, _ := s.Apply(2, Event{Type: t, Run: id, Step: st}); res != OK {
								b.Fatalf("%v of step %d: %v", t, st, res)
							}
						}
					}
					s.Apply(3, Event{Type: EvRunCompleted, Run: id, Step: NoStep})
					calls += 2 + 3*steps
				}
			}
			if calls > 0 {
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(calls), "ns/apply")
			}
		})
	}
}
