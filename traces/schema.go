package traces

import semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

// The trace schema (docs/TRACE_SCHEMA.md) in one place: every span name and
// attribute key simlab writes or reads. Names follow the real engine's
// conventions (@workflow/core 5.0.0-beta.52, dist/telemetry/
// semantic-conventions.js) wherever it has one, and OpenTelemetry's semantic
// conventions (the semconv package's keys) for messaging, RPC, service and
// deployment; a fact only simlab knows keeps the simlab. prefix. Tests keep
// the literal strings, so a change here that changes the wire format fails
// them.

// Span names.
const (
	// RunSpanName is simlab's root: one span for a run's whole life, which
	// the real engine does not have (its traces start at workflow.start), so
	// it keeps the simlab prefix.
	RunSpanName = "simlab.run"
	// WorkflowName is the simulated workflow's name; ExecuteSpanName the
	// span of an invocation handling one queue message, as core names it
	// (ExecuteSpanPrefix + " " + the workflow's display name).
	WorkflowName      = "workflow//simlab//fanout"
	ExecuteSpanPrefix = "workflow.execute"
	ExecuteSpanName   = ExecuteSpanPrefix + " fanout"
	// StepFunction is the one step function every branch calls; the span
	// of a step execution is named by the function, never per step.
	StepFunction   = "step//simlab//branch"
	StepSpanPrefix = "step.execute"
	StepSpanName   = StepSpanPrefix + " branch"
	// PublishSpanName is a queue publish; FaultSpanName a fault simlab
	// injected (a zero-length span in the run's trace).
	PublishSpanName = "queue.publish"
	FaultSpanName   = "simlab.fault"
	// HookResumeSpanName is an outside system's resumeHook (core's own
	// span name for it).
	HookResumeSpanName = "hook.resume"
	// A World call's span is WorldSpanPrefix + its method (world.runs.get);
	// an events.create span adds " <event type>".
	WorldSpanPrefix      = "world."
	RunsGetSpanName      = WorldSpanPrefix + "runs.get"
	EventsCreateSpanName = WorldSpanPrefix + "events.create"
	EventsListSpanName   = WorldSpanPrefix + "events.list"
	// Span events on a step span: when its body began and ended.
	BodyStartEvent = "step.body.start"
	BodyEndEvent   = "step.body.end"
)

// Attribute keys of the real engine's conventions.
const (
	KeyRunID                = "workflow.run.id"
	KeyRunStatus            = "workflow.run.status"
	KeyErrorCode            = "workflow.error.code"
	KeyErrorMessage         = "workflow.error.message"
	KeyWorkflowName         = "workflow.name"
	KeyDispatchPrologue     = "workflow.step.dispatch_prologue"
	KeyResilientRecovered   = "workflow.step.resilient_dispatch_recovered"
	KeyMismatchRetryCount   = "workflow.deployment_mismatch.retry_count"
	KeyStepID               = "step.id"
	KeyStepName             = "step.name"
	KeyStepAttempt          = "step.attempt"
	KeyStepStatus           = "step.status"
	KeyStepSkipped          = "step.skipped"
	KeyStepSkipReason       = "step.skip_reason"
	KeyDeploymentID         = string(semconv.DeploymentIDKey)
	KeyMessagingSystem      = string(semconv.MessagingSystemKey)
	KeyMessagingOperation   = string(semconv.MessagingOperationTypeKey)
	KeyMessageID            = string(semconv.MessagingMessageIDKey)
	KeyMessagingDestination = string(semconv.MessagingDestinationNameKey)
	KeyRPCMethod            = string(semconv.RPCMethodKey)
	KeyServiceName          = string(semconv.ServiceNameKey)
	KeyServiceNamespace     = string(semconv.ServiceNamespaceKey)
	KeyServiceVersion       = string(semconv.ServiceVersionKey)
	// KeyRPCSystem is the older semconv name (now rpc.system.name), kept
	// because exported traces already carry it.
	KeyRPCSystem = "rpc.system"
)

// simlab-only attribute keys.
const (
	KeySeed                  = "simlab.seed"
	KeyScenario              = "simlab.scenario"
	KeyWorld                 = "simlab.world"
	KeyVariants              = "simlab.variants"
	KeySpansTotal            = "simlab.spans.total"
	KeySpansDropped          = "simlab.spans.dropped"
	KeyRunEngine             = "simlab.run.engine"
	KeyRunFanouts            = "simlab.run.fanouts"
	KeyFaultKind             = "simlab.fault.kind"
	KeyDeliveryAttempt       = "simlab.delivery.attempt"
	KeyDeliveryDisposition   = "simlab.delivery.disposition"
	KeyDeliveryEndInferred   = "simlab.delivery.end_inferred"
	KeyMisdelivered          = "simlab.delivery.misdelivered"
	KeyRerouted              = "simlab.delivery.rerouted"
	KeyConsumerDeploymentID  = "simlab.consumer.deployment.id"
	KeyConsumerVersion       = "simlab.consumer.version"
	KeyMessageKind           = "simlab.message.kind"
	KeyMessageTargetID       = "simlab.message.target.deployment.id"
	KeyMessageDelayNS        = "simlab.message.delay_ns"
	KeyMessageOriginID       = "simlab.message.origin.id"
	KeyRunContextPresent     = "simlab.run_context.present"
	KeyStepInputPresent      = "simlab.step_input.present"
	KeyDispatchSite          = "simlab.dispatch.site"
	KeyProducerVersion       = "simlab.producer.version"
	KeyPublishDeduped        = "simlab.publish.deduped"
	KeyStepLabel             = "simlab.step.label"
	KeyStepOutcome           = "simlab.step.outcome"
	KeyStepInline            = "simlab.step.inline"
	KeyStepBodyRan           = "simlab.step.body_ran"
	KeyLastCompleter         = "simlab.step.last_completer"
	KeyContinued             = "simlab.step.continued"
	KeyFanoutID              = "simlab.fanout.id"
	KeyFanoutIndex           = "simlab.fanout.index"
	KeyFanoutWasLast         = "simlab.fanout.was_last"
	KeyFanoutPendingEmpty    = "simlab.fanout.pending_empty"
	KeyCallCaller            = "simlab.call.caller"
	KeyCallQueuedNS          = "simlab.call.queued_ns"
	KeyRunsGetReason         = "simlab.runs_get.reason"
	KeyRunStatusRead         = "simlab.run.status_read"
	KeyReadStale             = "simlab.read.stale"
	KeyEventType             = "simlab.event.type"
	KeyEventResult           = "simlab.event.result"
	KeyEventLogPos           = "simlab.event.log_pos"
	KeyEventCreatesStep      = "simlab.event.creates_step"
	KeyEventRetryAfterUnixNS = "simlab.event.retry_after_unix_nano"
	KeyLogTerminal           = "simlab.log.terminal"
	// KeyWorkAfterEnd is the scenario's budget.work_after_end on the run's
	// root, written when it is not DefaultWorkAfterEnd.
	KeyWorkAfterEnd = "simlab.budget.work_after_end"
)

// DefaultWorkAfterEnd is budget.work_after_end's default (model.Defaults).
const DefaultWorkAfterEnd = 2
