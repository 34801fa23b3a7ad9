package model

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/simlab/simlab/sim"
)

// A program of fan-outs is that fan-out list: the same runs, the same
// history, seed for seed; and a scenario carrying it survives the JSON a
// schedule file embeds.
func TestProgramOfFanoutsIsTheFanoutList(t *testing.T) {
	prog, err := ParseScenario([]byte("name: p\nworkflow:\n  program:\n    - all: [{step: a}, {step: a}]\n    - all:\n        - step: b\n        - step: b\n        - step: b\n"))
	if err != nil {
		t.Fatal(err)
	}
	list, err := ParseScenario([]byte("name: p\nworkflow:\n  fanouts: [2, 3]\n"))
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed <= 20; seed++ {
		a, err := Run(&prog, sim.NewPCG(seed), Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := Run(&list, sim.NewPCG(seed), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if a.History.Hash != b.History.Hash {
			t.Fatalf("seed %d: program %016x, fan-out list %016x", seed, a.History.Hash, b.History.Hash)
		}
	}
	js, err := json.Marshal(prog)
	if err != nil {
		t.Fatal(err)
	}
	var back Scenario
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if err := back.Validate(); err != nil || len(back.Workflow.Program) != 2 || len(back.Workflow.Program[1].All) != 3 {
		t.Fatalf("round trip: %v, %+v", err, back.Workflow.Program)
	}
	// A scenario without a program writes no program key: the schedules
	// and traces of fan-out scenarios are byte for byte what they were.
	js, _ = json.Marshal(list)
	if strings.Contains(string(js), `"program"`) {
		t.Fatalf("a fan-out scenario's JSON names a program: %s", js)
	}
}

// A bad program is refused with the line and the path of the statement,
// and a program's scenario setting a knob its run does not read is refused
// naming the knob.
func TestProgramErrorsNameTheLine(t *testing.T) {
	cases := []struct{ doc, want string }{
		{"workflow:\n  program:\n    - all: [{step: a}]\n    - race:\n        - step: x\n        - if: nope\n          then: [{step: y}]\n",
			`line 6: workflow.program[1].race[1]: if "nope": no statement before it is labelled "nope"`},
		{"workflow:\n  program:\n    - all: [{step: a}]\n      colour: red\n", "line 4: workflow.program[0].colour: unknown field"},
		{"workflow:\n  fanouts: [2]\n  program:\n    - all: [{step: a}]\n", "line 2: workflow.fanouts: set workflow.program or workflow.fanouts, not both"},
		{"workflow:\n  program:\n    - step: a\n      all: [{step: b}]\n", "line 3: workflow.program[0]: one statement has one kind; this one has step and all"},
		{"workflow:\n  program:\n    - race:\n        - step: x\n        - if: w\n          then: [{step: y}]\n      as: w\n", `line 5: workflow.program[0].race[1]: if "w": no statement before it`},
		{"workflow:\n  program:\n    - step: a\n      as: r\n    - race:\n        - step: x\n        - if: r\n          then: [{step: y}]\n", "line 7: workflow.program[1].race[1]: a branch of race must await"},
		{"workflow:\n  program:\n    - pool: 2\n      n: 0\n      step: w\n", "line 3: workflow.program[0]: pool 2 of n 0"},
		{"workflow:\n  chunk_size: 4\n  program:\n    - all: [{step: a}]\n    - race: [{step: x}, {sleep: 1s}]\n", "workflow.chunk_size: a program's run (model/flow, as the runtime replays it) does not read it"},
		{"runs: 3\nworkflow:\n  program:\n    - all: [{step: a, hangs: 1}]\n", "runs: a program's run (model/flow, as the runtime replays it) does not read it"},
	}
	for _, c := range cases {
		_, err := ParseScenario([]byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.doc, err, c.want)
		}
	}
}
