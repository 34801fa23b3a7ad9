// Package traces turns a model.History into OpenTelemetry spans stamped with
// virtual time and seed-derived ids, and exports them over OTLP/HTTP, to OTLP
// JSON Lines files, or into memory for tests. It never runs a simulation.
package traces
