package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/internal/clitest"
)

// The cross-site attack docs/security.md guards against: a page POSTs a
// workflow as text/plain.
const crossSiteBody = `{"tasks":[{"name":"x","run":"id > /tmp/weir-cross-site-proof"}]}`

// mutating are the routes that change the store, each with a body a
// browser could send to it.
var mutating = []struct{ method, path string }{
	{"POST", "/v1/workflows"},
	{"POST", "/v1/workflows/wf/cancel"},
	{"POST", "/v1/queues/q/pause"},
	{"POST", "/v1/queues/q/resume"},
}

// crossSite is one shape of request a web page can make a browser send.
type crossSite struct {
	name   string
	header []string // name, value pairs for apiT.do
	body   bool     // send crossSiteBody
}

// crossSiteShapes are the shapes for a server whose address is host:port.
func crossSiteShapes(host, port string) []crossSite {
	page := []string{"Origin", "http://evil.example", "Sec-Fetch-Site", "cross-site"}
	with := func(h ...string) []string { return append(append([]string{}, page...), h...) }
	return []crossSite{
		{"text/plain from a page", with("Content-Type", "text/plain"), true},
		{"text/plain without Origin", []string{"Content-Type", "text/plain;charset=UTF-8"}, true},
		{"form from a page", with("Content-Type", "application/x-www-form-urlencoded"), true},
		{"form without Origin", []string{"Content-Type", "application/x-www-form-urlencoded"}, true},
		{"multipart from a page", with("Content-Type", "multipart/form-data; boundary=x"), true},
		{"multipart without Origin", []string{"Content-Type", "multipart/form-data; boundary=x"}, true},
		{"no body from a page", page, false},
		{"JSON from a foreign Origin", []string{"Origin", "http://evil.example", "Content-Type", "application/json"}, true},
		{"Origin null", []string{"Origin", "null", "Content-Type", "application/json"}, true},
		{"Origin of another local port", []string{"Origin", "http://" + hostPort(host, "1"), "Content-Type", "application/json"}, true},
		{"Origin https on the served port", []string{"Origin", "https://" + hostPort(host, port), "Content-Type", "application/json"}, true},
		{"cross-site without Origin", []string{"Sec-Fetch-Site", "cross-site", "Content-Type", "application/json"}, true},
		{"same-site without Origin", []string{"Sec-Fetch-Site", "same-site"}, false},
		{"foreign Host", []string{"Host", "evil.example", "Content-Type", "application/json"}, true},
		{"DNS rebinding: a foreign name with the served port", []string{"Host", "evil.example:" + port, "Content-Type", "application/json"}, true},
		{"rebinding, no body", []string{"Host", "evil.example:" + port}, false},
		{"another local port in Host", []string{"Host", hostPort(host, "1"), "Content-Type", "application/json"}, true},
		{"a subdomain of localhost", []string{"Host", "evil.localhost:" + port, "Content-Type", "application/json"}, true},
	}
}

func hostPort(host, port string) string { return host + ":" + port }

// nothingChanged fails the test if a refused request changed the store:
// no workflow but wf, wf still running, queue q not paused.
func nothingChanged(t *testing.T, a *apiT, what string) {
	t.Helper()
	ctx := context.Background()
	pg, err := a.store.ListWorkflows(ctx, weir.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pg.Workflows) != 1 || pg.Workflows[0].ID != "wf" || pg.Workflows[0].State != weir.WorkflowRunning {
		t.Fatalf("%s changed the workflows: %+v", what, pg.Workflows)
	}
	qs, err := a.store.Queues(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if q.Paused {
			t.Fatalf("%s paused queue %s", what, q.Name)
		}
	}
}

