// Package conformance holds model/world against the real, published Worlds,
// which package realworld drives: a differential test applies the same
// rapid-generated World calls to the real World and to the model configured
// as that World, one at a time and in concurrent batches, comparing every
// answer and every row read back. Its non-test files are the model side of
// those tests: the model run as one World (model.go), the interleavings the
// model's split calls can take (interleave.go, force.go) and porcupine's
// linearizability check (linearize.go); for hook events, world.Hooks beside
// the store (hookmodel.go) and the interleavings of world.HookTxn's steps
// (hookconc.go). The real packages are the judge (docs/CONFORMANCE.md).
package conformance
