// Package engine validates simlab against the real Workflow SDK runtime.
//
// The directory holds a Node harness (harness.mjs, store.mjs; pinned
// package.json and lock file) that compiles a fan-out workflow with
// @workflow/builders and runs it on @workflow/core 5.0.0-beta.52 or
// 5.0.0-beta.50 over world-local, with simlab's store model (latencies,
// pools, stale reads, consumer crashes) imposed on the real World. This
// package translates a simlab scenario into the harness's configuration
// (refusing what the real side cannot honour), runs the harness in its own
// process group, and sets its counts beside simlab's for the same scenario:
// `simlab validate` and docs/VALIDATION.md.
package engine
