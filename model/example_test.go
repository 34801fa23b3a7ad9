package model_test

import (
	"fmt"
	"log"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/sim"
)

// Run one built-in scenario from a seed and read its summary: the golden-t2
// fan-out has two branches, one inline and one queued; the queued branch's
// consumer finishes last, so it makes the fan-out's one lazy runs.get and
// continues the run. The same scenario, seed and binary always give the same
// history hash.
func ExampleRun() {
	sc, ok := model.Builtin("golden-t2")
	if !ok {
		log.Fatal("golden-t2 is not built in")
	}
	res, err := model.Run(&sc, sim.NewPCG(1), model.Options{Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	sum := model.Summarize(res)
	fmt.Println(sum.Runs[0].RunID, sum.Runs[0].Status, "prologue:", sum.Runs[0].Prologue)
	f := sum.Fanouts[0]
	fmt.Printf("fan-out of %d: %d inline, %d queued, %d lazy read, continued by the %s\n",
		f.Branches, f.Inline, f.Queued, f.LazyFetches, f.ContinuedBy)

	again, _ := model.Run(&sc, sim.NewPCG(1), model.Options{Seed: 1})
	fmt.Println("deterministic:", again.History.Hash == res.History.Hash)
	// Output:
	// wrun_0000 completed prologue: run_context
	// fan-out of 2: 1 inline, 1 queued, 1 lazy read, continued by the consumer
	// deterministic: true
}
