// Package spancheck judges simlab's properties on spans instead of a
// History: an OTLP JSON Lines file simlab exported, a trace of the real
// engine (@workflow/core), or traces read from Jaeger's HTTP API. It reads
// the real engine's span conventions (workflow.execute <name> with
// workflow.step.dispatch_prologue, world.events.create <event>, step.execute,
// workflow.run.id, step.id, step.attempt) and simlab's simlab.* facts where an
// export has them, and for every property says whether it could judge it,
// what it read, and, when it could not, why.
package spancheck
