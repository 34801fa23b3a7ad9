package conformance

import (
	"strings"
	"testing"

	"github.com/simlab/simlab/realworld"
)

// The model answers the way its store rules say, per World: the fence row.
func TestRunModelFollowsTheWorldsFence(t *testing.T) {
	known, err := realworld.ReadFile("testdata/known.json")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"wl-fixed": "run_expired", "wl-pre": "ok", "wl-b46": "run_expired", "wpg-pre": "ok", "wpg-b29": "ok"}
	for _, w := range realworld.Worlds {
		got := RunModel(w, known.Sequences[0].Calls)
		if r := got[len(got)-1].Res; r != want[w.Name] {
			t.Errorf("%s: model answered %s, want %s", w.Name, r, want[w.Name])
		}
	}
}

// A step id reused in another run: the model keys it by the id alone as
// world-postgres, per run as world-local (the first reuse sequence of
// known.json, whose real answers the differential test compares).
func TestRunModelKeysReusedStepIDsPerWorld(t *testing.T) {
	known, err := realworld.ReadFile("testdata/known.json")
	if err != nil {
		t.Fatal(err)
	}
	var calls []realworld.Call
	for _, s := range known.Sequences {
		if strings.HasPrefix(s.Name, "a step id reused in another run after its minter created it") {
			calls = s.Calls
		}
	}
	if len(calls) != 17 || calls[7].String() != "r1 step_created with r0.s0's id" || calls[9].String() != "r1 step_started with r0.s0's id" {
		t.Fatalf("known.json's reuse sequence changed: %v", calls)
	}
	for _, w := range realworld.Worlds {
		got := RunModel(w, calls)
		created, started := got[7], got[9]
		want := []realworld.Answer{{Res: "ok", Run: "running", Step: "pending", PeerStep: "pending"}, {Res: "ok", Run: "running", Step: "running", Attempt: 1, PeerStep: "pending"}}
		if w.Postgres() { // accepted without a row; then no such step in run 1
			want = []realworld.Answer{{Res: "ok", Run: "running", PeerStep: "pending"}, {Res: "not_found", Run: "running", PeerStep: "pending"}}
		}
		if !created.Same(want[0]) || !started.Same(want[1]) {
			t.Errorf("%s: step_created, step_started in run 1 under run 0's id: model %v, %v; want %v, %v", w.Name, created, started, want[0], want[1])
		}
	}
}
