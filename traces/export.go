package traces

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// DefaultExportTimeout bounds each OTLP/HTTP request, so that an unreachable
// or stuck collector fails the export in seconds rather than hanging the CLI.
const DefaultExportTimeout = 5 * time.Second

// batchSize caps the spans of one export request. A large sweep would
// otherwise make one request of tens of megabytes, over a collector's body
// limit, and a failure would say nothing about how far the export got.
const batchSize = 2048

// ExportOption adjusts ExportOTLP.
type ExportOption func(*exportConfig)

type exportConfig struct {
	timeout time.Duration
}

// WithTimeout bounds each OTLP/HTTP request (DefaultExportTimeout if unset or
// not positive). The whole export takes at most this per batch of spans.
func WithTimeout(d time.Duration) ExportOption {
	return func(c *exportConfig) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// Export hands spans to any SDK exporter in batches, in order: the in-memory
// tracetest.InMemoryExporter in tests, or an OTLP exporter. On a failed
// batch it stops and returns how many spans had been handed over.
func Export(ctx context.Context, exp sdktrace.SpanExporter, spans []sdktrace.ReadOnlySpan) (delivered int, err error) {
	for sent := 0; sent < len(spans); {
		n := min(batchSize, len(spans)-sent)
		if err := exp.ExportSpans(ctx, spans[sent:sent+n]); err != nil {
			return sent, err
		}
		sent += n
	}
	return len(spans), nil
}

// EndpointURL is the URL ExportOTLP posts to for endpoint: an http or https
// URL, with /v1/traces added when it has no path, as OTLP does for a base
// endpoint (so "http://127.0.0.1:4318" reaches Jaeger's OTLP receiver).
// Errors say what to type instead, e.g. for a bare host:port.
func EndpointURL(endpoint string) (string, error) {
	if !strings.Contains(endpoint, "://") {
		return "", fmt.Errorf("--otlp %q: want a URL with its scheme, for example --otlp http://%s", endpoint,
			strings.TrimPrefix(cmp.Or(strings.TrimSpace(endpoint), "127.0.0.1:4318"), "//"))
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("--otlp %q: want an http:// or https:// URL with a host, for example --otlp http://127.0.0.1:4318", endpoint)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	return u.String(), nil
}

// ExportError is a failed OTLP export, in terms a user can act on: where
// it went, how far it got, and why, without the HTTP client's wording.
type ExportError struct {
	Endpoint         string
	Delivered, Total int
	// Timeout: the endpoint accepted the connection (or never completed
	// it) but did not answer within After.
	Timeout bool
	After   time.Duration
	// Refused: nothing listens at the endpoint.
	Refused bool
	Err     error
}

func (e *ExportError) Error() string {
	var why string
	switch {
	case e.Timeout:
		why = fmt.Sprintf("no answer within %v", e.After)
	case e.Refused:
		why = "nothing is listening there (connection refused)"
	default:
		why = e.Err.Error()
		// The exporter labels every failure it could retry so; simlab
		// never retries, and the label only confuses.
		for _, noise := range []string{"traces export: ", "retry-able request failure: "} {
			why = strings.ReplaceAll(why, noise, "")
		}
	}
	got := fmt.Sprintf("none of its %d spans arrived", e.Total)
	if e.Delivered > 0 {
		got = fmt.Sprintf("%d of its %d spans arrived before", e.Delivered, e.Total)
	}
	return fmt.Sprintf("OTLP export to %s failed: %s; %s", e.Endpoint, why, got)
}

func (e *ExportError) Unwrap() error { return e.Err }

// exportError classifies err, the failure of Export after delivered of
// total spans.
func exportError(target string, timeout time.Duration, delivered, total int, err error) *ExportError {
	e := &ExportError{Endpoint: target, Delivered: delivered, Total: total, After: timeout, Err: err}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		e.Timeout = true
	case errors.Is(err, syscall.ECONNREFUSED):
		e.Refused = true
	}
	return e
}

// ExportOTLP sends spans over OTLP/HTTP (protobuf) to endpoint, see
// EndpointURL. Every setting is explicit, so OTEL_EXPORTER_OTLP_* variables
// cannot redirect or reshape the export, and retries are off: a collector
// that is down or answers 5xx fails the call after one attempt per batch,
// each bounded by the timeout, with an error naming the endpoint. Write the
// trace file first; this is the step that can fail.
func ExportOTLP(ctx context.Context, endpoint string, spans []sdktrace.ReadOnlySpan, opts ...ExportOption) (err error) {
	cfg := exportConfig{timeout: DefaultExportTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	target, err := EndpointURL(endpoint)
	if err != nil {
		return err
	}
	// Over http:// the exporter refuses any TLS settings, and
	// OTEL_EXPORTER_OTLP_CERTIFICATE would supply some: nil clears them.
	var tlsCfg *tls.Config
	if strings.HasPrefix(target, "https:") {
		tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	exp, err := otlptracehttp.New(ctx,
		otlptracehttp.WithEndpointURL(target), // http:// makes it insecure
		otlptracehttp.WithTimeout(cfg.timeout),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}),
		otlptracehttp.WithCompression(otlptracehttp.NoCompression),
		otlptracehttp.WithEncoding(otlptracehttp.EncodingProtobuf),
		otlptracehttp.WithHeaders(map[string]string{}),
		otlptracehttp.WithTLSClientConfig(tlsCfg),
	)
	if err != nil {
		return fmt.Errorf("traces: OTLP exporter for %s: %w", target, err)
	}
	defer func() {
		// Shutdown has nothing queued (ExportSpans is synchronous); it is
		// bounded anyway so a stuck connection cannot outlive the call.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.timeout)
		defer cancel()
		if serr := exp.Shutdown(sctx); serr != nil {
			err = errors.Join(err, fmt.Errorf("traces: OTLP exporter for %s: shutdown: %w", target, serr))
		}
	}()
	if n, err := Export(ctx, exp, spans); err != nil {
		return exportError(target, cfg.timeout, n, len(spans), err)
	}
	return nil
}
