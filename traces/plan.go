package traces

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// ErrNotRecorded is returned by Build for a History simulated without
// model.Options{Record: true}: it has messages but no publishes or calls, and
// spans built from it would silently miss most of the contract.
var ErrNotRecorded = errors.New("history was not recorded (run the model with Options{Record: true})")

// errHistory marks an index in the History that points outside its table:
// a model bug, reported rather than turned into a panic or a wrong parent.
var errHistory = errors.New("inconsistent history")

// node is one planned span. Build plans every span of a run before it starts
// any, so that a MaxSpans budget can choose among them knowing the whole tree
// and so that the SDK sees each span exactly once, start to end.
type node struct {
	kind       entity
	index      int32 // the entity's index in its History table
	parent     int32 // index of the parent node in the run's plan; -1 for the root
	svc        int32 // index into the Build's service table
	name       string
	spanKind   trace.SpanKind
	start, end sim.Time
	attrs      []attribute.KeyValue
	events     []event
	link       trace.SpanID // the queue.publish a queue.process follows; zero for none
	status     codes.Code
	desc       string
	must       bool // kept whatever MaxSpans says (see keep)
	id         trace.SpanID
}

type event struct {
	name  string
	at    sim.Time
	attrs []attribute.KeyValue
}

// Services: the client and the World, then an orchestrator and a consumer per
// deployment, so that Jaeger's service list reads as the simulated system.
const (
	svcWorld  int32 = 0
	svcClient int32 = 1
)

func svcOrchestrator(dep int32) int32 { return 2 + 2*dep }
func svcConsumer(dep int32) int32     { return 3 + 2*dep }

// planner turns one History into per-run span plans.
type planner struct {
	h        *model.History
	epoch    time.Time
	key      uint64
	runs     []runEntities
	procNode []int32 // per delivery: its queue.process node in its run's plan, or -1
	stepNode []int32 // per delivery: its step.execute node, or -1
	msgPub   []int32 // per message: the publish that created it, or -1
	// claimAttempt is, per delivery, the attempt its accepted step_started
	// answered (core's step.attempt), or 0.
	claimAttempt []int32
}

// runEntities are the History rows that belong to one run, in table order.
type runEntities struct {
	dels, pubs, calls, faults []int32
}

func newPlanner(h *model.History, epoch time.Time) (*planner, error) {
	if err := check(h); err != nil {
		return nil, err
	}
	p := &planner{
		h:            h,
		epoch:        epoch,
		key:          historyKey(h, epoch),
		runs:         make([]runEntities, len(h.Runs)),
		procNode:     fill(len(h.Deliveries)),
		stepNode:     fill(len(h.Deliveries)),
		msgPub:       fill(len(h.Messages)),
		claimAttempt: make([]int32, len(h.Deliveries)),
	}
	for i := range h.Deliveries {
		r := h.Deliveries[i].Run
		p.runs[r].dels = append(p.runs[r].dels, int32(i))
	}
	for i := range h.Publishes {
		pub := &h.Publishes[i]
		p.runs[pub.Run].pubs = append(p.runs[pub.Run].pubs, int32(i))
		if pub.Msg >= 0 && p.msgPub[pub.Msg] < 0 {
			p.msgPub[pub.Msg] = int32(i)
		}
	}
	for i := range h.Calls {
		c := &h.Calls[i]
		p.runs[c.Run].calls = append(p.runs[c.Run].calls, int32(i))
		if c.Event == world.EvStepStarted && c.Op == model.OpEventsCreate && c.Result == world.OK && c.Caller.Delivery >= 0 {
			p.claimAttempt[c.Caller.Delivery] = c.Attempt
		}
	}
	for i := range h.Faults {
		r := h.Faults[i].Run
		p.runs[r].faults = append(p.runs[r].faults, int32(i))
	}
	return p, nil
}

func fill(n int) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = -1
	}
	return s
}

