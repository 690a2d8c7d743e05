package weirotel_test

import (
	"context"
	"fmt"
	"log"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/weirotel"
	"github.com/weirflow/weir/worker"
)

// A workflow submitted inside a span is one trace: each task attempt is a
// child span of the submit's span, naming the worker that ran it
// (worker.JobInfo.Worker, as messaging.client.id). The program sets up the SDK with the
// exporter it wants (here the SDK's in-memory one; in production an OTLP
// exporter, say) and gives weirotel the provider.
func ExampleMiddleware() {
	ctx := context.Background()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(ctx)

	store := memstore.New()
	step := client.NewQueue[string, string]("step")
	w := worker.New(store, worker.Config{
		ID:         "render-1",
		Middleware: []worker.Middleware{weirotel.Middleware(tp)},
		Observer:   weirotel.Observer(tp),
	})
	worker.Handle(w, step, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		return j.Payload, nil // ctx carries the attempt's span
	})
	if err := w.Start(ctx); err != nil {
		log.Fatal(err)
	}

	wf := client.NewWorkflow()
	fetch := client.AddTask(wf, "fetch", step, "page")
	client.AddTask(wf, "parse", step, "links").After(fetch)
	sctx, span := tp.Tracer("example").Start(ctx, "handle request")
	if err := client.New(store).Submit(sctx, wf); err != nil { // stores the span's traceparent
		log.Fatal(err)
	}
	span.End()
	if _, err := wf.Wait(ctx); err != nil {
		log.Fatal(err)
	}
	stop, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := w.Stop(stop); err != nil {
		log.Fatal(err)
	}

	for _, s := range exp.GetSpans() {
		if s.Parent.SpanID() == span.SpanContext().SpanID() && s.SpanContext.TraceID() == span.SpanContext().TraceID() {
			if s.Name == "process step fetch" || s.Name == "process step parse" {
				by := ""
				for _, a := range s.Attributes {
					if a.Key == weirotel.AttrWorker {
						by = a.Value.AsString()
					}
				}
				fmt.Println(s.Name, "is a child of the submit's span, run by", by)
			}
		}
	}
	// Output:
	// process step fetch is a child of the submit's span, run by render-1
	// process step parse is a child of the submit's span, run by render-1
}
