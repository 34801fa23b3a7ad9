package traces

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/sim"
)

var update = flag.Bool("update", false, "rewrite testdata/*.jsonl from the current code instead of comparing")

// TestMain clears OTEL_* variables so that a developer's shell cannot change
// what the tests see; TestEnvironmentCannotLeak sets them on purpose.
func TestMain(m *testing.M) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "OTEL_") {
			os.Unsetenv(k)
		}
	}
	os.Exit(m.Run())
}

// history simulates a built-in scenario with recording on.
func history(t testing.TB, name string, seed uint64) *model.History {
	t.Helper()
	sc, ok := model.Builtin(name)
	if !ok {
		t.Fatalf("no built-in scenario %q", name)
	}
	r, err := model.Run(&sc, sim.NewPCG(seed), model.Options{Record: true, Seed: seed})
	if err != nil {
		t.Fatalf("%s seed %d: %v", name, seed, err)
	}
	return r.History
}

func build(t testing.TB, h *model.History, opts Options) []sdktrace.ReadOnlySpan {
	t.Helper()
	spans, err := Build(h, opts)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return spans
}

func jsonl(t testing.TB, spans []sdktrace.ReadOnlySpan) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteJSONL(&b, spans); err != nil {
		t.Fatalf("WriteJSONL: %v", err)
	}
	return b.Bytes()
}

// firstDiff names where two outputs part, so a failure points at a span.
func firstDiff(got, want []byte) string {
	gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; i < min(len(gl), len(wl)); i++ {
		if !bytes.Equal(gl[i], wl[i]) {
			j := 0
			for j < min(len(gl[i]), len(wl[i])) && gl[i][j] == wl[i][j] {
				j++
			}
			lo := max(0, j-120)
			return fmt.Sprintf("line %d, byte %d:\n got  …%s…\n want …%s…", i+1, j,
				gl[i][lo:min(len(gl[i]), j+120)], wl[i][lo:min(len(wl[i]), j+120)])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(gl), len(wl))
}

func TestGoldenT2(t *testing.T) {
	compareGolden(t, "golden-t2 seed 1", "golden-t2.jsonl", jsonl(t, build(t, history(t, "golden-t2", 1), Options{})))
}

// compareGolden compares got with testdata/file, or with -update writes it there.
func compareGolden(t *testing.T, what, file string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", file)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (regenerate with go test ./traces -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from %s (if intended, regenerate with go test ./traces -update): %s", what, path, firstDiff(got, want))
	}
}

func TestSameSeedSameBytes(t *testing.T) {
	for _, name := range []string{"golden-t2", "skew-rollout", "faults"} {
		t.Run(name, func(t *testing.T) {
			a := build(t, history(t, name, 7), Options{})
			b := build(t, history(t, name, 7), Options{})
			ja, jb := jsonl(t, a), jsonl(t, b)
			if !bytes.Equal(ja, jb) {
				t.Fatalf("two runs of seed 7 differ: %s", firstDiff(jb, ja))
			}
			// The file depends on the spans, not on the order they come in.
			slices.Reverse(b)
			if jr := jsonl(t, b); !bytes.Equal(ja, jr) {
				t.Fatalf("reversed input changes the file: %s", firstDiff(jr, ja))
			}
			if c := jsonl(t, build(t, history(t, name, 8), Options{})); bytes.Equal(ja, c) {
				t.Fatal("seeds 7 and 8 give the same file")
			}
		})
	}
}

func TestEnvironmentCannotLeak(t *testing.T) {
	h := history(t, "skew-rollout", 3)
	want := jsonl(t, build(t, h, Options{}))
	for k, v := range map[string]string{
		"OTEL_RESOURCE_ATTRIBUTES":          "leak=yes,service.name=leaked",
		"OTEL_SERVICE_NAME":                 "leaked",
		"OTEL_TRACES_SAMPLER":               "always_off",
		"OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT":   "1",
		"OTEL_SPAN_EVENT_COUNT_LIMIT":       "0",
		"OTEL_SPAN_LINK_COUNT_LIMIT":        "0",
		"OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT": "2",
	} {
		t.Setenv(k, v)
	}
	got := jsonl(t, build(t, h, Options{}))
	if !bytes.Equal(got, want) {
		t.Fatalf("OTEL_* variables changed the file: %s", firstDiff(got, want))
	}
}

