package program

import (
	"fmt"
	"time"

	"github.com/simlab/simlab/sim"
)

// Random draws a program from c: a search over workflow shapes, not only
// over schedules. Its statements are the language's (steps with a result
// drawn from two, sleeps, races of steps, sleeps and sequences, Promise.all
// of branches, an if on a value a replay saw, a bounded loop, a pool), at
// most depth deep, each race and step labelled so a later if can test it.
// Choice 0 of every draw is the simplest: one step. Step names are few
// (a..d), as a workflow's are, so two entities under one id often share a
// name: a replay that renames them diverges only where it must.
func Random(c sim.Chooser, depth int) []Node {
	return random(&gen{c: c}, depth)
}

// RandomWithHooks draws as Random does, with one more kind of statement: a
// hook raced against a sleep, once or in a loop (its read carried across
// the races or not), one more step when the hook won, the hook disposed or
// not. Its draws are Random's where it draws no hook, but the programs of
// one seed differ: the kinds are one more.
func RandomWithHooks(c sim.Chooser, depth int) []Node {
	return random(&gen{c: c, hooks: true}, depth)
}

func random(g *gen, depth int) []Node {
	prog := g.seq(depth, 1+g.c.Choose(3))
	if err := Validate(prog, "program"); err != nil {
		// The generator only writes what Validate takes; a refusal is its
		// own bug, not the seed's.
		panic(fmt.Sprintf("program.Random drew an invalid program: %v", err))
	}
	return prog
}

type gen struct {
	c      sim.Chooser
	labels []string // defined so far, in walk order
	next   int
	hooks  bool // draw hook statements too
}

func (g *gen) label() string {
	g.next++
	l := fmt.Sprintf("v%d", g.next)
	return l
}

func (g *gen) step() Node {
	n := Node{Step: string(rune('a' + g.c.Choose(4)))}
	if g.c.Choose(2) == 1 {
		n.Results = 2
	}
	n.As = g.label()
	return n
}

func (g *gen) sleep() Node {
	return Node{Sleep: []time.Duration{300, 100, 1000}[g.c.Choose(3)] * time.Millisecond}
}

// seq is n statements in order.
func (g *gen) seq(depth, n int) []Node {
	out := make([]Node, 0, n)
	for range n {
		out = append(out, g.stmt(depth))
		if s := &out[len(out)-1]; s.As != "" {
			g.labels = append(g.labels, s.As)
		}
	}
	return out
}

// stmt is one statement that awaits on every path (so it may be any
// branch of a race or an all).
func (g *gen) stmt(depth int) Node {
	kinds := 1
	if depth > 0 {
		kinds = 7
		if g.hooks {
			kinds = 8
		}
	}
	switch g.c.Choose(kinds) {
	case 1: // a race of 2..3 branches
		br := make([]Node, 2+g.c.Choose(2))
		for i := range br {
			switch g.c.Choose(3) {
			case 0:
				br[i] = g.step()
			case 1:
				br[i] = g.sleep()
			default:
				br[i] = Node{Seq: g.seq(depth-1, 2)}
			}
		}
		return Node{Race: br, As: g.label()}
	case 2: // Promise.all of 2..6 branches
		br := make([]Node, 2+g.c.Choose(5))
		for i := range br {
			br[i] = Node{Seq: g.seq(depth-1, 1+g.c.Choose(2))}
		}
		return Node{All: br}
	case 3: // an if on a value seen before, then a statement after it
		if len(g.labels) == 0 {
			return g.step()
		}
		test := g.labels[g.c.Choose(len(g.labels))]
		n := Node{If: test, Not: g.c.Choose(2) == 1, Then: g.seq(depth-1, 1)}
		if g.c.Choose(2) == 1 {
			n.Else = g.seq(depth-1, 1)
		} else {
			// Without else the if may await nothing: a step after it
			// keeps the statement a branch any race or all may hold.
			return Node{Seq: []Node{n, g.step()}}
		}
		return n
	case 4: // a loop of 2..3 iterations until a step's result
		body := g.seq(depth-1, 1+g.c.Choose(2))
		last := g.step()
		last.Results = 2
		body = append(body, last)
		return Node{Loop: 2 + g.c.Choose(2), Do: body, Until: last.As}
	case 5: // a pool
		return Node{Pool: 2 + g.c.Choose(2), N: 3 + g.c.Choose(4), Step: string(rune('a' + g.c.Choose(4)))}
	case 6: // a deadline between steps: once Date.now() is D past the start, one step, else another
		first, late := g.step(), g.label()
		d := []time.Duration{300, 1000, 2000}[g.c.Choose(3)] * time.Millisecond
		return Node{Seq: []Node{first, {Clock: d, As: late}, {If: late, Then: []Node{g.step()}, Else: []Node{g.step()}}}}
	case 7: // a hook raced against a sleep, once or in a loop, one more step when it won
		h, won := fmt.Sprintf("h%d", g.next+1), g.label()
		g.next++
		race := Node{Race: []Node{{Receive: h, Carry: g.c.Choose(2) == 1}, g.sleep()}, As: won}
		body := []Node{race, {If: won, Then: []Node{g.step()}}}
		out := []Node{{Hook: h}}
		if n := g.c.Choose(3); n > 0 {
			out = append(out, Node{Loop: 1 + n, Do: body})
		} else {
			out = append(out, body...)
		}
		if g.c.Choose(2) == 1 {
			out = append(out, Node{Dispose: h})
		}
		return Node{Seq: out}
	}
	return g.step()
}
