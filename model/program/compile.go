package program

import (
	"maps"
	"time"

	"github.com/simlab/simlab/sim"
)

// Compiled is a validated program ready to replay: its statements as a
// tree with the labels numbered.
type Compiled struct {
	root   *cnode
	labels []string
	// hooks counts the hook statements: each has its variable (the hook
	// entity it last minted), which receive and dispose statements read.
	hooks int
	// siteBase is, per statement that mints (step, sleep, hook, pool), the
	// first of its call-site ids: its k-th entity of a replay is
	// siteBase+k (Replayer.CallSite); sites is how many there are.
	siteBase []int32
	sites    int32
	// Nodes are the statements in walk order (Pending.Node indexes them).
	Nodes []*Node
}

type cnode struct {
	kind      Kind
	index     int32 // in Compiled.Nodes
	step      string
	kids      []*cnode // all, race, seq; a loop's body
	then, els []*cnode
	label     int // the label this statement sets, or -1
	cond      int // if: the label tested; loop: until's, or -1
	not       bool
	pool, n   int
	loop      int
	clock     int64 // clock: the milliseconds past t0 it tests
	hook      int   // hook: its variable; receive, dispose: the variable read
	carry     bool  // receive: a carried read
}

// Compile validates prog and compiles it.
func Compile(prog []Node) (*Compiled, error) {
	if err := Validate(prog, "program"); err != nil {
		return nil, err
	}
	c := &Compiled{}
	labels := map[string]int{}
	root := &cnode{kind: KindSeq, index: -1, label: -1, cond: -1}
	root.kids = c.list(prog, labels, map[string]int{})
	c.root = root
	c.siteBase = make([]int32, len(c.Nodes))
	c.assignSites(root.kids, 1)
	return c, nil
}

// assignSites gives each minting statement of ns its range of call-site
// ids: as many as it can mint in one run (mult: the runs of the loops
// around it; a pool its calls too).
func (c *Compiled) assignSites(ns []*cnode, mult int32) {
	for _, n := range ns {
		switch n.kind {
		case KindStep, KindSleep, KindHook:
			c.siteBase[n.index], c.sites = c.sites, c.sites+mult
		case KindPool:
			c.siteBase[n.index], c.sites = c.sites, c.sites+mult*int32(n.n)
		case KindLoop:
			c.assignSites(n.kids, mult*int32(n.loop))
		default:
			c.assignSites(n.kids, mult)
			c.assignSites(n.then, mult)
			c.assignSites(n.els, mult)
		}
	}
}

// MustCompile is Compile for programs known to be valid.
func MustCompile(prog []Node) *Compiled {
	c, err := Compile(prog)
	if err != nil {
		panic(err)
	}
	return c
}

// list compiles a statement list; hooks are the hook variables in scope
// by name (a list's own hook statements are scoped to it, as Validate
// checks).
func (c *Compiled) list(ns []Node, labels map[string]int, hooks map[string]int) []*cnode {
	hooks = maps.Clone(hooks)
	out := make([]*cnode, len(ns))
	for i := range ns {
		out[i] = c.node(&ns[i], labels, hooks)
	}
	return out
}

func (c *Compiled) node(n *Node, labels map[string]int, hooks map[string]int) *cnode {
	cn := &cnode{kind: n.Kind(), index: int32(len(c.Nodes)), label: -1, cond: -1, not: n.Not}
	c.Nodes = append(c.Nodes, n)
	label := func(name string) int {
		if name == "" {
			return -1
		}
		if i, ok := labels[name]; ok {
			return i
		}
		labels[name] = len(c.labels)
		c.labels = append(c.labels, name)
		return labels[name]
	}
	switch cn.kind {
	case KindStep:
		cn.step = n.Step
	case KindPool:
		cn.step, cn.pool, cn.n = n.Step, n.Pool, n.N
	case KindAll:
		cn.kids = c.list(n.All, labels, hooks)
	case KindRace:
		cn.kids = c.list(n.Race, labels, hooks)
	case KindSeq:
		cn.kids = c.list(n.Seq, labels, hooks)
	case KindIf:
		cn.cond = label(n.If)
		cn.then = c.list(n.Then, labels, hooks)
		cn.els = c.list(n.Else, labels, hooks)
	case KindLoop:
		cn.loop = n.Loop
		cn.kids = c.list(n.Do, labels, hooks)
		cn.cond = label(n.Until)
	case KindClock:
		cn.clock = n.Clock.Milliseconds()
	case KindHook:
		cn.hook = c.hooks
		hooks[n.Hook] = c.hooks
		c.hooks++
	case KindReceive:
		cn.hook, cn.carry = hooks[n.Receive], n.Carry
	case KindDispose:
		cn.hook = hooks[n.Dispose]
	}
	cn.label = label(n.As)
	return cn
}

// Body is how long a call of node i's step runs: its own body, or dflt.
func (c *Compiled) Body(i int32, dflt sim.Dist) sim.Dist {
	if b := c.Nodes[i].Body; b != (sim.Dist{}) {
		return b
	}
	return dflt
}

// Results is how many results node i's step draws from (0: it returns 1).
func (c *Compiled) Results(i int32) int { return c.Nodes[i].Results }

// Hangs is how many of the first attempts of node i's step hang: their
// bodies never return.
func (c *Compiled) Hangs(i int32) int { return c.Nodes[i].Hangs }

// HangingAttempts is how many step attempts of the program hang, in all
// (0: none waits for a time limit).
func (c *Compiled) HangingAttempts() int {
	n := 0
	for _, node := range c.Nodes {
		n += node.Hangs
	}
	return n
}

// ReadsClock reports whether a statement of the program reads Date.now()
// (a clock statement).
func (c *Compiled) ReadsClock() bool {
	for _, node := range c.Nodes {
		if node.Clock != 0 {
			return true
		}
	}
	return false
}

// Sleep is node i's sleep.
func (c *Compiled) Sleep(i int32) time.Duration { return c.Nodes[i].Sleep }

// UsesHooks reports whether the program creates a hook.
func (c *Compiled) UsesHooks() bool { return c.hooks > 0 }
