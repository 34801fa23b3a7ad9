// Package freelist hands each goroutine of a parallel loop a value of its
// own and takes it back after, so a loop never holds more values than it
// runs at once, and none is dropped as sync.Pool's are at a collection (a
// reused simulation engine is megabytes; rebuilding one costs what its
// reuse saves).
package freelist