// Every cross-site shape is refused on every mutating route, with and
// without a token (the token's owner's browser does not send it to a page
// of another origin, but the Origin check holds regardless), and changes
// nothing.
func TestGuardRefusesCrossSite(t *testing.T) {
	t.Parallel()
	for _, withToken := range []bool{false, true} {
		var a *apiT
		if withToken {
			a = newTestAPI(t, Config{})
		} else {
			a = newTokenlessAPI(t, Config{})
		}
		u, _ := url.Parse(a.url)
		a.want(http.StatusCreated, "POST", "/v1/workflows", wfFile{"id": "wf", "tasks": tasks(tk("a", "true"))})
		for _, shape := range crossSiteShapes(u.Hostname(), u.Port()) {
			if withToken && shape.header[0] == "Host" {
				continue // with a token, Host is not checked (TestGuardHostWithToken)
			}
			for _, rt := range mutating {
				var body any
				if shape.body {
					body = crossSiteBody
				}
				header := append([]string{"Content-Type", ""}, shape.header...)
				r := a.do(rt.method, rt.path, body, header...)
				what := fmt.Sprintf("token %t, %s: %s %s", withToken, shape.name, rt.method, rt.path)
				var e apiError
				if err := jsonStrict(r.body, &e); err != nil || e.Code == "" || e.Message == "" {
					t.Errorf("%s: %d, body %s", what, r.status, r.body)
				}
				switch r.status {
				case http.StatusForbidden, http.StatusMisdirectedRequest, http.StatusUnsupportedMediaType:
				case http.StatusBadRequest:
					// A body on a route that takes none, from a client
					// that sent no Origin.
					if rt.path == "/v1/workflows" || !shape.body {
						t.Errorf("%s: 400 %s", what, r.body)
					}
				default:
					t.Errorf("%s: status %d, want a refusal\n%s", what, r.status, r.body)
				}
				nothingChanged(t, a, what)
			}
		}
	}
}

// jsonStrict decodes a JSON error body, refusing unknown fields.
func jsonStrict(b []byte, v *apiError) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// The Origin, Host and Sec-Fetch-Site checks hold on every route, reads
// and /healthz included, with the codes and fields spec/rest.md lists.
func TestGuardEveryRoute(t *testing.T) {
	t.Parallel()
	a := newTokenlessAPI(t, Config{})
	u, _ := url.Parse(a.url)
	paths := []string{"GET /v1/nope", "DELETE /v1/queues", "OPTIONS /v1/workflows"}
	for _, rt := range routes {
		paths = append(paths, rt.method+" "+examplePath(rt.pattern))
	}
	for _, p := range paths {
		method, path, _ := strings.Cut(p, " ")
		for _, c := range []struct {
			header      []string
			status      int
			code, field string
		}{
			{[]string{"Origin", "http://evil.example"}, 403, codeOrigin, "Origin"},
			{[]string{"Origin", "http://evil.example", "Origin", "http://evil.example"}, 403, codeOrigin, "Origin"},
			{[]string{"Sec-Fetch-Site", "cross-site"}, 403, codeOrigin, "Sec-Fetch-Site"},
			{[]string{"Host", "evil.example:" + u.Port()}, 421, codeHost, "Host"},
			{[]string{"Host", "evil.example"}, 421, codeHost, "Host"},
		} {
			r := a.do(method, path, nil, c.header...)
			if r.status != c.status {
				t.Errorf("%s %s %v: %d, want %d\n%s", method, path, c.header, r.status, c.status, r.body)
				continue
			}
			wantErr(t, r, c.code, c.field)
		}
	}
}