// check rejects a History whose cross-references Build would follow out of
// range, naming the row and the field.
func check(h *model.History) error {
	if h == nil {
		return fmt.Errorf("traces: nil history: %w", errHistory)
	}
	if len(h.Messages) > 0 && len(h.Publishes) == 0 && len(h.Calls) == 0 {
		return fmt.Errorf("traces: %d messages, no publishes or calls: %w", len(h.Messages), ErrNotRecorded)
	}
	nr, nd, nm, nf, ndep := len(h.Runs), len(h.Deliveries), len(h.Messages), len(h.Fanouts), len(h.Deployments)
	bad := func(what string, i int, field string, v int32, n int) error {
		return fmt.Errorf("traces: %s %d: %s %d outside [0,%d): %w", what, i, field, v, n, errHistory)
	}
	for i, r := range h.Runs {
		if r.Deployment < 0 || int(r.Deployment) >= ndep {
			return bad("run", i, "Deployment", r.Deployment, ndep)
		}
	}
	for i, d := range h.Deliveries {
		switch {
		case d.Run < 0 || int(d.Run) >= nr:
			return bad("delivery", i, "Run", int32(d.Run), nr)
		case int(d.Msg) >= nm:
			return bad("delivery", i, "Msg", d.Msg, nm)
		case d.Msg < 0 && (d.Parent < 0 || int(d.Parent) >= nd):
			return bad("delivery", i, "Parent", d.Parent, nd)
		case d.Deployment < 0 || int(d.Deployment) >= ndep:
			return bad("delivery", i, "Deployment", d.Deployment, ndep)
		case d.Target < 0 || int(d.Target) >= ndep:
			return bad("delivery", i, "Target", d.Target, ndep)
		case int(d.Fanout) >= nf:
			return bad("delivery", i, "Fanout", d.Fanout, nf)
		}
	}
	for i, m := range h.Messages {
		switch {
		case m.Target < 0 || int(m.Target) >= ndep:
			return bad("message", i, "Target", m.Target, ndep)
		case int(m.Origin) >= nm:
			return bad("message", i, "Origin", m.Origin, nm)
		}
	}
	for i, pub := range h.Publishes {
		switch {
		case pub.Run < 0 || int(pub.Run) >= nr:
			return bad("publish", i, "Run", int32(pub.Run), nr)
		case int(pub.Msg) >= nm:
			return bad("publish", i, "Msg", pub.Msg, nm)
		case int(pub.Caller.Delivery) >= nd:
			return bad("publish", i, "Caller.Delivery", pub.Caller.Delivery, nd)
		}
	}
	for i, c := range h.Calls {
		switch {
		case c.Run < 0 || int(c.Run) >= nr:
			return bad("call", i, "Run", int32(c.Run), nr)
		case int(c.Caller.Delivery) >= nd:
			return bad("call", i, "Caller.Delivery", c.Caller.Delivery, nd)
		case int(c.Fanout) >= nf:
			return bad("call", i, "Fanout", c.Fanout, nf)
		}
	}
	for i, f := range h.Faults {
		switch {
		case f.Run < 0 || int(f.Run) >= nr:
			return bad("fault", i, "Run", int32(f.Run), nr)
		case int(f.Delivery) >= nd:
			return bad("fault", i, "Delivery", f.Delivery, nd)
		}
	}
	return nil
}

// deploymentName is the name a deployment index is shown by.
func (p *planner) deploymentName(dep int32) string { return p.h.Deployments[dep].Name }

// actor is the node a delivery's own calls and publishes hang under: its
// step.execute for a step, its queue.process for a workflow invocation. A
// caller outside this run (the client, the World, or a model bug) gets the
// run's root.
func (p *planner) actor(d int32, run world.RunID) int32 {
	if d < 0 || p.h.Deliveries[d].Run != run {
		return 0
	}
	if n := p.stepNode[d]; n >= 0 {
		return n
	}
	if n := p.procNode[d]; n >= 0 {
		return n
	}
	return 0
}

