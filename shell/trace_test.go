package shell_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/shell"
	"github.com/weirflow/weir/weirotel"
	"github.com/weirflow/weir/worker"
)

// printTrace is a command that prints the trace context it was given.
var printTrace = shell.Payload{Run: `printf '%s|%s' "$TRACEPARENT" "$TRACESTATE"`}

// runTraced enqueues printTrace with ctx on a worker with cfg (plus the
// shell handler of queue "sh") and returns what the command printed.
func runTraced(t *testing.T, ctx context.Context, cfg worker.Config) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	store := memstore.New()
	w := worker.New(store, cfg)
	shell.Register(w, []string{"sh"}, weir.DefaultLimits().MaxResult)
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer w.Stop(context.Background())
	j, err := client.Enqueue(ctx, client.New(store), shell.Queue("sh"), printTrace)
	if err != nil {
		t.Fatal(err)
	}
	out, err := j.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A shell task's command gets TRACEPARENT, so that its own tools continue
// the trace: the attempt's span on a worker that traces, else the context
// stored with the job; a job stored without one gets none, even when the
// worker's own environment has one.
func TestCommandTraceParent(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	t.Setenv("TRACEPARENT", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	t.Setenv("TRACESTATE", "worker=own")

	ctx, submit := tp.Tracer("test").Start(context.Background(), "submit")
	stored := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, stored)

	t.Run("traced worker", func(t *testing.T) {
		got := runTraced(t, ctx, worker.Config{Middleware: []worker.Middleware{weirotel.Middleware(tp)}})
		var attempt sdktrace.ReadOnlySpan
		for _, s := range rec.Ended() {
			if s.Name() == "process sh" {
				attempt = s
			}
		}
		if attempt == nil {
			t.Fatal("no attempt span")
		}
		sc := attempt.SpanContext()
		want := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01|"
		if got != want {
			t.Fatalf("the command got %q; want the attempt's span %q", got, want)
		}
		if sc.TraceID() != submit.SpanContext().TraceID() {
			t.Fatal("the attempt is not in the submit's trace")
		}
	})
	t.Run("untraced worker", func(t *testing.T) {
		if got := runTraced(t, ctx, worker.Config{}); got != stored["traceparent"]+"|" {
			t.Fatalf("the command got %q; want the stored context %q", got, stored["traceparent"])
		}
	})
	t.Run("job without a trace", func(t *testing.T) {
		if got := runTraced(t, context.Background(), worker.Config{}); got != "|" {
			t.Fatalf("the command got %q; want no trace context (not the worker's own)", got)
		}
	})
	submit.End()
}