// What a browser sends from the API's own origin, and what a program sends
// (no Origin), still works; so does a configured origin.
func TestGuardGoodPaths(t *testing.T) {
	t.Parallel()
	a := newTokenlessAPI(t, Config{})
	u, _ := url.Parse(a.url)
	port := u.Port()
	for i, h := range [][]string{
		nil,
		{"Host", "localhost:" + port},
		{"Host", "LOCALHOST:" + port},
		{"Origin", "http://127.0.0.1:" + port, "Sec-Fetch-Site", "same-origin"},
		{"Origin", "http://localhost:" + port, "Host", "localhost:" + port},
		{"Origin", "http://LocalHost:" + port},
		{"Sec-Fetch-Site", "none"},
		{"Content-Type", "application/json; charset=utf-8"},
		{"Content-Type", "Application/JSON"},
	} {
		id := fmt.Sprintf("good-%d", i)
		a.want(http.StatusCreated, "POST", "/v1/workflows", wfFile{"id": id, "tasks": tasks(tk("a", "true"))}, h...)
		a.want(http.StatusOK, "POST", "/v1/workflows/"+id+"/cancel", nil, h...)
		a.want(http.StatusOK, "GET", "/v1/workflows/"+id, nil, h...)
		a.want(http.StatusOK, "POST", "/v1/queues/q/pause", nil, h...)
		a.want(http.StatusOK, "GET", "/healthz", nil, h...)
	}
	a.want(http.StatusCreated, "POST", "/v1/workflows", "tasks: [{name: a, run: 'true'}]\n", "Content-Type", "application/yaml")
	a.want(http.StatusCreated, "POST", "/v1/workflows", "tasks: [{name: a, run: 'true'}]\n", "Content-Type", "application/yaml; charset=UTF-8")

	// A configured origin: the public address of a proxy in front.
	b := newTestAPI(t, Config{Origins: []string{"https://Weir.Example.com", "http://dash.example:8080/"}})
	for _, o := range []string{"https://weir.example.com", "https://weir.example.com:443", "http://dash.example:8080"} {
		b.want(http.StatusOK, "GET", "/v1/queues", nil, "Origin", o)
	}
	for _, o := range []string{"http://weir.example.com", "https://weir.example.com:8443", "https://sub.weir.example.com", "http://dash.example"} {
		wantErr(t, b.want(http.StatusForbidden, "GET", "/v1/queues", nil, "Origin", o), codeOrigin, "Origin")
	}
}

// With a token, the Host is not checked (a proxy may forward any name),
// the Origin still is, and neither check lets a request without the token
// through.
func TestGuardHostWithToken(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{})
	a.want(http.StatusOK, "GET", "/v1/queues", nil, "Host", "weir.example.com")
	wantErr(t, a.want(http.StatusForbidden, "GET", "/v1/queues", nil, "Origin", "http://evil.example"), codeOrigin, "Origin")
	wantErr(t, a.want(http.StatusUnauthorized, "GET", "/v1/queues", nil, "Authorization", ""), codeUnauthorized, "")
}

// Without a token, a handler that cannot tell the address it serves (no
// listener) answers nothing but 421.
func TestGuardNoListener(t *testing.T) {
	t.Parallel()
	h := newAPI(t, testStore(t), Config{})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1:8080/v1/queues", nil))
	if rec.Code != http.StatusMisdirectedRequest {
		t.Errorf("no local address, no token: %d %s", rec.Code, rec.Body)
	}
}

// The body of POST /v1/workflows must be JSON or YAML: 415 MEDIATYPE
// otherwise, with Accept-Post.
func TestGuardMediaType(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{})
	body := `{"tasks":[{"name":"a","run":"true"}]}`
	for _, h := range [][]string{
		{"Content-Type", ""},
		{"Content-Type", "text/plain"},
		{"Content-Type", "application/x-www-form-urlencoded"},
		{"Content-Type", "multipart/form-data; boundary=x"},
		{"Content-Type", "text/yaml"},
		{"Content-Type", "application/x-yaml"},
		{"Content-Type", "application/json; charset=latin1"},
		{"Content-Type", "application/json; profile=x"},
		{"Content-Type", "application/json;;"},
		{"Content-Type", "application/json+x"},
		{"Content-Encoding", "gzip"},
	} {
		r := a.want(http.StatusUnsupportedMediaType, "POST", "/v1/workflows", body, h...)
		wantErr(t, r, codeMediaType, "Content-Type")
		if r.header.Get("Accept-Post") != "application/json, application/yaml" {
			t.Errorf("%v: Accept-Post %q", h, r.header.Get("Accept-Post"))
		}
	}
	// Two Content-Type headers.
	req, _ := http.NewRequestWithContext(t.Context(), "POST", a.url+"/v1/workflows", strings.NewReader(body))
	req.Header.Add("Content-Type", "application/json")
	req.Header.Add("Content-Type", "text/plain")
	req.Header.Set("Authorization", "Bearer "+a.token)
	res, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("two Content-Types: %d", res.StatusCode)
	}
	// JSON sent as YAML is read as YAML (JSON is YAML); YAML sent as JSON
	// is not JSON.
	a.want(http.StatusCreated, "POST", "/v1/workflows", body, "Content-Type", "application/yaml")
	wantErr(t, a.want(http.StatusBadRequest, "POST", "/v1/workflows", "tasks: [{name: a, run: x}]", "Content-Type", "application/json"), weir.ErrInvalid.Code, "")
}

