package traces

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/simlab/simlab/model/flow"
	"github.com/simlab/simlab/model/program"
	"github.com/simlab/simlab/sim"
)

// FlowRun is one run of a workflow program as model/flow runs it (simlab
// replays), with what a reader needs to find it again.
type FlowRun struct {
	Result *flow.Result
	Config flow.Config
	Seed   uint64
	// Workflow names the program (storm, control, inline-hang, a file's
	// name): the invocation spans are "workflow.execute <Workflow>".
	Workflow string
	// Story is the run's story (flow.Result.Story), kept on the root.
	Story []string
	// WorkAfterEnd is the scenario's budget.work_after_end (nil: the
	// default, DefaultWorkAfterEnd), for check --trace's judge of
	// bounded-work-after-end.
	WorkAfterEnd *int
}

// Flow spans' own keys (docs/TRACE_SCHEMA.md, "Programs").
const (
	KeyFlowView        = "simlab.flow.view"
	KeyFlowSequential  = "simlab.flow.sequential_replays"
	KeyFlowFresh       = "simlab.flow.fresh_replay"
	KeyFlowStory       = "simlab.flow.story"
	KeyFlowCause       = "simlab.flow.cause"
	KeyFlowKilled      = "simlab.flow.killed"
	KeyFlowUnfinished  = "simlab.flow.unfinished"
	KeyFlowEntity      = "simlab.flow.entity"
	KeyFlowServed      = "simlab.flow.log.served"
	KeyFlowSaw         = "simlab.flow.replay.saw"
	KeyFlowOutcome     = "simlab.flow.replay.outcome"
	KeyFlowDivergence  = "simlab.flow.replay.divergence"
	KeyFlowDivergedAt  = "simlab.flow.replay.diverged_at"
	KeyFlowMinted      = "simlab.flow.replay.minted"
	KeyFlowEntryLoaded = "simlab.flow.write.loaded"
	KeyFlowEntrySaw    = "simlab.flow.write.saw"
	// ReplaySpanName is a replay of the workflow, as core names its own.
	ReplaySpanName = "workflow.replay.execute"
)

// The flow trace's services.
const (
	flowSvcWorld int32 = iota
	flowSvcWorkflow
	flowSvcStep
)

// FlowRunName is the workflow.run.id a flow run's spans carry: one run per
// seed.
func FlowRunName(seed uint64) string { return fmt.Sprintf("wrun_flow_%d", seed) }

