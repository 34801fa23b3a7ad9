package spancheck

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/simlab/simlab/traces"
)

// JaegerQuery is a search of Jaeger's HTTP API (api/v3, OTLP JSON).
type JaegerQuery struct {
	URL        string // Jaeger's query service, e.g. http://127.0.0.1:16686
	Service    string
	Start, End time.Time
	MaxTraces  int // 0: 100
}

// SearchURL is the api/v3 search the query makes.
func (q JaegerQuery) SearchURL() (string, error) {
	u, err := url.Parse(q.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("jaeger URL %q: want http://host:port", q.URL)
	}
	if q.Service == "" {
		return "", errors.New("jaeger: --service is required (Jaeger searches one service's traces)")
	}
	if !q.End.After(q.Start) {
		return "", fmt.Errorf("jaeger: time window %s..%s is empty", q.Start.Format(time.RFC3339), q.End.Format(time.RFC3339))
	}
	n := q.MaxTraces
	if n <= 0 {
		n = 100
	}
	v := url.Values{}
	v.Set("query.service_name", q.Service)
	v.Set("query.start_time_min", q.Start.UTC().Format(time.RFC3339Nano))
	v.Set("query.start_time_max", q.End.UTC().Format(time.RFC3339Nano))
	v.Set("query.num_traces", strconv.Itoa(n))
	u.Path = strings.TrimSuffix(u.Path, "/") + "/api/v3/traces"
	u.RawQuery = v.Encode()
	return u.String(), nil
}

// FetchJaeger reads the traces of a search from Jaeger's api/v3. The answer
// is one or more {"result": {"resourceSpans": [...]}} objects (a stream of
// chunks); ids may come as hex or as protojson's base64, and are read as
// hex either way. A 404 is Jaeger's "no traces found": an empty result.
func FetchJaeger(ctx context.Context, client *http.Client, q JaegerQuery) ([]traces.Span, error) {
	u, err := q.SearchURL()
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		// The client's *url.Error names the URL again; keep its cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("jaeger: GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("jaeger: GET %s: %s: %s", u, resp.Status, strings.TrimSpace(string(body)))
	}
	// The answer is bounded as a trace file is: every span is held.
	dec := json.NewDecoder(io.LimitReader(resp.Body, traces.MaxFileBytes))
	dec.UseNumber()
	var lines bytes.Buffer
	for {
		var chunk struct {
			Result map[string]any `json:"result"`
			Error  map[string]any `json:"error"`
		}
		if err := dec.Decode(&chunk); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("jaeger: answer of %s is not api/v3 JSON: %w", u, err)
		}
		if chunk.Error != nil {
			return nil, fmt.Errorf("jaeger: %v", chunk.Error)
		}
		if chunk.Result == nil {
			continue
		}
		hexIDs(chunk.Result)
		b, err := json.Marshal(chunk.Result)
		if err != nil {
			return nil, err
		}
		lines.Write(b)
		lines.WriteByte('\n')
	}
	spans, err := traces.ReadJSONL(&lines)
	if err != nil {
		return nil, fmt.Errorf("jaeger: %w", err)
	}
	return spans, nil
}

// hexIDs rewrites base64 trace and span ids (protojson's) as hex (OTLP/JSON's).
func hexIDs(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if s, ok := val.(string); ok && (k == "traceId" || k == "spanId" || k == "parentSpanId") {
				x[k] = toHex(s)
				continue
			}
			hexIDs(val)
		}
	case []any:
		for _, e := range x {
			hexIDs(e)
		}
	}
}

func toHex(s string) string {
	if _, err := hex.DecodeString(s); err == nil && (len(s) == 32 || len(s) == 16 || s == "") {
		return strings.ToLower(s)
	}
	if b, err := base64.StdEncoding.DecodeString(s); err == nil && (len(b) == 16 || len(b) == 8) {
		return hex.EncodeToString(b)
	}
	return s
}