// index gives tests lookups over exported spans.
type index struct {
	spans  []tracetest.SpanStub
	byID   map[trace.SpanID]*tracetest.SpanStub
	byName map[string][]*tracetest.SpanStub
}

func newIndex(t *testing.T, spans []sdktrace.ReadOnlySpan) *index {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	if _, err := Export(t.Context(), exp, spans); err != nil {
		t.Fatalf("in-memory export: %v", err)
	}
	ix := &index{spans: exp.GetSpans(), byID: map[trace.SpanID]*tracetest.SpanStub{}, byName: map[string][]*tracetest.SpanStub{}}
	if len(ix.spans) != len(spans) {
		t.Fatalf("in-memory exporter holds %d spans, exported %d", len(ix.spans), len(spans))
	}
	for i := range ix.spans {
		s := &ix.spans[i]
		if _, dup := ix.byID[s.SpanContext.SpanID()]; dup {
			t.Fatalf("span id %s used twice", s.SpanContext.SpanID())
		}
		ix.byID[s.SpanContext.SpanID()] = s
		name := baseName(s.Name)
		ix.byName[name] = append(ix.byName[name], s)
	}
	return ix
}

// baseName folds the names that carry a detail (the step function, the
// event type) into the name the schema lists.
func baseName(name string) string {
	switch {
	case strings.HasPrefix(name, "step.execute "):
		return "step.execute"
	case strings.HasPrefix(name, "world.events.create "):
		return "world.events.create"
	}
	return name
}

