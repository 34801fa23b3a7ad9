package realengine

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/simlab/simlab/model"
)

// A synthetic run: writes served one at a time, each longer as the log
// grows, and lists that never overlap. The row counts each kind, finds
// the writes served one at a time and their throughput, and the profile's
// fitted write cost grows with the log.
func TestCalibrationRowOfASerialWorld(t *testing.T) {
	run := &RealRun{}
	at := 0.0
	for i := range 20 {
		own := 5 + 0.5*float64(i) // the World's time grows with the log
		run.Calls = append(run.Calls, Call{Op: "events.create", Event: "step_completed", Delivery: 1, Result: "ok", Start: 0, Served: 0, Real: at + own, End: at + own})
		at += own
	}
	// Every write arrived at 0 and waited: served one at a time, in order.
	for i := range 5 {
		s := 1000 + 10*float64(i)
		run.Calls = append(run.Calls, Call{Op: "events.list", Delivery: 1, Result: "ok", Start: s, Served: s, Real: 2, End: s + 2})
	}
	row := calibrationRow(20, []*RealRun{run})
	var writes, lists *KindCost
	for i := range row.Kinds {
		switch row.Kinds[i].Kind {
		case writesPool:
			writes = &row.Kinds[i]
		case CallKind{Op: "events.list"}:
			lists = &row.Kinds[i]
		}
	}
	if writes == nil || lists == nil {
		t.Fatalf("kinds %+v: want the writes' pool and events.list", row.Kinds)
	}
	if writes.Calls != 20 || writes.PeakInWorld != 20 || lists.Calls != 5 || lists.PeakInWorld != 1 {
		t.Errorf("writes %d calls, peak %d; lists %d, peak %d: want 20 and 20, 5 and 1", writes.Calls, writes.PeakInWorld, lists.Calls, lists.PeakInWorld)
	}
	// 20 writes in one busy period of `at` ms.
	if want := 20 / at * 1000; math.Abs(writes.Throughput-want) > 1e-6 {
		t.Errorf("writes' throughput %v/s, want %v", writes.Throughput, want)
	}
	if lists.Uncontended.P50 != 2 {
		t.Errorf("lists uncontended p50 %v, want 2", lists.Uncontended.P50)
	}
	a, b := fitLine([]float64{10, 20, 30}, []float64{0, 10, 20})
	if math.Abs(a-10) > 1e-9 || math.Abs(b-1) > 1e-9 {
		t.Errorf("fitLine: %v + %v x, want 10 + 1 x", a, b)
	}
}

// A message's delivery delay is from its first publish: a replay's
// re-dispatch under the same key gets the same message id back after the
// message was delivered, and a delivery that began before its publish
// returned waited no time, not less.
func TestCalibrationDeliveryDelayIsFromTheFirstPublish(t *testing.T) {
	run := &RealRun{
		Calls: []Call{
			{Op: "queue", Delivery: 1, Message: "m1", Start: 0, End: 2},
			{Op: "queue", Delivery: 2, Message: "m2", Start: 10, End: 14},
			{Op: "queue", Delivery: 3, Message: "m1", Start: 100, End: 101}, // re-dispatch, same id
		},
		Deliveries: []Delivery{{Index: 4, Message: "m1", Start: 5}, {Index: 5, Message: "m2", Start: 13}},
	}
	row := calibrationRow(2, []*RealRun{run})
	if !slices.Equal(row.deliver, []float64{3, 0}) {
		t.Errorf("delivery delays %v, want [3 0]", row.deliver)
	}
}

