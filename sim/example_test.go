package sim_test

import (
	"fmt"
	"time"

	"github.com/simlab/simlab/sim"
)

// A ping-pong between two actors on virtual time: each event is a state
// machine step, every delay comes from the Chooser, and the same seed gives
// the same history hash. Nothing here reads the wall clock or starts a
// goroutine.
func ExampleKernel() {
	const ping, pong = 1, 2
	run := func(seed uint64) sim.Stats {
		c := sim.NewPCG(seed)
		latency := sim.Dist{P50: 10 * time.Millisecond, P90: 30 * time.Millisecond,
			P99: 50 * time.Millisecond, Min: 5 * time.Millisecond, Max: 80 * time.Millisecond}
		k := sim.New(sim.Config{})
		rallies := 0
		k.SetHandler(func(ev *sim.Event) {
			if rallies++; rallies == 6 {
				return // the ball drops: no event is left, so Run drains
			}
			next := uint32(pong)
			if ev.Kind == pong {
				next = ping
			}
			k.After(latency.Draw(c), next, 0, 0)
		})
		k.Schedule(0, ping, 0, 0)
		stats, err := k.Run(sim.Limits{MaxEvents: 100})
		if err != nil {
			panic(err)
		}
		return stats
	}
	a, b := run(7), run(7)
	fmt.Println(a.Events, "events, stopped:", a.Reason)
	fmt.Println("same seed, same hash:", a.Hash == b.Hash, a.Now == b.Now)
	fmt.Println("another seed, another history:", run(8).Hash != a.Hash)
	// Output:
	// 6 events, stopped: drained
	// same seed, same hash: true true
	// another seed, another history: true
}
