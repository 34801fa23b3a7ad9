package realengine

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/sim"
)

// retryStory is what became of each step of a fan-out whose steps all fail
// once: per branch (0 is the inline one), the step messages published for
// it, the distinct messages delivered for it and their deliveries, and the
// delays its publishes asked for.
type retryStory struct {
	publishes, messages, deliveries []int
	delays                          [][]int
}

func (s retryStory) String() string {
	return fmt.Sprintf("publishes %v, messages %v, deliveries %v, delays %v", s.publishes, s.messages, s.deliveries, s.delays)
}

// A step that fails is retried by the same message when it was queued, and
// by a new delayed message when it ran inline: core answers the queue with
// {timeoutSeconds} for a queued step (runtime.js) and queues an inline
// step's retry under its dispatch key (the invocation's toRetry). The real
// core over world-local and simlab's model must tell the same story, step by
// step: a model that re-published a queued step's retry (as it did before)
// fails here, on its publishes and messages.
func TestStepRetriesOnTheRealCore(t *testing.T) {
	r := prepared(t)
	core := pinnedCore(t, "5.0.0-beta.52")
	sc, _ := model.Builtin("fanout")
	for _, set := range []string{"workflow.max_inline=1", "workflow.flaky_steps=3", "workflow.flaky_times=1"} {
		if err := sc.Set(set); err != nil {
			t.Fatal(err)
		}
	}
	const n = 3 // branch 0 inline, 1 and 2 queued, every one fails once
	cfg, err := HarnessFor(sc, n)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Seed, cfg.Runs, cfg.DumpCalls, cfg.RecordBodies = 1, 1, true, true
	out, err := r.Run(context.Background(), core, cfg, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Runs) != 1 || out.Runs[0].Status != "completed" {
		t.Fatalf("real runs %+v, want one completed", out.Runs)
	}
	real := realRetryStory(t, out, n)
	csc := SimScenario(sc, HarnessWorld)
	csc.Workflow.Fanouts = []int{n}
	res, err := model.Run(&csc, sim.NewPCG(1), model.Options{Record: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	simulated := simRetryStory(res.History, n)
	if real.String() != simulated.String() {
		t.Fatalf("step retries differ:\n  real:    %v\n  simlab:  %v", real, simulated)
	}
	// What both must show, so that the comparison tests something: the
	// inline step's retry is one message, delayed 1 s; each queued step's
	// one message is delivered twice.
	want := retryStory{publishes: []int{1, 1, 1}, messages: []int{1, 1, 1}, deliveries: []int{1, 2, 2}, delays: [][]int{{1}, {0}, {0}}}
	if real.String() != want.String() {
		t.Fatalf("real core %s: %v, want %v", out.Core, real, want)
	}
}

// realRetryStory reads the story from the real run's calls and deliveries:
// the branch of a step id is its body's index (the recorded bodies).
func realRetryStory(t *testing.T, out *RealRun, n int) retryStory {
	t.Helper()
	branch := map[string]int{}
	failed := 0
	for _, b := range out.Bodies {
		branch[b.Step] = b.Index
		if b.Failed {
			failed++
		}
	}
	if failed != n {
		t.Fatalf("%d bodies failed, want %d (one per step)", failed, n)
	}
	s := newRetryStory(n)
	for _, c := range out.Calls {
		if c.Op != "queue" || c.Step == "" {
			continue
		}
		i, ok := branch[c.Step]
		if !ok {
			t.Fatalf("a publish of step %q, which ran no body", c.Step)
		}
		s.publishes[i]++
		s.delays[i] = append(s.delays[i], c.Delay)
		if c.Delay > 0 && c.Key == "" {
			t.Errorf("the inline retry of %s was queued without an idempotency key", c.Step)
		}
	}
	msgs := make([][]string, n)
	for _, d := range out.Deliveries {
		if d.Step == "" {
			continue
		}
		i := branch[d.Step]
		s.deliveries[i]++
		if !slices.Contains(msgs[i], d.Message) {
			msgs[i] = append(msgs[i], d.Message)
		}
	}
	for i := range msgs {
		s.messages[i] = len(msgs[i])
	}
	return s
}

// simRetryStory reads the same from a simulated History (one run, one
// fan-out: a step's id is its branch).
func simRetryStory(h *model.History, n int) retryStory {
	s := newRetryStory(n)
	for _, p := range h.Publishes {
		if p.Step < 0 || p.Msg < 0 {
			continue
		}
		s.publishes[p.Step]++
		s.delays[p.Step] = append(s.delays[p.Step], int(time.Duration(h.Messages[p.Msg].Delay)/time.Second))
	}
	msgs := make([][]int32, n)
	for _, d := range h.Deliveries {
		if d.Msg < 0 || d.Kind != model.MsgStep {
			continue
		}
		s.deliveries[d.Step]++
		if !slices.Contains(msgs[d.Step], d.Msg) {
			msgs[d.Step] = append(msgs[d.Step], d.Msg)
		}
	}
	for i := range msgs {
		s.messages[i] = len(msgs[i])
	}
	return s
}

func newRetryStory(n int) retryStory {
	return retryStory{publishes: make([]int, n), messages: make([]int, n), deliveries: make([]int, n), delays: make([][]int, n)}
}
