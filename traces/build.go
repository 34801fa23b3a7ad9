package traces

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/sim"
)

// ScopeName is the instrumentation scope of every span Build makes.
const ScopeName = "github.com/simlab/simlab/traces"

// SchemaVersion is the version of the span contract in docs/TRACE_SCHEMA.md,
// written as the instrumentation scope's version so a reader of an old file
// can tell which contract it follows.
const SchemaVersion = "2"

// DefaultEpoch is the wall-clock instant virtual time 0 maps to unless
// Options.Epoch says otherwise. It is fixed so that trace files are
// byte-identical across days; pass ParseEpoch("now") to land traces inside a
// backend's default search window instead.
var DefaultEpoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// MaxBuildSpans bounds the spans one Build makes: every one is held until
// it is written or exported, and a run at the event limit could plan
// millions. buildSpanLimit is it, lowered by a test.
const MaxBuildSpans = 1_000_000

var buildSpanLimit = MaxBuildSpans

// Options shape Build's output.
type Options struct {
	// Epoch is the instant virtual time 0 is stamped as; zero means
	// DefaultEpoch.
	Epoch time.Time
	// MaxSpans bounds the spans of each run (each trace); 0 means no bound.
	// Over the bound, Build keeps the root, every span on the path to a
	// fault or to a call whose result is not ok, every lazy runs.get, then
	// a deterministic sample of the rest; see docs/TRACE_SCHEMA.md. The spans
	// that must be kept are kept even when they alone exceed MaxSpans.
	MaxSpans int
}

// ParseEpoch reads the CLI's --epoch: "" for DefaultEpoch, "now" for now()
// (time.Now when now is nil), or an RFC 3339 instant. The result is in UTC so
// that it renders the same wherever the CLI runs.
func ParseEpoch(s string, now func() time.Time) (time.Time, error) {
	switch strings.TrimSpace(s) {
	case "":
		return DefaultEpoch, nil
	case "now":
		if now == nil {
			now = time.Now
		}
		return now().UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		// time.Parse's own text names Go's layout string, which means
		// nothing to a user: say what to type instead.
		return time.Time{}, fmt.Errorf("--epoch %q: want now or a date and time with its zone (RFC 3339), for example --epoch 2026-01-01T00:00:00Z or --epoch now", s)
	}
	if err := otlpTime(t); err != nil {
		return time.Time{}, fmt.Errorf("--epoch %q: %w; for example --epoch 2026-01-01T00:00:00Z", s, err)
	}
	return t.UTC(), nil
}

// The instants OTLP can stamp: nanoseconds since 1970 in a signed 64-bit
// integer (what every SDK and collector reads), 1970 to 2262-04-11.
var (
	otlpFirst = time.Unix(0, 0).UTC()
	otlpLast  = time.Unix(0, math.MaxInt64).UTC()
)

// otlpTime says why t cannot be written as an OTLP timestamp, or nil.
func otlpTime(t time.Time) error {
	switch {
	case t.Before(otlpFirst):
		return fmt.Errorf("%s is before 1970-01-01T00:00:00Z, where OTLP timestamps begin", t.UTC().Format(time.RFC3339Nano))
	case t.After(otlpLast):
		return fmt.Errorf("%s is after %s, the last instant an OTLP timestamp holds", t.UTC().Format(time.RFC3339Nano), otlpLast.Format(time.RFC3339Nano))
	}
	return nil
}

// Build turns a recorded History into finished OpenTelemetry spans: one trace
// per workflow run, every timestamp virtual time plus the epoch, every id
// derived from the seed and the entity, the resource the simulated service's.
// The same History and Options give the same spans in the same order.
func Build(h *model.History, opts Options) ([]sdktrace.ReadOnlySpan, error) {
	epoch := epochOrDefault(opts.Epoch)
	if opts.MaxSpans < 0 {
		return nil, fmt.Errorf("traces: MaxSpans %d: want 0 (no bound) or more", opts.MaxSpans)
	}
	p, err := newPlanner(h, epoch)
	if err != nil {
		return nil, err
	}
	plans := make([][]node, len(h.Runs))
	total := 0
	for r := range h.Runs {
		plans[r] = keep(p.plan(int32(r)), opts.MaxSpans)
		total += len(plans[r])
	}
	if total > buildSpanLimit {
		return nil, fmt.Errorf("%d spans: more than the %d one export holds (a span takes about 5 KB until it is written); keep fewer with --max-spans, e.g. --max-spans %d",
			total, buildSpanLimit, max(1, buildSpanLimit/max(1, len(h.Runs))))
	}

	e := newEmitter(serviceResources(h), epoch, total)
	defer e.close()
	for r, nodes := range plans {
		if err := e.emit(traceIDFor(p.key, int32(r)), nodes); err != nil {
			return nil, fmt.Errorf("traces: run %s: %w", model.RunName(h.Runs[r].ID), err)
		}
	}
	if err := stampable(e.spans, epoch); err != nil {
		return nil, err
	}
	return e.spans, nil
}

