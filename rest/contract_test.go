package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/spec"
	"github.com/weirflow/weir/workflowfile"
)

// The contract test: requests, valid and invalid, to a running server, and
// every response checked against spec/openapi.yaml by an OpenAPI validator
// of its own (kin-openapi). Each request is also checked against the spec:
// what the spec refuses, the server refuses; what the server refuses and
// the spec accepts is listed with the reason the spec cannot say it.

// loadSpec loads and validates spec/openapi.yaml, served at url.
func loadSpec(t *testing.T, url string) (*openapi3.T, routers.Router) {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData([]byte(spec.OpenAPI))
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("spec/openapi.yaml is not a valid OpenAPI document: %v", err)
	}
	doc.Servers = openapi3.Servers{{URL: url}}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return doc, router
}

// contractCase is one request and what the server and the spec say of it.
type contractCase struct {
	name         string
	method, path string
	body         string
	header       []string // name, value pairs; a body is JSON unless set
	status       int
	// specRefuses: the spec's request validation refuses it too.
	specRefuses bool
	// serverOnly, for a refused request the spec accepts: why the spec
	// cannot say it (a header, a rule across fields, a store limit).
	serverOnly string
}

// contract runs the cases against a running server and validates each
// exchange; token is the server's token ("" for none).
func contract(t *testing.T, a *apiT, cases []contractCase) {
	t.Helper()
	doc, router := loadSpec(t, a.url)
	auth := openapi3filter.NoopAuthenticationFunc
	if a.token != "" {
		auth = func(_ context.Context, in *openapi3filter.AuthenticationInput) error {
			h := in.RequestValidationInput.Request.Header.Get("Authorization")
			if !strings.HasPrefix(h, "Bearer ") {
				return errors.New("no bearer token")
			}
			return nil
		}
	}
	opts := &openapi3filter.Options{AuthenticationFunc: auth, IncludeResponseStatus: true, MultiError: true}
	errorSchema := doc.Components.Schemas["Error"].Value
	for _, c := range cases {
		name := fmt.Sprintf("%s (%s %s)", c.name, c.method, c.path)
		header := c.header
		if c.body != "" && !has(header, "Content-Type") {
			header = append([]string{"Content-Type", "application/json"}, header...)
		}
		var body any
		if c.body != "" {
			body = c.body
		}
		r := a.do(c.method, c.path, body, header...)
		if r.status != c.status {
			t.Errorf("%s: status %d, want %d\n%s", name, r.status, c.status, r.body)
			continue
		}
		if r.status >= 400 && !c.specRefuses && c.serverOnly == "" {
			t.Errorf("%s: refused with %d, but the case says neither why the spec accepts it nor that it refuses it", name, r.status)
		}

		// The same request, for the validator.
		req := contractRequest(t, a, c.method, c.path, c.body, header)
		route, params, err := router.FindRoute(req)
		if err != nil {
			// No route in the spec (404, 405): the body is still an Error.
			if r.status != http.StatusNotFound && r.status != http.StatusMethodNotAllowed {
				t.Errorf("%s: the spec has no route for it (%v) but the server answered %d", name, err, r.status)
			}
			var v any
			if err := json.Unmarshal(r.body, &v); err != nil {
				t.Errorf("%s: body not JSON: %s", name, r.body)
			} else if err := errorSchema.VisitJSON(v); err != nil {
				t.Errorf("%s: the body is not an Error: %v\n%s", name, err, r.body)
			}
			continue
		}
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
		reqErr := openapi3filter.ValidateRequest(context.Background(), in)
		switch {
		case c.specRefuses && reqErr == nil:
			t.Errorf("%s: the spec accepts the request; the case says it refuses it", name)
		case !c.specRefuses && reqErr != nil:
			t.Errorf("%s: the spec refuses the request: %v", name, reqErr)
		}
		resOpts := *opts
		if route.Path == "/v1/openapi.yaml" && r.status == http.StatusOK {
			resOpts.ExcludeResponseBody = true // the document itself (TestOpenAPIServed)
		}
		res := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: r.status, Header: r.header, Options: &resOpts}
		res.SetBodyBytes(r.body)
		if err := openapi3filter.ValidateResponse(context.Background(), res); err != nil {
			t.Errorf("%s: the response does not match the spec: %v\n%s", name, err, r.body)
		}
	}
}

func has(header []string, name string) bool {
	for i := 0; i < len(header); i += 2 {
		if header[i] == name {
			return true
		}
	}
	return false
}

// contractRequest builds the request a.do sent, for the validator.
func contractRequest(t *testing.T, a *apiT, method, path, body string, header []string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, a.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		switch {
		case header[i] == "Host":
			req.Host = header[i+1]
		case header[i+1] == "":
			req.Header.Del(header[i])
		default:
			req.Header.Set(header[i], header[i+1])
		}
	}
	return req
}

