package traces

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// TestJSONLMatchesOTLP checks the hand-written JSON against the canonical
// mapping: each line, with its hex ids turned back into the base64 protojson
// expects, must decode into exactly the spans the SDK's own OTLP exporter
// sends for the same input (attribute order aside).
func TestJSONLMatchesOTLP(t *testing.T) {
	spans := build(t, history(t, "faults", 1), Options{})

	var mu sync.Mutex
	var sent []*tracepb.ResourceSpans
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) bool {
		body, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return false
		}
		mu.Lock()
		sent = append(sent, req.ResourceSpans...)
		mu.Unlock()
		return false // an empty 200
	})
	if err := ExportOTLP(t.Context(), rc.URL, spans); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	want := flatten(sent)
	mu.Unlock()

	var got []*tracepb.ResourceSpans
	sc := bufio.NewScanner(bytes.NewReader(jsonl(t, spans)))
	sc.Buffer(nil, 64<<20)
	lines := 0
	for sc.Scan() {
		lines++
		var req coltracepb.ExportTraceServiceRequest
		if err := protojson.Unmarshal(hexToBase64(t, sc.Bytes()), &req); err != nil {
			t.Fatalf("line %d: protojson cannot read it: %v", lines, err)
		}
		got = append(got, req.ResourceSpans...)
	}
	if lines != len(history(t, "faults", 1).Runs) {
		t.Errorf("%d lines, want one per run", lines)
	}
	have := flatten(got)
	if len(have) != len(want) || len(have) != len(spans) {
		t.Fatalf("file has %d spans, exporter sent %d, built %d", len(have), len(want), len(spans))
	}
	for id, w := range want {
		g, ok := have[id]
		if !ok {
			t.Errorf("span %s missing from the file", id)
			continue
		}
		if !proto.Equal(g, w) {
			t.Errorf("span %s:\nfile     %v\nexporter %v", id, g, w)
		}
	}
}

// flatten keys every span, with its resource and scope folded in, by span
// id, sorting attributes so that only content is compared.
func flatten(rss []*tracepb.ResourceSpans) map[string]*tracepb.ResourceSpans {
	out := map[string]*tracepb.ResourceSpans{}
	sortKV := func(kvs []*commonpb.KeyValue) {
		slices.SortFunc(kvs, func(a, b *commonpb.KeyValue) int { return strings.Compare(a.Key, b.Key) })
	}
	for _, rs := range rss {
		sortKV(rs.Resource.Attributes)
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				s = proto.Clone(s).(*tracepb.Span)
				sortKV(s.Attributes)
				for _, e := range s.Events {
					sortKV(e.Attributes)
				}
				for _, l := range s.Links {
					sortKV(l.Attributes)
				}
				if s.Status == nil {
					s.Status = &tracepb.Status{} // the exporter always sends one
				}
				one := &tracepb.ResourceSpans{
					Resource: rs.Resource, SchemaUrl: rs.SchemaUrl,
					ScopeSpans: []*tracepb.ScopeSpans{{Scope: ss.Scope, SchemaUrl: ss.SchemaUrl, Spans: []*tracepb.Span{s}}},
				}
				out[hex.EncodeToString(s.SpanId)] = one
			}
		}
	}
	return out
}

// hexToBase64 rewrites OTLP/JSON's hex ids into protojson's base64.
func hexToBase64(t *testing.T, line []byte) []byte {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			for k, v := range x {
				switch k {
				case "traceId", "spanId", "parentSpanId":
					s := v.(string)
					if s != strings.ToLower(s) {
						t.Errorf("%s %q is not lowercase", k, s)
					}
					raw, err := hex.DecodeString(s)
					if err != nil {
						t.Fatalf("%s %q: %v", k, s, err)
					}
					x[k] = base64.StdEncoding.EncodeToString(raw)
				default:
					walk(v)
				}
			}
		case []any:
			for _, v := range x {
				walk(v)
			}
		}
	}
	walk(v)
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
