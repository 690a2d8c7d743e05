package client

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// traceParent returns the W3C traceparent of the span context in ctx (an
// OpenTelemetry span, or a remote span context a propagator extracted),
// or "" when ctx carries none. Enqueue and Submit store it with the job or
// the workflow, and the store hands it back with every claim of its jobs,
// so that a worker continues the trace (package weirotel). It uses only
// the OpenTelemetry API: a program that sets up no tracing pays one
// context lookup.
func traceParent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c["traceparent"]
}
