package realworld

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func TestHookCallsValidate(t *testing.T) {
	cases := []struct{ body, want string }{
		{`{"sequences": [{"calls": [{"op": "create_run", "run": 0}, {"op": "event", "run": 0, "type": "hook_created", "hook": 1, "token": 2}, {"op": "event", "run": 0, "type": "hook_disposed", "hook": 1, "token": 3}]}]}`, "carries token 3, its earlier calls token 2"},
		{`{"sequences": [{"calls": [{"op": "create_run", "run": 0}, {"op": "event", "run": 0, "type": "run_started", "hook": 1}]}]}`, "hook and token are only for hook events"},
		{`{"sequences": [{"calls": [{"op": "create_run", "run": 0}, {"op": "event", "run": 0, "type": "hook_received", "hook": -1}]}]}`, "must not be negative"},
		{`{"sequences": [{"calls": [{"op": "create_run", "run": 0}, {"op": "event", "run": 0, "type": "hook_conflict"}]}]}`, `event type "hook_conflict"`},
	}
	for _, c := range cases {
		_, err := ReadFile(writeFile(t, c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.body, err, c.want)
		}
	}
	// One token per hook and run: two runs' hooks of one index may differ.
	ok := []Call{{Op: "create_run", Run: 0}, {Op: "create_run", Run: 1},
		{Op: "event", Run: 0, Type: "hook_created", Hook: 0, Token: 0}, {Op: "event", Run: 1, Type: "hook_created", Hook: 0, Token: 1}}
	if err := Validate(ok); err != nil {
		t.Error(err)
	}
	h := History{Runs: 1, Batches: []Batch{{Calls: []ConcCall{
		{Call: Call{Op: "event", Type: "hook_created", Hook: 2, Token: 1}},
		{Call: Call{Op: "event", Type: "hook_received", Hook: 2, Token: 0}}}}}}
	if err := h.Validate(); err == nil || !strings.Contains(err.Error(), "a hook has one token") {
		t.Errorf("a history's hook with two tokens: %v", err)
	}
}

func TestHookCallsAndAnswersPrint(t *testing.T) {
	c := Call{Op: "event", Run: 1, Type: "hook_created", Hook: 2, Token: 0}
	if got := c.String(); got != "r1.h2 hook_created t0" {
		t.Errorf("call: %q", got)
	}
	a := Answer{Res: "ok", Run: "running", Event: "hook_conflict", Owner: "r0.h0", HookLog: []string{"hook_conflict"}}
	if got := a.String(); got != "ok run=running logged hook_conflict hook=missing token→r0.h0 log=[hook_conflict]" {
		t.Errorf("answer: %q", got)
	}
	b := a
	b.HookLog = []string{"hook_conflict", "hook_conflict"}
	if a.Same(b) {
		t.Error("answers with different hook logs are the same")
	}
	b = a
	b.HookRow = "live"
	if a.Same(b) {
		t.Error("answers with different hook rows are the same")
	}
	// An answer without hooks reads as before, and its JSON carries no hook field.
	js, _ := json.Marshal(Answer{Res: "ok", Run: "pending"})
	if string(js) != `{"res":"ok","run":"pending","step":"","attempt":0}` {
		t.Errorf("JSON: %s", js)
	}
	rb := Readback{Run: "running", Hooks: []string{"live", ""}, Owners: []string{"r0.h0"}, Log: []string{"hook_created:h0"}}
	if got := rb.String(); got != "running h0=live h1=missing t0→r0.h0 log=[hook_created:h0]" {
		t.Errorf("read-back: %q", got)
	}
	rep := ReplyString(ConcCall{Call: c}, Reply{Res: "ok", Event: "hook_created"})
	if rep != "ok:hook_created" {
		t.Errorf("reply: %q", rep)
	}
}

func TestHookIDsAreULIDs(t *testing.T) {
	r := (&Driver{}).NewRun()
	re := regexp.MustCompile(`^hook_[0-9A-HJKMNP-TV-Z]{26}$`)
	a, b := r.hookKey(0, 0), r.hookKey(1, 0)
	if !re.MatchString(a) || !re.MatchString(b) || a == b || r.hookKey(0, 0) != a {
		t.Errorf("hook ids %q, %q", a, b)
	}
	if r.hookNameOf(b) != "r1.h0" || r.hookNameOf("") != "" || r.hookNameOf("hook_X") != "foreign:hook_X" {
		t.Error("hook names")
	}
	if r.tokenKey(0) == r.tokenKey(1) || r.tokenKey(0) != r.tokenKey(0) || (&Driver{}).NewRun().tokenKey(0) == r.tokenKey(0) {
		t.Error("tokens are one per index, unique to the sequence")
	}
	if got := r.stepNames([]string{"hook_created:" + b, "run_started", "step_created:step_q1_r0_s2"}); strings.Join(got, " ") != "hook_created:h0 run_started step_created:s2" {
		t.Errorf("log names: %v", got)
	}
	h := History{Runs: 2, Batches: []Batch{{Calls: []ConcCall{{Call: Call{Op: "event", Run: 1, Type: "hook_created", Hook: 1, Token: 2}}}}}}
	if hooks, tokens := h.Hooks(), h.Tokens(); len(hooks[0]) != 0 || len(hooks[1]) != 2 || len(tokens) != 3 {
		t.Errorf("hooks %v tokens %v", hooks, tokens)
	}
}
