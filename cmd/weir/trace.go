package main

import (
	"os"

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