// runContractWorkflows puts records of every kind in the store: completed
// with results, compensated with undo states, cancelled, and running.
func runContractWorkflows(t *testing.T, a *apiT) {
	t.Helper()
	a.want(http.StatusCreated, "POST", "/v1/workflows", wfFile{"id": "done", "tasks": tasks(
		tk("a", "echo a"), tk("b", "printf b", "after", []string{"a"}))})
	a.want(http.StatusCreated, "POST", "/v1/workflows", wfFile{"id": "saga", "tasks": tasks(
		tk("a", "echo a", "undo", map[string]any{"run": "echo undo"}),
		tk("b", "exit 3", "after", []string{"a"}))})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	w := shellWorker(a.store)
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"done", "saga"} {
		if _, err := a.store.AwaitWorkflow(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	a.want(http.StatusCreated, "POST", "/v1/workflows", wfFile{"id": "live", "tasks": tasks(
		tk("a", "true", "queue", "held", "retries", 2, "backoff", "1s", "timeout", "5s"),
		tk("b", "true", "after", []string{"a"}, "undo", map[string]any{"run": "true", "queue": "u"}))})
	a.want(http.StatusCreated, "POST", "/v1/workflows", wfFile{"id": "gone", "tasks": tasks(tk("a", "true", "queue", "held"))})
	a.want(http.StatusOK, "POST", "/v1/workflows/gone/cancel", nil)
	a.want(http.StatusOK, "POST", "/v1/queues/held/pause", nil)
	err := a.store.BeatWorker(ctx, engine.BeatWorkerParams{TTL: time.Minute, Info: weir.WorkerInfo{
		ID: "host-1-0a1b2c3d", Host: "host", PID: 1, Version: "v0.1.0", Concurrency: 4, Started: time.Now(),
		Queues: []weir.WorkerQueue{{Name: "default", Weight: 2}, {Name: "held", Weight: 1}}, Running: 2, RunningJobs: []string{"live/a", "x"}}})
	if err != nil {
		t.Fatal(err)
	}
}

// contractCases are the requests of the test; port is the server's.
func contractCases(port string, withToken bool) []contractCase {
	const header = "a header the spec does not model"
	wf := func(s string) string { return `{"tasks":[` + s + `]}` }
	cases := []contractCase{
		// Valid requests on every operation.
		{name: "healthz", method: "GET", path: "/healthz", status: 200},
		{name: "the document", method: "GET", path: "/v1/openapi.yaml", status: 200},
		{name: "a page", method: "GET", path: "/v1/workflows", status: 200},
		{name: "a page with everything", method: "GET", path: "/v1/workflows?limit=2&state=completed", status: 200},
		{name: "a record, completed", method: "GET", path: "/v1/workflows/done", status: 200},
		{name: "a record, compensated", method: "GET", path: "/v1/workflows/saga", status: 200},
		{name: "a record, running", method: "GET", path: "/v1/workflows/live", status: 200},
		{name: "a record, cancelled", method: "GET", path: "/v1/workflows/gone", status: 200},
		{name: "a completed job", method: "GET", path: "/v1/jobs/done%2Fb", status: 200},
		{name: "an undo job", method: "GET", path: "/v1/jobs/saga%2Fa%2Fundo", status: 200},
		{name: "a failed job", method: "GET", path: "/v1/jobs/saga%2Fb", status: 200},
		{name: "a queued job", method: "GET", path: "/v1/jobs/live%2Fa", status: 200},
		{name: "a waiting job", method: "GET", path: "/v1/jobs/live%2Fb", status: 200},
		{name: "the queues", method: "GET", path: "/v1/queues", status: 200},
		{name: "the workers", method: "GET", path: "/v1/workers", status: 200},
		{name: "pause", method: "POST", path: "/v1/queues/q1/pause", status: 200},
		{name: "who am I", method: "GET", path: "/v1/whoami", status: 200},
		{name: "retry a queue's failed jobs", method: "POST", path: "/v1/queues/q/jobs/retry", body: `{"state":"failed","limit":10}`, status: 200},
		{name: "cancel jobs by ID", method: "POST", path: "/v1/queues/q/jobs/cancel", body: `{"ids":["nope"]}`, status: 200},
		{name: "delete a queue's completed jobs", method: "POST", path: "/v1/queues/q/jobs/delete", body: `{"state":"completed"}`, status: 200},
		{name: "bulk with an unknown field", method: "POST", path: "/v1/queues/q/jobs/retry", body: `{"state":"failed","colour":1}`, status: 400, specRefuses: true},
		{name: "bulk limit over", method: "POST", path: "/v1/queues/q/jobs/retry", body: `{"state":"failed","limit":1001}`, status: 400, specRefuses: true},
		{name: "resume", method: "POST", path: "/v1/queues/q1/resume", status: 200},
		{name: "submit JSON", method: "POST", path: "/v1/workflows", body: `{"id":"new-1","fail_fast":true,"undo_on_cancel":false,"tasks":[{"name":"a","run":"true","queue":"q","retries":1,"backoff":"250ms","timeout":"1m30s","always":false,"undo":{"run":"true","queue":"u"}},{"name":"b","run":"true","after":["a"]}]}`, status: 201},
		{name: "submit again", method: "POST", path: "/v1/workflows", body: `{"id":"new-1","fail_fast":true,"undo_on_cancel":false,"tasks":[{"name":"a","run":"true","queue":"q","retries":1,"backoff":"250ms","timeout":"1m30s","always":false,"undo":{"run":"true","queue":"u"}},{"name":"b","run":"true","after":["a"]}]}`, status: 200},
		{name: "submit YAML", method: "POST", path: "/v1/workflows", body: "id: new-2\ntasks:\n  - name: a\n    run: echo a\n", header: []string{"Content-Type", "application/yaml"}, status: 201},
		{name: "cancel", method: "POST", path: "/v1/workflows/new-2/cancel?undo=true", status: 200},
		{name: "enqueue a job", method: "POST", path: "/v1/jobs", body: `{"id":"job-1","queue":"q","payload":{"n":1,"s":"x","l":[true,null,1.5]},"priority":-5,"retries":2,"max_expiries":0,"backoff":"250ms","timeout":"30s","delay":"1m"}`, status: 201},
		{name: "enqueue again", method: "POST", path: "/v1/jobs", body: `{"id":"job-1","queue":"q","payload":{"n":1,"s":"x","l":[true,null,1.5]},"priority":-5,"retries":2,"max_expiries":0,"backoff":"250ms","timeout":"30s","delay":"1m"}`, status: 200},
		{name: "enqueue YAML at a time", method: "POST", path: "/v1/jobs", body: "queue: q\nrun_at: \"2030-01-02T03:04:05Z\"\npayload: [1, two]\n", header: []string{"Content-Type", "application/yaml"}, status: 201},
		{name: "submit a start time, a signal task and a delay", method: "POST", path: "/v1/workflows", body: `{"id":"new-3","start_at":"2030-01-02T03:04:05Z","deadline":"2h","tasks":[{"name":"a","run":"true"},{"name":"b","after":["a"],"signal":true,"timeout":"1h"},{"name":"c","after":["b"],"run":"true","delay":"1s"}]}`, status: 201},
		{name: "submit a batch", method: "POST", path: "/v1/workflows", body: `{"id":"new-4","webhook":{"url":"http://127.0.0.1:1/h","attempts":2,"backoff":"1s"},"batch":{"name":"b","steps":[{"name":"s","run":"true"}],"then":{"run":"true"},"catch":{"run":"true"},"finally":{"run":"true"}}}`, status: 201},
		{name: "submit tasks for Go handlers", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","queue":"q","payload":{"n":1},"priority":3},{"name":"b","queue":"q","payload":null,"after":["a"],"undo":{"payload":"u","queue":"u"}}`), status: 201},

		// Refused, and the spec refuses them too.
		{name: "no tasks", method: "POST", path: "/v1/workflows", body: `{"tasks":[]}`, status: 400, specRefuses: true},
		{name: "no tasks field", method: "POST", path: "/v1/workflows", body: `{"id":"x"}`, status: 400, specRefuses: true},
		{name: "unknown field", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"x","colour":"red"}`), status: 400, specRefuses: true},
		{name: "a callback with a name", method: "POST", path: "/v1/workflows", body: `{"chain":{"steps":[{"name":"s","run":"x"}],"then":{"name":"t","run":"x"}}}`, status: 400, specRefuses: true},
		{name: "a step with after", method: "POST", path: "/v1/workflows", body: `{"batch":{"steps":[{"name":"s","run":"x"},{"name":"t","run":"x","after":["s"]}]}}`, status: 400, specRefuses: true},
		{name: "signal not a bool", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","signal":"yes"}`), status: 400, specRefuses: true},
		{name: "start_at not a time", method: "POST", path: "/v1/workflows", body: `{"start_at":"soon","tasks":[{"name":"a","run":"x"}]}`, status: 400, specRefuses: true},
		{name: "unknown field in undo", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"x","undo":{"run":"y","colour":1}}`), status: 400, specRefuses: true},
		{name: "keys are case-sensitive", method: "POST", path: "/v1/workflows", body: `{"Tasks":[{"Name":"a","RUN":"true"}]}`, status: 400, specRefuses: true},
		{name: "null id", method: "POST", path: "/v1/workflows", body: `{"id":null,"tasks":[{"name":"a","run":"x"}]}`, status: 400, specRefuses: true},
		{name: "empty id", method: "POST", path: "/v1/workflows", body: `{"id":"","tasks":[{"name":"a","run":"x"}]}`, status: 400, specRefuses: true},
		{name: "job with an empty id", method: "POST", path: "/v1/jobs", body: `{"id":"","queue":"q"}`, status: 400, specRefuses: true},
		{name: "null fail_fast", method: "POST", path: "/v1/workflows", body: `{"fail_fast":null,"tasks":[{"name":"a","run":"x"}]}`, status: 400, specRefuses: true},
		{name: "null after", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"x","after":null}`), status: 400, specRefuses: true},
		{name: "blank run", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"  "}`), status: 400, specRefuses: true},
		{name: "empty run", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":""}`), status: 400, specRefuses: true},
		{name: "blank undo run", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"x","undo":{"run":" "}}`), status: 400, specRefuses: true},
		{name: "NUL in run", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"echo a\u0000b"}`), status: 400, specRefuses: true},
		{name: "NUL in undo run", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"x","undo":{"run":"\u0000"}}`), status: 400, specRefuses: true},
		{name: "bad queue", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"x","queue":"no queue"}`), status: 400, specRefuses: true},
		{name: "bad undo queue", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"x","undo":{"run":"y","queue":"q:*"}}`), status: 400, specRefuses: true},
		{name: "empty queue", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"x","queue":""}`), status: 400, specRefuses: true},
		{name: "bad name", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a b","run":"x"}`), status: 400, specRefuses: true},
		{name: "bad id", method: "POST", path: "/v1/workflows", body: `{"id":"no/slash","tasks":[{"name":"a","run":"x"}]}`, status: 400, specRefuses: true},
		// . and .. are no path segment: no route could reach what they name
		{name: "id .", method: "POST", path: "/v1/workflows", body: `{"id":".","tasks":[{"name":"a","run":"x"}]}`, status: 400, specRefuses: true},
		{name: "id ..", method: "POST", path: "/v1/workflows", body: `{"id":"..","tasks":[{"name":"a","run":"x"}]}`, status: 400, specRefuses: true},
		{name: "task ..", method: "POST", path: "/v1/workflows", body: wf(`{"name":"..","run":"x"}`), status: 400, specRefuses: true},
		{name: "queue .", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"x","queue":"."}`), status: 400, specRefuses: true},
		{name: "undo queue ..", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"x","undo":{"run":"y","queue":".."}}`), status: 400, specRefuses: true},
		{name: "job id ..", method: "POST", path: "/v1/jobs", body: `{"id":"..","queue":"q"}`, status: 400, specRefuses: true},
		{name: "job queue .", method: "POST", path: "/v1/jobs", body: `{"queue":"."}`, status: 400, specRefuses: true},
		{name: "id ...", method: "POST", path: "/v1/workflows", body: `{"id":"...","tasks":[{"name":".a","run":"true","queue":"..q"}]}`, status: 201},
		{name: "a record, id ...", method: "GET", path: "/v1/workflows/...", status: 200},
		{name: "a job, task .a", method: "GET", path: "/v1/jobs/...%2F.a", status: 200},
		{name: "bad after name", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"x"},{"name":"b","run":"x","after":["a b"]}`), status: 400, specRefuses: true},
		{name: "after twice", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"x"},{"name":"b","run":"x","after":["a","a"]}`), status: 400, specRefuses: true},
		{name: "retries over", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"x","retries":1000}`), status: 400, specRefuses: true},
		{name: "negative retries", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"x","retries":-1}`), status: 400, specRefuses: true},
		{name: "retries as a string", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"x","retries":"1"}`), status: 400, specRefuses: true},
		{name: "retries 1.5", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"x","retries":1.5}`), status: 400, specRefuses: true},
		{name: "not a duration", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"x","timeout":"soon"}`), status: 400, specRefuses: true},
		{name: "negative duration", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"x","backoff":"-1s"}`), status: 400, specRefuses: true},
		{name: "duration with a sign", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"x","backoff":"+1s"}`), status: 400, specRefuses: true},
		{name: "duration .5s", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"x","backoff":".5s"}`), status: 400, specRefuses: true},
		{name: "fail_fast as a string", method: "POST", path: "/v1/workflows", body: `{"fail_fast":"yes","tasks":[{"name":"a","run":"x"}]}`, status: 400, specRefuses: true},
		{name: "not an object", method: "POST", path: "/v1/workflows", body: `[1,2]`, status: 400, specRefuses: true},
		{name: "not JSON", method: "POST", path: "/v1/workflows", body: `{"tasks":`, status: 400, specRefuses: true},
		{name: "YAML as JSON", method: "POST", path: "/v1/workflows", body: "tasks: [{name: a, run: x}]", status: 400, specRefuses: true},
		{name: "text/plain", method: "POST", path: "/v1/workflows", body: crossSiteBody, header: []string{"Content-Type", "text/plain"}, status: 415, specRefuses: true},
		{name: "a form", method: "POST", path: "/v1/workflows", body: "tasks=x", header: []string{"Content-Type", "application/x-www-form-urlencoded"}, status: 415, specRefuses: true},
		{name: "no Content-Type", method: "POST", path: "/v1/workflows", body: crossSiteBody, header: []string{"Content-Type", ""}, status: 415, specRefuses: true},
		{name: "limit 0", method: "GET", path: "/v1/workflows?limit=0", status: 400, specRefuses: true},
		{name: "limit over", method: "GET", path: "/v1/workflows?limit=1001", status: 400, specRefuses: true},
		{name: "limit not a number", method: "GET", path: "/v1/workflows?limit=abc", status: 400, specRefuses: true},
		{name: "unknown state", method: "GET", path: "/v1/workflows?state=bogus", status: 400, specRefuses: true},
		{name: "limit empty", method: "GET", path: "/v1/workflows?limit=", status: 400, specRefuses: true},
		{name: "state empty", method: "GET", path: "/v1/workflows?state=", status: 400, specRefuses: true},
		{name: "cursor empty", method: "GET", path: "/v1/workflows?cursor=", status: 400, specRefuses: true},
		{name: "bad cursor", method: "GET", path: "/v1/workflows?cursor=gar:bage", status: 400, specRefuses: true},
		{name: "an ID cursor without id_prefix", method: "GET", path: "/v1/workflows?cursor=garbage", status: 400, serverOnly: "the pattern takes an ID, the cursor of an id_prefix listing, without checking that id_prefix is given"},
		{name: "undo maybe", method: "POST", path: "/v1/workflows/live/cancel?undo=maybe", status: 400, specRefuses: true},
		{name: "bad queue name", method: "POST", path: "/v1/queues/bad%20name/pause", status: 400, specRefuses: true},
		{name: "queue name too long", method: "POST", path: "/v1/queues/" + strings.Repeat("q", 65) + "/resume", status: 400, specRefuses: true},
		{name: "a bad workflow ID", method: "GET", path: "/v1/workflows/bad%20id", status: 404, specRefuses: true},

		// Refused; the spec cannot say why.
		{name: "job without a queue", method: "POST", path: "/v1/jobs", body: `{"payload":1}`, status: 400, specRefuses: true},
		{name: "job with an unknown field", method: "POST", path: "/v1/jobs", body: `{"queue":"q","colour":1}`, status: 400, specRefuses: true},
		{name: "job priority over", method: "POST", path: "/v1/jobs", body: `{"queue":"q","priority":1001}`, status: 400, specRefuses: true},
		{name: "job as an array", method: "POST", path: "/v1/jobs", body: `[]`, status: 400, specRefuses: true},
		{name: "job exists", method: "POST", path: "/v1/jobs", body: `{"id":"job-1","queue":"q"}`, status: 409, serverOnly: "what the store holds"},
		{name: "job delay and run_at", method: "POST", path: "/v1/jobs", body: `{"queue":"q","delay":"1s","run_at":"2030-01-02T03:04:05Z"}`, status: 400, serverOnly: "a rule across fields"},
		{name: "task with run and payload", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"x","queue":"q","payload":1}`), status: 400, serverOnly: "a rule across fields"},
		{name: "task with payload and no queue", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","payload":1}`), status: 400, serverOnly: "a rule across fields"},
		{name: "task with neither run nor payload", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a"}`), status: 400, serverOnly: "a rule across fields"},
		{name: "after a later task", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"x","after":["b"]},{"name":"b","run":"x"}`), status: 400, serverOnly: "a rule across tasks"},
		{name: "duplicate task name", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"x"},{"name":"a","run":"x"}`), status: 400, serverOnly: "uniqueness of a field across items"},
		{name: "a key twice", method: "POST", path: "/v1/workflows", body: `{"id":"a","id":"b","tasks":[{"name":"a","run":"x"}]}`, status: 400, serverOnly: "JSON parsers keep one of the two"},
		{name: "backoff over 1h", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"x","backoff":"2h"}`), status: 400, serverOnly: "a bound on a duration"},
		{name: "fractional milliseconds", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"x","timeout":"1.5ms"}`), status: 400, serverOnly: "whole milliseconds"},
		{name: "another plan under an ID", method: "POST", path: "/v1/workflows", body: `{"id":"done","tasks":[{"name":"a","run":"other"}]}`, status: 409, serverOnly: "the store's state"},
		{name: "cancel an ended workflow", method: "POST", path: "/v1/workflows/done/cancel", status: 409, serverOnly: "the store's state"},
		{name: "an unknown workflow", method: "GET", path: "/v1/workflows/nope", status: 404, serverOnly: "the store's state"},
		{name: "an unknown job", method: "GET", path: "/v1/jobs/nope", status: 404, serverOnly: "the store's state"},
		{name: "too large", method: "POST", path: "/v1/workflows", body: wf(`{"name":"a","run":"` + strings.Repeat("x", 40<<10) + `"}`), status: 413, serverOnly: "--max-body"},
		{name: "limit repeated", method: "GET", path: "/v1/workflows?limit=1&limit=5000", status: 400, serverOnly: "OpenAPI does not forbid a repeated parameter"},
		{name: "limit with a leading zero", method: "GET", path: "/v1/workflows?limit=05", status: 400, serverOnly: "an integer's spelling"},
		{name: "an unknown parameter", method: "GET", path: "/v1/workflows?limt=5", status: 400, serverOnly: "OpenAPI allows parameters it does not list"},
		{name: "undo=1", method: "POST", path: "/v1/workflows/live/cancel?undo=1", status: 400, serverOnly: "the validator reads 1 as a boolean"},
		{name: "a body on pause", method: "POST", path: "/v1/queues/q1/pause", body: "{}", status: 400, serverOnly: "OpenAPI does not forbid a body an operation does not list"},
		{name: "a foreign Origin", method: "POST", path: "/v1/workflows", body: crossSiteBody, header: []string{"Origin", "http://evil.example"}, status: 403, serverOnly: header},
		{name: "a foreign Origin on a read", method: "GET", path: "/v1/queues", header: []string{"Origin", "null"}, status: 403, serverOnly: header},
		{name: "cross-site", method: "POST", path: "/v1/workflows/live/cancel", header: []string{"Sec-Fetch-Site", "cross-site"}, status: 403, serverOnly: header},
		{name: "Origin on healthz", method: "GET", path: "/healthz", header: []string{"Origin", "http://evil.example"}, status: 403, serverOnly: header},
		{name: "gzip", method: "POST", path: "/v1/workflows", body: crossSiteBody, header: []string{"Content-Encoding", "gzip"}, status: 415, serverOnly: header},

		// No route.
		{name: "no route", method: "GET", path: "/v1/nope", status: 404, serverOnly: "not in the spec"},
		{name: "wrong method", method: "DELETE", path: "/v1/queues", status: 405, serverOnly: "not in the spec"},
	}
	if withToken {
		cases = append(cases,
			contractCase{name: "no token", method: "GET", path: "/v1/queues", header: []string{"Authorization", ""}, status: 401, specRefuses: true},
			contractCase{name: "no token to submit", method: "POST", path: "/v1/workflows", body: crossSiteBody, header: []string{"Authorization", ""}, status: 401, specRefuses: true},
			contractCase{name: "a wrong token", method: "POST", path: "/v1/queues/q1/pause", header: []string{"Authorization", "Bearer wrong"}, status: 401, serverOnly: "the token's value"},
			contractCase{name: "healthz without a token", method: "GET", path: "/healthz", header: []string{"Authorization", ""}, status: 200},
		)
	} else {
		cases = append(cases,
			contractCase{name: "DNS rebinding", method: "POST", path: "/v1/workflows", body: crossSiteBody, header: []string{"Host", "evil.example:" + port}, status: 421, serverOnly: header},
			contractCase{name: "a foreign Host on a read", method: "GET", path: "/v1/workflows/done", header: []string{"Host", "evil.example"}, status: 421, serverOnly: header},
			contractCase{name: "localhost", method: "GET", path: "/v1/queues", header: []string{"Host", "localhost:" + port}, status: 200},
		)
	}
	return cases
}