// BuildFlow turns one flow run into finished spans, one trace: the run's
// root; a span per workflow invocation, queued step delivery and inline
// step (under its invocation); under each, its World calls
// (world.events.create <type>, world.events.list, world.runs.get) and its
// replays (workflow.replay.execute). The names and keys are simlab's fan-out
// traces' where they mean the same (so simlab check --trace judges the
// properties it can on them), and the same run gives the same spans.
func BuildFlow(r FlowRun, opts Options) ([]sdktrace.ReadOnlySpan, trace.TraceID, error) {
	if opts.MaxSpans != 0 {
		return nil, trace.TraceID{}, fmt.Errorf("traces: a program's run is traced whole: --max-spans does not apply")
	}
	res := r.Result
	epoch := epochOrDefault(opts.Epoch)
	tid := traceIDFor(flowKey(r, epoch), 0)
	id := func(kind entity, i int) trace.SpanID { return spanIDFor(tid, kind, int32(i)) }

	end := res.Stats.Now
	for i := range res.Log {
		end = max(end, res.Log[i].At)
	}
	root := node{kind: entRun, parent: -1, svc: flowSvcWorkflow, name: RunSpanName, spanKind: trace.SpanKindInternal, end: end, id: id(entRun, 0),
		attrs: []attribute.KeyValue{
			attribute.String(KeyRunID, FlowRunName(r.Seed)),
			attribute.String(KeyWorkflowName, r.Workflow),
			// A string, as the fan-out traces write it: every uint64 exact.
			attribute.String(KeySeed, strconv.FormatUint(r.Seed, 10)),
			attribute.String(KeyRunEngine, "flow"),
			attribute.String(KeyRunStatus, flowRunStatus(res.End)),
			attribute.String(KeyFlowView, r.Config.View.String()),
			attribute.Bool(KeyFlowSequential, r.Config.SequentialReplays),
			attribute.String(KeyFlowFresh, res.Fresh.String()),
		}}
	if b := r.WorkAfterEnd; b != nil && *b != DefaultWorkAfterEnd {
		root.attrs = append(root.attrs, attribute.Int(KeyWorkAfterEnd, *b))
	}
	if len(r.Story) > 0 {
		root.attrs = append(root.attrs, attribute.String(KeyFlowStory, strings.Join(r.Story, "\n")))
	}
	if res.End == flow.Corrupted || res.End == flow.Stuck {
		root.status, root.desc = codes.Error, "the run "+res.End.String()
	}
	nodes := []node{root}

	// Who failed the run, and why: that invocation's span carries core's
	// workflow.error.code. When the run's end landed: a refused write after
	// it was refused run_expired.
	code, failedBy := res.FailureCode()
	endedAt := sim.Time(-1)
	if w := res.FirstEnd(); w != nil {
		endedAt = w.At
	}

	actorNode := make([]int32, len(res.Actors))
	for i := range res.Actors {
		a := &res.Actors[i]
		n := node{kind: entFlowActor, index: int32(i), parent: 0, start: a.Start, end: a.End, id: id(entFlowActor, i), spanKind: trace.SpanKindConsumer}
		switch a.Kind {
		case flow.ActorWorkflow:
			n.svc, n.name = flowSvcWorkflow, ExecuteSpanPrefix+" "+r.Workflow
			n.attrs = append(n.attrs,
				attribute.String(KeyMessageID, fmt.Sprintf("msg_%d", a.Message)),
				attribute.Int(KeyDeliveryAttempt, int(a.Delivery)),
				attribute.String(KeyFlowCause, a.Cause.String()))
		case flow.ActorResume:
			// An outside system's resumeHook (core's own span name).
			n.svc, n.name, n.spanKind = flowSvcWorkflow, HookResumeSpanName, trace.SpanKindProducer
			n.attrs = append(n.attrs, attribute.String(KeyFlowEntity, entityID(program.EntityHook, a.Ordinal)))
		case flow.ActorStep, flow.ActorInline:
			n.svc, n.name = flowSvcStep, StepSpanPrefix+" "+a.Name
			n.attrs = append(n.attrs,
				attribute.String(KeyStepID, entityID(program.EntityStep, a.Ordinal)),
				attribute.String(KeyStepName, a.Name),
				attribute.Bool(KeyStepInline, a.Kind == flow.ActorInline))
			if a.Kind == flow.ActorInline {
				n.parent, n.spanKind = actorNode[a.Parent], trace.SpanKindInternal
			} else {
				n.attrs = append(n.attrs, attribute.String(KeyMessageID, fmt.Sprintf("msg_%d", a.Message)))
			}
			if a.Body {
				n.events = append(n.events, event{name: BodyStartEvent, at: a.BodyStart})
				if a.BodyEnd > 0 {
					n.events = append(n.events, event{name: BodyEndEvent, at: a.BodyEnd})
				}
			}
		}
		if a.Killed {
			n.attrs = append(n.attrs, attribute.Bool(KeyFlowKilled, true))
			n.status, n.desc = codes.Error, "killed: the time limit, or a crash between a claim and its body"
		}
		if a.Unfinished {
			n.attrs = append(n.attrs, attribute.Bool(KeyFlowUnfinished, true))
		}
		if int32(i) == failedBy {
			n.attrs = append(n.attrs, attribute.String(KeyErrorCode, code))
			n.status, n.desc = codes.Error, "failed the run "+code
		}
		actorNode[i] = int32(len(nodes))
		nodes = append(nodes, n)
	}
	for i := range res.Writes {
		w := &res.Writes[i]
		// Why the World refused it, as core's World errors say: the tail
		// fence, the run had ended when it landed, or its entity was
		// another's already.
		result := "ok"
		switch {
		case w.Accepted:
		case w.Fenced:
			// The tail fence's or the count guard's refusal: core's
			// PreconditionFailedError (HTTP 412).
			result = "precondition_failed"
		case endedAt >= 0 && w.At >= endedAt:
			result = "run_expired"
		default:
			result = "entity_conflict"
		}
		n := node{kind: entFlowWrite, index: int32(i), parent: actorNode[w.By], svc: flowSvcWorld, spanKind: trace.SpanKindClient,
			name: EventsCreateSpanName + " " + w.Type.String(), start: w.Issued, end: w.At, id: id(entFlowWrite, i),
			attrs: []attribute.KeyValue{
				attribute.String(KeyRPCMethod, "events.create"),
				attribute.String(KeyEventType, w.Type.String()),
				attribute.String(KeyEventResult, result),
			}}
		if w.Saw >= 0 {
			n.attrs = append(n.attrs, attribute.Int(KeyFlowEntrySaw, int(w.Saw)), attribute.Int(KeyFlowEntryLoaded, int(w.Loaded)))
		}
		if w.Kind == program.EntityStep {
			n.attrs = append(n.attrs, attribute.String(KeyStepID, entityID(w.Kind, w.Ordinal)))
			if w.Type == program.StepStarted && w.Name != "" {
				// A lazy start: an inline claim that creates its step,
				// logging its step_created with it.
				n.attrs = append(n.attrs, attribute.Bool(KeyEventCreatesStep, w.Accepted))
			}
		} else if w.Kind != program.EntityNone {
			n.attrs = append(n.attrs, attribute.String(KeyFlowEntity, entityID(w.Kind, w.Ordinal)))
		}
		nodes = append(nodes, n)
	}
	for i := range res.Calls {
		c := &res.Calls[i]
		n := node{kind: entFlowCall, index: int32(i), parent: actorNode[c.Actor], svc: flowSvcWorld, spanKind: trace.SpanKindClient,
			name: WorldSpanPrefix + c.Kind.String(), start: c.Start, end: c.End, id: id(entFlowCall, i),
			attrs: []attribute.KeyValue{attribute.String(KeyRPCMethod, c.Kind.String())}}
		if c.Kind == flow.CallList {
			n.attrs = append(n.attrs, attribute.Int(KeyFlowServed, int(c.Served)))
		}
		nodes = append(nodes, n)
	}
	k := 0
	for i := range res.Actors {
		for _, rp := range res.Actors[i].Replays {
			n := node{kind: entFlowReplay, index: int32(k), parent: actorNode[i], svc: nodes[actorNode[i]].svc, spanKind: trace.SpanKindInternal,
				name: ReplaySpanName, start: rp.Start, end: rp.At, id: id(entFlowReplay, k),
				attrs: []attribute.KeyValue{
					attribute.Int(KeyFlowSaw, int(rp.Saw)),
					attribute.String(KeyFlowOutcome, rp.Outcome.String()),
					attribute.Int(KeyFlowMinted, int(rp.Minted)),
				}}
			if rp.Outcome == program.Diverged {
				n.attrs = append(n.attrs, attribute.String(KeyFlowDivergence, rp.Div.String()), attribute.Int(KeyFlowDivergedAt, int(rp.DivAt)))
				n.status, n.desc = codes.Error, fmt.Sprintf("diverged at event %d (%s)", rp.DivAt, rp.Div)
			}
			nodes = append(nodes, n)
			k++
		}
	}
	if len(nodes) > buildSpanLimit {
		return nil, trace.TraceID{}, fmt.Errorf("%d spans: more than the %d one export holds", len(nodes), buildSpanLimit)
	}

	e := newEmitter(flowResources(), epoch, len(nodes))
	defer e.close()
	if err := e.emit(tid, nodes); err != nil {
		return nil, trace.TraceID{}, fmt.Errorf("traces: %s: %w", FlowRunName(r.Seed), err)
	}
	if err := stampable(e.spans, epoch); err != nil {
		return nil, trace.TraceID{}, err
	}
	return e.spans, tid, nil
}

