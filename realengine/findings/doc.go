// Package findings is the release matrix: each finding simlab made about the
// real runtime, judged on each real release (a pinned core over a pinned
// world-local) by real runs of that release through package realengine,
// never by reading its code. registry.go lists the findings, one id each;
// each finding's judge, and the forced interleaving or configuration it
// runs, is the file named after its id; matrix.go runs them
// (`simlab releases matrix`, docs/RELEASES.md).
package findings