func attr(s *tracetest.SpanStub, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func str(s *tracetest.SpanStub, key string) string {
	v, _ := attr(s, key)
	return v.String()
}

func resAttr(s *tracetest.SpanStub, key string) string {
	v, _ := s.Resource.Set().Value(attribute.Key(key))
	return v.String()
}

// contract is docs/TRACE_SCHEMA.md's required attributes per span name,
// spelled out literally so that a rename in the code fails here.
var contract = map[string][]string{
	"simlab.run":              {"workflow.run.id", "workflow.name", "workflow.run.status", "deployment.id", "simlab.seed", "simlab.scenario"},
	"queue.publish":           {"messaging.system", "messaging.operation.type", "simlab.dispatch.site", "simlab.run_context.present"},
	"workflow.execute fanout": {"messaging.system", "messaging.message.id", "messaging.destination.name", "workflow.run.id", "workflow.name", "simlab.delivery.attempt", "simlab.consumer.deployment.id", "simlab.consumer.version"},
	"step.execute":            {"step.id", "step.name", "workflow.run.id", "simlab.fanout.id", "simlab.step.outcome"},
	"world.runs.get":          {"simlab.runs_get.reason", "simlab.run.status_read", "simlab.read.stale"},
	"world.events.create":     {"rpc.method", "workflow.run.id", "simlab.event.type", "simlab.event.result"},
	"world.events.list":       {},
}

var kinds = map[string]trace.SpanKind{
	"simlab.run": trace.SpanKindInternal, "queue.publish": trace.SpanKindProducer,
	"workflow.execute fanout": trace.SpanKindConsumer, "step.execute": trace.SpanKindInternal,
	"world.runs.get": trace.SpanKindClient, "world.events.create": trace.SpanKindClient,
	"world.events.list": trace.SpanKindClient,
}

var allowed = map[string][]string{
	"simlab.step.outcome":             {"completed", "failed", "retry", "skipped", "gone", "throttled", "rerouted", "crashed", "pending", "none"},
	"workflow.step.dispatch_prologue": {"run_context", "runs_get"},
	"simlab.runs_get.reason":          {"prologue", "last_completer", "orchestrator"},
	"simlab.event.result":             {"ok", "run_expired", "entity_conflict", "not_found", "too_early"},
	"messaging.system":                {"simlab-queue"},
	"simlab.dispatch.site":            {"node_dispatch_loop", "delayed_retry", "suspension_resilient_publish", "quickjs_queue_step_message", "deployment_reroute", "run_start", "fresh_copy", "invoke_replay", "inline_backstop"},
	"workflow.run.status":             {"pending", "running", "completed", "failed", "cancelled"},
	"simlab.run_context.present":      {"true", "false"},
	"simlab.read.stale":               {"true", "false"},
	"simlab.consumer.version":         {"v1", "v2"},
	"simlab.run.status_read":          {"pending", "running", "completed", "failed", "cancelled"},
	"simlab.step.inline":              {"true", "false"},
	"simlab.delivery.disposition":     {"pending", "ack", "redeliver", "throw", "crash"},
}

// checkContract asserts every span of h's traces against the schema.
func checkContract(t *testing.T, h *model.History, ix *index) {
	t.Helper()
	epoch := DefaultEpoch
	for name, keys := range contract {
		for _, s := range ix.byName[name] {
			for _, k := range keys {
				if _, ok := attr(s, k); !ok {
					t.Errorf("%s %s lacks %s", s.Name, s.SpanContext.SpanID(), k)
				}
			}
			if s.SpanKind != kinds[name] {
				t.Errorf("%s %s is %v, want %v", s.Name, s.SpanContext.SpanID(), s.SpanKind, kinds[name])
			}
		}
	}
	for _, s := range ix.spans {
		name := baseName(s.Name)
		if _, ok := contract[name]; !ok {
			t.Errorf("span name %q is not in the schema", s.Name)
		}
		for _, kv := range s.Attributes {
			if vals, ok := allowed[string(kv.Key)]; ok && !slices.Contains(vals, kv.Value.String()) {
				t.Errorf("%s: %s = %q, want one of %v", s.Name, kv.Key, kv.Value.String(), vals)
			}
		}
		if s.StartTime.Before(epoch) || s.EndTime.Before(s.StartTime) {
			t.Errorf("%s %s runs %v to %v: before the epoch or backwards", s.Name, s.SpanContext.SpanID(), s.StartTime, s.EndTime)
		}
		if p := s.Parent.SpanID(); p.IsValid() {
			parent, ok := ix.byID[p]
			if !ok || parent.SpanContext.TraceID() != s.SpanContext.TraceID() {
				t.Errorf("%s %s: parent %s not in its trace", s.Name, s.SpanContext.SpanID(), p)
			}
		} else if s.Name != "simlab.run" {
			t.Errorf("%s %s has no parent", s.Name, s.SpanContext.SpanID())
		}
		svc := resAttr(&s, "service.name")
		switch svc {
		case "simlab-world", "simlab-client":
		case "simlab-orchestrator", "simlab-consumer":
			if resAttr(&s, "service.version") == "" || resAttr(&s, "deployment.id") == "" {
				t.Errorf("%s in %s: resource lacks service.version or deployment.id: %v", s.Name, svc, s.Resource)
			}
		default:
			t.Errorf("%s: service.name %q", s.Name, svc)
		}
	}

	roots := ix.byName["simlab.run"]
	if len(roots) != len(h.Runs) {
		t.Fatalf("%d simlab.run spans, %d runs", len(roots), len(h.Runs))
	}
	traces := map[trace.TraceID]bool{}
	for r := range h.Runs {
		tid := TraceID(h, Options{}, r)
		traces[tid] = true
		found := false
		for _, root := range roots {
			if root.SpanContext.TraceID() == tid {
				found = true
				if got, want := str(root, "workflow.run.id"), model.RunName(h.Runs[r].ID); got != want {
					t.Errorf("trace %s: root is run %s, want %s", tid, got, want)
				}
				if got, want := str(root, "workflow.run.status"), h.FinalRuns[r].Status.String(); got != want {
					t.Errorf("run %d: status %s, want %s", r, got, want)
				}
			}
		}
		if !found {
			t.Errorf("run %d: no root in trace %s", r, tid)
		}
	}
	for _, s := range ix.spans {
		if !traces[s.SpanContext.TraceID()] {
			t.Errorf("%s in trace %s, which is no run's", s.Name, s.SpanContext.TraceID())
		}
	}

	// One span per History row of each kind.
	queued, steps := 0, 0
	for _, d := range h.Deliveries {
		if d.Msg >= 0 {
			queued++
		}
		if d.Kind == model.MsgStep {
			steps++
		}
	}
	for name, want := range map[string]int{
		"queue.publish": len(h.Publishes), "workflow.execute fanout": queued, "step.execute": steps,
	} {
		if got := len(ix.byName[name]); got != want {
			t.Errorf("%d %s spans, want %d", got, name, want)
		}
	}
	calls := len(ix.byName["world.runs.get"]) + len(ix.byName["world.events.create"]) + len(ix.byName["world.events.list"])
	if calls != len(h.Calls) {
		t.Errorf("%d world.* spans, %d calls", calls, len(h.Calls))
	}

	for _, s := range ix.byName["workflow.execute fanout"] {
		if len(s.Links) != 1 {
			t.Errorf("queue.process %s has %d links, want 1", s.SpanContext.SpanID(), len(s.Links))
			continue
		}
		pub, ok := ix.byID[s.Links[0].SpanContext.SpanID()]
		switch {
		case !ok || pub.Name != "queue.publish":
			t.Errorf("queue.process %s links to %v, not a queue.publish", s.SpanContext.SpanID(), s.Links[0].SpanContext.SpanID())
		case pub.SpanContext.TraceID() != s.SpanContext.TraceID():
			t.Errorf("queue.process %s links across traces", s.SpanContext.SpanID())
		case str(pub, "messaging.message.id") != str(s, "messaging.message.id"):
			t.Errorf("queue.process of message %s links to the publish of message %s",
				str(s, "messaging.message.id"), str(pub, "messaging.message.id"))
		}
	}
	for _, s := range ix.byName["step.execute"] {
		parent := ix.byID[s.Parent.SpanID()]
		if parent == nil || parent.Name != "workflow.execute fanout" {
			t.Errorf("%s: parent is %v, want a queue.process", s.Name, parent)
		}
		// The prologue sits on the invocation's workflow.execute span, as
		// in core: on every invocation handling a step message (which may
		// run inline steps of the replay it continues), never on one
		// handling a workflow message.
		if parent == nil {
			continue
		}
		_, hasPrologue := attr(parent, "workflow.step.dispatch_prologue")
		if stepMsg := str(parent, "simlab.message.kind") == "step"; stepMsg != hasPrologue {
			t.Errorf("%s: its invocation handles a step message: %v, carries dispatch_prologue: %v", s.Name, stepMsg, hasPrologue)
		}
	}
	for _, s := range ix.byName["world.runs.get"] {
		_, hasFan := attr(s, "simlab.fanout.id")
		if lazy := str(s, "simlab.runs_get.reason") == "last_completer"; lazy != hasFan {
			t.Errorf("runs.get %s: reason %s, fanout id present %v", s.SpanContext.SpanID(), str(s, "simlab.runs_get.reason"), hasFan)
		}
	}
	faults := 0
	for _, s := range ix.spans {
		for _, e := range s.Events {
			if e.Name == "simlab.fault" {
				faults++
				if len(e.Attributes) == 0 || e.Attributes[0].Key != "simlab.fault.kind" {
					t.Errorf("fault event on %s without simlab.fault.kind", s.Name)
				}
			}
		}
	}
	if faults != len(h.Faults) {
		t.Errorf("%d simlab.fault events, %d faults", faults, len(h.Faults))
	}
}

func TestContract(t *testing.T) {
	seen := map[string]bool{}
	for _, name := range []string{"golden-t2", "golden-t3", "golden-t5", "skew-rollout", "faults"} {
		t.Run(name, func(t *testing.T) {
			h := history(t, name, 1)
			ix := newIndex(t, build(t, h, Options{}))
			checkContract(t, h, ix)
			for n := range ix.byName {
				seen[n] = true
			}
		})
	}
	for name := range contract {
		if !seen[name] {
			t.Errorf("no scenario produced a %s span", name)
		}
	}
}

// TestGoldenT2Story checks the spans tell golden-t2's story: the published
// step's first delivery crashes, its redelivery takes the fetch-free
// prologue, finishes last and makes the fan-out's one lazy runs.get.
func TestGoldenT2Story(t *testing.T) {
	h := history(t, "golden-t2", 1)
	ix := newIndex(t, build(t, h, Options{}))
	// 22: the run's first delivery runs in turbo, with no runs.get and no
	// list before its replay, and its inline step is created by its claim,
	// with no step_created (25 before the model made the runtime's calls).
	if n := len(ix.spans); n != 22 {
		t.Errorf("%d spans, want 22", n)
	}
	var lazy []*tracetest.SpanStub
	for _, s := range ix.byName["world.runs.get"] {
		switch str(s, "simlab.runs_get.reason") {
		case "last_completer":
			lazy = append(lazy, s)
		case "prologue":
			t.Errorf("a prologue runs.get on the fetch-free path")
		}
	}
	if len(lazy) != 1 || str(lazy[0], "simlab.fanout.id") != "0" || str(lazy[0], "simlab.run.status_read") != "running" {
		t.Fatalf("lazy runs.get: %v, want one, fan-out 0, read running", lazy)
	}
	step := ix.byID[lazy[0].Parent.SpanID()]
	if step == nil || step.Name != "step.execute branch" || str(step, "simlab.step.label") != "fanout0.branch1" || str(step, "simlab.step.last_completer") != "true" ||
		str(ix.byID[step.Parent.SpanID()], "workflow.step.dispatch_prologue") != "run_context" || str(step, "simlab.delivery.attempt") != "2" {
		t.Fatalf("lazy read's parent: %+v", step)
	}
	var crashed []*tracetest.SpanStub
	for _, s := range ix.byName["workflow.execute fanout"] {
		for _, e := range s.Events {
			if e.Name == "simlab.fault" && e.Attributes[0].Value.AsString() == "crash" {
				crashed = append(crashed, s)
			}
		}
	}
	if len(crashed) != 1 || str(crashed[0], "simlab.delivery.attempt") != "1" || crashed[0].Status.Code.String() != "Error" {
		t.Fatalf("crash fault: on %v, want the first delivery's queue.process, status Error", crashed)
	}
}

func TestSkewRolloutPrologues(t *testing.T) {
	ix := newIndex(t, build(t, history(t, "skew-rollout", 1), Options{}))
	got := map[string]bool{}
	for _, s := range ix.byName["workflow.execute fanout"] {
		if p := str(s, "workflow.step.dispatch_prologue"); p != "" {
			got[p+"/"+resAttr(s, "service.version")] = true
		}
	}
	for _, want := range []string{"runs_get/v1", "run_context/v2"} {
		if !got[want] {
			t.Errorf("no queued step with prologue/consumer %s; got %v", want, got)
		}
	}
}

func TestTraceIDs(t *testing.T) {
	h := history(t, "skew-rollout", 1)
	seen := map[trace.TraceID]bool{}
	for r := range h.Runs {
		id := TraceID(h, Options{}, r)
		if id[0]|id[1]|id[2]|id[3]|id[4]|id[5]|id[6]|id[7] == 0 {
			t.Errorf("run %d: trace id %s has a zero high half", r, id)
		}
		if seen[id] {
			t.Errorf("run %d: trace id %s repeats", r, id)
		}
		seen[id] = true
		if again := TraceID(history(t, "skew-rollout", 1), Options{Epoch: DefaultEpoch}, r); again != id {
			t.Errorf("run %d: trace id %s then %s for the same export", r, id, again)
		}
		if other := TraceID(history(t, "skew-rollout", 2), Options{}, r); other == id {
			t.Errorf("run %d: seeds 1 and 2 share trace id %s", r, id)
		}
	}
	// Span ids are unique across all traces of a history (newIndex checks).
	newIndex(t, build(t, h, Options{}))
}

func TestEpoch(t *testing.T) {
	h := history(t, "golden-t2", 1)
	epoch := time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)
	spans := build(t, h, Options{Epoch: epoch})
	for _, s := range spans {
		if s.Name() == RunSpanName {
			// The run ends when its row says it completed, or later: the
			// writer's call (its event's publish) answers after its row.
			if !s.StartTime().Equal(epoch) || s.EndTime().Before(epoch.Add(time.Duration(h.FinalRuns[0].CompletedAt))) {
				t.Fatalf("root runs %v to %v, want %v plus the run's virtual times", s.StartTime(), s.EndTime(), epoch)
			}
		}
		for _, e := range s.Events() {
			if e.Time.Before(epoch) {
				t.Errorf("%s: event %s at %v, before the epoch", s.Name(), e.Name, e.Time)
			}
		}
	}
}

