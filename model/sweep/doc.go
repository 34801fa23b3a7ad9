// Package sweep measures how queued step dispatch scales with fan-out width:
// it runs a scenario over a grid of (branches, prologue, seed) cells and
// reduces each (branches, prologue) pair to the figures DOMAIN §10 reports
// for the real system — time to first and last step, runs.get count and
// latency, reads and lazy reads per fan-out, and how often two or more
// deliveries both took a fan-out's continuation.
//
// Run is a pure function of a scenario and Options: the same inputs give the
// same Result, whatever the number of workers or shards. A sharded run keeps
// its raw per-cell Samples so that Merge can recompute the rows exactly;
// percentiles cannot be merged from summaries. docs/SWEEP.md documents the
// JSON contract and the figures; docs/SCALE.md how to shard.
package sweep
