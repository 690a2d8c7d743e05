package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/weirflow/weir"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"testing"

	"github.com/weirflow/weir/engine/memstore"
)

// FuzzAPIRequest sends arbitrary requests to the REST API (on an in-process
// store): a route, a path tail, a query and a body, JSON or YAML. The API
// never panics; every answer has a status it documents and a JSON body, an
// error body with a code; a request without the token is 401 on every /v1
// route; a refused submit or enqueue writes nothing.
func FuzzAPIRequest(f *testing.F) {
	f.Add(uint8(0), "", "", []byte(`{"id":"w1","tasks":[{"name":"a","run":"echo a"}]}`), false, true)
	f.Add(uint8(0), "", "", []byte("tasks:\n  - name: a\n    run: x\n    after: [a]\n"), true, true)
	f.Add(uint8(0), "", "", []byte(`{"tasks":[{"name":"a","run":"x","retries":-1}]}`), false, true)
	f.Add(uint8(1), "w1", "limit=0&state=bogus&cursor=x", []byte(nil), false, true)
	f.Add(uint8(2), "w1/cancel", "undo=maybe", []byte(nil), false, true)
	f.Add(uint8(3), "w1/a/undo", "", []byte(nil), false, false)
	f.Add(uint8(4), "bad queue/pause", "", []byte(nil), false, true)
	f.Add(uint8(5), "%zz", "", []byte("{"), false, true)
	f.Add(uint8(6), "", "", []byte(`{"id":"j1","queue":"q","payload":{"b":[1,2.5],"a":null},"retries":2,"delay":"1s"}`), false, true)
	f.Add(uint8(6), "", "", []byte("queue: q\npayload: {run: x}\nrun_at: 2030-01-01T00:00:00Z\n"), true, true)
	const token = "fuzz-token-of-16-or-more"
	f.Fuzz(func(t *testing.T, route uint8, tail, query string, body []byte, yamlBody, auth bool) {
		if len(body) > 64<<10 || len(tail)+len(query) > 1024 {
			t.Skip()
		}
		method, target := "GET", "/v1/workflows/"+tail
		switch route % 7 {
		case 0:
			method, target = "POST", "/v1/workflows"
		case 2:
			method = "POST"
		case 3:
			target = "/v1/jobs/" + tail
		case 4:
			method, target = "POST", "/v1/queues/"+tail
		case 5:
			target = "/v1/" + tail
		case 6:
			method, target = "POST", "/v1/jobs"
		}
		u := &url.URL{Path: target, RawQuery: query}
		req, err := http.NewRequestWithContext(context.Background(), method, u.String(), bytes.NewReader(body))
		if err != nil {
			t.Skip()
		}
		if yamlBody {
			req.Header.Set("Content-Type", "application/yaml")
		} else {
			req.Header.Set("Content-Type", "application/json")
		}
		if auth {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		store := memstore.New()
		h := newAPI(t, store, Config{Token: token, MaxBody: 32 << 10})
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)

		switch rec.Code {
		case 301, 307, 308:
			// net/http's mux redirects an unclean path ("/v1/a/../b") to
			// its clean form, after the token check; the client must send
			// the token again there.
			if loc := rec.Header().Get("Location"); loc == "" || path.Clean(req.URL.Path) == req.URL.Path {
				t.Fatalf("%s %s: redirect %d to %q", method, u, rec.Code, loc)
			}
			return
		case 200, 201, 400, 401, 404, 405, 409, 413:
		default:
			t.Fatalf("%s %s: status %d: %s", method, u, rec.Code, rec.Body)
		}
		var out map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("%s %s: status %d, body not a JSON object: %q", method, u, rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			if c, _ := out["code"].(string); c == "" {
				t.Fatalf("%s %s: error %d without a code: %s", method, u, rec.Code, rec.Body)
			}
		}
		if !auth && req.URL.Path != "/v1" && len(req.URL.Path) > 3 && req.URL.Path[:4] == "/v1/" && rec.Code != 401 {
			t.Fatalf("%s %s without a token: %d", method, u, rec.Code)
		}
		if rec.Code >= 400 {
			pg, err := store.ListWorkflows(context.Background(), weir.ListParams{})
			if err != nil || len(pg.Workflows) != 0 {
				t.Fatalf("a refused request (%d) left %d workflows (%v)", rec.Code, len(pg.Workflows), err)
			}
			if qs, err := store.Queues(context.Background()); err != nil || len(qs) != 0 {
				t.Fatalf("a refused request (%d) left queues %+v (%v)", rec.Code, qs, err)
			}
		}
	})
}
