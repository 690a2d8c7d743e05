package rest

import (
	"net/http"

	"github.com/weirflow/weir/engine"
)

// traceParent is the request's W3C traceparent header when it is well
// formed (engine.ValidateTraceParent), else "": a receiver ignores a
// malformed one, as W3C Trace Context says. A submit or an enqueue stores
// it with the workflow or job (spec/tracing.md).
func traceParent(r *http.Request) string {
	tp := r.Header.Get("traceparent")
	if engine.ValidateTraceParent(tp) != nil {
		return ""
	}
	return tp
}
