package program

import (
	"fmt"
	"strings"
	"time"

	"github.com/simlab/simlab/sim"
)

// Format writes prog as the YAML a program file holds (model.ParseProgram
// reads it back as the same program): `program:` and its statements, each
// key as a scenario file writes it, durations as Go writes them (300ms).
func Format(prog []Node) string {
	var b strings.Builder
	b.WriteString("program:\n")
	formatList(&b, prog, 1)
	return b.String()
}

func formatList(b *strings.Builder, ns []Node, depth int) {
	for i := range ns {
		formatNode(b, &ns[i], depth)
	}
}

func formatNode(b *strings.Builder, n *Node, depth int) {
	pad := strings.Repeat("  ", depth)
	first := true
	key := func(k string, v any) {
		lead := pad + "  "
		if first {
			lead, first = pad+"- ", false
		}
		if v == nil {
			fmt.Fprintf(b, "%s%s:\n", lead, k)
			return
		}
		fmt.Fprintf(b, "%s%s: %v\n", lead, k, v)
	}
	list := func(k string, kids []Node) {
		key(k, nil)
		formatList(b, kids, depth+2)
	}
	switch n.Kind() {
	case KindStep:
		key("step", n.Step)
	case KindPool:
		key("pool", n.Pool)
		key("n", n.N)
		key("step", n.Step)
	case KindSleep:
		key("sleep", n.Sleep)
	case KindClock:
		key("clock", n.Clock)
	case KindHook:
		key("hook", n.Hook)
	case KindReceive:
		key("receive", n.Receive)
		if n.Carry {
			key("carry", true)
		}
	case KindDispose:
		key("dispose", n.Dispose)
	case KindAll:
		list("all", n.All)
	case KindRace:
		list("race", n.Race)
	case KindSeq:
		list("seq", n.Seq)
	case KindIf:
		key("if", n.If)
		if n.Not {
			key("not", true)
		}
		if len(n.Then) > 0 {
			list("then", n.Then)
		}
		if len(n.Else) > 0 {
			list("else", n.Else)
		}
	case KindLoop:
		key("loop", n.Loop)
		list("do", n.Do)
		if n.Until != "" {
			key("until", n.Until)
		}
	}
	if n.Body != (sim.Dist{}) {
		key("body", fmt.Sprintf("{min: %v, p50: %v, p90: %v, p99: %v, max: %v}", d(n.Body.Min), d(n.Body.P50), d(n.Body.P90), d(n.Body.P99), d(n.Body.Max)))
	}
	if n.Results != 0 {
		key("results", n.Results)
	}
	if n.Hangs != 0 {
		key("hangs", n.Hangs)
	}
	if n.As != "" {
		key("as", n.As)
	}
}

func d(x time.Duration) string { return x.String() }
