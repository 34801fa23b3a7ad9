package model

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/model/program"
	"github.com/simlab/simlab/sim"
)

func TestParseProgram(t *testing.T) {
	good := "program:\n  - race: [{step: work}, {sleep: 300ms}]\n    as: won\n  - if: won\n    then: [{step: extra}]\n  - step: final\n"
	prog, err := ParseProgram([]byte(good))
	if err != nil || len(prog) != 3 || prog[1].If != "won" || prog[0].Race[1].Sleep.Milliseconds() != 300 {
		t.Fatalf("%q: %v, %+v", good, err, prog)
	}
	for _, c := range []struct{ file, want string }{
		{"", "empty"},
		{"program: []\n", "want a list of statements"},
		{"programme:\n  - step: a\n", "programme"},
		{"program:\n  - step: a\n  - if: nowhere\n    then: [{step: b}]\n", "line 3"},
		{"program:\n  - step: a\n    sleep: nonsense\n", "sleep"},
		{"program:\n  - step: a\n    hangs: -1\n", "line 2: program[0]: hangs -1"},
		{"program:\n  - step: a\n    hangs: 49\n", "hangs 49: want how many of its first attempts hang, 0..48"},
		{"program:\n  - sleep: 1s\n    hangs: 1\n", "hangs is not a key of sleep"},
	} {
		_, err := ParseProgram([]byte(c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one naming %q", c.file, err, c.want)
		}
	}
}

// program.Format writes what ParseProgram reads back as the same program:
// every drawn shape (with hooks too: a carried read stays carried), and a
// step with a body and results.
func TestFormattedProgramsParseBack(t *testing.T) {
	progs := [][]program.Node{{{Step: "a", Body: sim.Dist{Min: time.Millisecond, P50: 2 * time.Millisecond, P90: 3 * time.Millisecond, P99: 4 * time.Millisecond, Max: 5 * time.Millisecond}, Results: 3, Hangs: 2, As: "x"}}}
	for seed := range uint64(200) {
		progs = append(progs, program.Random(sim.NewPCG(seed), 3), program.RandomWithHooks(sim.NewPCG(seed), 3))
	}
	for _, p := range progs {
		text := program.Format(p)
		got, err := ParseProgram([]byte(text))
		if err != nil {
			t.Fatalf("%v\n%s", err, text)
		}
		if program.Format(got) != text || fmt.Sprint(withoutLines(got)) != fmt.Sprint(p) {
			t.Fatalf("parsed back differently:\n%s\n%s", text, program.Format(got))
		}
	}
}

// withoutLines is ns with every statement's line number cleared, as a
// program that came from no file has them.
func withoutLines(ns []program.Node) []program.Node {
	for i := range ns {
		n := &ns[i]
		n.Line = 0
		for _, kids := range [][]program.Node{n.All, n.Race, n.Seq, n.Then, n.Else, n.Do} {
			withoutLines(kids)
		}
	}
	return ns
}
