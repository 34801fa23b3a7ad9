package traces

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"strings"
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
// batch it stops and says how many spans had been handed over.
func Export(ctx context.Context, exp sdktrace.SpanExporter, spans []sdktrace.ReadOnlySpan) error {
	for sent := 0; sent < len(spans); {
		n := min(batchSize, len(spans)-sent)
		if err := exp.ExportSpans(ctx, spans[sent:sent+n]); err != nil {
			return fmt.Errorf("spans %d-%d of %d (%d delivered before): %w", sent+1, sent+n, len(spans), sent, err)
		}
		sent += n
	}
	return nil
}

// EndpointURL is the URL ExportOTLP posts to for endpoint: an http or https
// URL, with /v1/traces added when it has no path, as OTLP does for a base
// endpoint (so "http://127.0.0.1:4318" reaches Jaeger's OTLP receiver).
func EndpointURL(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", fmt.Errorf("traces: OTLP endpoint %q: %w", endpoint, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("traces: OTLP endpoint %q: want an http:// or https:// URL such as http://127.0.0.1:4318", endpoint)
	}
	if u.Host == "" {
		return "", fmt.Errorf("traces: OTLP endpoint %q: no host", endpoint)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	return u.String(), nil
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
	if err := Export(ctx, exp, spans); err != nil {
		return fmt.Errorf("traces: OTLP export to %s failed: %w", target, err)
	}
	return nil
}
