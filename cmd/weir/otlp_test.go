package main

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP trace receiver: it decodes each
// ExportTraceServiceRequest the official exporter sends to /v1/traces and
// keeps its spans.
type otlpReceiver struct {
	url   string
	mu    sync.Mutex
	spans []gotSpan
}

// gotSpan is one span received: IDs in hex ("" for no parent).
type gotSpan struct {
	trace, id, parent, name, service string
	attrs                            map[string]string
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	rc := &otlpReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("OTLP receiver: %s %s (%s)", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
			http.Error(w, "not a trace export", http.StatusNotFound)
			return
		}
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			gz, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = gz
		}
		b, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			t.Errorf("OTLP receiver: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		for _, rs := range req.GetResourceSpans() {
			service := ""
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.GetKey() == "service.name" {
					service = kv.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					g := gotSpan{trace: hex.EncodeToString(s.GetTraceId()), id: hex.EncodeToString(s.GetSpanId()),
						parent: hex.EncodeToString(s.GetParentSpanId()), name: s.GetName(), service: service, attrs: map[string]string{}}
					for _, kv := range s.GetAttributes() {
						g.attrs[kv.GetKey()] = kv.GetValue().GetStringValue()
					}
					rc.spans = append(rc.spans, g)
				}
			}
		}
		rc.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	rc.url = srv.URL
	return rc
}

// received returns the spans received so far.
func (rc *otlpReceiver) received() []gotSpan {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]gotSpan(nil), rc.spans...)
}

// byTrace groups spans by trace ID.
func byTrace(spans []gotSpan) map[string][]gotSpan {
	out := map[string][]gotSpan{}
	for _, s := range spans {
		out[s.trace] = append(out[s.trace], s)
	}
	return out
}

// names counts the spans of each name.
func names(spans []gotSpan) map[string]int {
	out := map[string]int{}
	for _, s := range spans {
		out[s.name]++
	}
	return out
}

// weir run, with OTEL_EXPORTER_OTLP_ENDPOINT set, exports its workflow as
// one trace with the official exporter: a "weir run" span, and under it a
// span per attempt (b fails once and is retried); the shell command gets
// TRACEPARENT, its attempt's span.
func TestOTLPRun(t *testing.T) {
	rc := newOTLPReceiver(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "traced.yaml")
	doc := `id: traced
tasks:
  - name: a
    run: 'printf %s "$TRACEPARENT" > tp-a'
  - name: b
    after: [a]
    retries: 1
    backoff: 1ms
    run: 'if [ -e once ]; then true; else : > once; exit 3; fi'
  - name: c
    after: [b]
    run: 'true'
`
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	r := weir(t, "", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + rc.url, "OTEL_SERVICE_NAME=weir-test"}, "run", file)
	r.WantCode(t, 0)
	// weir run flushed its spans before it exited
	traces := byTrace(rc.received())
	if len(traces) != 1 {
		t.Fatalf("%d traces; want 1 (the workflow's): %v", len(traces), traces)
	}
	var spans []gotSpan
	for _, s := range traces {
		spans = s
	}
	got := names(spans)
	for name, want := range map[string]int{"weir run": 1, "process default a": 1, "process default b": 2, "process default c": 1} {
		if got[name] != want {
			t.Errorf("%d spans %q; want %d (all: %v)", got[name], name, want, got)
		}
	}
	var root gotSpan
	for _, s := range spans {
		if s.name == "weir run" {
			root = s
		}
		if s.service != "weir-test" {
			t.Errorf("span %q of service %q; want OTEL_SERVICE_NAME's weir-test", s.name, s.service)
		}
	}
	if root.parent != "" || root.attrs["weir.workflow.id"] != "traced" {
		t.Errorf("weir run's span %+v: want a root naming the workflow", root)
	}
	tp, err := os.ReadFile(filepath.Join(dir, "tp-a"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range spans {
		if strings.HasPrefix(s.name, "process ") && s.parent != root.id {
			t.Errorf("attempt span %q has parent %s; want weir run's %s", s.name, s.parent, root.id)
		}
		if strings.HasPrefix(s.name, "process ") && s.attrs["messaging.client.id"] == "" {
			t.Errorf("attempt span %q names no worker (messaging.client.id)", s.name)
		}
		if s.name == "process default a" && string(tp) != "00-"+s.trace+"-"+s.id+"-01" {
			t.Errorf("task a's TRACEPARENT %q; want its attempt's span 00-%s-%s-01", tp, s.trace, s.id)
		}
	}
}

// weir serve and weir worker, with OTEL_EXPORTER_OTLP_ENDPOINT set, make
// each workflow submitted over REST one trace: the request's server span
// (child of the request's traceparent when it has one) and the attempts'
// spans under it, on the worker, each naming that worker (the one the
// store recorded as the job's).
func TestOTLPServeAndWorker(t *testing.T) {
	rc := newOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rc.url)
	m := miniredis.RunT(t)
	ns := "otlp"
	token := "otlp-token-0123456789"
	s := startInProcess(t, "serve", "--redis", "redis://"+m.Addr(), "--namespace", ns, "--http", "127.0.0.1:0", "--token", token)
	u := s.printed(t, "WEIR_HTTP_URL")
	w := startInProcess(t, "worker", "--redis", "redis://"+m.Addr(), "--namespace", ns)
	for _, id := range []string{"one", "two"} {
		if code, body := post(t, u+"/v1/workflows", token, `{"id":"`+id+`","tasks":[{"name":"a","run":"true"},{"name":"b","run":"true","after":["a"]}]}`); code != http.StatusCreated {
			t.Fatalf("submit %s: %d %s", id, code, body)
		}
	}
	store := testStore(t, m.Addr(), ns)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	workerOf := map[string]string{} // a job's ID -> the worker the store recorded
	for _, id := range []string{"one", "two"} {
		if _, err := store.AwaitWorkflow(ctx, id); err != nil {
			t.Fatal(err)
		}
		for _, task := range []string{"a", "b"} {
			j, err := store.GetJob(ctx, id+"/"+task)
			if err != nil {
				t.Fatal(err)
			}
			workerOf[j.ID] = j.Worker
		}
	}
	// stopping flushes the spans of both
	if code := w.stop(t); code != 0 {
		t.Fatalf("worker: %d\n%s", code, w.stderr.String())
	}
	if code := s.stop(t); code != 0 {
		t.Fatalf("serve: %d\n%s", code, s.stderr.String())
	}
	traces := byTrace(rc.received())
	if len(traces) != 2 {
		t.Fatalf("%d traces; want 2, one per workflow: %v", len(traces), traces)
	}
	seen := map[string]bool{}
	for _, spans := range traces {
		var root gotSpan
		for _, sp := range spans {
			if sp.name == "POST /v1/workflows" {
				root = sp
			}
		}
		if root.id == "" || root.parent != "" {
			t.Fatalf("trace without a root POST /v1/workflows span: %v", spans)
		}
		got := names(spans)
		if got["process default a"] != 1 || got["process default b"] != 1 {
			t.Errorf("spans %v; want one per attempt: process default a, process default b", got)
		}
		for _, sp := range spans {
			if strings.HasPrefix(sp.name, "process ") {
				if sp.parent != root.id {
					t.Errorf("attempt span %q's parent %s; want the request's %s", sp.name, sp.parent, root.id)
				}
				seen[sp.attrs["weir.workflow.id"]] = true
				if w, job := sp.attrs["messaging.client.id"], sp.attrs["weir.job.id"]; w == "" || w != workerOf[job] {
					t.Errorf("attempt span %q names worker %q; want the one the store recorded for job %s, %q", sp.name, w, job, workerOf[job])
				}
			}
		}
	}
	if !seen["one"] || !seen["two"] {
		t.Errorf("workflows traced: %v; want one and two", seen)
	}
}

