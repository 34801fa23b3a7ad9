package traces

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// WriteJSONL writes spans as OTLP JSON Lines: one ExportTraceServiceRequest
// object, {"resourceSpans":[...]}, per trace and per line, as Jaeger UI's
// upload and otel-tui's --from-json-file read them. It follows the OTLP/JSON
// mapping rather than protojson's defaults: trace and span ids are lowercase
// hex (protojson would write base64), 64-bit integers are strings, enums are
// integers, and fields at their zero value are left out.
//
// The output is a function of the spans' content alone, not of their order:
// traces by earliest start then id, resources by their attributes, scopes by
// name, spans by start time, longer first, then id, and attributes by key.
// The same seed therefore gives the same bytes.
func WriteJSONL(w io.Writer, spans []sdktrace.ReadOnlySpan) error {
	var buf []byte
	for _, t := range groupTraces(spans) {
		// A span takes about 750 bytes; growing a megabyte line by appends
		// alone would copy it many times over.
		buf = slices.Grow(buf[:0], 800*t.count)
		buf = appendTrace(buf, t)
		buf = append(buf, '\n')
		if _, err := w.Write(buf); err != nil {
			return fmt.Errorf("traces: writing trace %s as JSON Lines: %w", t.id, err)
		}
	}
	return nil
}

type traceGroup struct {
	id        trace.TraceID
	first     time.Time
	count     int
	resources []*resourceGroup
}

type resourceGroup struct {
	res    *resource.Resource
	key    string // the attributes' encoding, the resource's sort key
	scopes []*scopeGroup
}

type scopeGroup struct {
	scope instrumentation.Scope
	spans []sdktrace.ReadOnlySpan
}

// groupTraces sorts spans into the nesting OTLP wants, each level in an
// order that depends on content only.
func groupTraces(spans []sdktrace.ReadOnlySpan) []*traceGroup {
	type resKey struct {
		t trace.TraceID
		r attribute.Distinct
	}
	type scopeKey struct {
		resKey
		s instrumentation.Scope
	}
	traces := map[trace.TraceID]*traceGroup{}
	resources := map[resKey]*resourceGroup{}
	scopes := map[scopeKey]*scopeGroup{}
	var order []*traceGroup
	for _, s := range spans {
		if s == nil {
			continue
		}
		tid := s.SpanContext().TraceID()
		tg := traces[tid]
		if tg == nil {
			tg = &traceGroup{id: tid, first: s.StartTime()}
			traces[tid] = tg
			order = append(order, tg)
		}
		tg.count++
		if s.StartTime().Before(tg.first) {
			tg.first = s.StartTime()
		}
		res := s.Resource()
		if res == nil {
			res = resource.Empty()
		}
		rk := resKey{tid, res.Equivalent()}
		rg := resources[rk]
		if rg == nil {
			rg = &resourceGroup{res: res, key: res.Encoded(attribute.DefaultEncoder())}
			resources[rk] = rg
			tg.resources = append(tg.resources, rg)
		}
		sk := scopeKey{rk, s.InstrumentationScope()}
		sg := scopes[sk]
		if sg == nil {
			sg = &scopeGroup{scope: sk.s}
			scopes[sk] = sg
			rg.scopes = append(rg.scopes, sg)
		}
		sg.spans = append(sg.spans, s)
	}
	slices.SortFunc(order, func(a, b *traceGroup) int {
		return cmp.Or(a.first.Compare(b.first), bytes.Compare(a.id[:], b.id[:]))
	})
	for _, tg := range order {
		slices.SortFunc(tg.resources, func(a, b *resourceGroup) int { return cmp.Compare(a.key, b.key) })
		for _, rg := range tg.resources {
			slices.SortFunc(rg.scopes, func(a, b *scopeGroup) int {
				return cmp.Or(cmp.Compare(a.scope.Name, b.scope.Name),
					cmp.Compare(a.scope.Version, b.scope.Version),
					cmp.Compare(a.scope.SchemaURL, b.scope.SchemaURL),
					cmp.Compare(a.scope.Attributes.Encoded(attribute.DefaultEncoder()),
						b.scope.Attributes.Encoded(attribute.DefaultEncoder())))
			})
			for _, sg := range rg.scopes {
				slices.SortFunc(sg.spans, compareSpans)
			}
		}
	}
	return order
}

