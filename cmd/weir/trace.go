package main

import (
	"context"
	"os"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/weirflow/weir/engine"
)

// envTraceParent is the TRACEPARENT environment variable when it is a
// well-formed W3C traceparent (the environment carrier of OpenTelemetry),
// else "": weir enqueue and weir run store it with the job or workflow,
// so that a traced script's jobs join its trace (spec/tracing.md).
func envTraceParent() string {
	tp := os.Getenv("TRACEPARENT")
	if engine.ValidateTraceParent(tp) != nil {
		return ""
	}
	return tp
}

// traceParentOf is the traceparent of the span of ctx (weir run's, when
// it exports traces), else envTraceParent.
func traceParentOf(ctx context.Context) string {
	if trace.SpanContextFromContext(ctx).IsValid() {
		c := propagation.MapCarrier{}
		propagation.TraceContext{}.Inject(ctx, c)
		if engine.ValidateTraceParent(c["traceparent"]) == nil {
			return c["traceparent"]
		}
	}
	return envTraceParent()
}
