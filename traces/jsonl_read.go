package traces

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/simlab/simlab/internal/bounded"
)

// ReadJSONL reads OTLP JSON Lines, the format WriteJSONL writes: one
// ExportTraceServiceRequest object, {"resourceSpans":[...]}, per line. Trace
// and span ids must be lowercase hex (the OTLP/JSON mapping; protojson's
// base64 is refused), 64-bit integers may be strings or numbers, and enums
// are integers. Blank lines are skipped. The spans come back in SortSpans
// order; an error names the line it is about. A line past MaxLineBytes, a
// file past MaxFileBytes and a line that does not begin with { are refused.
func ReadJSONL(r io.Reader) ([]Span, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var out []Span
	var total int64
	for line := 1; ; line++ {
		raw, err := readLine(br, &total)
		if errors.Is(err, errLineTooLong) || errors.Is(err, errFileTooLarge) || errors.Is(err, errNotAnObject) {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if len(bytes.TrimSpace(raw)) > 0 {
			spans, perr := parseLine(raw)
			if perr != nil {
				return nil, fmt.Errorf("line %d: %w", line, perr)
			}
			out = append(out, spans...)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading line %d: %w", line, err)
		}
	}
	SortSpans(out)
	return out, nil
}

// The bounds of a trace file ReadJSONL reads: one line (one trace of a wide
// fan-out is a single line of several megabytes) and the whole file. Every
// span read is held in memory, so a file past them is refused rather than
// read to the end of the machine's memory.
const (
	MaxLineBytes = 256 << 20
	MaxFileBytes = 1 << 30
)

// lineLimit and fileLimit are the bounds readLine applies: the constants,
// lowered by tests that would otherwise need a gigabyte of input.
var lineLimit, fileLimit int64 = MaxLineBytes, MaxFileBytes

var (
	errLineTooLong  = fmt.Errorf("longer than %s, the most one line of a trace file may hold", bounded.Size(MaxLineBytes))
	errFileTooLarge = fmt.Errorf("the file is past %s, the most a trace file may hold", bounded.Size(MaxFileBytes))
	errNotAnObject  = errors.New("not JSON: a line must begin with { (want one {\"resourceSpans\":[...]} object per line, as simlab run --trace-out writes)")
)

// readLine reads one line, at most MaxLineBytes, adding its length to
// *total. A line whose first byte that is not blank is not { is refused at
// that byte, so a file that is no JSON at all (/dev/zero) fails at once
// rather than after a line of a gigabyte.
func readLine(br *bufio.Reader, total *int64) ([]byte, error) {
	var buf []byte
	begun := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !begun {
			if rest := bytes.TrimLeft(chunk, " \t\r\n"); len(rest) > 0 {
				begun = true
				if rest[0] != '{' {
					return nil, errNotAnObject
				}
			}
		}
		buf = append(buf, chunk...)
		if *total += int64(len(chunk)); *total > fileLimit {
			return nil, errFileTooLarge
		}
		if int64(len(buf)) > lineLimit {
			return nil, errLineTooLong
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return buf, err
	}
}

// The OTLP/JSON shapes ReadJSONL decodes. Unknown fields are ignored, as
// OTLP receivers do, so a file from a newer writer still reads.
type (
	jsonRequest struct {
		ResourceSpans []struct {
			Resource struct {
				Attributes []jsonKV `json:"attributes"`
			} `json:"resource"`
			ScopeSpans []struct {
				Spans []jsonSpan `json:"spans"`
			} `json:"scopeSpans"`
		} `json:"resourceSpans"`
	}
	jsonSpan struct {
		TraceID      string     `json:"traceId"`
		SpanID       string     `json:"spanId"`
		ParentSpanID string     `json:"parentSpanId"`
		Name         string     `json:"name"`
		Kind         int        `json:"kind"`
		Start        jsonUint64 `json:"startTimeUnixNano"`
		End          jsonUint64 `json:"endTimeUnixNano"`
		Attributes   []jsonKV   `json:"attributes"`
		Events       []struct {
			Time       jsonUint64 `json:"timeUnixNano"`
			Name       string     `json:"name"`
			Attributes []jsonKV   `json:"attributes"`
		} `json:"events"`
		Links []struct {
			TraceID    string   `json:"traceId"`
			SpanID     string   `json:"spanId"`
			Attributes []jsonKV `json:"attributes"`
		} `json:"links"`
		Status struct {
			Message string `json:"message"`
			Code    int    `json:"code"`
		} `json:"status"`
	}
	jsonKV struct {
		Key   string    `json:"key"`
		Value jsonValue `json:"value"`
	}
	jsonValue struct {
		StringValue *string    `json:"stringValue"`
		BoolValue   *bool      `json:"boolValue"`
		IntValue    *jsonInt64 `json:"intValue"`
		DoubleValue *jsonFloat `json:"doubleValue"`
		BytesValue  *string    `json:"bytesValue"`
		ArrayValue  *struct {
			Values []jsonValue `json:"values"`
		} `json:"arrayValue"`
		KvlistValue *struct {
			Values []jsonKV `json:"values"`
		} `json:"kvlistValue"`
	}
)

// JSONProblem says why data is not the JSON it should be in a reader's
// terms (where the JSON breaks, which field has the wrong type) rather than
// the decoder's ("invalid character 'g' looking for beginning of value"),
// or returns nil when err is no JSON decoding error. The CLI says the same
// of its other JSON files (schedules, --json reports).
func JSONProblem(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("not JSON (broken at byte %d)", se.Offset)
	case errors.As(err, &te) && te.Field != "":
		return fmt.Errorf("field %s is a JSON %s, not the expected type", te.Field, te.Value)
	case errors.As(err, &te):
		return fmt.Errorf("a JSON %s, not an object", te.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("the JSON ends early (a cut-off file?)")
	}
	return nil
}

// notOTLP is JSONProblem for a line of a trace file, saying what a line
// should hold.
func notOTLP(err error) error {
	if p := JSONProblem(err); p != nil {
		return fmt.Errorf("%w: want one {\"resourceSpans\":[...]} object per line, as simlab run --trace-out writes", p)
	}
	return fmt.Errorf("not an OTLP JSON object: %w", err)
}

func parseLine(raw []byte) ([]Span, error) {
	var req jsonRequest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil {
		return nil, notOTLP(err)
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value on the line: want one {\"resourceSpans\":[...]} object per line")
	}
	var out []Span
	for ri, rs := range req.ResourceSpans {
		res, err := kvsToAttrs(rs.Resource.Attributes)
		if err != nil {
			return nil, fmt.Errorf("resourceSpans[%d].resource: %w", ri, err)
		}
		service, _ := lookup(res, KeyServiceName)
		for si, ss := range rs.ScopeSpans {
			for pi := range ss.Spans {
				sp, err := toSpan(&ss.Spans[pi], res, service)
				if err != nil {
					return nil, fmt.Errorf("resourceSpans[%d].scopeSpans[%d].spans[%d]: %w", ri, si, pi, err)
				}
				out = append(out, sp)
			}
		}
	}
	return out, nil
}

func toSpan(js *jsonSpan, res []Attr, service string) (Span, error) {
	tid, err := hexID("traceId", js.TraceID, 16, false)
	if err != nil {
		return Span{}, err
	}
	sid, err := hexID("spanId", js.SpanID, 8, false)
	if err != nil {
		return Span{}, err
	}
	pid, err := hexID("parentSpanId", js.ParentSpanID, 8, true)
	if err != nil {
		return Span{}, err
	}
	if js.Kind < 0 || js.Kind > int(trace.SpanKindConsumer) {
		return Span{}, fmt.Errorf("span %s: kind %d: want 0 to %d", sid, js.Kind, trace.SpanKindConsumer)
	}
	attrs, err := kvsToAttrs(js.Attributes)
	if err != nil {
		return Span{}, fmt.Errorf("span %s: %w", sid, err)
	}
	sp := Span{
		TraceID: tid, SpanID: sid, ParentID: pid, Name: js.Name,
		Kind:  trace.SpanKind(js.Kind).String(),
		Start: unixNano(js.Start), End: unixNano(js.End),
		Attrs: attrs, Resource: res, Service: service,
		StatusMessage: js.Status.Message,
	}
	// OTLP numbers Ok 1 and Error 2 (the SDK's codes are the other way).
	switch js.Status.Code {
	case 0:
	case 1:
		sp.StatusCode = "ok"
	case 2:
		sp.StatusCode = "error"
	default:
		return Span{}, fmt.Errorf("span %s: status code %d: want 0, 1 or 2", sid, js.Status.Code)
	}
	for i, e := range js.Events {
		ea, err := kvsToAttrs(e.Attributes)
		if err != nil {
			return Span{}, fmt.Errorf("span %s: events[%d]: %w", sid, i, err)
		}
		sp.Events = append(sp.Events, SpanEvent{Name: e.Name, Time: unixNano(e.Time), Attrs: ea})
	}
	for i, l := range js.Links {
		lt, err := hexID(fmt.Sprintf("links[%d].traceId", i), l.TraceID, 16, false)
		if err != nil {
			return Span{}, fmt.Errorf("span %s: %w", sid, err)
		}
		ls, err := hexID(fmt.Sprintf("links[%d].spanId", i), l.SpanID, 8, false)
		if err != nil {
			return Span{}, fmt.Errorf("span %s: %w", sid, err)
		}
		la, err := kvsToAttrs(l.Attributes)
		if err != nil {
			return Span{}, fmt.Errorf("span %s: links[%d]: %w", sid, i, err)
		}
		sp.Links = append(sp.Links, Link{TraceID: lt, SpanID: ls, Attrs: la})
	}
	return sp, nil
}

func unixNano(n jsonUint64) time.Time {
	// Times past 2262 do not fit time.Time's int64 nanoseconds; clamp rather
	// than wrap into the past.
	return time.Unix(0, int64(min(uint64(n), math.MaxInt64))).UTC()
}

// hexID checks an id is lowercase hex of n bytes. OTLP/JSON writes ids as
// hex; a base64 id (protojson's default) is the usual mistake, so say so.
func hexID(field, s string, n int, optional bool) (string, error) {
	if s == "" && optional {
		return "", nil
	}
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != n || strings.ToLower(s) != s {
		return "", fmt.Errorf("%s %q: want %d lowercase hex digits (OTLP/JSON ids are hex, not base64)", field, s, 2*n)
	}
	if allZero(b) {
		if optional {
			return "", nil
		}
		return "", fmt.Errorf("%s %q: an all-zero id is invalid", field, s)
	}
	return s, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func kvsToAttrs(kvs []jsonKV) ([]Attr, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	out := make([]Attr, len(kvs))
	for i, kv := range kvs {
		v, err := kv.Value.attribute()
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", kv.Key, err)
		}
		out[i] = Attr{Key: kv.Key, Value: valueString(v)}
	}
	slices.SortStableFunc(out, func(a, b Attr) int { return cmp.Compare(a.Key, b.Key) })
	return out, nil
}

// attribute turns an OTLP AnyValue back into the attribute.Value it was
// written from, so that valueString renders both sources alike.
func (v *jsonValue) attribute() (attribute.Value, error) {
	switch {
	case v.StringValue != nil:
		return attribute.StringValue(*v.StringValue), nil
	case v.BoolValue != nil:
		return attribute.BoolValue(*v.BoolValue), nil
	case v.IntValue != nil:
		return attribute.Int64Value(int64(*v.IntValue)), nil
	case v.DoubleValue != nil:
		return attribute.Float64Value(float64(*v.DoubleValue)), nil
	case v.BytesValue != nil:
		// Kept as the base64 text the file holds: the bytes mean nothing
		// more to a reader than that.
		return attribute.StringValue(*v.BytesValue), nil
	case v.ArrayValue != nil:
		return v.array()
	case v.KvlistValue != nil:
		var kvs []attribute.KeyValue
		for _, kv := range v.KvlistValue.Values {
			x, err := kv.Value.attribute()
			if err != nil {
				return attribute.Value{}, fmt.Errorf("key %q: %w", kv.Key, err)
			}
			kvs = append(kvs, attribute.KeyValue{Key: attribute.Key(kv.Key), Value: x})
		}
		return attribute.MapValue(kvs...), nil
	}
	return attribute.Value{}, nil
}

// array rebuilds a typed slice when every element has one type, as the SDK's
// StringSlice and friends are written, and a generic slice otherwise.
func (v *jsonValue) array() (attribute.Value, error) {
	elems := make([]attribute.Value, len(v.ArrayValue.Values))
	for i := range v.ArrayValue.Values {
		x, err := v.ArrayValue.Values[i].attribute()
		if err != nil {
			return attribute.Value{}, fmt.Errorf("values[%d]: %w", i, err)
		}
		elems[i] = x
	}
	if len(elems) == 0 {
		return attribute.SliceValue(), nil
	}
	t := elems[0].Type()
	for _, e := range elems {
		if e.Type() != t {
			return attribute.SliceValue(elems...), nil
		}
	}
	switch t {
	case attribute.STRING:
		return attribute.StringSliceValue(mapSlice(elems, attribute.Value.AsString)), nil
	case attribute.BOOL:
		return attribute.BoolSliceValue(mapSlice(elems, attribute.Value.AsBool)), nil
	case attribute.INT64:
		return attribute.Int64SliceValue(mapSlice(elems, attribute.Value.AsInt64)), nil
	case attribute.FLOAT64:
		return attribute.Float64SliceValue(mapSlice(elems, attribute.Value.AsFloat64)), nil
	}
	return attribute.SliceValue(elems...), nil
}

func mapSlice[T any](xs []attribute.Value, f func(attribute.Value) T) []T {
	out := make([]T, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// jsonUint64, jsonInt64 and jsonFloat accept what proto3 JSON allows for
// their types: a number, or the same number as a string.
type (
	jsonUint64 uint64
	jsonInt64  int64
	jsonFloat  float64
)

func unquote(b []byte) string {
	s := string(b)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}

func (n *jsonUint64) UnmarshalJSON(b []byte) error {
	v, err := strconv.ParseUint(unquote(b), 10, 64)
	if err != nil {
		return fmt.Errorf("%s: want an unsigned 64-bit integer: %w", b, err)
	}
	*n = jsonUint64(v)
	return nil
}

func (n *jsonInt64) UnmarshalJSON(b []byte) error {
	v, err := strconv.ParseInt(unquote(b), 10, 64)
	if err != nil {
		return fmt.Errorf("%s: want a 64-bit integer: %w", b, err)
	}
	*n = jsonInt64(v)
	return nil
}

func (n *jsonFloat) UnmarshalJSON(b []byte) error {
	s := unquote(b)
	switch s {
	case "NaN":
		*n = jsonFloat(math.NaN())
		return nil
	case "Infinity":
		*n = jsonFloat(math.Inf(1))
		return nil
	case "-Infinity":
		*n = jsonFloat(math.Inf(-1))
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("%s: want a number: %w", b, err)
	}
	*n = jsonFloat(v)
	return nil
}