func TestAPIContract(t *testing.T) {
	t.Parallel()
	for _, withToken := range []bool{true, false} {
		var a *apiT
		if withToken {
			a = newTestAPI(t, Config{MaxBody: 32 << 10})
		} else {
			a = newTokenlessAPI(t, Config{MaxBody: 32 << 10})
		}
		runContractWorkflows(t, a)
		port := a.url[strings.LastIndex(a.url, ":")+1:]
		contract(t, a, contractCases(port, withToken))
	}
}

// Errors of the server's side (500, 502, 503, 507) match the spec too.
func TestAPIContractServerErrors(t *testing.T) {
	t.Parallel()
	for _, err := range []error{weir.ErrUnavailable, weir.ErrProtocol, weir.ErrStoreFull, errors.New("boom")} {
		srv := httptest.NewServer(newAPI(t, failingStore{err: err}, Config{Token: testToken}))
		a := &apiT{t: t, url: srv.URL, token: testToken}
		status := map[error]int{weir.ErrUnavailable: 503, weir.ErrProtocol: 502, weir.ErrStoreFull: 507}[err]
		if status == 0 {
			status = 500
		}
		contract(t, a, []contractCase{
			{name: fmt.Sprint(err), method: "GET", path: "/v1/queues", status: status, serverOnly: "the store failed"},
			{name: fmt.Sprint(err), method: "GET", path: "/v1/workflows/x", status: status, serverOnly: "the store failed"},
			{name: "healthz, " + fmt.Sprint(err), method: "GET", path: "/healthz", status: 503, serverOnly: "the store failed"},
		})
		srv.Close()
	}
}

