package traces

import (
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/sim"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// receiver is an httptest OTLP/HTTP endpoint that decodes what it is sent.
type receiver struct {
	*httptest.Server
	requests atomic.Int32
	spans    atomic.Int32
	// The handler runs on the server's goroutines; the race detector cannot
	// see that a response orders it before the test's reads.
	mu       sync.Mutex
	services []string // service.name of every resource received
	paths    []string
}

func newReceiver(t *testing.T, handle func(w http.ResponseWriter, r *http.Request) bool) *receiver {
	t.Helper()
	rc := &receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.requests.Add(1)
		if handle != nil && !handle(w, r) {
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req coltracepb.ExportTraceServiceRequest
		if ct := r.Header.Get("Content-Type"); ct != "application/x-protobuf" {
			http.Error(w, "content type "+ct, http.StatusUnsupportedMediaType)
			return
		}
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.paths = append(rc.paths, r.URL.Path)
		for _, rs := range req.ResourceSpans {
			for _, kv := range rs.Resource.Attributes {
				if kv.Key == "service.name" {
					rc.services = append(rc.services, kv.Value.GetStringValue())
				}
			}
			for _, ss := range rs.ScopeSpans {
				rc.spans.Add(int32(len(ss.Spans)))
			}
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Write(out)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func TestExportOTLPAccepted(t *testing.T) {
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "service.name=leaked")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	t.Setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-leak=yes")
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
	// A readable CA file: the exporter would load it and then refuse the
	// http:// endpoint for having TLS settings.
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	ca := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw})
	tlsSrv.Close()
	if err := os.WriteFile(ca, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", ca)
	spans := build(t, history(t, "skew-rollout", 1), Options{})
	rc := newReceiver(t, nil)
	// A bare base URL gets OTLP's signal path, as Jaeger's receiver wants.
	if err := ExportOTLP(t.Context(), rc.URL, spans, WithTimeout(10*time.Second)); err != nil {
		t.Fatalf("export: %v", err)
	}
	if got := rc.spans.Load(); int(got) != len(spans) {
		t.Errorf("receiver got %d spans, sent %d", got, len(spans))
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, p := range rc.paths {
		if p != "/v1/traces" {
			t.Errorf("posted to %s, want /v1/traces", p)
		}
	}
	for _, s := range rc.services {
		if !strings.HasPrefix(s, "simlab-") {
			t.Errorf("resource service.name %q", s)
		}
	}
}

func TestExportOTLPBatches(t *testing.T) {
	spans := build(t, history(t, "durabench-256", 1), Options{})
	spans = append(spans, append(spans, spans...)...) // duplicates are fine for counting
	rc := newReceiver(t, nil)
	if err := ExportOTLP(t.Context(), rc.URL+"/v1/traces", spans); err != nil {
		t.Fatalf("export: %v", err)
	}
	if got, want := int(rc.requests.Load()), (len(spans)+batchSize-1)/batchSize; got != want {
		t.Errorf("%d requests, want %d", got, want)
	}
	if got := rc.spans.Load(); int(got) != len(spans) {
		t.Errorf("receiver got %d spans, sent %d", got, len(spans))
	}
}

// failing asserts that ExportOTLP against rc fails with an error that names
// the endpoint, after exactly one request: retries are off.
func failing(t *testing.T, rc *receiver, want string, opts ...ExportOption) {
	t.Helper()
	spans := build(t, history(t, "golden-t2", 1), Options{})
	err := ExportOTLP(t.Context(), rc.URL, spans, opts...)
	if err == nil {
		t.Fatal("export succeeded")
	}
	endpoint := rc.URL + "/v1/traces"
	if !strings.Contains(err.Error(), "OTLP export to "+endpoint+" failed") || !strings.Contains(err.Error(), want) {
		t.Errorf("error %q: want it to name %s and say %q", err, endpoint, want)
	}
	if n := rc.requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1 (no retry)", n)
	}
	// Nothing retries, so nothing may say it might have.
	if strings.Contains(err.Error(), "retry") {
		t.Errorf("error %q speaks of retrying", err)
	}
	// The count is the spans', formatted as a number (a misnumbered verb
	// once printed %!d(string=...) here).
	if got := fmt.Sprintf("none of its %d spans arrived", len(spans)); !strings.Contains(err.Error(), got) || strings.Contains(err.Error(), "%!") {
		t.Errorf("error %q: want it to say %q", err, got)
	}
}

// A collector that takes the first batch and refuses the second: the error
// says how many spans it already holds.
func TestExportOTLPPartialSaysHowFar(t *testing.T) {
	var n atomic.Int32
	rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) bool {
		if n.Add(1) == 1 {
			return true
		}
		http.Error(w, "full", http.StatusInsufficientStorage)
		return false
	})
	// Two durabench-256 runs: more than one batch.
	sc, _ := model.Builtin("durabench-256")
	sc.Runs = 2
	r, err := model.Run(&sc, sim.NewPCG(1), model.Options{Record: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	spans := build(t, r.History, Options{})
	if len(spans) <= batchSize {
		t.Fatalf("%d spans: want more than one batch of %d", len(spans), batchSize)
	}
	err = ExportOTLP(t.Context(), rc.URL, spans)
	want := fmt.Sprintf("%d of its %d spans arrived before", batchSize, len(spans))
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "%!") {
		t.Fatalf("error %v: want it to say %q", err, want)
	}
}

func TestExportOTLPServerError(t *testing.T) {
	for _, code := range []int{http.StatusServiceUnavailable, http.StatusInternalServerError} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) bool {
				http.Error(w, "collector says no", code)
				return false
			})
			failing(t, rc, "collector says no")
		})
	}
}