// stampable refuses spans an OTLP timestamp cannot hold. Every instant is
// the epoch plus virtual time: an epoch near either end of what OTLP can
// stamp pushes some past it, and such a span would be written with a
// timestamp of 0 (and judged on that).
func stampable(spans []sdktrace.ReadOnlySpan, epoch time.Time) error {
	for _, s := range spans {
		times := []time.Time{s.StartTime(), s.EndTime()}
		for _, ev := range s.Events() {
			times = append(times, ev.Time)
		}
		for _, t := range times {
			if err := otlpTime(t); err != nil {
				return fmt.Errorf("span %s at the epoch %s + %v of virtual time: %w; choose another --epoch",
					s.Name(), epoch.Format(time.RFC3339Nano), t.Sub(epoch), err)
			}
		}
	}
	return nil
}

// keep applies the MaxSpans budget to one run's plan, returning the kept
// nodes in plan order with parents renumbered. The rule is spelled out in
// docs/TRACE_SCHEMA.md; in short: what explains a failure or a lazy read is
// never dropped, and a span is kept only with its whole path to the root, so
// no kept span is an orphan.
func keep(nodes []node, maxSpans int) []node {
	if maxSpans <= 0 || len(nodes) <= maxSpans {
		return nodes
	}
	kept := make([]bool, len(nodes))
	n := 0
	cost := func(i int32) int {
		c := 0
		for ; i >= 0 && !kept[i]; i = nodes[i].parent {
			c++
		}
		return c
	}
	take := func(i int32) {
		for ; i >= 0 && !kept[i]; i = nodes[i].parent {
			kept[i] = true
			n++
		}
	}
	for i := range nodes {
		if nodes[i].must {
			take(int32(i))
		}
	}
	// The rest in two tiers: the message skeleton (publishes, deliveries,
	// step executions) before store calls, since a call means little without
	// the step it belongs to. Within a tier the order is the span id's, a
	// seed-derived shuffle: a uniform sample, the same on every run.
	var tiers [2][]int32
	for i := range nodes {
		if kept[i] {
			continue
		}
		t := 0
		if nodes[i].kind == entCall {
			t = 1
		}
		tiers[t] = append(tiers[t], int32(i))
	}
	for _, tier := range tiers {
		slices.SortFunc(tier, func(a, b int32) int {
			return slices.Compare(nodes[a].id[:], nodes[b].id[:])
		})
		for _, i := range tier {
			if c := cost(i); c > 0 && n+c <= maxSpans {
				take(i)
			}
		}
	}

	renum := make([]int32, len(nodes))
	next := int32(0)
	for i := range nodes {
		renum[i] = -1
		if kept[i] {
			renum[i] = next
			next++
		}
	}
	out := make([]node, 0, n)
	for i := range nodes {
		if !kept[i] {
			continue
		}
		nd := nodes[i]
		if nd.parent >= 0 {
			nd.parent = renum[nd.parent]
		}
		out = append(out, nd)
	}
	root := &out[0]
	root.attrs = append(slices.Clip(root.attrs),
		attribute.Int(KeySpansTotal, len(nodes)),
		attribute.Int(KeySpansDropped, len(nodes)-n))
	return out
}

// emitter replays planned nodes through the OpenTelemetry SDK.
type emitter struct {
	epoch     time.Time
	gen       *idGenerator
	tp        *sdktrace.TracerProvider
	tracer    trace.Tracer
	col       *collector
	resources []*resource.Resource
	spans     []sdktrace.ReadOnlySpan
}

func newEmitter(resources []*resource.Resource, epoch time.Time, capacity int) *emitter {
	e := &emitter{epoch: epoch, gen: &idGenerator{}, col: &collector{}}
	e.tp = sdktrace.NewTracerProvider(
		// Every option that the SDK would otherwise take from OTEL_* variables
		// is given explicitly: the sampler (OTEL_TRACES_SAMPLER) and the span
		// limits (OTEL_SPAN_*_LIMIT). The provider's resource does merge
		// OTEL_RESOURCE_ATTRIBUTES whatever is passed, which is why each span
		// is handed out with its service's resource instead (see resourced).
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithIDGenerator(e.gen),
		sdktrace.WithRawSpanLimits(sdktrace.SpanLimits{
			AttributeValueLengthLimit:   -1,
			AttributeValueDepthLimit:    -1,
			AttributeCountLimit:         -1,
			EventCountLimit:             -1,
			LinkCountLimit:              -1,
			AttributePerEventCountLimit: -1,
			AttributePerLinkCountLimit:  -1,
		}),
		sdktrace.WithResource(resource.Empty()),
		sdktrace.WithSpanProcessor(e.col),
	)
	e.tracer = e.tp.Tracer(ScopeName, trace.WithInstrumentationVersion(SchemaVersion))
	e.resources = resources
	e.spans = make([]sdktrace.ReadOnlySpan, 0, capacity)
	return e
}