// flowRunStatus is the run row's status a flow run ends with: a stuck run
// is still running.
func flowRunStatus(e flow.End) string {
	switch e {
	case flow.Completed:
		return "completed"
	case flow.Failed, flow.Corrupted:
		return "failed"
	}
	return "running"
}

// entityID names an entity by its kind and ordinal, as simlab's fan-out
// traces name a step (step_3).
func entityID(k program.EntityKind, ord int32) string { return fmt.Sprintf("%s_%d", k, ord) }

func flowResources() []*resource.Resource {
	base := func(name string) *resource.Resource {
		return resource.NewSchemaless(attribute.String(KeyServiceName, name), attribute.String(KeyServiceNamespace, "simlab"))
	}
	return []*resource.Resource{flowSvcWorld: base("simlab-world"), flowSvcWorkflow: base("simlab-workflow"), flowSvcStep: base("simlab-step")}
}

// flowKey folds what shapes a flow run's spans into one word, as
// historyKey does for a History: the run's own hash, its seed and view,
// the workflow's name and the epoch.
func flowKey(r FlowRun, epoch time.Time) uint64 {
	f := fnv.New64a()
	f.Write([]byte("simlab/traces/flow/v1\x00"))
	f.Write([]byte(r.Workflow))
	f.Write([]byte{0})
	f.Write([]byte(r.Config.View.String()))
	var b [8]byte
	seq := uint64(0)
	if r.Config.SequentialReplays {
		seq = 1
	}
	for _, x := range []uint64{r.Result.Stats.Hash, seq, uint64(epoch.UnixNano())} {
		putUint64(b[:], x)
		f.Write(b[:])
	}
	return mix(f.Sum64() + mix(r.Seed+golden))
}
