package program

import "time"

// Dilated returns a copy of prog k times as slow: every step's body
// distribution, sleep and clock deadline multiplied by k. A draw from a
// dilated body is the same draw, k times as long, so a run of the dilated
// program under the same seed makes the same choices; only what does not
// scale with it (the World's latencies) weighs k times less.
func Dilated(prog []Node, k int) []Node {
	if prog == nil {
		return nil
	}
	out := make([]Node, len(prog))
	for i, n := range prog {
		if n.Body != (Node{}).Body {
			n.Body = n.Body.Scaled(float64(k))
		}
		n.Sleep *= time.Duration(k)
		n.Clock *= time.Duration(k)
		n.All, n.Race, n.Seq = Dilated(n.All, k), Dilated(n.Race, k), Dilated(n.Seq, k)
		n.Then, n.Else, n.Do = Dilated(n.Then, k), Dilated(n.Else, k), Dilated(n.Do, k)
		out[i] = n
	}
	return out
}
