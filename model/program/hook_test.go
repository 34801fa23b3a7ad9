package program

import (
	"strings"
	"testing"
	"time"
)

func hookCreated(k, token int32) Event { e := E(HookCreated, k); e.Token = token; return e }
func hookConflict(k, token int32) Event {
	e := E(HookConflict, k)
	e.Token = token
	return e
}
func hookReceived(k int32) Event { return E(HookReceived, k) }

// approval is a hook raced against a watchdog sleep, then a step only
// when the hook won: the shape of the team's hook-storm (a webhook that
// resumes a run its own timer wakes too). Ordinals: 0 the hook, 1 the
// wait, then 2 approved (when the hook won) and 2 or 3 final.
func approval() *Compiled {
	return MustCompile([]Node{
		{Hook: "h"},
		{Race: []Node{{Receive: "h"}, {Sleep: time.Hour}}, As: "got"},
		{If: "got", Then: []Node{{Step: "approved"}}},
		{Dispose: "h"},
		{Step: "final"},
	})
}

func TestReplayOfHooks(t *testing.T) {
	made := []Event{hookCreated(0, 0), waitCreated(1)}
	cases := []struct {
		name string
		prog *Compiled
		log  []Event
		want string
	}{
		{"nothing written", approval(), runEvents, "suspended on hook#0, wait#1"},
		{"created, awaiting the payload", approval(), cat(runEvents, made), "suspended on hook#0 (created), wait#1 (created)"},
		{"the hook won", approval(), cat(runEvents, made, []Event{hookReceived(0)}),
			"suspended on hook#0 (created), wait#1 (created), step#2 approved"},
		{"the sleep won", approval(), cat(runEvents, made, []Event{waitCompleted(1)}),
			"suspended on hook#0 (created) (disposed), step#2 final"},
		{"the hook won and ran", approval(), cat(runEvents, made, []Event{hookReceived(0), E(HookDisposed, 0),
			E(StepCreated, 2).Named("approved"), completed(2, "approved", 1), E(StepCreated, 3).Named("final"), completed(3, "final", 1)}), "completed"},
		// A replay that saw the sleep win mints final at 2: the log's
		// approved step there is another's.
		{"a hook-won log replayed after the sleep won", approval(), cat(runEvents, made, []Event{waitCompleted(1), hookReceived(0),
			E(StepCreated, 2).Named("approved")}), "diverged at event 6 (name-mismatch)"},
		{"a token drawn by another replay", approval(), cat(runEvents, []Event{hookCreated(0, 1)}), "diverged at event 2 (token-mismatch)"},
		{"a hook event at a step's ordinal parks, then strands", MustCompile([]Node{{Step: "a"}}),
			cat(runEvents, []Event{hookReceived(0), created(0, "a"), completed(0, "a", 1)}), "diverged at event 2 (finished-with-parked)"},
		{"hook_created at a step's ordinal", MustCompile([]Node{{Step: "a"}}), cat(runEvents, []Event{hookCreated(0, 0)}), "diverged at event 2 (unconsumable)"},
		{"the token taken: the receive rejects", approval(), cat(runEvents, []Event{hookConflict(0, 0), waitCreated(1)}), "failed at event 2"},
	}
	for _, c := range cases {
		if got := Replay(c.prog, c.log).String(); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// A payload that arrives before the program awaits it is kept for the
// receive, and a loop reads one payload per iteration, in log order.
func TestAHookIsReadOncePerPayloadInALoop(t *testing.T) {
	prog := MustCompile([]Node{
		{Hook: "h"},
		{Step: "first"},
		{Loop: 3, Do: []Node{{Receive: "h"}, {Step: "each"}}},
	})
	log := cat(runEvents, []Event{hookCreated(0, 0), created(1, "first"), hookReceived(0), hookReceived(0), completed(1, "first", 1)})
	// Both payloads were buffered: the loop's first two iterations run on them.
	o := Replay(prog, log)
	if o.String() != "suspended on hook#0 (created), step#2 each" {
		t.Fatalf("two payloads buffered: %s", o)
	}
	log = append(log, created(2, "each"), completed(2, "each", 1))
	if o := Replay(prog, log); o.String() != "suspended on hook#0 (created), step#3 each" {
		t.Fatalf("the second iteration: %s", o)
	}
	log = append(log, created(3, "each"), completed(3, "each", 1))
	if o := Replay(prog, log); o.String() != "suspended on hook#0 (created)" {
		t.Fatalf("the third iteration awaits a third payload: %s", o)
	}
	log = append(log, hookReceived(0), created(4, "each"), completed(4, "each", 1))
	if o := Replay(prog, log); o.Status != Completed {
		t.Fatalf("three payloads, three iterations: %s", o)
	}
}

// Tokens are positional: the j-th hook a replay creates draws the j-th
// token, so a replay that creates one hook fewer before a point gives every
// later hook another's token.
func TestHookTokensArePositional(t *testing.T) {
	prog := MustCompile([]Node{
		{Step: "a", As: "x"},
		{If: "x", Then: []Node{{Hook: "early"}, {Dispose: "early"}}},
		{Hook: "late"},
		{Receive: "late"},
	})
	x1 := cat(runEvents, []Event{created(0, "a"), completed(0, "a", 1)})
	o := Replay(prog, x1)
	if len(o.Pending) != 2 || o.Pending[1].Token != 1 || o.Pending[1].Ordinal != 2 {
		t.Fatalf("after a truthy a: %v (tokens %v)", o, o.Pending)
	}
	x0 := cat(runEvents, []Event{created(0, "a"), completed(0, "a", 0)})
	o = Replay(prog, x0)
	if len(o.Pending) != 1 || o.Pending[0].Token != 0 || o.Pending[0].Ordinal != 1 {
		t.Fatalf("after a falsy a: %v (tokens %v)", o, o.Pending)
	}
}

func TestValidateHooks(t *testing.T) {
	bad := []struct {
		prog []Node
		want string
	}{
		{[]Node{{Receive: "h"}}, `receive "h": no hook statement before it`},
		{[]Node{{Seq: []Node{{Hook: "h"}, {Step: "a"}}}, {Receive: "h"}}, `receive "h": no hook statement before it`},
		{[]Node{{Hook: "h"}, {Hook: "h"}}, `a hook of that name is in scope already`},
		{[]Node{{Hook: "h", As: "x"}}, `as: hook has no value to keep`},
		{[]Node{{Hook: "h"}, {All: []Node{{Dispose: "h"}, {Step: "a"}}}}, `must await`},
		{[]Node{{Hook: "h", Step: "a"}}, `one statement has one kind`},
	}
	for _, c := range bad {
		err := Validate(c.prog, "program")
		if err == nil || !contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.prog, err, c.want)
		}
	}
	good := []Node{{Hook: "h"}, {All: []Node{{Receive: "h"}, {Receive: "h"}}}, {Loop: 2, Do: []Node{{Hook: "g"}, {Receive: "g", As: "v"}, {Dispose: "g"}}, Until: "v"}}
	if err := Validate(good, "program"); err != nil {
		t.Fatal(err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// A hook raced against a sleep in a loop: each await enrols an awaiter the
// payloads go to oldest first, so a payload arriving after a lost race goes
// to that race's dead awaiter (vercel/workflow #4264); a carried read
// (carry: true, the hook's iterator kept across races) is raced again and
// takes it.
func TestACarriedReadTakesThePayloadALostRaceWouldHaveLost(t *testing.T) {
	prog := func(carry bool) *Compiled {
		return MustCompile([]Node{
			{Hook: "h"},
			{Loop: 3, Do: []Node{
				{Race: []Node{{Receive: "h", Carry: carry}, {Sleep: time.Hour}}, As: "got"},
				{If: "got", Then: []Node{{Step: "x"}}},
			}},
		})
	}
	wait := func(k int32) []Event { return []Event{waitCreated(k), waitCompleted(k)} }
	// Round 1 the sleep won; round 2's sleep is created, then a payload.
	log := cat(runEvents, []Event{hookCreated(0, 0)}, wait(1), []Event{waitCreated(2), hookReceived(0)})
	if o := Replay(prog(false), log).String(); o != "suspended on hook#0 (created), wait#2 (created)" {
		t.Errorf("a plain receive: %s; want the payload lost to round 1's awaiter", o)
	}
	if o := Replay(prog(true), log).String(); o != "suspended on hook#0 (created), wait#2 (created), step#3 x" {
		t.Errorf("a carried read: %s; want round 2 won by the payload", o)
	}
	// The payload lands while no race attends the read (round 1 lost,
	// round 2 not begun: the log's order puts it before round 2's sleep
	// is created): the carried read settles round 2 at once.
	log = cat(runEvents, []Event{hookCreated(0, 0), waitCreated(1), waitCompleted(1), hookReceived(0)})
	if o := Replay(prog(true), log).String(); o != "suspended on hook#0 (created), wait#2, step#3 x" {
		t.Errorf("a carried read settled between races: %s", o)
	}
	if err := Validate([]Node{{Hook: "h"}, {Receive: "h", Carry: true}}, "program"); err == nil || !strings.Contains(err.Error(), "a carried read is a branch of a race") {
		t.Errorf("carry outside a race: %v", err)
	}
}

// Call-site ids (vercel/workflow #3179): an entity's id is its statement's
// and its occurrence there, so the final step of a replay that saw the
// step win and of one that saw the sleep win has one id, where positional
// ids name it by how many entities came before it.
func TestCallSiteIDsNameAStatementsEntityTheSameOnEveryBranch(t *testing.T) {
	prog := MustCompile([]Node{
		{Race: []Node{{Step: "x"}, {Sleep: time.Hour}}, As: "won"},
		{If: "won", Then: []Node{{Step: "extra"}}},
		{Loop: 2, Do: []Node{{Step: "final"}}},
	})
	sleepWon := cat(runEvents, []Event{created(0, "x"), waitCreated(1), waitCompleted(1)})
	stepWon := cat(runEvents, []Event{created(0, "x"), waitCreated(1), completed(0, "x", 1), created(2, "extra"), completed(2, "extra", 1)})
	final := func(callSite bool, log []Event) string {
		r := Replayer{CallSite: callSite}
		o := r.Replay(prog, log)
		return o.Pending[len(o.Pending)-1].String()
	}
	// Positional: final is the third entity after the sleep won, the fourth
	// after the step won (extra took the third).
	if a, b := final(false, sleepWon), final(false, stepWon); a != "step#2 final" || b != "step#3 final" {
		t.Errorf("positional ids: final is %s after the sleep won, %s after the step won", a, b)
	}
	// Call-site: x is site 0, the sleep 1, extra 2, final's two calls 3 and 4.
	if a, b := final(true, sleepWon), final(true, stepWon); a != "step#3 final" || b != a {
		t.Errorf("call-site ids: final is %s after the sleep won, %s after the step won; want step#3 both", a, b)
	}
	log := cat(stepWon, []Event{created(3, "final"), completed(3, "final", 1)})
	if got := final(true, log); got != "step#4 final" {
		t.Errorf("call-site ids: final's second call is %s, want step#4", got)
	}
	if o := (&Replayer{CallSite: true}).Replay(prog, cat(log, []Event{created(4, "final"), completed(4, "final", 1)})); o.Status != Completed || o.Minted != 5 {
		t.Errorf("the whole log with call-site ids: %s, %d minted", o, o.Minted)
	}
}
