// Package testreal is the one switch per real component the tests start
// (the real engine, the real Worlds and PostgreSQL, the browser, Jaeger,
// tmux): each is switched off by its own variable set to 1, and all of them
// by go test -short, which runs the pure-Go suite alone. The full suite
// (.ci/run) sets none of them.
package testreal
