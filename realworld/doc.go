// Package realworld drives the real, published Worlds: a Node driver
// (node/driver.mjs, pinned in node/package.json) hosts world-local
// 5.0.0-beta.46, beta.45 and beta.43 and world-postgres 5.0.0-beta.29 and
// beta.27 on a throwaway PostgreSQL; this package starts it (and the
// PostgreSQL, loopback only, stopped by its pid), sends it World calls (run,
// step and hook events, hooks under correlation ids hook_<ULID> and tokens
// minted per sequence) one at a time (sequences) or in concurrent batches,
// forces a batch's
// interleaving through the driver's gate (node/gate.mjs), reads the known
// races of the real Worlds (testdata/races.json), and measures bursts of one
// run's writes for `simlab calibrate`. The differential tests that hold
// model/world against these answers are package conformance's.
package realworld