// deliverySpan is the span that stands for a delivery as a whole (its
// queue.process, or an inline step's step.execute): where its faults go.
func (p *planner) deliverySpan(d int32, run world.RunID) int32 {
	if d < 0 || p.h.Deliveries[d].Run != run {
		return 0
	}
	if n := p.procNode[d]; n >= 0 {
		return n
	}
	if n := p.stepNode[d]; n >= 0 {
		return n
	}
	return 0
}

// callerService is where a call or publish is recorded: the process of the
// delivery it belongs to, or the client or the World for the run's root.
func callerService(nodes []node, parent int32, kind model.CallerKind) int32 {
	if parent > 0 {
		return nodes[parent].svc
	}
	if kind == model.CallerWorld {
		return svcWorld
	}
	return svcClient
}

// plan lays out every span of run r: the root, then each delivery's
// queue.process and step.execute, then publishes, then store calls, each
// group in History order so that the plan, and the order Build emits spans
// in, is a function of the History alone.
func (p *planner) plan(r int32) []node {
	h := p.h
	run := world.RunID(r)
	ents := &p.runs[r]
	tid := traceIDFor(p.key, r)
	info := &h.Runs[r]
	nodes := make([]node, 0, 1+2*len(ents.dels)+len(ents.pubs)+len(ents.calls))

	status := world.RunPending
	var completedAt sim.Time
	if int(r) < len(h.FinalRuns) {
		status = h.FinalRuns[r].Status
		completedAt = h.FinalRuns[r].CompletedAt
	}
	root := node{
		kind: entRun, index: r, parent: -1, svc: svcWorld, name: RunSpanName,
		spanKind: trace.SpanKindInternal, start: info.StartAt, end: info.StartAt, must: true,
		attrs: []attribute.KeyValue{
			attribute.String(KeyRunID, model.RunName(info.ID)),
			attribute.String(KeyWorkflowName, WorkflowName),
			attribute.String(KeyRunStatus, status.String()),
			attribute.String(KeyDeploymentID, p.deploymentName(info.Deployment)),
			attribute.String(KeyRunEngine, info.Engine.String()),
			attribute.Int(KeyRunFanouts, len(info.Fanouts)),
			// A string keeps every uint64 seed exact; an int64 attribute
			// would turn seeds above 2^63 negative.
			attribute.String(KeySeed, strconv.FormatUint(h.Seed, 10)),
			attribute.String(KeyScenario, h.Scenario),
			attribute.String(KeyWorld, h.Profile),
		},
	}
	if len(h.Variants) > 0 {
		root.attrs = append(root.attrs, attribute.StringSlice(KeyVariants, h.Variants))
	}
	if b := h.Declared.WorkAfterEnd; b != DefaultWorkAfterEnd {
		// A scenario's own budget, for check --trace's judge of
		// bounded-work-after-end (the default is not written).
		root.attrs = append(root.attrs, attribute.Int(KeyWorkAfterEnd, int(b)))
	}
	if status == world.RunFailed {
		root.status, root.desc = codes.Error, "run failed"
	}
	if status.Terminal() {
		root.end = max(root.end, completedAt)
	}
	nodes = append(nodes, root)

	for _, d := range ents.dels {
		del := &h.Deliveries[d]
		if del.Msg >= 0 {
			p.procNode[d] = int32(len(nodes))
			nodes = append(nodes, p.process(d, tid))
		}
		if del.Kind == model.MsgStep {
			p.stepNode[d] = int32(len(nodes))
			nodes = append(nodes, p.step(d))
		}
	}
	// Parents are resolved once every delivery of the run has its nodes: an
	// inline step may in principle be recorded before its invocation.
	for _, d := range ents.dels {
		del := &h.Deliveries[d]
		if n := p.procNode[d]; n >= 0 {
			nodes[n].parent = 0
		}
		n := p.stepNode[d]
		if n < 0 {
			continue
		}
		switch {
		case del.Msg >= 0:
			nodes[n].parent = p.procNode[d]
		default:
			// An inline step runs inside the invocation that created it, and
			// belongs to the process that invocation runs in.
			inv := p.h.Invocation(d)
			par := int32(0)
			if inv >= 0 && h.Deliveries[inv].Run == run {
				par = p.procNode[inv]
			}
			nodes[n].parent = par
			if par > 0 {
				nodes[n].svc = nodes[par].svc
			} else {
				nodes[n].svc = svcOrchestrator(del.Deployment)
			}
			if del.End < del.Start {
				// The model closes only the crashing delivery and its
				// invocation; a sibling still running then keeps End 0.
				// It ended when its invocation did.
				end := h.End
				if inv >= 0 && h.Deliveries[inv].End >= del.Start {
					end = h.Deliveries[inv].End
				}
				nodes[n].end = end
				nodes[n].attrs = append(nodes[n].attrs, attribute.Bool(KeyDeliveryEndInferred, true))
			}
		}
	}
	for i := range nodes {
		// A span must not end before it starts, whatever the History says.
		nodes[i].end = max(nodes[i].end, nodes[i].start)
	}

	for _, i := range ents.pubs {
		pub := &h.Publishes[i]
		parent := p.actor(pub.Caller.Delivery, run)
		nodes = append(nodes, p.publish(i, parent, callerService(nodes, parent, pub.Caller.Kind)))
	}
	for _, i := range ents.calls {
		c := &h.Calls[i]
		parent := p.actor(c.Caller.Delivery, run)
		nodes = append(nodes, p.call(i, parent, callerService(nodes, parent, c.Caller.Kind)))
	}
	for _, i := range ents.faults {
		f := &h.Faults[i]
		n := p.deliverySpan(f.Delivery, run)
		nodes[n].events = append(nodes[n].events, event{
			name: FaultSpanName, at: f.At,
			attrs: []attribute.KeyValue{attribute.String(KeyFaultKind, f.Kind.String())},
		})
		nodes[n].must = true
	}

	// The root spans the run's whole story, including deliveries that found
	// the run already over and faults recorded after its terminal event.
	for i := range nodes {
		n := &nodes[i]
		n.id = spanIDFor(tid, n.kind, n.index)
		nodes[0].start = min(nodes[0].start, n.start)
		nodes[0].end = max(nodes[0].end, n.end)
		for _, e := range n.events {
			nodes[0].start = min(nodes[0].start, e.at)
			nodes[0].end = max(nodes[0].end, e.at)
		}
	}
	return nodes
}

