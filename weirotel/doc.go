// Package weirotel continues OpenTelemetry traces through weir: a workflow
// submitted, or a job enqueued, with a span in its context is one trace
// whose spans are its attempts, on whatever workers run them.
//
// The client stores the W3C trace context (traceparent) of the context
// given to client.Enqueue or Client.Submit with the job or the workflow;
// the store hands it back with every claim of its jobs
// (worker.JobInfo.TraceParent). Middleware starts each attempt's span as a
// child of that context, and Observer records the transitions a worker's
// finishes make (an attempt settled, dependents promoted, the workflow
// ended) as spans of the same trace:
//
//	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter))
//	w := worker.New(store, worker.Config{
//		ID:         "render-1",
//		Middleware: []worker.Middleware{weirotel.Middleware(tp, weirotel.WorkerID("render-1"))},
//		Observer:   weirotel.Observer(tp),
//	})
//
// WorkerID (or WorkerIDFunc, for the ID worker.New draws) names the worker
// in each attempt's span, as messaging.client.id: the worker its claim
// recorded as the job's (weir.Job.Worker).
//
// weir forces no exporter and no SDK on a program: this package uses the
// OpenTelemetry API only, and the program gives it the TracerProvider it
// set up (otel.GetTracerProvider() for the global one). Package client
// depends on the API alone. spec/tracing.md says what is stored where.
package weirotel
