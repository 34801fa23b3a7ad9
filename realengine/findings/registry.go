package findings

import (
	"context"
	"fmt"
	"strings"

	"github.com/simlab/simlab/realengine"
)

// The release matrix: each finding of docs/FINDINGS.md, decided on each release
// (a pinned core over a pinned world-local) by a real run of that release,
// never by reading its code. simlab releases matrix prints it;
// docs/RELEASES.md is filled from it.

// Verdict is what a real run says of a finding on a release.
type Verdict string

const (
	// Holds: the release does what the finding says.
	Holds Verdict = "holds"
	// Fixed: the release no longer does it.
	Fixed Verdict = "fixed"
	// NotApplicable: the finding is about a path the release does not take
	// (the evidence says which and how the run showed it).
	NotApplicable Verdict = "n/a"
	// NotSeen: an unforced finding the runs did not meet (not a fix: too
	// few runs to tell).
	NotSeen Verdict = "not seen"
	// Undecided: the check could not force what it needed (a gate that had
	// to escape, a schedule not honoured); the evidence says what.
	Undecided Verdict = "undecided"
)

// Judgement is a verdict with what the run measured.
type Judgement struct {
	Verdict  Verdict `json:"verdict"`
	Evidence string  `json:"evidence"`
}

// Finding is one docs/FINDINGS.md finding and how a release is judged on it.
type Finding struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Test names the go test that asserts the same on every pinned
	// release, where there is one.
	Test  string `json:"test,omitempty"`
	judge func(ctx context.Context, r *realengine.Runner, rel realengine.Release, o MatrixOptions) (Judgement, error)
}

// Findings are docs/FINDINGS.md's findings, in its order, with the invoke note.
var Findings = []Finding{
	{ID: "lazy-reads", Title: "many lazy runs.get per fan-out under read contention, not one", judge: judgeLazyReads},
	{ID: "stale-pending", Title: "a stale pending lazy read fails the run (no startedAt)", Test: "TestStalePendingLazyReadFailsTheRealRun", judge: judgeStalePendingRun},
	{ID: "ended-run-claim", Title: "a claim of a never-created step on an ended run: NotFound first, and the delivery throws (loops on world-local)", judge: judgeEndedRunClaim},
	{ID: "double-end-forced", Title: "concurrent last completers each write run_completed, all accepted (gated)", Test: "TestGatedLastCompletersCorruptTheRealLog", judge: judgeGated},
	{ID: "double-end-unforced", Title: "concurrent last completers corrupt the log unforced too (48 branches, durabench-256 ×5)", judge: judgeDoubleEndUnforced},
	{ID: "cancel-reopens", Title: "a cancel racing the run's start reopens the run (forced)", Test: "TestForcedCancelRacingStartReopensTheRealRun", judge: judgeCancelRace},
	{ID: "turbo-body-after-cancel", Title: "a cancelled run still runs its inline step's body: turbo's optimistic start (forced)", Test: "TestTurboRunsAnInlineBodyOnACancelledRun", judge: judgeTurboBody},
	{ID: "body-twice", Title: "one step's body runs twice at once: a queued step's early completion makes its consumer a last completer that runs the inline step too (forced)", Test: "TestForcedEarlyQueuedCompletionAgainstTheInlineStep", judge: judgeBodyTwice},
	{ID: "turbo-body-after-completion", Title: "a completed run still runs an inline step's body: the orchestrator's continuation, turbo (reproduced from simlab's schedule)", Test: "TestReproduceTurboBodyAfterTheRunCompleted", judge: judgeSchedule("turbo-body-after-completion.json")},
	{ID: "date-now", Title: "Date.now() reads the time of the replay's pass, not of the event awaited: a branch on it corrupts the log", Test: "TestDateNowReadsTheWholePassBeforeBeta55", judge: judgeDateNow},
	{ID: "default-dispatch", Title: "the runtime's default dispatch is not resilient: step_created lands before the publish", judge: judgeDefaultDispatch},
	{ID: "invoke", Title: "core beta.55's capabilities.invoke path (queued replay), on a World given the capability", judge: judgeInvoke},
}

// FindingByID finds a finding.
func FindingByID(id string) (Finding, error) {
	var ids []string
	for _, f := range Findings {
		if f.ID == id {
			return f, nil
		}
		ids = append(ids, f.ID)
	}
	return Finding{}, fmt.Errorf("finding %q: want one of %s", id, strings.Join(ids, ", "))
}