// stepID is a step's id as spans carry it (core's are strings).
func stepID(s world.StepID) string { return "step_" + strconv.Itoa(int(s)) }

// queueName is the queue a message is published to: core publishes every
// invocation, step or workflow, on the workflow's queue.
func queueName(model.MsgKind) string { return "__wkf_workflow_fanout" }

func msgKind(k model.MsgKind) string {
	if k == model.MsgWorkflow {
		return "workflow"
	}
	return "step"
}

// process plans a delivery's queue.process span; its parent is the root.
func (p *planner) process(d int32, tid trace.TraceID) node {
	h := p.h
	del := &h.Deliveries[d]
	msg := &h.Messages[del.Msg]
	svc := svcConsumer(del.Deployment)
	if del.Kind == model.MsgWorkflow {
		svc = svcOrchestrator(del.Deployment)
	}
	n := node{
		kind: entProcess, index: d, svc: svc, name: ExecuteSpanName,
		spanKind: trace.SpanKindConsumer, start: del.Start, end: del.End,
		attrs: []attribute.KeyValue{
			attribute.String(KeyMessagingSystem, "simlab-queue"),
			attribute.String(KeyMessagingOperation, "process"),
			attribute.String(KeyMessageID, messageID(msg.ID)),
			attribute.String(KeyMessagingDestination, queueName(del.Kind)),
			attribute.String(KeyRunID, model.RunName(del.Run)),
			attribute.String(KeyWorkflowName, WorkflowName),
			attribute.Int(KeyDeliveryAttempt, int(del.Attempt)),
			attribute.String(KeyConsumerDeploymentID, p.deploymentName(del.Deployment)),
			attribute.String(KeyConsumerVersion, del.Version.String()),
			attribute.String(KeyMessageKind, msgKind(del.Kind)),
			attribute.String(KeyMessageTargetID, p.deploymentName(del.Target)),
			attribute.String(KeyDeliveryDisposition, del.Disposition.String()),
		},
	}
	if del.Deployment != del.Target {
		n.attrs = append(n.attrs, attribute.Bool(KeyMisdelivered, true))
	}
	if del.Kind == model.MsgStep {
		// Core sets it on the workflow.execute span of the invocation that
		// handles a dispatched step (runtime.js), not on step.execute.
		n.attrs = append(n.attrs, attribute.String(KeyDispatchPrologue, p.prologue(del)))
	}
	if del.Rerouted {
		n.attrs = append(n.attrs, attribute.Bool(KeyRerouted, true))
	}
	if pub := p.msgPub[del.Msg]; pub >= 0 {
		n.link = spanIDFor(tid, entPublish, pub)
	}
	if del.Disposition == model.DispCrash {
		n.status, n.desc = codes.Error, "consumer crashed"
	}
	return n
}

