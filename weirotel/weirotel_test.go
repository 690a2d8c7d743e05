package weirotel_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/weirotel"
	"github.com/weirflow/weir/worker"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	stepQ  = client.NewQueue[string, string]("step")
	plainQ = client.NewQueue[string, string]("plain")
)

// stores runs f on the memstore, on a miniredis and, with WEIR_REDIS_URL,
// on a redis-server.
func stores(t *testing.T, f func(t *testing.T, s client.Store)) {
	t.Run("memstore", func(t *testing.T) { f(t, memstore.New()) })
	for _, srv := range redistest.Servers(t) {
		t.Run(srv.Name, func(t *testing.T) {
			rdb := redistest.Client(t, srv.Options)
			s, err := redisstore.New(rdb, redisstore.Options{Namespace: redistest.Namespace(t, rdb, "otel")})
			if err != nil {
				t.Fatal(err)
			}
			f(t, s)
		})
	}
}

// traced starts a worker of s whose attempts and transitions are traced
// into the returned exporter, its attempts' spans naming the worker by the
// ID New drew (WorkerIDFunc); b fails its first attempt.
func traced(t *testing.T, s client.Store) (*tracetest.InMemoryExporter, *sdktrace.TracerProvider) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	var w *worker.Worker
	w = worker.New(s, worker.Config{
		Concurrency: 2, Lease: 10 * time.Second, SweepInterval: 20 * time.Millisecond,
		Middleware: []worker.Middleware{weirotel.Middleware(tp, weirotel.WorkerIDFunc(func() string { return w.ID() }))},
		Observer:   weirotel.Observer(tp),
	})
	var bFailed atomic.Bool
	worker.Handle(w, stepQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		if !trace.SpanContextFromContext(ctx).IsValid() {
			return "", worker.NonRetryable(errors.New("the handler's context has no span"))
		}
		if j.Task == "b" && bFailed.CompareAndSwap(false, true) {
			return "", errors.New("b fails once")
		}
		return j.Payload, nil
	})
	worker.Handle(w, plainQ, func(ctx context.Context, j *worker.Job[string]) (string, error) { return j.Payload, nil })
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = w.Stop(ctx)
	})
	return exp, tp
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// named returns the spans called name, in the order they ended.
func named(spans tracetest.SpanStubs, name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

func attr(s tracetest.SpanStub, key string) string {
	for _, a := range s.Attributes {
		if string(a.Key) == key {
			return a.Value.String()
		}
	}
	return ""
}

// A workflow submitted inside a span is one trace: each task attempt is a
// child of the submit's span, named by queue and task, with its
// attributes (the worker's ID among them: the worker the store recorded
// as the job's); b's failed attempt has status Error, its retry links to the
// submit's span; the transitions are spans of the trace too.
func TestWorkflowIsOneTrace(t *testing.T) {
	stores(t, func(t *testing.T, s client.Store) {
		ctx := testCtx(t)
		exp, tp := traced(t, s)
		c := client.New(s)
		wf := client.NewWorkflow()
		a := client.AddTask(wf, "a", stepQ, "A")
		b := client.AddTask(wf, "b", stepQ, "B", client.MaxAttempts(2), client.Backoff(time.Millisecond)).After(a)
		client.AddTask(wf, "c", stepQ, "C").After(b)
		sctx, root := tp.Tracer("test").Start(ctx, "submit")
		if err := c.Submit(sctx, wf); err != nil {
			t.Fatal(err)
		}
		root.End()
		if _, err := wf.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		spans := waitSpans(t, exp, func(ss tracetest.SpanStubs) bool { return len(named(ss, "end workflow")) == 1 })
		rsc := root.SpanContext()
		for _, sp := range spans {
			if sp.SpanContext.TraceID() != rsc.TraceID() {
				t.Errorf("span %q is in trace %s, not the submit's %s", sp.Name, sp.SpanContext.TraceID(), rsc.TraceID())
			}
			if sp.Name != "submit" && sp.Parent.SpanID() != rsc.SpanID() {
				t.Errorf("span %q has parent %s, not the submit's span %s", sp.Name, sp.Parent.SpanID(), rsc.SpanID())
			}
		}
		for task, attempts := range map[string]int{"a": 1, "b": 2, "c": 1} {
			got := named(spans, "process step "+task)
			if len(got) != attempts {
				t.Fatalf("%d spans of task %s, want %d (one per attempt)", len(got), task, attempts)
			}
			for i, sp := range got {
				if sp.SpanKind != trace.SpanKindConsumer || attr(sp, "weir.queue") != "step" || attr(sp, "weir.task") != task ||
					attr(sp, "weir.workflow.id") != wf.ID() || attr(sp, "weir.job.id") != wf.ID()+"/"+task ||
					attr(sp, "weir.attempt") != fmt.Sprint(i+1) {
					t.Errorf("span %q attempt %d: kind %v, attributes %v", sp.Name, i+1, sp.SpanKind, sp.Attributes)
				}
			}
			j, err := s.GetJob(ctx, wf.ID()+"/"+task)
			if err != nil {
				t.Fatal(err)
			}
			if j.Worker == "" || attr(got[len(got)-1], "messaging.client.id") != j.Worker {
				t.Errorf("task %s's last attempt span names worker %q, the store's job record %q; want the same, not empty",
					task, attr(got[len(got)-1], "messaging.client.id"), j.Worker)
			}
		}
		bs := named(spans, "process step b")
		if bs[0].Status.Code.String() != "Error" || bs[0].Status.Description != "b fails once" || len(bs[0].Events) == 0 {
			t.Errorf("b's failed attempt: status %v, events %v; want Error with the error recorded", bs[0].Status, bs[0].Events)
		}
		if bs[1].Status.Code.String() == "Error" {
			t.Errorf("b's second attempt succeeded but has status %v", bs[1].Status)
		}
		if len(bs[0].Links) != 0 || len(bs[1].Links) != 1 || bs[1].Links[0].SpanContext.SpanID() != rsc.SpanID() ||
			bs[1].Links[0].Attributes[0].Value.AsInt64() != 1 {
			t.Errorf("links: first attempt %v, retry %v; want none, then one to the submit's span, retry of attempt 1", bs[0].Links, bs[1].Links)
		}
		settled := map[string]int{}
		for _, sp := range spans {
			if o := attr(sp, "weir.outcome"); o != "" {
				settled[sp.Name+" "+o]++
			}
		}
		want := map[string]int{"settle step a succeeded": 1, "settle step b retried": 1, "settle step b succeeded": 1, "settle step c succeeded": 1}
		if fmt.Sprint(settled) != fmt.Sprint(want) {
			t.Errorf("settle spans %v, want %v", settled, want)
		}
		if p := named(spans, "promote step"); len(p) != 2 || !slices.ContainsFunc(p, func(s tracetest.SpanStub) bool { return attr(s, "weir.job.id") == wf.ID()+"/c" }) {
			t.Errorf("promote spans %v; want b's and c's", p)
		}
		if e := named(spans, "end workflow"); attr(e[0], "weir.workflow.state") != "completed" {
			t.Errorf("end workflow span attributes %v", e[0].Attributes)
		}
	})
}

// A plain job enqueued inside a span runs as its child; one enqueued
// without a span runs in a trace of its own.
func TestPlainJobTrace(t *testing.T) {
	stores(t, func(t *testing.T, s client.Store) {
		ctx := testCtx(t)
		exp, tp := traced(t, s)
		c := client.New(s)
		ectx, root := tp.Tracer("test").Start(ctx, "enqueue")
		j, err := client.Enqueue(ectx, c, plainQ, "x", client.ID("traced"))
		root.End()
		if err != nil {
			t.Fatal(err)
		}
		u, err := client.Enqueue(ctx, c, plainQ, "y", client.ID("untraced"))
		if err != nil {
			t.Fatal(err)
		}
		for _, job := range []*client.Job[string]{j, u} {
			if _, err := job.Wait(ctx); err != nil {
				t.Fatal(err)
			}
		}
		spans := waitSpans(t, exp, func(ss tracetest.SpanStubs) bool { return len(named(ss, "process plain")) == 2 })
		for _, sp := range named(spans, "process plain") {
			switch attr(sp, "weir.job.id") {
			case "traced":
				if sp.SpanContext.TraceID() != root.SpanContext().TraceID() || sp.Parent.SpanID() != root.SpanContext().SpanID() {
					t.Errorf("the traced job's span: trace %s parent %s; want the enqueue's span %s", sp.SpanContext.TraceID(), sp.Parent.SpanID(), root.SpanContext().SpanID())
				}
			case "untraced":
				if sp.Parent.IsValid() || sp.SpanContext.TraceID() == root.SpanContext().TraceID() {
					t.Errorf("the untraced job's span has parent %v in trace %s; want a root span of a new trace", sp.Parent, sp.SpanContext.TraceID())
				}
			default:
				t.Errorf("span of job %q", attr(sp, "weir.job.id"))
			}
		}
		// the untraced job's transitions record nothing
		for _, sp := range spans {
			if attr(sp, "weir.outcome") != "" && attr(sp, "weir.job.id") != "traced" {
				t.Errorf("a settle span for job %q, stored without a trace context", attr(sp, "weir.job.id"))
			}
		}
	})
}

// waitSpans returns the exported spans once done says they are all there
// (the worker exports a transition's span after the waiter woke).
func waitSpans(t *testing.T, exp *tracetest.InMemoryExporter, done func(tracetest.SpanStubs) bool) tracetest.SpanStubs {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ss := exp.GetSpans()
		if done(ss) {
			return ss
		}
		if time.Now().After(deadline) {
			t.Fatalf("spans exported: %d, not all the test waits for", len(ss))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// An attempt's span names the worker running it (worker.JobInfo.Worker:
// the ID given, or the one worker.New drew); the option WorkerID names
// another in its place.
func TestWorkerIDOption(t *testing.T) {
	for _, tc := range []struct {
		name string
		id   string
		with []weirotel.Option
		want string
	}{
		{"given", "billing-1", nil, "billing-1"},
		{"drawn", "", nil, ""},
		{"WorkerID", "billing-1", []weirotel.Option{weirotel.WorkerID("other-1")}, "other-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			s := memstore.New()
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			defer func() { _ = tp.Shutdown(context.Background()) }()
			w := worker.New(s, worker.Config{ID: tc.id, Middleware: []worker.Middleware{weirotel.Middleware(tp, tc.with...)}})
			want := tc.want
			if want == "" {
				want = w.ID()
			}
			worker.Handle(w, plainQ, func(ctx context.Context, j *worker.Job[string]) (string, error) { return j.Payload, nil })
			if err := w.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = w.Stop(ctx) }()
			j, err := client.Enqueue(ctx, client.New(s), plainQ, "x")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := j.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			sp := named(waitSpans(t, exp, func(ss tracetest.SpanStubs) bool { return len(named(ss, "process plain")) == 1 }), "process plain")[0]
			if got := attr(sp, "messaging.client.id"); got != want || got == "" {
				t.Errorf("the attempt's span names worker %q, want %q", got, want)
			}
		})
	}
}