// Every schema the server's records use is exercised above; this checks the
// validator is not vacuous: a record that breaks the spec fails it.
func TestAPIContractCatchesDrift(t *testing.T) {
	t.Parallel()
	doc, _ := loadSpec(t, "http://127.0.0.1:1")
	wfSchema := doc.Components.Schemas["Workflow"].Value
	good := workflowfile.NewRecord(weir.Workflow{ID: "w", State: weir.WorkflowRunning, CreatedAt: time.UnixMilli(1_700_000_000_000),
		Tasks: []weir.Task{{Name: "a", Queue: "q", State: weir.Queued}}})
	check := func(rec any) error {
		b, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		return wfSchema.VisitJSON(v)
	}
	if err := check(good); err != nil {
		t.Fatalf("a good record: %v", err)
	}
	for name, bad := range map[string]func(m map[string]any){
		"a time with two fraction digits": func(m map[string]any) { m["created_at"] = "2023-11-14T22:13:20.10Z" },
		"a time with no fraction":         func(m map[string]any) { m["created_at"] = "2023-11-14T22:13:20Z" },
		"a missing field":                 func(m map[string]any) { delete(m, "reason") },
		"an unknown state":                func(m map[string]any) { m["state"] = "sleeping" },
		"a null task list":                func(m map[string]any) { m["tasks"] = nil },
	} {
		b, _ := json.Marshal(good)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		bad(m)
		if err := wfSchema.VisitJSON(m); err == nil {
			t.Errorf("%s: the Workflow schema accepts it", name)
		}
	}
}