// stepOutcome names what a step delivery did, extending the model's outcomes
// with why a delivery that never reached one ended.
func stepOutcome(del *model.Delivery) string {
	if del.Outcome != model.OutcomeNone {
		return del.Outcome.String()
	}
	switch {
	case del.Rerouted:
		return "rerouted"
	case del.Disposition == model.DispCrash:
		return "crashed"
	case del.Disposition == model.DispPending:
		return "pending"
	}
	return "none"
}

// prologue is the dispatch prologue a queued step delivery took. A delivery
// that ended before its prologue (pending when the run stopped) gets the one
// the consumer would have taken, by the consumer's own rule: fetch-free only
// when a v2 consumer holds a message with runContext.
func (p *planner) prologue(del *model.Delivery) string {
	if del.Prologue != model.PrologueNone {
		return del.Prologue.String()
	}
	if p.h.Messages[del.Msg].HasCtx && del.Version != model.V1 {
		return model.PrologueRunContext.String()
	}
	return model.PrologueRunsGet.String()
}

// step plans a step delivery's step.execute span; plan sets its parent.
func (p *planner) step(d int32) node {
	h := p.h
	del := &h.Deliveries[d]
	name := "step_" + strconv.Itoa(int(del.Step))
	var fanIndex int32 = -1
	if del.Fanout >= 0 {
		f := &h.Fanouts[del.Fanout]
		fanIndex = f.Index
		name = model.StepName(f.Index, int32(del.Step-f.FirstStep))
	}
	n := node{
		kind: entStep, index: d, svc: svcConsumer(del.Deployment), name: StepSpanName,
		spanKind: trace.SpanKindInternal, start: del.Start, end: del.End,
		attrs: []attribute.KeyValue{
			attribute.String(KeyStepID, stepID(del.Step)),
			attribute.String(KeyStepName, StepFunction),
			attribute.String(KeyRunID, model.RunName(del.Run)),
			attribute.String(KeyStepLabel, name),
			attribute.Int(KeyFanoutID, int(del.Fanout)),
			attribute.Int(KeyFanoutIndex, int(fanIndex)),
			attribute.String(KeyStepOutcome, stepOutcome(del)),
			attribute.Bool(KeyStepInline, del.Msg < 0),
			attribute.Bool(KeyStepBodyRan, del.BodyRan),
		},
	}
	if del.Msg >= 0 {
		n.attrs = append(n.attrs, attribute.Int(KeyDeliveryAttempt, int(del.Attempt)))
	}
	if a := p.claimAttempt[d]; a > 0 {
		n.attrs = append(n.attrs, attribute.Int(KeyStepAttempt, int(a)))
	}
	switch del.Outcome {
	case model.OutcomeCompleted, model.OutcomeFailed:
		n.attrs = append(n.attrs, attribute.String(KeyStepStatus, del.Outcome.String()))
	case model.OutcomeRetry:
		n.attrs = append(n.attrs, attribute.String(KeyStepStatus, "retrying"))
	case model.OutcomeSkipped, model.OutcomeGone:
		n.attrs = append(n.attrs, attribute.Bool(KeyStepSkipped, true), attribute.String(KeyStepSkipReason, del.Outcome.String()))
	}
	if del.LastComplete {
		n.attrs = append(n.attrs, attribute.Bool(KeyLastCompleter, true))
	}
	if del.Continued {
		n.attrs = append(n.attrs, attribute.Bool(KeyContinued, true))
	}
	if del.Recovered {
		n.attrs = append(n.attrs, attribute.Bool(KeyResilientRecovered, true))
	}
	if del.BodyRan {
		n.events = append(n.events, event{name: BodyStartEvent, at: del.BodyStart})
		if del.BodyEnd > 0 {
			n.events = append(n.events, event{name: BodyEndEvent, at: del.BodyEnd})
		}
	}
	if del.Outcome == model.OutcomeFailed {
		n.status, n.desc = codes.Error, "step failed"
	}
	return n
}

