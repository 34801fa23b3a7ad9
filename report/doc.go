// Package report writes a check's verdicts in the forms a CI acts on: JUnit
// XML (a testcase per scenario × property, a failure carrying the story,
// the replay command and the schedule file) and one self-contained HTML page
// (per violated property: the story, a waterfall of the shrunk
// counterexample on virtual time, the replay command), what a CI artifact
// link opens. It reads properties' reports and replays their schedules; it
// holds no verdict of its own.
package report
