package shell

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/weirflow/weir/engine"
)

// traceEnv returns env with the trace context a command continues
// (spec/workflow-file.md, How a command runs): TRACEPARENT (and
// TRACESTATE, when it has one) of the span of ctx, the attempt's span of
// a worker that traces (weirotel.Middleware); else TRACEPARENT of the
// trace context stored with the job (traceparent, when well formed),
// whose span is the submit's or the enqueue's. The worker's own
// TRACEPARENT and TRACESTATE are not passed on: a command without a trace
// context of its job gets none.
func traceEnv(ctx context.Context, env []string, traceparent string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TRACEPARENT=") && !strings.HasPrefix(kv, "TRACESTATE=") {
			out = append(out, kv)
		}
	}
	if trace.SpanContextFromContext(ctx).IsValid() {
		c := propagation.MapCarrier{}
		propagation.TraceContext{}.Inject(ctx, c)
		if tp := c["traceparent"]; engine.ValidateTraceParent(tp) == nil {
			out = append(out, "TRACEPARENT="+tp)
			if ts := c["tracestate"]; ts != "" {
				out = append(out, "TRACESTATE="+ts)
			}
			return out
		}
	}
	if traceparent != "" && engine.ValidateTraceParent(traceparent) == nil {
		out = append(out, "TRACEPARENT="+traceparent)
	}
	return out
}