// publish plans a queue.publish span: from the publish call to the queue's
// answer (the producer waits for it).
func (p *planner) publish(i, parent, svc int32) node {
	h := p.h
	pub := &h.Publishes[i]
	end := max(pub.Done, pub.At)
	n := node{
		kind: entPublish, index: i, parent: parent, svc: svc, name: PublishSpanName,
		spanKind: trace.SpanKindProducer, start: pub.At, end: end,
		attrs: []attribute.KeyValue{
			attribute.String(KeyMessagingSystem, "simlab-queue"),
			attribute.String(KeyMessagingOperation, "send"),
			attribute.String(KeyDispatchSite, pub.Site.String()),
			attribute.String(KeyProducerVersion, pub.Producer.String()),
		},
	}
	if pub.Step >= 0 {
		n.attrs = append(n.attrs, attribute.String(KeyStepID, stepID(pub.Step)))
	}
	if pub.Deduped {
		n.attrs = append(n.attrs, attribute.Bool(KeyPublishDeduped, true))
	}
	if pub.Msg < 0 {
		// A deduplicated publish made no message: nothing to identify or
		// carry, and no runContext went anywhere.
		n.attrs = append(n.attrs, attribute.Bool(KeyRunContextPresent, false))
		return n
	}
	m := &h.Messages[pub.Msg]
	n.attrs = append(n.attrs,
		attribute.String(KeyMessageID, messageID(m.ID)),
		attribute.String(KeyMessagingDestination, queueName(m.Kind)),
		attribute.Bool(KeyRunContextPresent, m.HasCtx),
		attribute.Bool(KeyStepInputPresent, m.HasInput),
		attribute.String(KeyMessageKind, msgKind(m.Kind)),
		attribute.String(KeyMessageTargetID, p.deploymentName(m.Target)),
		attribute.Int(KeyMismatchRetryCount, int(m.Reroutes)),
	)
	if m.Delay > 0 {
		n.attrs = append(n.attrs, attribute.Int64(KeyMessageDelayNS, int64(m.Delay)))
	}
	if m.Origin >= 0 {
		n.attrs = append(n.attrs, attribute.String(KeyMessageOriginID, messageID(h.Messages[m.Origin].ID)))
	}
	return n
}