func TestCanonicalOrigin(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"http://Example.COM":        "http://example.com:80",
		"https://example.com":       "https://example.com:443",
		"https://example.com:8443/": "https://example.com:8443",
		"http://127.0.0.1:9":        "http://127.0.0.1:9",
		"http://[::1]:9":            "http://[::1]:9",
		"http://[::1]":              "http://[::1]:80",
	} {
		if got, err := canonicalOrigin(in); err != nil || got != want {
			t.Errorf("canonicalOrigin(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"null", "", "example.com", "ftp://example.com", "http://", "http://u:p@example.com",
		"http://example.com/path", "http://example.com?q", "http://example.com#f", "http://example.com:", "file:///etc"} {
		if got, err := canonicalOrigin(bad); err == nil {
			t.Errorf("canonicalOrigin(%q) = %q, want an error", bad, got)
		}
	}
}

// failingStore answers every read with err.
type failingStore struct {
	engine.Store
	err error
}

func (f failingStore) Queues(context.Context) ([]weir.QueueInfo, error) { return nil, f.err }
func (f failingStore) GetWorkflow(context.Context, string) (weir.Workflow, error) {
	return weir.Workflow{}, f.err
}

// An error of the server's side reaches the client as a fixed message: the
// Redis address and Go types are in the server's log only.
func TestAPIErrorsShowNoInternals(t *testing.T) {
	t.Parallel()
	secret := "dial tcp 10.1.2.3:6379 (redis://weir:pw@10.1.2.3:6379/0): *net.OpError"
	for _, c := range []struct {
		err    error
		status int
		code   string
	}{
		{fmt.Errorf("%w: %s", weir.ErrUnavailable, secret), 503, weir.ErrUnavailable.Code},
		{fmt.Errorf("%w: %s", weir.ErrProtocol, secret), 502, weir.ErrProtocol.Code},
		{fmt.Errorf("%w: %s", weir.ErrStoreFull, secret), 507, weir.ErrStoreFull.Code},
		{errors.New(secret), 500, codeInternal},
	} {
		var log bytes.Buffer
		h := newAPI(t, failingStore{err: c.err}, Config{Token: testToken, Logger: slog.New(slog.NewTextHandler(&log, nil))})
		srv := httptest.NewServer(h)
		for _, path := range []string{"/v1/queues", "/v1/workflows/x", "/healthz"} {
			code, body := get(t, "GET", srv.URL+path, testToken)
			if path != "/healthz" && code != c.status || path == "/healthz" && code != 503 {
				t.Errorf("%s with %v: %d %s", path, c.err, code, body)
			}
			for _, leak := range []string{"10.1.2.3", "6379", "redis://", "net.OpError", "*"} {
				if strings.Contains(body, leak) {
					t.Errorf("%s: the body shows %q: %s", path, leak, body)
				}
			}
		}
		srv.Close()
		if !strings.Contains(log.String(), "10.1.2.3:6379") {
			t.Errorf("the log lacks the error's details:\n%s", log.String())
		}
	}
}

// get requests url with the token (when not empty) on a client that keeps
// no connection open.
var get = clitest.Get

// NewHandler refuses a configuration it could not serve safely.
func TestNewHandlerRefusesBadConfig(t *testing.T) {
	t.Parallel()
	s := memstore.New()
	for name, cfg := range map[string]Config{
		"no store":    {Token: testToken},
		"short token": {Store: s, Token: "short"},
		"blank token": {Store: s, Token: strings.Repeat(" ", 20)},
		"bad origin":  {Store: s, Origins: []string{"ftp://x.example"}},
		"path origin": {Store: s, Origins: []string{"https://x.example/app"}},
		"max body":    {Store: s, MaxBody: -1},
	} {
		if h, err := NewHandler(cfg); err == nil || h != nil {
			t.Errorf("%s: %v, %v", name, h, err)
		}
	}
	if _, err := NewHandler(Config{Store: s, Origins: []string{"https://x.example"}}); err != nil {
		t.Errorf("a good config: %v", err)
	}
}