// compareSpans orders spans by start, then longer first so that a parent
// precedes a child that starts with it, then by id.
func compareSpans(a, b sdktrace.ReadOnlySpan) int {
	ia, ib := a.SpanContext().SpanID(), b.SpanContext().SpanID()
	return cmp.Or(a.StartTime().Compare(b.StartTime()), b.EndTime().Compare(a.EndTime()),
		bytes.Compare(ia[:], ib[:]))
}

func appendTrace(b []byte, t *traceGroup) []byte {
	b = append(b, `{"resourceSpans":[`...)
	for i, rg := range t.resources {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"resource":{`...)
		b = appendAttrsField(b, rg.res.Attributes(), false)
		b = append(b, `},"scopeSpans":[`...)
		for j, sg := range rg.scopes {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendScopeSpans(b, sg)
		}
		b = append(b, ']')
		if u := rg.res.SchemaURL(); u != "" {
			b = append(b, `,"schemaUrl":`...)
			b = appendString(b, u)
		}
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

func appendScopeSpans(b []byte, sg *scopeGroup) []byte {
	b = append(b, `{"scope":{"name":`...)
	b = appendString(b, sg.scope.Name)
	if sg.scope.Version != "" {
		b = append(b, `,"version":`...)
		b = appendString(b, sg.scope.Version)
	}
	b = appendAttrsField(b, sg.scope.Attributes.ToSlice(), true)
	b = append(b, `},"spans":[`...)
	for i, s := range sg.spans {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendSpan(b, s)
	}
	b = append(b, ']')
	if sg.scope.SchemaURL != "" {
		b = append(b, `,"schemaUrl":`...)
		b = appendString(b, sg.scope.SchemaURL)
	}
	return append(b, '}')
}

// OTLP span flags: the low byte is the W3C trace flags; these bits say
// whether the parent (or linked) context was remote, as the SDK's own OTLP
// exporters set them.
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

func spanFlags(tf trace.TraceFlags, other trace.SpanContext) uint32 {
	f := uint32(tf) | flagHasIsRemote
	if other.IsRemote() {
		f |= flagIsRemote
	}
	return f
}

func appendSpan(b []byte, s sdktrace.ReadOnlySpan) []byte {
	sc := s.SpanContext()
	b = append(b, '{')
	b = appendIDs(b, sc)
	if psid := s.Parent().SpanID(); psid.IsValid() {
		b = append(b, `,"parentSpanId":`...)
		b = appendHex(b, psid[:])
	}
	b = append(b, `,"flags":`...)
	b = strconv.AppendUint(b, uint64(spanFlags(sc.TraceFlags(), s.Parent())), 10)
	b = append(b, `,"name":`...)
	b = appendString(b, s.Name())
	b = append(b, `,"kind":`...)
	// trace.SpanKind and OTLP's Span.SpanKind number the kinds alike.
	b = strconv.AppendInt(b, int64(s.SpanKind()), 10)
	b = append(b, `,"startTimeUnixNano":`...)
	b = appendNanos(b, s.StartTime())
	b = append(b, `,"endTimeUnixNano":`...)
	b = appendNanos(b, s.EndTime())
	b = appendAttrsField(b, s.Attributes(), true)
	b = appendCount(b, "droppedAttributesCount", s.DroppedAttributes())
	if evs := s.Events(); len(evs) > 0 {
		b = append(b, `,"events":[`...)
		for i, e := range evs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"timeUnixNano":`...)
			b = appendNanos(b, e.Time)
			b = append(b, `,"name":`...)
			b = appendString(b, e.Name)
			b = appendAttrsField(b, e.Attributes, true)
			b = appendCount(b, "droppedAttributesCount", e.DroppedAttributeCount)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = appendCount(b, "droppedEventsCount", s.DroppedEvents())
	if ls := s.Links(); len(ls) > 0 {
		b = append(b, `,"links":[`...)
		for i, l := range ls {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			b = appendIDs(b, l.SpanContext)
			b = appendAttrsField(b, l.Attributes, true)
			b = appendCount(b, "droppedAttributesCount", l.DroppedAttributeCount)
			b = append(b, `,"flags":`...)
			b = strconv.AppendUint(b, uint64(spanFlags(l.SpanContext.TraceFlags(), l.SpanContext)), 10)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = appendCount(b, "droppedLinksCount", s.DroppedLinks())
	if st := s.Status(); st.Code != codes.Unset || st.Description != "" {
		b = append(b, `,"status":{`...)
		sep := false
		if st.Description != "" {
			b = append(b, `"message":`...)
			b = appendString(b, st.Description)
			sep = true
		}
		// The SDK numbers Error 1 and Ok 2; OTLP numbers them the other way.
		code := 0
		switch st.Code {
		case codes.Ok:
			code = 1
		case codes.Error:
			code = 2
		}
		if code != 0 {
			if sep {
				b = append(b, ',')
			}
			b = append(b, `"code":`...)
			b = strconv.AppendInt(b, int64(code), 10)
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendIDs writes the traceId, spanId and traceState fields that open both
// a span and a link.
func appendIDs(b []byte, sc trace.SpanContext) []byte {
	b = append(b, `"traceId":`...)
	tid := sc.TraceID()
	b = appendHex(b, tid[:])
	b = append(b, `,"spanId":`...)
	sid := sc.SpanID()
	b = appendHex(b, sid[:])
	if ts := sc.TraceState().String(); ts != "" {
		b = append(b, `,"traceState":`...)
		b = appendString(b, ts)
	}
	return b
}

func appendHex(b []byte, id []byte) []byte {
	b = append(b, '"')
	b = hex.AppendEncode(b, id)
	return append(b, '"')
}

func appendNanos(b []byte, t time.Time) []byte {
	// As the SDK's exporters do: a time before 1970 has no unsigned form.
	b = append(b, '"')
	b = strconv.AppendUint(b, uint64(max(0, t.UnixNano())), 10)
	return append(b, '"')
}

func appendCount(b []byte, field string, n int) []byte {
	if n <= 0 {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, field...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, int64(min(n, math.MaxUint32)), 10)
}

// appendAttrsField writes "attributes":[...] sorted by key, or nothing for
// none. comma says whether a field precedes it in the object.
func appendAttrsField(b []byte, kvs []attribute.KeyValue, comma bool) []byte {
	if len(kvs) == 0 {
		return b
	}
	if !slices.IsSortedFunc(kvs, compareKV) {
		kvs = slices.Clone(kvs)
		slices.SortStableFunc(kvs, compareKV)
	}
	if comma {
		b = append(b, ',')
	}
	b = append(b, `"attributes":`...)
	return appendKVs(b, kvs)
}

func compareKV(a, b attribute.KeyValue) int { return cmp.Compare(a.Key, b.Key) }

func appendKVs(b []byte, kvs []attribute.KeyValue) []byte {
	b = append(b, '[')
	for i, kv := range kvs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"key":`...)
		b = appendString(b, string(kv.Key))
		b = append(b, `,"value":`...)
		b = appendValue(b, kv.Value)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendValue writes an OTLP AnyValue.
func appendValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.BOOL:
		b = append(b, `{"boolValue":`...)
		b = strconv.AppendBool(b, v.AsBool())
	case attribute.INT64:
		b = append(b, `{"intValue":"`...)
		b = strconv.AppendInt(b, v.AsInt64(), 10)
		b = append(b, '"')
	case attribute.FLOAT64:
		b = append(b, `{"doubleValue":`...)
		b = appendDouble(b, v.AsFloat64())
	case attribute.STRING:
		b = append(b, `{"stringValue":`...)
		b = appendString(b, v.AsString())
	case attribute.BYTESLICE:
		// Only trace and span ids are hex in OTLP/JSON; bytes are base64.
		b = append(b, `{"bytesValue":"`...)
		b = base64.StdEncoding.AppendEncode(b, v.AsByteSlice())
		b = append(b, '"')
	case attribute.BOOLSLICE:
		b = appendArray(b, v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		b = appendArray(b, v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		b = appendArray(b, v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		b = appendArray(b, v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		b = appendArray(b, v.AsSlice(), func(x attribute.Value) attribute.Value { return x })
	case attribute.MAP:
		b = append(b, `{"kvlistValue":{"values":`...)
		b = appendKVs(b, v.AsMap())
		b = append(b, '}')
	default:
		// An empty value is an AnyValue with no field set.
		b = append(b, '{')
	}
	return append(b, '}')
}

func appendArray[T any](b []byte, xs []T, val func(T) attribute.Value) []byte {
	b = append(b, `{"arrayValue":{"values":[`...)
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendValue(b, val(x))
	}
	return append(b, "]}"...)
}

// appendDouble writes a float as proto3 JSON does: a number, or one of the
// strings it reserves for values JSON numbers cannot carry.
func appendDouble(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Infinity"`...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

// appendString writes s as a JSON string, replacing invalid UTF-8 with
// U+FFFD as encoding/json does, so a stray byte cannot make a line unreadable.
func appendString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
