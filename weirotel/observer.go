package weirotel

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/weirflow/weir/worker"
)

// Observer returns a worker observer that records the transitions of the
// traced jobs a worker finishes as spans of their trace, children of the
// stored trace context (siblings of the attempts' spans):
//
//	"settle <queue> [<task>]"  an attempt of this worker settled: weir.outcome
//	                           (succeeded, retried, failed, cancelled, released,
//	                           lease_lost), weir.run_at for a retry, the error
//	"promote <queue>"          its finish pushed a job (a dependent whose
//	                           dependencies all ended, an undo job): weir.job.id
//	"end workflow"             its finish ended the workflow: weir.workflow.state
//
// Each is a span of no length at the time the worker learnt of it (the
// store's transition is one atomic call). Events of jobs stored without a
// trace context, and of other workers' leases that this worker's sweep
// expired, record nothing. Give it as worker.Config.Observer, or call it
// from an observer of your own (with metrics.WorkerMetrics.Observe, say).
func Observer(tp trace.TracerProvider) worker.Observer {
	tracer := tp.Tracer(ScopeName)
	return func(e worker.Event) {
		ctx, sc := Extract(context.Background(), e.TraceParent)
		if !sc.IsValid() {
			return
		}
		var name string
		attrs := []attribute.KeyValue{AttrJob.String(e.JobID)}
		switch e.Kind {
		case worker.EventSucceeded, worker.EventRetried, worker.EventFailed, worker.EventCancelled,
			worker.EventReleased, worker.EventLeaseLost:
			name = "settle " + e.Queue
			if e.Task != "" {
				name += " " + e.Task
			}
			attrs = append(attrs, AttrQueue.String(e.Queue), AttrAttempt.Int(e.Attempt), AttrOutcome.String(string(e.Kind)))
			if e.Workflow != "" {
				attrs = append(attrs, AttrWorkflow.String(e.Workflow), AttrTask.String(e.Task))
			}
			if e.Kind == worker.EventRetried && !e.RunAt.IsZero() {
				attrs = append(attrs, AttrRunAt.String(e.RunAt.UTC().Format(time.RFC3339Nano)))
			}
		case worker.EventPromoted:
			name = "promote " + e.Queue
			attrs = append(attrs, AttrQueue.String(e.Queue))
		case worker.EventWorkflowEnded:
			name = "end workflow"
			attrs = []attribute.KeyValue{AttrWorkflow.String(e.Workflow), AttrWorkflowState.String(string(e.WorkflowState))}
		default:
			return
		}
		now := time.Now()
		_, span := tracer.Start(ctx, name, trace.WithTimestamp(now), trace.WithAttributes(attrs...))
		if e.Err != "" && e.Kind != worker.EventSucceeded {
			span.SetStatus(codes.Error, e.Err)
		}
		span.End(trace.WithTimestamp(now))
	}
}
