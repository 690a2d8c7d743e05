package weirotel

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/weirflow/weir/worker"
)

// ScopeName is the instrumentation scope of the tracers this package asks
// its TracerProvider for.
const ScopeName = "github.com/weirflow/weir/weirotel"

// Attribute keys of the spans of this package.
const (
	AttrQueue       = attribute.Key("weir.queue")
	AttrTask        = attribute.Key("weir.task")
	AttrWorkflow    = attribute.Key("weir.workflow.id")
	AttrJob         = attribute.Key("weir.job.id")
	AttrAttempt     = attribute.Key("weir.attempt")
	AttrMaxAttempts = attribute.Key("weir.max_attempts")
	AttrUndo        = attribute.Key("weir.undo")
	// AttrRetryOf is set on the link of a retry's span: the attempt it
	// retries.
	AttrRetryOf = attribute.Key("weir.retry_of_attempt")
	// AttrOutcome is what a settle span's attempt came to: succeeded,
	// retried, failed, cancelled, released or lease_lost.
	AttrOutcome       = attribute.Key("weir.outcome")
	AttrRunAt         = attribute.Key("weir.run_at")
	AttrWorkflowState = attribute.Key("weir.workflow.state")
	// AttrWorker is the ID of the worker that ran an attempt (WorkerID):
	// OpenTelemetry's messaging.client.id, "a unique identifier for the
	// client that consumes or produces a message", which a worker is.
	AttrWorker = attribute.Key("messaging.client.id")
)

// Option configures Middleware.
type Option func(*options)

type options struct {
	workerID func() string
}

// WorkerID names the worker whose attempts Middleware traces, in place of
// the one the worker package gives (worker.JobInfo.Worker, the ID its
// claims record as the job's worker: weir.Job.Worker, the attempt history,
// the events' worker), for a Middleware wrapping handlers run some other
// way. "" adds no attribute.
func WorkerID(id string) Option {
	return WorkerIDFunc(func() string { return id })
}

// WorkerIDFunc is WorkerID for an ID known only at each attempt:
// Middleware calls id then.
func WorkerIDFunc(id func() string) Option {
	return func(o *options) { o.workerID = id }
}

// Middleware returns a worker middleware that runs each attempt in a span
// of tp's tracer, of kind consumer, named "process <queue>" for a plain
// job, "process <queue> <task>" for a workflow's task and "process <queue>
// <task> undo" for an undo job, with the weir.* attributes above, and
// the ID of the worker running the attempt as AttrWorker
// (worker.JobInfo.Worker, or what WorkerID or WorkerIDFunc gives).
//
// The span's parent is the trace context stored with the job
// (worker.JobInfo.TraceParent): every attempt of a workflow's tasks is a
// child of the span that submitted it, every attempt of a plain job a
// child of the span that enqueued it. A job stored without one gets a new
// trace per attempt. A retry's span (attempt 2 on) also links to the
// stored context, the link's weir.retry_of_attempt naming the attempt it
// retries: the store keeps no span of an earlier attempt, so the link
// points to the submit's span, and the attempts of a job are told apart
// by weir.attempt.
//
// An attempt whose handler returns an error has its span's status set to
// Error and the error recorded; a panic is recorded too, and goes on to
// the worker, which fails the attempt with its stack.
func Middleware(tp trace.TracerProvider, with ...Option) worker.Middleware {
	tracer := tp.Tracer(ScopeName)
	var o options
	for _, f := range with {
		f(&o)
	}
	return func(next worker.Handler) worker.Handler {
		return func(ctx context.Context, j *worker.JobInfo) (err error) {
			parent, stored := Extract(ctx, j.TraceParent)
			attrs := jobAttributes(j)
			id := j.Worker
			if o.workerID != nil {
				id = o.workerID()
			}
			if id != "" {
				attrs = append(attrs, AttrWorker.String(id))
			}
			opts := []trace.SpanStartOption{
				trace.WithSpanKind(trace.SpanKindConsumer),
				trace.WithAttributes(attrs...),
			}
			if stored.IsValid() && j.Attempt > 1 {
				opts = append(opts, trace.WithLinks(trace.Link{
					SpanContext: stored,
					Attributes:  []attribute.KeyValue{AttrRetryOf.Int(j.Attempt - 1)},
				}))
			}
			ctx, span := tracer.Start(parent, SpanName(j), opts...)
			returned := false
			defer func() {
				if !returned {
					// a panic on its way to the worker, which recovers it
					span.SetStatus(codes.Error, "panic")
				}
				span.End()
			}()
			err = next(ctx, j)
			returned = true
			if err != nil {
				span.RecordError(err)
				span.SetStatus(codes.Error, err.Error())
			}
			return err
		}
	}
}

// SpanName is the name of an attempt's span (Middleware).
func SpanName(j *worker.JobInfo) string {
	switch {
	case j.Task == "":
		return "process " + j.Queue
	case j.Undo:
		return "process " + j.Queue + " " + j.Task + " undo"
	}
	return "process " + j.Queue + " " + j.Task
}

func jobAttributes(j *worker.JobInfo) []attribute.KeyValue {
	a := []attribute.KeyValue{
		AttrQueue.String(j.Queue), AttrJob.String(j.ID),
		AttrAttempt.Int(j.Attempt), AttrMaxAttempts.Int(j.MaxAttempts),
	}
	if j.Workflow != "" {
		a = append(a, AttrWorkflow.String(j.Workflow), AttrTask.String(j.Task))
	}
	if j.Undo {
		a = append(a, AttrUndo.Bool(true))
	}
	return a
}

// Extract returns ctx with the span context of traceparent tp as its
// remote parent, and that span context; ctx and an invalid span context
// when tp is "" or malformed.
func Extract(ctx context.Context, tp string) (context.Context, trace.SpanContext) {
	if tp == "" {
		return ctx, trace.SpanContext{}
	}
	pctx := propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": tp})
	sc := trace.SpanContextFromContext(pctx)
	if !sc.IsValid() {
		return ctx, sc
	}
	return pctx, sc
}
