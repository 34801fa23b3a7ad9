package spancheck

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/traces"
)

// base64IDs rewrites an OTLP JSON object's hex ids as protojson's base64,
// the way a Jaeger api/v3 answer may carry them.
func base64IDs(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if s, ok := val.(string); ok && (k == "traceId" || k == "spanId" || k == "parentSpanId") && s != "" {
				b, _ := hex.DecodeString(s)
				x[k] = base64.StdEncoding.EncodeToString(b)
				continue
			}
			base64IDs(val)
		}
	case []any:
		for _, e := range x {
			base64IDs(e)
		}
	}
}

// A local stand-in for Jaeger's query service answers the api/v3 search
// with simlab's export of golden-t5 (pre-fix fence), as two streamed chunks
// with base64 ids: FetchJaeger sends the service and window, reads every
// span back as the file has it, and the check finds the fence bug.
func TestFetchJaeger(t *testing.T) {
	_, want, file := exportFile(t, "golden-t5", 1, "pre-fix-fence")
	start := traces.DefaultEpoch.Add(-time.Minute)
	end := traces.DefaultEpoch.Add(time.Hour)
	var got struct{ path, service, min, max string }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		got.path, got.service, got.min, got.max = r.URL.Path, q.Get("query.service_name"), q.Get("query.start_time_min"), q.Get("query.start_time_max")
		if got.service != "simlab-consumer" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"httpCode":404,"message":"trace not found"}}`))
			return
		}
		for _, line := range bytes.Split(bytes.TrimSpace(file), []byte("\n")) {
			var obj map[string]any
			if err := json.Unmarshal(line, &obj); err != nil {
				t.Error(err)
				return
			}
			base64IDs(obj)
			// Two chunks: resources split across them, as a stream.
			rs := obj["resourceSpans"].([]any)
			for _, part := range [][]any{rs[:1], rs[1:]} {
				b, _ := json.Marshal(map[string]any{"result": map[string]any{"resourceSpans": part}})
				_, _ = w.Write(append(b, '\n'))
			}
		}
	}))
	defer srv.Close()

	q := JaegerQuery{URL: srv.URL, Service: "simlab-consumer", Start: start, End: end}
	spans, err := FetchJaeger(context.Background(), srv.Client(), q)
	if err != nil {
		t.Fatal(err)
	}
	if got.path != "/api/v3/traces" || got.min != start.UTC().Format(time.RFC3339Nano) || got.max != end.UTC().Format(time.RFC3339Nano) {
		t.Fatalf("search sent %+v", got)
	}
	if !reflect.DeepEqual(spans, want) {
		t.Fatalf("Jaeger's %d spans differ from the file's %d", len(spans), len(want))
	}
	rep := Check(spans)
	for _, v := range rep.Verdicts {
		if v.Property == "no-start-on-terminal" && len(v.Violations) == 0 {
			t.Fatal("the fence bug was not found in spans read from Jaeger")
		}
	}

	// No traces: Jaeger answers 404; that is an empty result, not an error.
	q.Service = "nobody"
	if spans, err := FetchJaeger(context.Background(), srv.Client(), q); err != nil || len(spans) != 0 {
		t.Fatalf("no traces: %d spans, %v", len(spans), err)
	}
	// Bad input is named before any request.
	for _, bad := range []JaegerQuery{{URL: "127.0.0.1:16686", Service: "s", Start: start, End: end}, {URL: srv.URL, Start: start, End: end}, {URL: srv.URL, Service: "s", Start: end, End: start}} {
		if _, err := FetchJaeger(context.Background(), srv.Client(), bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	// A server error names the URL.
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) }))
	defer broken.Close()
	if _, err := FetchJaeger(context.Background(), broken.Client(), JaegerQuery{URL: broken.URL, Service: "s", Start: start, End: end}); err == nil || !strings.Contains(err.Error(), broken.URL) {
		t.Fatalf("server error: %v", err)
	}
	// Nothing listening: the search URL is named once (the HTTP client's
	// error repeated it), with what to do.
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	_, err = FetchJaeger(context.Background(), down.Client(), JaegerQuery{URL: down.URL, Service: "s", Start: start, End: end})
	if err == nil || strings.Count(err.Error(), down.URL) != 1 || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Jaeger down: %v; want the URL once and the reason", err)
	}
}
