package traces

import (
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The span data model every reader shares: Span and its parts, whichever
// source they came from (Build's SDK spans through FromReadOnly, a file
// through ReadJSONL, Jaeger), their canonical order, and the Tree of one
// trace that the TUI's waterfall and the span checks walk. Writing and
// reading OTLP JSON Lines live in jsonl_write.go and jsonl_read.go.

// Span is a finished span in a plain, neutral form: what a reader (the TUI, a
// test) needs to show it, whether it was built from a simulation or read back
// from an OTLP JSON Lines file. Every value is already a string so that the
// two sources compare equal field by field.
type Span struct {
	TraceID, SpanID, ParentID string // lowercase hex; ParentID "" for a root
	Name, Kind                string // Kind as trace.SpanKind names it: internal, client, ...
	Start, End                time.Time
	Attrs                     []Attr // sorted by key
	Events                    []SpanEvent
	Links                     []Link
	Resource                  []Attr // sorted by key
	Service                   string // the resource's service.name
	// StatusCode is "", "ok" or "error"; StatusMessage its description.
	StatusCode, StatusMessage string
}

// Attr is one attribute, its value rendered as text (see valueString).
type Attr struct{ Key, Value string }

// SpanEvent is a timed annotation on a span.
type SpanEvent struct {
	Name  string
	Time  time.Time
	Attrs []Attr
}

// Link points at another span, usually the publish a delivery follows.
type Link struct {
	TraceID, SpanID string
	Attrs           []Attr
}

// Attr returns the value of the attribute key and whether the span has it.
func (s *Span) Attr(key string) (string, bool) { return lookup(s.Attrs, key) }

// ResourceAttr returns the value of the resource attribute key.
func (s *Span) ResourceAttr(key string) (string, bool) { return lookup(s.Resource, key) }

func lookup(attrs []Attr, key string) (string, bool) {
	// Attributes are sorted, but spans carry a dozen at most: a scan is as
	// fast and does not depend on the caller having kept the order.
	for _, a := range attrs {
		if a.Key == key {
			return a.Value, true
		}
	}
	return "", false
}

// FromReadOnly converts SDK spans (Build's output) into Spans, in the
// canonical order SortSpans defines. Nil spans are skipped.
func FromReadOnly(spans []sdktrace.ReadOnlySpan) []Span {
	out := make([]Span, 0, len(spans))
	for _, s := range spans {
		if s == nil {
			continue
		}
		sc := s.SpanContext()
		sp := Span{
			TraceID: sc.TraceID().String(),
			SpanID:  sc.SpanID().String(),
			Name:    s.Name(),
			Kind:    s.SpanKind().String(),
			Start:   utc(s.StartTime()),
			End:     utc(s.EndTime()),
			Attrs:   attrsOf(s.Attributes()),
		}
		if p := s.Parent().SpanID(); p.IsValid() {
			sp.ParentID = p.String()
		}
		for _, e := range s.Events() {
			sp.Events = append(sp.Events, SpanEvent{Name: e.Name, Time: utc(e.Time), Attrs: attrsOf(e.Attributes)})
		}
		for _, l := range s.Links() {
			sp.Links = append(sp.Links, Link{
				TraceID: l.SpanContext.TraceID().String(), SpanID: l.SpanContext.SpanID().String(),
				Attrs: attrsOf(l.Attributes),
			})
		}
		if r := s.Resource(); r != nil {
			sp.Resource = attrsOf(r.Attributes())
		}
		sp.Service, _ = lookup(sp.Resource, KeyServiceName)
		sp.StatusCode, sp.StatusMessage = statusName(s.Status().Code), s.Status().Description
		out = append(out, sp)
	}
	SortSpans(out)
	return out
}

// SortSpans puts spans in the canonical order both readers return: traces by
// their earliest start, then id; within a trace by start, longer first (so a
// parent precedes a child that starts with it), then span id. It is the order
// a waterfall shows, and it depends on the spans' content only.
func SortSpans(spans []Span) {
	first := map[string]time.Time{}
	for i := range spans {
		s := &spans[i]
		if t, ok := first[s.TraceID]; !ok || s.Start.Before(t) {
			first[s.TraceID] = s.Start
		}
	}
	slices.SortStableFunc(spans, func(a, b Span) int {
		return cmp.Or(first[a.TraceID].Compare(first[b.TraceID]), cmp.Compare(a.TraceID, b.TraceID),
			a.Start.Compare(b.Start), b.End.Compare(a.End), cmp.Compare(a.SpanID, b.SpanID))
	})
}

// utc drops the monotonic reading and the zone, so that a time built by the
// SDK and one parsed from a file are == when they are the same instant.
func utc(t time.Time) time.Time { return time.Unix(0, t.UnixNano()).UTC() }

func statusName(c codes.Code) string {
	switch c {
	case codes.Error:
		return "error"
	case codes.Ok:
		return "ok"
	}
	return ""
}

func attrsOf(kvs []attribute.KeyValue) []Attr {
	if len(kvs) == 0 {
		return nil
	}
	out := make([]Attr, len(kvs))
	for i, kv := range kvs {
		out[i] = Attr{Key: string(kv.Key), Value: valueString(kv.Value)}
	}
	slices.SortStableFunc(out, func(a, b Attr) int { return cmp.Compare(a.Key, b.Key) })
	return out
}

// valueString renders an attribute value as people read it: strings as they
// are, numbers in decimal, booleans as true/false, lists and maps as JSON.
// Both readers go through it, which is what makes their output comparable.
func valueString(v attribute.Value) string {
	switch v.Type() {
	case attribute.STRING:
		return v.AsString()
	case attribute.BOOL:
		return strconv.FormatBool(v.AsBool())
	case attribute.INT64:
		return strconv.FormatInt(v.AsInt64(), 10)
	case attribute.FLOAT64:
		return strconv.FormatFloat(v.AsFloat64(), 'g', -1, 64)
	case attribute.EMPTY:
		return ""
	}
	var list any
	switch v.Type() {
	case attribute.STRINGSLICE:
		list = v.AsStringSlice()
	case attribute.INT64SLICE:
		list = v.AsInt64Slice()
	case attribute.FLOAT64SLICE:
		list = v.AsFloat64Slice()
	case attribute.BOOLSLICE:
		list = v.AsBoolSlice()
	default:
		return v.String()
	}
	b, err := json.Marshal(list)
	if err != nil {
		return v.String()
	}
	return string(b)
}

// Attr returns the value of the event's attribute key.
func (e *SpanEvent) Attr(key string) (string, bool) { return lookup(e.Attrs, key) }

// Tree is one trace's spans as a tree: each span's parent and children by
// index into the slice it was built from. A span whose parent is not in the
// slice (sampled away, cut by a span budget) hangs under the root rather
// than vanishing, so every span is reachable from Root.
type Tree struct {
	Root     int     // the first parentless span
	Parent   []int   // -1 for the root
	Children [][]int // in slice order
	Depth    []int   // 0 for the root
	byID     map[string]int
}

// NewTree builds the tree of spans, which must hold one trace. It fails
// when no span is parentless.
func NewTree(spans []Span) (*Tree, error) {
	t := &Tree{Root: -1, byID: make(map[string]int, len(spans)),
		Parent: make([]int, len(spans)), Children: make([][]int, len(spans)), Depth: make([]int, len(spans))}
	for i, s := range spans {
		t.byID[s.SpanID] = i
		if t.Root < 0 && s.ParentID == "" {
			t.Root = i
		}
	}
	if t.Root < 0 {
		return nil, fmt.Errorf("no root span (every span has a parent)")
	}
	// Children keep slice order, those whose parent is missing after the
	// root's own: the waterfall shows them last.
	var orphans []int
	t.Parent[t.Root] = -1
	for i, s := range spans {
		if i == t.Root {
			continue
		}
		p, ok := t.byID[s.ParentID]
		if !ok {
			orphans = append(orphans, i)
			continue
		}
		t.Parent[i] = p
		t.Children[p] = append(t.Children[p], i)
	}
	for _, i := range orphans {
		t.Parent[i] = t.Root
		t.Children[t.Root] = append(t.Children[t.Root], i)
	}
	var walk func(i, d int)
	walk = func(i, d int) {
		t.Depth[i] = d
		for _, c := range t.Children[i] {
			walk(c, d+1)
		}
	}
	walk(t.Root, 0)
	return t, nil
}

// Index returns the index of the span with the given id.
func (t *Tree) Index(spanID string) (int, bool) {
	i, ok := t.byID[spanID]
	return i, ok
}

// Dedup drops the spans that repeat an earlier one exactly (the same trace
// and span id and the same content: a file with lines twice, a collector's
// retried batch), keeping order, and says how many it dropped. Two spans
// that share their ids but differ are not one span seen twice: that is an
// error naming the id, since either could be the truth.
func Dedup(spans []Span) ([]Span, int, error) {
	seen := make(map[[2]string]int, len(spans))
	out := spans[:0:0]
	dropped := 0
	for i := range spans {
		s := &spans[i]
		k := [2]string{s.TraceID, s.SpanID}
		if j, ok := seen[k]; ok {
			if !reflect.DeepEqual(out[j], *s) {
				return nil, 0, fmt.Errorf("span %s of trace %s appears twice with different content (%s and %s): not one span recorded twice",
					s.SpanID, s.TraceID, out[j].Name, s.Name)
			}
			dropped++
			continue
		}
		seen[k] = len(out)
		out = append(out, *s)
	}
	return out, dropped, nil
}
