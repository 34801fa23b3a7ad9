// Package realengine validates simlab against the real Workflow SDK runtime.
//
// The directory holds a Node harness (harness.mjs, store.mjs, gate.mjs; pinned
// package.json and lock file) that compiles a fan-out workflow with
// the @workflow/builders of the core's own version and runs it on any
// @workflow/core release package.json installs side by side (releases.go:
// beta.50, .52, .53, .55) over any installed world-local release (beta.45,
// .46) or over world-postgres beta.29 (its real queue, delivering to a
// flow route the harness serves), which no pinned core accepts
// (TestNoPinnedCoreRunsOnWorldPostgres), with simlab's store model (latencies,
// pools, stale reads, consumer crashes) imposed on the real World. This
// package translates a simlab scenario into the harness's configuration
// (refusing what the real side cannot honour), runs the harness in its own
// process group, and sets its counts beside simlab's for the same scenario:
// `simlab validate` and docs/VALIDATION.md. After each run the harness
// reads the run back from the real World (every page of its log, its run
// and step rows), so corruption (more than one terminal event, a row that
// does not read back) is counted on both sides. gate.mjs can hold chosen
// World calls and release them together, waiting on counts only, which
// forces a race instead of meeting it by timing
// (TestGatedLastCompletersCorruptTheRealLog); its hold rules hold one chosen
// call or step body until a chosen happening on its run (another delivery's
// answer, another body's beginning), which orders an interleaving by what
// happens (TestForcedEarlyQueuedCompletionAgainstTheInlineStep). race.mjs forces a race inside
// the real World's own calls instead: each run's first run_started and the
// run's cancel take their file-system steps in the model's interleaving
// (realworld/node/gate.mjs, shared with the concurrent conformance test;
// TestForcedCancelRacingStartReopensTheRealRun). forceprogram.go forces a
// program's shrunk counterexample (simlab reproduce FILE.yaml --seed N): hold
// rules naming entities by statement and id-sequence ordinal, one waiting for
// the run's clock to pass the program's deadline, bodies pinned to simlab's
// (TestForcedClockStormStoryHappensOnTheRealCore). Package findings judges each
// docs/FINDINGS.md finding on each release by such runs (simlab releases matrix,
// docs/RELEASES.md).
package realengine