// The spec says what the server checks: the same patterns and bounds, and
// every operation lists the answers every route can give.
func TestOpenAPIMatchesServer(t *testing.T) {
	t.Parallel()
	doc, _ := loadSpec(t, "http://127.0.0.1:1")
	schemas := doc.Components.Schemas
	limits := weir.DefaultLimits()
	task := schemas["TaskFields"].Value.Properties
	job := schemas["JobRequest"].Value.Properties
	for name, p := range map[string]*openapi3.SchemaRef{
		"TaskFields.backoff": task["backoff"], "TaskFields.timeout": task["timeout"], "TaskFields.delay": task["delay"],
		"WebhookFile.backoff": schemas["WebhookFile"].Value.Properties["backoff"],
		"JobRequest.backoff":  job["backoff"], "JobRequest.timeout": job["timeout"], "JobRequest.delay": job["delay"],
		"JobRequest.unique.for": job["unique"].Value.Properties["for"],
	} {
		if p == nil || p.Value.Pattern != workflowfile.DurationPattern {
			t.Errorf("%s: not a duration of the server's pattern %q", name, workflowfile.DurationPattern)
		}
	}
	if m := schemas["WorkflowFile"].Value.Properties["tasks"].Value.MaxItems; m == nil || *m != uint64(limits.MaxTasks) {
		t.Errorf("WorkflowFile.tasks maxItems %v, the default limit %d", m, limits.MaxTasks)
	}
	if m := task["retries"].Value.Max; m == nil || *m != float64(limits.MaxAttempts-1) {
		t.Errorf("TaskFile.retries maximum %v, the server's %d", m, limits.MaxAttempts-1)
	}
	if got := fmt.Sprint(schemas["UndoState"].Value.Enum); got != fmt.Sprint(append(schemas["TaskState"].Value.Enum, nil)) {
		t.Errorf("UndoState %s is not TaskState and null", got)
	}
	// an ID's pattern and bound are engine.ValidID's
	idSchema := doc.Components.Parameters["WorkflowID"].Value.Schema.Value
	idRE := regexp.MustCompile(idSchema.Pattern)
	name64 := strings.Repeat("n", 64)
	dotted := []string{".", "..", "...", ".a", "a.", "..a", ".-", "._", "." + strings.Repeat("n", 63), ".." + strings.Repeat("n", 62),
		".." + strings.Repeat("n", 63), "." + strings.Repeat("n", 64)}
	for _, id := range append([]string{"a", strings.Repeat("w", 128), strings.Repeat("w", 129), "nightly@1700000000", "a@" + strings.Repeat("9", 126),
		"a@" + strings.Repeat("9", 127), name64 + "@1", name64 + "n@1", "wf@webhook", "wf@webhook.2", "a@1@2", "@1", "a@", "a/b", "a b",
		".@1", "..@1", "...@1", ".a@1", "." + strings.Repeat("w", 127), ".." + strings.Repeat("w", 126), ".." + strings.Repeat("w", 127)}, dotted...) {
		spec := idRE.MatchString(id) && idSchema.MaxLength != nil && uint64(len(id)) <= *idSchema.MaxLength
		if spec != engine.ValidID(id) {
			t.Errorf("ID %q: the spec's pattern says %v, engine.ValidID %v", id, spec, engine.ValidID(id))
		}
	}
	// a name's pattern is engine.ValidName's
	namePattern := doc.Components.Parameters["QueueName"].Value.Schema.Value.Pattern
	nameRE := regexp.MustCompile(namePattern)
	for _, name := range append([]string{"a", "", name64, name64 + "n", "a b", "a/b", "a:b", "a@1", "é"}, dotted...) {
		if nameRE.MatchString(name) != engine.ValidName(name) {
			t.Errorf("name %q: the spec's pattern says %v, engine.ValidName %v", name, nameRE.MatchString(name), engine.ValidName(name))
		}
	}
	// and every name or ID in the document has one of the two (a cursor
	// holds an ID, or is one: a listing by id_prefix; a group's name, at
	// most 56, names its callbacks)
	for _, m := range regexp.MustCompile(`pattern: "(.*A-Za-z0-9.*)"`).FindAllStringSubmatch(spec.OpenAPI, -1) {
		p := strings.ReplaceAll(m[1], `\\`, `\`)
		switch p {
		case namePattern, idSchema.Pattern, "^-?[0-9]{1,19}:" + strings.TrimPrefix(idSchema.Pattern, "^"),
			"^(-?[0-9]{1,19}:)?" + strings.TrimPrefix(idSchema.Pattern, "^"), "^[A-Za-z0-9_.-]{1,56}$":
		default:
			t.Errorf("a pattern that is neither a name's nor an ID's: %s", p)
		}
	}
	stampRE := regexp.MustCompile(schemas["Time"].Value.Pattern)
	b, _ := json.Marshal(workflowfile.Stamp{Time: time.UnixMilli(1_700_000_000_100)})
	if s := strings.Trim(string(b), `"`); !stampRE.MatchString(s) {
		t.Errorf("a stamp %q does not match Time's pattern", s)
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			want := []string{"default", "400", "403", "421"}
			if strings.HasPrefix(path, "/v1") {
				want = append(want, "401")
			}
			if op.RequestBody != nil {
				want = append(want, "415", "413")
			}
			for _, code := range want {
				if op.Responses.Value(code) == nil {
					t.Errorf("%s %s does not list %s", method, path, code)
				}
			}
		}
	}
	// No schema is nullable without a type, and no request schema has a
	// default (openapi-typescript makes such a field required).
	var walk func(name string, s *openapi3.SchemaRef, request bool)
	seen := map[*openapi3.Schema]bool{}
	walk = func(name string, s *openapi3.SchemaRef, request bool) {
		if s == nil || s.Value == nil || seen[s.Value] {
			return
		}
		v := s.Value
		seen[v] = true
		if v.Nullable && (v.Type == nil || len(*v.Type) == 0) {
			t.Errorf("%s: nullable without a type", name)
		}
		if request && v.Default != nil {
			t.Errorf("%s: a default in a request schema", name)
		}
		for k, p := range v.Properties {
			walk(name+"."+k, p, request)
		}
		walk(name+"[]", v.Items, request)
		for i, sub := range append(append(append(openapi3.SchemaRefs{}, v.AnyOf...), v.OneOf...), v.AllOf...) {
			walk(fmt.Sprintf("%s/%d", name, i), sub, request)
		}
		if v.AdditionalProperties.Schema != nil {
			walk(name+"{}", v.AdditionalProperties.Schema, request)
		}
	}
	walk("WorkflowFile", schemas["WorkflowFile"], true)
	for name, s := range schemas {
		walk(name, s, false)
	}
}
