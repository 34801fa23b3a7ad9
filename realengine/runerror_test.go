package realengine

import (
	"encoding/json"
	"strings"
	"testing"
)

// A failed real run reads as words: the last spans' names (an error's
// message beside its span) and the World's last calls one per line, not
// the harness's raw JSON.
func TestRunErrorReadsAsWords(t *testing.T) {
	e := &RunError{Core: "5.0.0-beta.52", Branches: 4, Seed: 1, Msg: "timed out after 1 ms waiting for the runs' return values", RunIDs: []string{"wrun_1"},
		LastSpans: json.RawMessage(`[{"name":"world.events.list","attributes":{"peer.service":"world-local"},"status":{"code":1}},` +
			`{"name":"workflow.execute fanout","attributes":{"workflow.turbo":true},"status":{"code":2,"message":"boom\nat x"}}]`),
		WorldLog: json.RawMessage(`[{"op":"events.create","event":"step_started","start":430.4,"delivery":1,"result":"ok"},` +
			`{"op":"runs.get","start":506.5,"delivery":-1},{"op":"events.create","event":"run_completed","start":510,"delivery":0,"error":"EntityConflictError: done"}]`),
	}
	msg := e.Error()
	for _, want := range []string{
		"last spans: world.events.list, workflow.execute fanout (error: boom)",
		"430.4 ms  delivery 1: events.create step_started → ok",
		"506.5 ms  the client: runs.get → no answer yet",
		"510.0 ms  delivery 0: events.create run_completed → EntityConflictError: done",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the report lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "attributes") || strings.Contains(msg, "{") {
		t.Errorf("the report carries raw JSON:\n%s", msg)
	}
	// What does not parse is still shown, cut.
	e.LastSpans = json.RawMessage(`not json`)
	if msg := e.Error(); !strings.Contains(msg, "last spans: not json") {
		t.Errorf("unparsed spans lost:\n%s", msg)
	}
}