func TestExportOTLPConnectionClosed(t *testing.T) {
	rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) bool {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return false
	})
	failing(t, rc, "")
}

// TestExportOTLPTimeout shows the timeout bounds a collector that never
// answers: the handler would hold the request until the client gives up, so
// returning at all proves the bound.
func TestExportOTLPTimeout(t *testing.T) {
	release := make(chan struct{})
	rc := newReceiver(t, func(_ http.ResponseWriter, r *http.Request) bool {
		// The server notices a client hanging up only once the body is read.
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-release:
		}
		return false
	})
	t.Cleanup(func() { close(release) }) // runs before rc.Close, which waits for handlers
	failing(t, rc, "no answer within 50ms; none of its", WithTimeout(50*time.Millisecond))
}

func TestExportOTLPDown(t *testing.T) {
	rc := newReceiver(t, nil)
	rc.Close() // nothing listens on the port now
	spans := build(t, history(t, "golden-t2", 1), Options{})
	err := ExportOTLP(t.Context(), rc.URL, spans, WithTimeout(time.Second))
	if err == nil || !strings.Contains(err.Error(), rc.URL+"/v1/traces") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("export to a closed port: %v", err)
	}
}

func TestEndpointURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:4318":           "http://127.0.0.1:4318/v1/traces",
		"http://127.0.0.1:4318/":          "http://127.0.0.1:4318/v1/traces",
		"https://otel.example:443/custom": "https://otel.example:443/custom",
		"127.0.0.1:4318":                  "",
		"http:///v1/traces":               "",
		"ftp://host/x":                    "",
	} {
		got, err := EndpointURL(in)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("EndpointURL(%q) = %q, %v; want %q", in, got, err, want)
		}
		if err != nil && !strings.Contains(err.Error(), in) {
			t.Errorf("EndpointURL(%q): error %q does not name it", in, err)
		}
	}
	// A bare host:port gets told the URL to type, not Go's URL parser's
	// "first path segment in URL cannot contain colon".
	if _, err := EndpointURL("127.0.0.1:4318"); err == nil || !strings.Contains(err.Error(), "--otlp http://127.0.0.1:4318") || strings.Contains(err.Error(), "segment") {
		t.Errorf("EndpointURL(127.0.0.1:4318): %v, want it to suggest --otlp http://127.0.0.1:4318", err)
	}
}
