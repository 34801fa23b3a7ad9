package traces

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/simlab/simlab/model"
)

// entity says what a span stands for. It is part of every span id, so two
// entities of different kinds that share a table index never share an id.
type entity uint8

const (
	entRun     entity = iota + 1 // History.Runs index: the workflow.run root
	entPublish                   // History.Publishes index: queue.publish
	entProcess                   // History.Deliveries index: queue.process
	entStep                      // History.Deliveries index: step.execute
	entCall                      // History.Calls index: world.* client spans

	// A model/flow run's (BuildFlow): its actors, writes, lists and reads,
	// and replays (numbered in actor order).
	entFlowActor
	entFlowWrite
	entFlowCall
	entFlowReplay
)

// golden is 2^64/φ, the usual odd constant for spreading consecutive
// integers across 64 bits before a mix.
const golden = 0x9e3779b97f4a7c15

// mix is the splitmix64 finaliser: a bijection on uint64 whose output bits
// each depend on every input bit, so ids of neighbouring entities look
// unrelated in a UI and collide no more often than random ids would.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// historyKey folds everything that shapes a run's spans into one word: the
// seed, the scenario and its variants, the store profile, the history's own
// hash (which any --set knob that changes what happens changes too) and the
// epoch the spans are stamped on. Two exports of identical spans get
// identical ids, so sending one twice is harmless; any difference in the
// spans gives other ids, so two different exports of one seed (say two
// --epoch now) never merge into one trace in a backend with every span id
// twice.
func historyKey(h *model.History, epoch time.Time) uint64 {
	f := fnv.New64a()
	f.Write([]byte("simlab/traces/v2\x00"))
	f.Write([]byte(h.Scenario))
	for _, v := range h.Variants {
		f.Write([]byte{0})
		f.Write([]byte(v))
	}
	f.Write([]byte{0})
	f.Write([]byte(h.Profile))
	var b [8]byte
	for _, x := range []uint64{h.Hash, uint64(epochOrDefault(epoch).UnixNano())} {
		putUint64(b[:], x)
		f.Write(b[:])
	}
	return mix(f.Sum64() + mix(h.Seed+golden))
}

// epochOrDefault is the epoch Build stamps spans on for opts.Epoch.
func epochOrDefault(epoch time.Time) time.Time {
	if epoch.IsZero() {
		return DefaultEpoch
	}
	return epoch
}

// traceIDFor derives run's trace id from the history key. The high half is
// never zero: Jaeger's v1 API prints such ids as 16 hex digits, which then
// match nothing when pasted back.
func traceIDFor(key uint64, run int32) trace.TraceID {
	hi := mix(key ^ (uint64(uint32(run))+1)*golden)
	if hi == 0 {
		hi = 1
	}
	lo := mix(hi + golden)
	var t trace.TraceID
	putUint64(t[:8], hi)
	putUint64(t[8:], lo)
	return t
}

// spanIDFor derives the id of the span that stands for entity kind at index
// in trace t. The id depends only on the entity, not on which other spans a
// MaxSpans budget kept, so ids are the same with and without sampling.
func spanIDFor(t trace.TraceID, kind entity, index int32) trace.SpanID {
	lo := uint64(0)
	for _, b := range t[8:] {
		lo = lo<<8 | uint64(b)
	}
	x := mix(lo ^ mix(uint64(kind)<<32|uint64(uint32(index))))
	if x == 0 {
		x = 1
	}
	var s trace.SpanID
	putUint64(s[:], x)
	return s
}

func putUint64(b []byte, v uint64) {
	for i := 7; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
}

// TraceID is the trace id Build(h, opts) gives the run at index run of
// h.Runs (see historyKey), with a non-zero high half.
func TraceID(h *model.History, opts Options, run int) trace.TraceID {
	return traceIDFor(historyKey(h, opts.Epoch), int32(run))
}

// idGenerator hands the SDK the ids Build computed for the span it is about
// to start. Build arms it right before each Start; the SDK calls it from
// inside that Start on the same goroutine, and the provider is private to
// one Build call, so no other span can consume the armed ids.
type idGenerator struct {
	trace trace.TraceID
	span  trace.SpanID
	armed bool
	// misuse records a Start the generator was not armed for, or one whose
	// parent is in another trace than Build planned; Build reports it rather
	// than emitting an id that was not derived from the seed.
	misuse error
}

func (g *idGenerator) arm(t trace.TraceID, s trace.SpanID) {
	g.trace, g.span, g.armed = t, s, true
}

func (g *idGenerator) take(t trace.TraceID) trace.SpanID {
	if !g.armed {
		g.misuse = errUnarmed
	} else if t != g.trace {
		g.misuse = fmt.Errorf("traces: span %s started in trace %s, planned in %s", g.span, t, g.trace)
	}
	g.armed = false
	return g.span
}

func (g *idGenerator) NewIDs(context.Context) (trace.TraceID, trace.SpanID) {
	t := g.trace
	return t, g.take(t)
}

func (g *idGenerator) NewSpanID(_ context.Context, t trace.TraceID) trace.SpanID {
	return g.take(t)
}

var errUnarmed = errors.New("traces: the SDK started a span Build did not plan")

// messageID renders a message's stable id as messaging.message.id wants it: a
// string, the same for every delivery of the message.
func messageID(id int32) string { return strconv.FormatInt(int64(id), 10) }
