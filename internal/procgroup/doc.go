// Package procgroup runs a child process (Node, npm) in a process group of
// its own, killed as a group when its context ends and, on Linux, by the
// kernel if simlab dies first: no child outlives the command that started
// it, whatever way it ends.
package procgroup
