package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/weirflow/weir/internal/command"
	"github.com/weirflow/weir/weirotel"
	"github.com/weirflow/weir/worker"
)

// tracing is the OpenTelemetry setup of weir worker, dev, serve and run
// (spec/tracing.md, Exporting): a tracer provider that exports over OTLP
// with the official exporter when the standard OTEL_EXPORTER_OTLP_*
// variables name an endpoint, else nothing (every method is then a no-op).
type tracing struct {
	tp     *sdktrace.TracerProvider // nil: off
	stderr io.Writer
}

// otlpOn reports whether the environment asks for OTLP traces: an
// endpoint in OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
// OTEL_EXPORTER_OTLP_ENDPOINT, unless OTEL_SDK_DISABLED is true or
// OTEL_TRACES_EXPORTER names no otlp exporter ("none").
func otlpOn() bool {
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	if e := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")); e != "" && !strings.Contains(","+strings.ReplaceAll(e, " ", "")+",", ",otlp,") {
		return false
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

// startTracing sets up tracing for command (a resource attribute
// weir.command) when otlpOn: an OTLP exporter of the protocol of
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL,
// else http/protobuf (grpc is the other one supported), which reads every
// other OTEL_EXPORTER_OTLP_* variable itself (endpoint, headers, timeout,
// compression, certificates), behind a batching span processor
// (OTEL_BSP_*) and the sampler of OTEL_TRACES_SAMPLER (default: parent
// based, always on); the resource's service.name is weir unless
// OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say otherwise. stderr gets
// the exporter's failures at shutdown. Call shutdown before exiting.
func startTracing(ctx context.Context, cmdName string, stderr io.Writer) (*tracing, error) {
	t := &tracing{stderr: stderr}
	if !otlpOn() {
		return t, nil
	}
	proto, from := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"), "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	if proto == "" {
		proto, from = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL"), "OTEL_EXPORTER_OTLP_PROTOCOL"
	}
	var exp sdktrace.SpanExporter
	var err error
	switch proto {
	case "", "http/protobuf":
		exp, err = otlptracehttp.New(ctx)
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	default:
		return nil, command.Usage(fmt.Errorf("%s %q: weir exports traces over http/protobuf (the default) or grpc", from, proto))
	}
	if err != nil {
		return nil, command.Fail(fmt.Errorf("OTLP trace exporter: %w", err))
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "weir"), attribute.String("weir.command", cmdName)),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && res == nil {
		// a partial resource (a malformed OTEL_RESOURCE_ATTRIBUTES) is
		// still used; only none at all is not
		return nil, command.Usage(fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err))
	}
	t.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return t, nil
}

// shutdown flushes the spans not yet exported (for up to 5 s) and stops
// the exporter; a failure is a warning on stderr, not the command's.
func (t *tracing) shutdown() {
	if t.tp == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := t.tp.Shutdown(ctx); err != nil {
		fmt.Fprintf(t.stderr, "weir: exporting traces: %v\n", err)
	}
}

// worker adds to a worker's config the attempt spans (weirotel.Middleware,
// naming the worker by worker.JobInfo.Worker) and the transition
// spans (weirotel.Observer, after the observer the config has): an adjust
// function of newShellWorker.
func (t *tracing) worker(cfg *worker.Config) {
	if t.tp == nil {
		return
	}
	cfg.Middleware = append(cfg.Middleware, weirotel.Middleware(t.tp))
	spans := weirotel.Observer(t.tp)
	if prev := cfg.Observer; prev != nil {
		cfg.Observer = func(e worker.Event) {
			prev(e)
			spans(e)
		}
		return
	}
	cfg.Observer = spans
}

// start starts a span of the command named name, child of the span
// context of ctx, else of the TRACEPARENT variable when well formed; with
// tracing off it returns ctx and a span that records nothing.
func (t *tracing) start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if t.tp == nil {
		return ctx, trace.SpanFromContext(ctx)
	}
	if !trace.SpanContextFromContext(ctx).IsValid() {
		ctx, _ = weirotel.Extract(ctx, envTraceParent())
	}
	return t.tp.Tracer(weirotel.ScopeName).Start(ctx, name, trace.WithAttributes(attrs...))
}

// handler wraps the REST API's handler (serve, dev): each request that
// writes (a method other than GET, HEAD and OPTIONS) runs in a span of
// kind server, child of the request's traceparent header when it has a
// well-formed one, and the request goes on with its traceparent header
// set to that span's context, so that a workflow or job it stores
// continues the span (the API stores the header: spec/tracing.md).
// Reads, event streams and metrics make no span.
func (t *tracing) handler(h http.Handler) http.Handler {
	if t.tp == nil {
		return h
	}
	tracer := t.tp.Tracer(weirotel.ScopeName)
	tc := propagation.TraceContext{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			h.ServeHTTP(w, r)
			return
		}
		ctx := tc.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		name := r.Method
		switch r.URL.Path {
		case "/v1/workflows", "/v1/jobs":
			// the routes that store a context; other paths hold IDs
			name += " " + r.URL.Path
		}
		ctx, span := tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
			attribute.String("http.request.method", r.Method), attribute.String("url.path", r.URL.Path)))
		defer span.End()
		r = r.Clone(ctx)
		r.Header.Del("tracestate")
		tc.Inject(ctx, propagation.HeaderCarrier(r.Header))
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		h.ServeHTTP(sw, r)
		span.SetAttributes(attribute.Int("http.response.status_code", sw.code))
		if sw.code >= 500 {
			span.SetStatus(codes.Error, strconv.Itoa(sw.code))
		}
	})
}

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the writer's Flush and
// deadlines.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