// weir dev, with OTEL_EXPORTER_OTLP_ENDPOINT set, traces its REST API and
// its workers: a workflow submitted with a traceparent header continues
// that trace, the request's span a child of the caller's and the attempts
// children of the request's, naming dev's worker.
func TestOTLPDev(t *testing.T) {
	rc := newOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rc.url)
	token := "dev-token-0123456789"
	p := startInProcess(t, "dev", "--token", token)
	redisURL, httpURL := p.printed(t, "WEIR_REDIS_URL"), p.printed(t, "WEIR_HTTP_URL")
	const caller = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, httpURL+"/v1/workflows",
		strings.NewReader(`{"id":"devtraced","tasks":[{"name":"a","run":"true"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", caller)
	res, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("submit: %d", res.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ru, err := url.Parse(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	ds := testStore(t, ru.Host, "")
	if _, err := ds.AwaitWorkflow(ctx, "devtraced"); err != nil {
		t.Fatal(err)
	}
	job, err := ds.GetJob(ctx, "devtraced/a") // before dev stops its Redis
	if err != nil {
		t.Fatal(err)
	}
	if code := p.stop(t); code != 0 {
		t.Fatalf("dev: %d\n%s", code, p.stderr.String())
	}
	traces := byTrace(rc.received())
	spans := traces["4bf92f3577b34da6a3ce929d0e0e4736"]
	if len(traces) != 1 || spans == nil {
		t.Fatalf("traces %v; want one, the caller's", traces)
	}
	var request, attempt gotSpan
	for _, s := range spans {
		switch s.name {
		case "POST /v1/workflows":
			request = s
		case "process default a":
			attempt = s
		}
	}
	if request.parent != "00f067aa0ba902b7" {
		t.Errorf("the request's span %+v: want the caller's span as its parent", request)
	}
	if attempt.id == "" || attempt.parent != request.id {
		t.Errorf("the attempt's span %+v: want a child of the request's %s", attempt, request.id)
	}
	if w := attempt.attrs["messaging.client.id"]; job.Worker == "" || w != job.Worker {
		t.Errorf("the attempt's span names worker %q; want dev's worker that ran it, %q", w, job.Worker)
	}
}