// call plans a store call as a CLIENT span of its caller.
func (p *planner) call(i, parent, svc int32) node {
	c := &p.h.Calls[i]
	name := WorldSpanPrefix + c.Op.String()
	if c.Op == model.OpEventsCreate {
		// Core names a World call <prefix>.<method>, and an events.create
		// by its event type: world.events.create step_started.
		name += " " + c.Event.String()
	}
	n := node{
		kind: entCall, index: i, parent: parent, svc: svc, name: name,
		spanKind: trace.SpanKindClient, start: c.Start, end: c.End,
		attrs: []attribute.KeyValue{
			attribute.String(KeyRPCSystem, "simlab"),
			attribute.String(KeyRPCMethod, name),
			attribute.String(KeyRunID, model.RunName(c.Run)),
			attribute.String(KeyCallCaller, c.Caller.Kind.String()),
			attribute.Int64(KeyCallQueuedNS, int64(c.Served-c.Start)),
		},
	}
	if c.Result != world.OK {
		n.must = true
		// Core's spans show a refused World call as an error whose message
		// is the World's; simlab's names the result.
		n.status, n.desc = codes.Error, c.Result.String()
	}
	switch c.Op {
	case model.OpRunsGet:
		reason := c.Reason.String()
		if c.Reason == model.ReasonNone {
			reason = "none"
		}
		n.attrs = append(n.attrs,
			attribute.String(KeyRunsGetReason, reason),
			attribute.String(KeyRunStatusRead, c.StatusRead.String()),
			attribute.Bool(KeyReadStale, c.Stale))
		if c.Reason == model.ReasonLastCompleter {
			n.must = true
			if c.Fanout >= 0 {
				n.attrs = append(n.attrs, attribute.Int(KeyFanoutID, int(c.Fanout)))
			}
		}
	case model.OpEventsCreate:
		n.attrs = append(n.attrs,
			attribute.String(KeyEventType, c.Event.String()),
			attribute.String(KeyEventResult, c.Result.String()))
		if c.Step >= 0 {
			n.attrs = append(n.attrs, attribute.String(KeyStepID, stepID(c.Step)))
		}
		if c.Event == world.EvStepStarted && c.Result == world.OK {
			n.attrs = append(n.attrs, attribute.Int(KeyStepAttempt, int(c.Attempt)))
			if c.Lazy {
				// An inline step's claim: the World logged its step_created
				// with it (core writes none for an inline step).
				n.attrs = append(n.attrs, attribute.Bool(KeyEventCreatesStep, true))
			}
		}
		if c.Fanout >= 0 {
			n.attrs = append(n.attrs, attribute.Int(KeyFanoutID, int(c.Fanout)))
		}
		if c.LogPos >= 0 {
			n.attrs = append(n.attrs, attribute.Int(KeyEventLogPos, int(c.LogPos)))
		}
		if c.Result == world.TooEarly {
			// The World answers with the instant the step may start; put it on
			// the same clock as the span timestamps.
			at := p.epoch.Add(time.Duration(c.RetryAfter)).UnixNano()
			n.attrs = append(n.attrs, attribute.Int64(KeyEventRetryAfterUnixNS, at))
		}
		if c.WasLast {
			n.attrs = append(n.attrs, attribute.Bool(KeyFanoutWasLast, true))
		}
		if c.PendingEmpty {
			// An inline step's step_completed answered with the log's
			// delta, the invocation's pending check (no list follows).
			n.attrs = append(n.attrs, attribute.Bool(KeyFanoutPendingEmpty, true))
			if c.LogTerminal {
				n.attrs = append(n.attrs, attribute.Bool(KeyLogTerminal, true))
			}
		}
	case model.OpEventsList:
		if c.LogTerminal {
			// The log it answered with holds the run's terminal event.
			n.attrs = append(n.attrs, attribute.Bool(KeyLogTerminal, true))
		}
		if c.Fanout >= 0 {
			n.attrs = append(n.attrs,
				attribute.Int(KeyFanoutID, int(c.Fanout)),
				attribute.Bool(KeyFanoutPendingEmpty, c.PendingEmpty))
		}
	}
	return n
}
