package rest

import (
	"github.com/weirflow/weir"
	"net/http"
	"strings"
	"testing"

	"github.com/weirflow/weir/workflowfile"
)

// Query parameters are strict: known names only, each once, never empty;
// undo is exactly true or false.
func TestAPIQueryStrict(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{})
	a.want(http.StatusCreated, "POST", "/v1/workflows", wfFile{"id": "q1", "tasks": tasks(tk("a", "true"))})
	for _, c := range []struct{ method, path, field string }{
		{"GET", "/v1/workflows?limit=1&limit=5000", "limit"},
		{"GET", "/v1/workflows?state=running&state=failed", "state"},
		{"GET", "/v1/workflows?limit=", "limit"},
		{"GET", "/v1/workflows?state=", "state"},
		{"GET", "/v1/workflows?cursor=", "cursor"},
		{"GET", "/v1/workflows?limt=5", "limt"},
		{"GET", "/v1/workflows?Limit=5", "Limit"},
		{"GET", "/v1/workflows?limit=+5", "limit"},
		{"GET", "/v1/workflows?limit=05", "limit"},
		{"GET", "/v1/workflows?limit=5x", "limit"},
		{"GET", "/v1/workflows?state=RUNNING", "state"},
		{"GET", "/v1/workflows?%zz=1", ""},
		{"GET", "/v1/workflows?limit=1;state=running", ""},
		{"GET", "/v1/queues?x=1", "x"},
		{"GET", "/v1/workflows/q1?undo=true", "undo"},
		{"GET", "/healthz?verbose=1", "verbose"},
		{"POST", "/v1/queues/q/pause?now=true", "now"},
		{"POST", "/v1/workflows?id=x", "id"},
		{"POST", "/v1/workflows/q1/cancel?undo=1", "undo"},
		{"POST", "/v1/workflows/q1/cancel?undo=t", "undo"},
		{"POST", "/v1/workflows/q1/cancel?undo=TRUE", "undo"},
		{"POST", "/v1/workflows/q1/cancel?undo=False", "undo"},
		{"POST", "/v1/workflows/q1/cancel?undo=", "undo"},
		{"POST", "/v1/workflows/q1/cancel?undo", "undo"},
		{"POST", "/v1/workflows/q1/cancel?undo=true&undo=false", "undo"},
	} {
		var body any
		if c.path == "/v1/workflows?id=x" {
			body = wfFile{"tasks": tasks(tk("a", "true"))}
		}
		r := a.do(c.method, c.path, body)
		if r.status != http.StatusBadRequest {
			t.Errorf("%s %s: %d, want 400\n%s", c.method, c.path, r.status, r.body)
			continue
		}
		wantErr(t, r, weir.ErrInvalid.Code, c.field)
	}
	// Nothing was cancelled; the strict forms work.
	if rec := strict[workflowfile.Record](t, a.want(http.StatusOK, "GET", "/v1/workflows/q1", nil).body); rec.State != "running" {
		t.Fatalf("a refused cancel cancelled: %+v", rec)
	}
	a.want(http.StatusOK, "GET", "/v1/workflows?limit=5&state=running", nil)
	a.want(http.StatusOK, "POST", "/v1/workflows/q1/cancel?undo=false", nil)
}

// A route that takes no body refuses one.
func TestAPINoBody(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{})
	a.want(http.StatusCreated, "POST", "/v1/workflows", wfFile{"id": "nb", "tasks": tasks(tk("a", "true"))})
	for _, p := range []string{"POST /v1/queues/q/pause", "POST /v1/queues/q/resume", "GET /v1/queues", "GET /v1/workflows/nb", "POST /v1/workflows/nb/cancel"} {
		method, path, _ := strings.Cut(p, " ")
		r := a.do(method, path, "{}")
		if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "takes no request body") {
			t.Errorf("%s with a body: %d %s", p, r.status, r.body)
		}
		// An empty body is no body.
		a.want(http.StatusOK, method, path, "")
	}
}
