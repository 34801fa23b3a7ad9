package traces

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// The reader must give back exactly what FromReadOnly makes of the spans the
// file was written from, for scenarios with faults, links, events, errors and
// several runs per trace file.
func TestReadJSONLRoundTripsFromReadOnly(t *testing.T) {
	for _, name := range []string{"golden-t2", "faults", "skew-rollout"} {
		t.Run(name, func(t *testing.T) {
			h := history(t, name, 3)
			spans := build(t, h, Options{})
			want := FromReadOnly(spans)
			var buf bytes.Buffer
			if err := WriteJSONL(&buf, spans); err != nil {
				t.Fatal(err)
			}
			got, err := ReadJSONL(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("read %d spans, want %d", len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("span %d differs:\n got %+v\nwant %+v", i, got[i], want[i])
				}
			}
			var events, links, errs int
			for _, s := range got {
				events += len(s.Events)
				links += len(s.Links)
				if s.StatusCode == "error" {
					errs++
				}
			}
			if links == 0 || (name == "faults" && (events == 0 || errs == 0)) {
				t.Fatalf("the round trip did not exercise links (%d), events (%d) or error statuses (%d)", links, events, errs)
			}
		})
	}
}

// The committed golden file reads back too: ids, kinds, parents and the
// prologue attribute the TUI filters on.
func TestReadJSONLGoldenFile(t *testing.T) {
	f, err := os.Open("testdata/golden-t2.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	spans, err := ReadJSONL(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(spans) == 0 || spans[0].ParentID != "" || spans[0].Name != RunSpanName {
		t.Fatalf("the first span is not the run's root: %+v", spans[0])
	}
	ids := map[string]bool{}
	for _, s := range spans {
		ids[s.SpanID] = true
	}
	prologue := 0
	for _, s := range spans {
		if s.ParentID != "" && !ids[s.ParentID] {
			t.Errorf("span %s %q: parent %s not in the file", s.SpanID, s.Name, s.ParentID)
		}
		if v, ok := s.Attr("workflow.step.dispatch_prologue"); ok && v == "run_context" {
			prologue++
		}
		if s.Service == "" {
			t.Errorf("span %s %q has no service", s.SpanID, s.Name)
		}
	}
	if prologue == 0 {
		t.Fatal("no step.execute span with workflow.step.dispatch_prologue=run_context")
	}
}

func TestReadJSONLErrorsNameTheLine(t *testing.T) {
	h := history(t, "golden-t2", 1)
	var good bytes.Buffer
	if err := WriteJSONL(&good, build(t, h, Options{})); err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSuffix(good.String(), "\n")
	tid := TraceID(h, Options{}, 0).String()
	cases := []struct {
		name, file, want string
	}{
		{"broken json", line + "\n\n{\"resourceSpans\":[\n", "line 3"},
		{"base64 trace id", line + "\n" + strings.Replace(line, `"traceId":"`+tid, `"traceId":"QaQMeHCqyKXUK04LrLPJgw==`, 1), "line 2"},
		{"uppercase span id", `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"` + tid + `","spanId":"ABCDEF0123456789","name":"x"}]}]}]}`, "line 1"},
		{"bad time", `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"` + tid + `","spanId":"0123456789abcdef","startTimeUnixNano":"soon"}]}]}]}`, "line 1"},
		{"two objects", line + " {}", "line 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadJSONL(strings.NewReader(c.file))
			if err == nil || !strings.Contains(err.Error(), c.want+":") {
				t.Fatalf("error = %v, want one naming %s", err, c.want)
			}
		})
	}
}

// Values of every attribute type read back as FromReadOnly renders them.
func TestReadJSONLAttributeTypes(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "svc"))))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	_, sp := tp.Tracer("t").Start(t.Context(), "all-types", trace.WithTimestamp(start), trace.WithAttributes(
		attribute.Bool("b", true), attribute.Int64("i", -7), attribute.Float64("f", 0.25),
		attribute.String("s", "x\"y"), attribute.StringSlice("ss", []string{"a", "b"}),
		attribute.Int64Slice("is", []int64{1, 2}), attribute.BoolSlice("bs", []bool{false}),
		attribute.Float64Slice("fs", []float64{1.5})))
	sp.End(trace.WithTimestamp(start.Add(time.Second)))
	want := FromReadOnly(rec.Ended())
	var buf bytes.Buffer
	if err := WriteJSONL(&buf, rec.Ended()); err != nil {
		t.Fatal(err)
	}
	got, err := ReadJSONL(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	if v, _ := got[0].Attr("ss"); v != `["a","b"]` {
		t.Fatalf("string slice rendered %q", v)
	}
}

// endless is an io.Reader that never ends: first its prefix, then fill
// bytes forever, as /dev/zero (or a stuck pipe's writer) would.
type endless struct {
	prefix string
	fill   byte
	n      int64
}

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		if e.n < int64(len(e.prefix)) {
			p[i] = e.prefix[e.n]
		} else {
			p[i] = e.fill
		}
		e.n++
	}
	return len(p), nil
}

// A trace file is read with bounds: a line that is no JSON object fails at
// its first byte, an endless line and an endless file at their limits,
// never after the machine's memory.
func TestReadJSONLIsBounded(t *testing.T) {
	zero := &endless{fill: 0}
	if _, err := ReadJSONL(zero); err == nil || !strings.Contains(err.Error(), "line 1: not JSON") || zero.n > 1<<20 {
		t.Fatalf("NUL bytes: %v after %d bytes read", err, zero.n)
	}
	oldLine, oldFile := lineLimit, fileLimit
	t.Cleanup(func() { lineLimit, fileLimit = oldLine, oldFile })
	lineLimit, fileLimit = 1<<20, 4<<20
	line := &endless{prefix: `{"resourceSpans":[`, fill: ' '}
	if _, err := ReadJSONL(line); err == nil || !strings.Contains(err.Error(), "line 1: longer than 256 MiB") || line.n > 2<<20 {
		t.Fatalf("an endless line: %v after %d bytes", err, line.n)
	}
	var file strings.Builder
	for file.Len() <= 5<<20 {
		file.WriteString("{}\n" + strings.Repeat(" ", 1000) + "\n")
	}
	if _, err := ReadJSONL(strings.NewReader(file.String())); err == nil || !strings.Contains(err.Error(), "past 1 GiB") {
		t.Fatalf("a file past the limit: %v", err)
	}
}
