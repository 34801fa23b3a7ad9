// Package flow runs a workflow program (model/program) as the runtime runs
// one, in virtual time: invocations of the run load its log, replay the
// program against what they loaded, and write what the replay asks for
// (entities it created, a wait's completion, the run's end), while the
// queued steps they dispatched run, write their results and, when one
// finds nothing left pending, replay the workflow inline. Several
// invocations of one run replay at once, each from the log it loaded; an
// entity's correlation id is its ordinal in the order the replay created
// it. So a replay that saw another log may name an entity differently from
// the one that wrote it, the next replay diverges, and after the
// runtime's recovery replays the run fails CORRUPTED_EVENT_LOG.
//
// It is the program path beside model's fan-out engine: the engine runs
// the fan-out lists every scenario of today is (their histories and hashes
// are its), this package runs any program, with the runtime's knobs that
// decide whether concurrent replays can corrupt a log (the view a writer
// goes on with after its own write, sequential replays, the time limit).
// The World is one run's log with world-local's rules for the events a
// program writes; the queue delivers each message once, after a delay.
//
// A Run is deterministic: the same Config and seed give the same Result.
package flow
