// Package testtmp gives a test binary a temp directory of its own, so that
// what a killed or timed-out run leaves behind is removed by the next one:
// t.TempDir's cleanups never run when go test's -timeout panics or the
// process is killed.
package testtmp
