// Package sim is simlab's deterministic discrete-event kernel: a virtual clock
// counted in integer nanoseconds, an event queue ordered by (time, insertion
// sequence), the run loop with its limits, the Chooser that is the only source
// of nondeterminism, FoundationDB-style fault sites, and a rolling hash over
// every dispatched event. It knows no workflow words: the model gives events
// their meaning.
package sim
