// Package traces turns a model.History into OpenTelemetry spans stamped with
// virtual time and seed-derived ids, and exports them over OTLP/HTTP, to OTLP
// JSON Lines files, or into memory for tests. It never runs a simulation.
//
// The span names, attributes, ids and file format are a contract, written
// down in docs/TRACE_SCHEMA.md; Build and WriteJSONL give byte-identical
// output for the same seed.
package traces