// simlab calibrate on the real World: every kind the runtime makes is
// measured with positive times, the scenario file it writes loads as a
// scenario whose store model serves one write at a time at a cost per
// contending write, that cost is explained by the writes in the World
// more than by the run's log, the World answers overlapping writes out of
// arrival order, and the queue's costs are the real queue's.
func TestCalibrateMeasuresTheRealWorld(t *testing.T) {
	r := prepared(t)
	cal, err := Calibrate(context.Background(), r, CalibrateOptions{Branches: []int{16, 64}, Repetitions: 1, Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if len(cal.Rows) != 2 {
		t.Fatalf("%d rows, want 2", len(cal.Rows))
	}
	for _, row := range cal.Rows {
		kinds := map[CallKind]KindCost{}
		for _, k := range row.Kinds {
			kinds[k.Kind] = k
			if k.Calls == 0 || k.Own.Max <= 0 {
				t.Errorf("%d branches, %s: %d calls, max %v ms", row.Branches, k.Kind, k.Calls, k.Own.Max)
			}
		}
		for _, want := range []CallKind{{Op: "events.list"}, {Op: "queue"}, {Op: "events.create", Event: "step_started"}, {Op: "events.create", Event: "step_completed"}, writesPool} {
			if _, ok := kinds[want]; !ok {
				t.Errorf("%d branches: no %s measured: %v", row.Branches, want, row.Kinds)
			}
		}
	}
	// (Whether the writes' throughput falls from 16 to 64 branches moves
	// with the machine's load: CI measured 68.8 and 71.5 per second with
	// one repetition. What a write's cost grows with is judged below, on
	// every write of the calibration.)
	file := filepath.Join(t.TempDir(), "cal.yaml")
	if err := os.WriteFile(file, []byte(cal.Profile().ScenarioYAML(cal, "test")), 0o644); err != nil {
		t.Fatal(err)
	}
	p0 := cal.Profile()
	sc, err := model.Spec{Scenario: file}.Load()
	if err != nil {
		t.Fatalf("the calibrated scenario does not load: %v", err)
	}
	if sc.Store.WritePerContender <= 0 || sc.Store.MaxConcurrentWrites != 1 || sc.Store.SharedWrites {
		t.Errorf("calibrated store: write_per_contender %v, max_concurrent_writes %d, shared_writes %v; want a positive cost and one write at a time", sc.Store.WritePerContender, sc.Store.MaxConcurrentWrites, sc.Store.SharedWrites)
	}
	// What a real write costs grows with the writes it contends with, not
	// with the run's log (R² 0.65-0.73 against 0.00-0.01 on an idle
	// machine): the fit on contention explains more than the one on the
	// log. How much more moves with the machine's load (0.13 against 0.00
	// with the whole suite running on both cores), so the test holds the
	// order, not a margin.
	if !(p0.R2 > p0.R2Log) {
		t.Errorf("time per write served: R² %.2f on the writes in the World, %.2f on the log's length; want the first ahead", p0.R2, p0.R2Log)
	}
	// The real World answers a burst's writes far out of arrival order:
	// first come first served reverses no pair, and processor sharing, the
	// file's discipline before, reversed 0.05-0.14 of them in simlab
	// (docs/VALIDATION.md); the real World 0.19 at 16 branches and 0.46 at
	// 128. So the file serves its one write at a time in random order.
	// How far out of order depends on the machine's load (0.24-0.46 seen),
	// so the test holds the World to "not first come first served" and the
	// file to the rule that turns the measured share into a discipline.
	wide := cal.Rows[1].WritesOutOfOrder
	if wide.Pairs < 100 || wide.Share() < 0.1 {
		t.Errorf("64 branches: %d of %d overlapping writes answered out of arrival order (%.2f); want at least a tenth of at least 100, where first come first served reverses none", wide.Reversed, wide.Pairs, wide.Share())
	}
	want := model.WriteOrderFIFO
	if p0.OutOfOrder >= randomOrderAt {
		want = model.WriteOrderRandom
	}
	if sc.Store.WriteOrder != want {
		t.Errorf("calibrated store: write_order %q with %.2f out of order, want %q (random from %.2f)", sc.Store.WriteOrder, p0.OutOfOrder, want, randomOrderAt)
	}
	// What a replay costs the real core: every run's turbo replay at least
	// is measured, the fit gives a replay a cost, and the file gives the
	// fit to the workflow as it was fitted. (Whether the 64-branch replay
	// costs more than the 16-branch one is not asserted: each run is a
	// fresh Node process, its first replay a cold one, and on a loaded
	// machine the order of two single samples can turn.)
	rc := cal.Replay()
	for _, row := range cal.Rows {
		if len(row.Replays) < row.Runs {
			t.Errorf("%d branches: %d replay spans in %d runs, want at least the turbo replay of each", row.Branches, len(row.Replays), row.Runs)
		}
	}
	if rc.Solo < 2 || !(rc.At(64, 0) > 0) {
		t.Errorf("replay cost %+v: want a fit on at least 2 solo replays that gives a replay a cost", rc)
	}
	base, perEntity, perEvent := rc.Durations()
	if w := sc.Workflow; w.ReplayBase != base || w.ReplayPerEntity != perEntity || w.ReplayPerEvent != perEvent {
		t.Errorf("calibrated workflow: replay %v + %v/entity + %v/event, fitted %v + %v + %v", w.ReplayBase, w.ReplayPerEntity, w.ReplayPerEvent, base, perEntity, perEvent)
	}
	if len(sc.Workflow.Fanouts) != 1 {
		t.Errorf("calibrated workflow: fan-outs %v, want fanout's one", sc.Workflow.Fanouts)
	}
	// The queue's costs are the real queue's, not world-local's profile.
	p := cal.Profile()
	for _, q := range []struct {
		name     string
		got      time.Duration
		measured float64
	}{{"publish", sc.Store.Publish.P50, p.Publish.P50}, {"deliver", sc.Store.Deliver.P50, p.Deliver.P50}} {
		if q.measured <= 0 || math.Abs(q.got.Seconds()*1000-q.measured) > 0.001 {
			t.Errorf("calibrated %s p50 %v, measured %.3f ms: want the measurement, positive", q.name, q.got, q.measured)
		}
	}
}