func TestParseEpoch(t *testing.T) {
	fixed := time.Date(2031, 2, 3, 4, 5, 6, 7, time.FixedZone("x", 3600))
	for _, c := range []struct {
		in   string
		want time.Time
		err  bool
	}{
		{"", DefaultEpoch, false},
		{"now", fixed.UTC(), false},
		{"2026-03-04T05:06:07Z", time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC), false},
		{"2026-03-04T05:06:07.5+02:00", time.Date(2026, 3, 4, 3, 6, 7, 5e8, time.UTC), false},
		{"yesterday", time.Time{}, true},
		{"2026-03-04", time.Time{}, true},
		// OTLP stamps nanoseconds since 1970 in 64 bits: 1970 to 2262.
		{"1970-01-01T00:00:00Z", time.Unix(0, 0).UTC(), false},
		{"0001-01-01T00:00:00Z", time.Time{}, true},
		{"1969-12-31T23:59:59Z", time.Time{}, true},
		{"2262-04-12T00:00:00Z", time.Time{}, true},
		{"9999-01-01T00:00:00Z", time.Time{}, true},
	} {
		got, err := ParseEpoch(c.in, func() time.Time { return fixed })
		if (err != nil) != c.err || !got.Equal(c.want) || (err == nil && got.Location() != time.UTC) {
			t.Errorf("ParseEpoch(%q) = %v, %v; want %v, error %v", c.in, got, err, c.want, c.err)
		}
		if err != nil && !strings.Contains(err.Error(), c.in) {
			t.Errorf("ParseEpoch(%q): error %q does not name the input", c.in, err)
		}
	}
}