func (e *emitter) close() {
	// The collector holds nothing to flush; shutting down only releases
	// the provider's processor registration.
	_ = e.tp.Shutdown(context.Background())
}

func (e *emitter) at(t sim.Time) time.Time { return e.epoch.Add(time.Duration(t)) }

// emit starts and ends each node's span at its virtual times. A node's parent
// is given as a bare span context built from the planned ids, so spans can be
// emitted one at a time, each finished before the next begins.
func (e *emitter) emit(tid trace.TraceID, nodes []node) error {
	for i := range nodes {
		n := &nodes[i]
		ctx := context.Background()
		if n.parent >= 0 {
			ctx = trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
				TraceID: tid, SpanID: nodes[n.parent].id, TraceFlags: trace.FlagsSampled,
			}))
		}
		// Sorted here, the SDK keeps them sorted, and WriteJSONL need not
		// copy them to sort.
		slices.SortStableFunc(n.attrs, compareKV)
		opts := []trace.SpanStartOption{
			trace.WithTimestamp(e.at(n.start)),
			trace.WithSpanKind(n.spanKind),
			trace.WithAttributes(n.attrs...),
		}
		if n.link.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: trace.NewSpanContext(trace.SpanContextConfig{
				TraceID: tid, SpanID: n.link, TraceFlags: trace.FlagsSampled,
			})}))
		}
		e.gen.arm(tid, n.id)
		_, sp := e.tracer.Start(ctx, n.name, opts...)
		for _, ev := range n.events {
			sp.AddEvent(ev.name, trace.WithTimestamp(e.at(ev.at)), trace.WithAttributes(ev.attrs...))
		}
		if n.status != 0 {
			sp.SetStatus(n.status, n.desc)
		}
		sp.End(trace.WithTimestamp(e.at(n.end)))
		if e.gen.misuse != nil {
			return e.gen.misuse
		}
		last, ok := e.col.take()
		if !ok {
			return fmt.Errorf("span %q (%s) was started but not recorded", n.name, n.id)
		}
		e.spans = append(e.spans, resourced{ReadOnlySpan: last, res: e.resources[n.svc]})
	}
	return nil
}

// collector is a span processor that hands Build each span as it ends. The
// SDK calls OnEnd synchronously inside End, so the emitter finds exactly the
// span it just ended.
type collector struct {
	last sdktrace.ReadOnlySpan
}

func (c *collector) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (c *collector) OnEnd(s sdktrace.ReadOnlySpan)                   { c.last = s }
func (c *collector) Shutdown(context.Context) error                  { return nil }
func (c *collector) ForceFlush(context.Context) error                { return nil }

func (c *collector) take() (sdktrace.ReadOnlySpan, bool) {
	s := c.last
	c.last = nil
	return s, s != nil
}

// resourced is a finished span reported under its simulated service's
// resource. The SDK ties one resource to a provider and merges the process
// environment into it; overriding Resource here is what gives one resource
// per simulated service and keeps OTEL_RESOURCE_ATTRIBUTES and
// OTEL_SERVICE_NAME out of files that must be byte-identical.
type resourced struct {
	sdktrace.ReadOnlySpan
	res *resource.Resource
}

func (s resourced) Resource() *resource.Resource { return s.res }

// serviceResources builds the resource of every simulated service, indexed
// as svcWorld, svcClient, svcOrchestrator(d) and svcConsumer(d) say.
func serviceResources(h *model.History) []*resource.Resource {
	base := func(name string, extra ...attribute.KeyValue) *resource.Resource {
		kv := append([]attribute.KeyValue{
			attribute.String(KeyServiceName, name),
			attribute.String(KeyServiceNamespace, "simlab"),
		}, extra...)
		return resource.NewSchemaless(kv...)
	}
	out := []*resource.Resource{svcWorld: base("simlab-world"), svcClient: base("simlab-client")}
	for _, d := range h.Deployments {
		out = append(out,
			base("simlab-orchestrator",
				attribute.String(KeyServiceVersion, d.Producer.String()),
				attribute.String(KeyDeploymentID, d.Name)),
			base("simlab-consumer",
				attribute.String(KeyServiceVersion, d.Consumer.String()),
				attribute.String(KeyDeploymentID, d.Name)))
	}
	return out
}