// An epoch so late that a run's spans would end past 2262 cannot be
// written (OTLP's 64-bit nanoseconds): Build refuses it rather than stamp
// every timestamp 0, and a file written at the latest epoch that fits
// reads back with its real times.
func TestBuildRefusesTimesOTLPCannotHold(t *testing.T) {
	h := history(t, "golden-t2", 1)
	last := time.Unix(0, math.MaxInt64).UTC()
	if _, err := Build(h, Options{Epoch: last.Add(-time.Duration(h.End) / 2)}); err == nil || !strings.Contains(err.Error(), "2262") {
		t.Fatalf("an epoch whose run ends past 2262: %v", err)
	}
	if _, err := Build(h, Options{Epoch: time.Unix(-1, 0)}); err == nil || !strings.Contains(err.Error(), "1970") {
		t.Fatalf("an epoch before 1970: %v", err)
	}
	epoch := last.Add(-time.Duration(h.End) - time.Hour)
	spans := build(t, h, Options{Epoch: epoch})
	var buf bytes.Buffer
	if err := WriteJSONL(&buf, spans); err != nil {
		t.Fatal(err)
	}
	read, err := ReadJSONL(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range read {
		if s.Start.Before(epoch) || s.End.Before(s.Start) {
			t.Fatalf("span %s %s: %v..%v, before the epoch %v", s.Name, s.SpanID, s.Start, s.End, epoch)
		}
	}
}

// Build holds every span it makes: past MaxBuildSpans it refuses, saying
// how to keep fewer, and --max-spans (Options.MaxSpans) under the bound
// builds.
func TestBuildBoundsItsSpans(t *testing.T) {
	old := buildSpanLimit
	t.Cleanup(func() { buildSpanLimit = old })
	buildSpanLimit = 60
	h := history(t, "fanout", 1)
	if _, err := Build(h, Options{}); err == nil || !strings.Contains(err.Error(), "more than the 60 one export holds") || !strings.Contains(err.Error(), "--max-spans 60") {
		t.Fatalf("past the bound: %v", err)
	}
	if spans, err := Build(h, Options{MaxSpans: 50}); err != nil || len(spans) > 60 {
		t.Fatalf("--max-spans 50: %d spans, %v", len(spans), err)
	}
}

func TestBuildErrors(t *testing.T) {
	sc, _ := model.Builtin("golden-t2")
	r, err := model.Run(&sc, sim.NewPCG(1), model.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build(r.History, Options{}); !errors.Is(err, ErrNotRecorded) {
		t.Errorf("unrecorded history: %v, want ErrNotRecorded", err)
	}
	if _, err := Build(nil, Options{}); err == nil {
		t.Error("nil history: no error")
	}
	if _, err := Build(history(t, "golden-t2", 1), Options{MaxSpans: -1}); err == nil || !strings.Contains(err.Error(), "MaxSpans -1") {
		t.Errorf("MaxSpans -1: %v", err)
	}
	h := history(t, "golden-t2", 1)
	h.Calls[3].Caller.Delivery = 99
	if _, err := Build(h, Options{}); err == nil || !strings.Contains(err.Error(), "call 3: Caller.Delivery 99") {
		t.Errorf("out-of-range caller: %v", err)
	}
}

func TestMaxSpans(t *testing.T) {
	h := history(t, "durabench-256", 1)
	full := newIndex(t, build(t, h, Options{}))
	// Above what must be kept (every last-completer read and its parents:
	// about 660 since durabench-256 dispatches without resilient dispatch),
	// below the total.
	const limit = 1000
	spans := build(t, h, Options{MaxSpans: limit})
	if again := build(t, h, Options{MaxSpans: limit}); !bytes.Equal(jsonl(t, spans), jsonl(t, again)) {
		t.Fatal("MaxSpans sampling differs between two builds")
	}
	ix := newIndex(t, spans)
	if len(ix.spans) != limit {
		t.Errorf("%d spans kept, want %d of %d", len(ix.spans), limit, len(full.spans))
	}
	root := ix.byName["simlab.run"]
	if len(root) != 1 || str(root[0], "simlab.spans.total") != fmt.Sprint(len(full.spans)) ||
		str(root[0], "simlab.spans.dropped") != fmt.Sprint(len(full.spans)-len(ix.spans)) {
		t.Fatalf("root: %+v", root)
	}
	for _, s := range full.spans {
		must := (s.Name == "world.runs.get" && str(&s, "simlab.runs_get.reason") == "last_completer") ||
			(baseName(s.Name) == "world.events.create" && str(&s, "simlab.event.result") != "ok") ||
			slices.ContainsFunc(s.Events, func(e sdktrace.Event) bool { return e.Name == "simlab.fault" })
		kept, ok := ix.byID[s.SpanContext.SpanID()]
		if must && !ok {
			t.Errorf("%s %s (%s) dropped", s.Name, s.SpanContext.SpanID(), str(&s, "simlab.event.result"))
		}
		if ok && kept.Name != s.Name {
			t.Errorf("span id %s is %s with MaxSpans, %s without", s.SpanContext.SpanID(), kept.Name, s.Name)
		}
	}
	kinds := map[string]int{}
	for _, s := range ix.spans {
		kinds[s.Name[:min(len(s.Name), 12)]]++
		if p := s.Parent.SpanID(); p.IsValid() {
			if _, ok := ix.byID[p]; !ok {
				t.Errorf("%s kept without its parent", s.Name)
			}
		}
	}
	t.Logf("kept %d of %d: %v", len(ix.spans), len(full.spans), kinds)

	// What must be kept is kept past the budget.
	hf := history(t, "faults", 1)
	small := newIndex(t, build(t, hf, Options{MaxSpans: 2}))
	faults := 0
	for _, s := range small.spans {
		for _, e := range s.Events {
			if e.Name == "simlab.fault" {
				faults++
			}
		}
	}
	if faults != len(hf.Faults) {
		t.Errorf("MaxSpans 2 kept %d of %d faults", faults, len(hf.Faults))
	}

	// Under the bound nothing changes, not even the root's attributes.
	g := history(t, "golden-t2", 1)
	if a, b := jsonl(t, build(t, g, Options{})), jsonl(t, build(t, g, Options{MaxSpans: 25})); !bytes.Equal(a, b) {
		t.Errorf("MaxSpans at the span count changed the file: %s", firstDiff(b, a))
	}
}

// specHistory runs seed 1 of a scenario the way the CLI names it.
func specHistory(t *testing.T, spec model.Spec) *model.History {
	t.Helper()
	sc, err := spec.Load()
	if err != nil {
		t.Fatal(err)
	}
	r, err := model.Run(&sc, sim.NewPCG(1), model.Options{Record: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return r.History
}

// Trace ids follow the spans: an identical export (same seed, scenario,
// variants, knobs and epoch) has identical ids, so sending it twice is
// harmless; an export whose spans differ in any of those has other ids, so
// it never lands in the first one's traces in a backend.
func TestTraceIDsFollowEverythingThatChangesTheSpans(t *testing.T) {
	base := model.Spec{Scenario: "golden-t5"}
	epoch := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ids := func(h *model.History, opts Options) map[trace.TraceID]bool {
		out := map[trace.TraceID]bool{}
		for _, s := range build(t, h, opts) {
			out[s.SpanContext().TraceID()] = true
		}
		for r := range h.Runs {
			if !out[TraceID(h, opts, r)] {
				t.Fatalf("TraceID(run %d) is no trace Build made", r)
			}
		}
		return out
	}
	want := ids(specHistory(t, base), Options{Epoch: epoch})
	if again := ids(specHistory(t, base), Options{Epoch: epoch}); !maps.Equal(again, want) {
		t.Fatalf("the identical export has other trace ids: %v, then %v", want, again)
	}
	for name, c := range map[string]struct {
		spec  model.Spec
		epoch time.Time
	}{
		"another epoch (--epoch now a second later)": {base, epoch.Add(time.Second)},
		"another scenario":                           {model.Spec{Scenario: "golden-t2"}, epoch},
		"a variant":                                  {model.Spec{Scenario: "golden-t5", Variants: []string{"pre-fix-fence"}}, epoch},
		"a --set knob":                               {model.Spec{Scenario: "golden-t5", Sets: []string{"workflow.max_inline=1"}}, epoch},
	} {
		for id := range ids(specHistory(t, c.spec), Options{Epoch: c.epoch}) {
			if want[id] {
				t.Errorf("%s: shares trace id %s with the base export", name, id)
			}
		}
	}
}
