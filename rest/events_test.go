package rest

import (
	"bufio"
	"context"
	"encoding/json"
	"github.com/weirflow/weir"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/internal/testclock"
	"github.com/weirflow/weir/redisstore"
)

// GET /v1/events: pages of JSON from a cursor, the workflow filter, bad
// input; the same stream as Server-Sent Events (by Accept, by route,
// resumed by Last-Event-ID); POST /v1/events/off and /on.
func TestEventsRoutes(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{})
	ctx := t.Context()
	for _, id := range []string{"a", "b"} {
		if _, err := a.store.Enqueue(ctx, engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: "q"}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.store.Submit(ctx, engine.SubmitParams{Plan: engine.Plan{ID: "w", Tasks: []engine.TaskSpec{{Name: "t", Queue: "q"}}}}); err != nil {
		t.Fatal(err)
	}
	page := func(r resp) eventPage {
		t.Helper()
		return strict[eventPage](t, r.body)
	}
	all := page(a.want(http.StatusOK, "GET", "/v1/events", nil))
	if len(all.Events) != 4 || all.Events[0].Job != "a" || all.Events[2].Type != weir.EventWorkflowSubmitted || all.Next != all.Events[3].ID {
		t.Fatalf("events %+v", all)
	}
	p := page(a.want(http.StatusOK, "GET", "/v1/events?limit=1&after="+all.Events[0].ID, nil))
	if len(p.Events) != 1 || p.Events[0].Job != "b" || p.Next != all.Events[1].ID {
		t.Errorf("after the first, limit 1: %+v", p)
	}
	p = page(a.want(http.StatusOK, "GET", "/v1/events?workflow=w", nil))
	if len(p.Events) != 2 || p.Events[1].Task != "t" {
		t.Errorf("workflow w: %+v", p)
	}
	p = page(a.want(http.StatusOK, "GET", "/v1/events?after="+all.Next, nil))
	if len(p.Events) != 0 || p.Next != all.Next || !strings.Contains(string(a.do("GET", "/v1/events?after="+all.Next, nil).body), `"events":[]`) {
		t.Errorf("at the end: %+v", p)
	}
	wantErr(t, a.want(http.StatusBadRequest, "GET", "/v1/events?limit=0", nil), weir.ErrInvalid.Code, "limit")
	wantErr(t, a.want(http.StatusBadRequest, "GET", "/v1/events?after=nope", nil), weir.ErrInvalid.Code, "")
	wantErr(t, a.want(http.StatusBadRequest, "GET", "/v1/events?workflow=a/b", nil), weir.ErrInvalid.Code, "workflow")

	// Server-Sent Events: the stream ends after Config.StreamFor (200ms
	// in tests)
	for _, c := range []struct{ path, header, value string }{
		{"/v1/events", "Accept", "text/html, text/event-stream;q=0.9"},
		{"/v1/events/stream", "", ""},
		{"/v1/events/stream", "Last-Event-ID", all.Events[1].ID},
	} {
		r := a.do("GET", c.path, nil, c.header, c.value)
		if r.status != http.StatusOK || r.header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("%s %s: %d %q\n%s", c.path, c.value, r.status, r.header.Get("Content-Type"), r.body)
		}
		body := string(r.body)
		want := 4
		if c.header == "Last-Event-ID" {
			want = 2
		}
		if n := strings.Count(body, "\ndata: {"); n != want || !strings.Contains(body, "id: "+all.Next+"\nevent: queued\ndata: {\"id\":\""+all.Next+"\"") {
			t.Errorf("%s %s: %d events, want %d:\n%s", c.path, c.value, n, want, body)
		}
	}
	if r := a.do("GET", "/v1/events/stream?after=nope", nil); r.status != http.StatusBadRequest {
		t.Errorf("stream with a bad cursor: %d", r.status)
	}

	if got := strict[map[string]bool](t, a.want(http.StatusOK, "POST", "/v1/events/off", nil).body); got["events"] {
		t.Errorf("off: %v", got)
	}
	if _, err := a.store.Enqueue(ctx, engine.EnqueueParams{Job: engine.JobSpec{ID: "c", Queue: "q"}}); err != nil {
		t.Fatal(err)
	}
	if p = page(a.want(http.StatusOK, "GET", "/v1/events?after="+all.Next, nil)); len(p.Events) != 0 {
		t.Errorf("events while off: %+v", p)
	}
	if got := strict[map[string]bool](t, a.want(http.StatusOK, "POST", "/v1/events/on", nil).body); !got["events"] {
		t.Errorf("on: %v", got)
	}
	if _, err := a.store.Enqueue(ctx, engine.EnqueueParams{Job: engine.JobSpec{ID: "d", Queue: "q"}}); err != nil {
		t.Fatal(err)
	}
	if p = page(a.want(http.StatusOK, "GET", "/v1/events?after="+all.Next, nil)); len(p.Events) != 1 || p.Events[0].Job != "d" {
		t.Errorf("events on again: %+v", p)
	}
}

// GET /v1/events on a namespace of 4 partitions (spec/partitions.md): pages
// followed by their next cursor (one per partition) return every event
// once; an event's ID is no cursor; the stream's ids are cursors a
// reconnecting browser can resume from.
func TestEventsPartitions(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t, redistest.Default(t).Options)
	ns := redistest.Namespace(t, rdb, "restparts-")
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: ns, Config: engine.Config{Partitions: 4}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(newAPI(t, s, Config{Token: testToken, Limits: s.Config().Limits}))
	t.Cleanup(srv.Close)
	a := &apiT{t: t, url: srv.URL, token: testToken, store: s}
	ids := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	for _, id := range ids {
		if _, err := s.Enqueue(t.Context(), engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: "q"}}); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]int{}
	after, first := "", ""
	for range len(ids) + 1 {
		path := "/v1/events?limit=3"
		if after != "" {
			path += "&after=" + url.QueryEscape(after)
		}
		p := strict[eventPage](t, a.want(http.StatusOK, "GET", path, nil).body)
		if len(p.Events) == 0 {
			break
		}
		for _, e := range p.Events {
			seen[e.Job]++
			if first == "" {
				first = e.ID
			}
		}
		if strings.Count(p.Next, ",") != 3 {
			t.Fatalf("next %q is not 4 cursors", p.Next)
		}
		after = p.Next
	}
	for _, id := range ids {
		if seen[id] != 1 {
			t.Errorf("job %s: %d events, want 1 (%v)", id, seen[id], seen)
		}
	}
	wantErr(t, a.want(http.StatusBadRequest, "GET", "/v1/events?after="+url.QueryEscape(first), nil), weir.ErrInvalid.Code, "after")

	r := a.do("GET", "/v1/events/stream", nil)
	var last string
	for _, line := range strings.Split(string(r.body), "\n") {
		if id, ok := strings.CutPrefix(line, "id: "); ok {
			if strings.Count(id, ",") != 3 {
				t.Fatalf("stream id %q is not a cursor of 4 partitions", id)
			}
			last = id
		}
	}
	if last == "" {
		t.Fatalf("stream carries no id:\n%s", r.body)
	}
	r = a.do("GET", "/v1/events/stream", nil, "Last-Event-ID", last)
	if r.status != http.StatusOK || strings.Contains(string(r.body), "data: ") {
		t.Fatalf("resumed after the last cursor: %d\n%s", r.status, r.body)
	}
}

// Event times are written as the records' times are (spec/rest.md, the
// bodies): RFC 3339 in UTC with exactly three fraction digits, in pages
// and in the stream, whatever the time's zone and whether its
// milliseconds end in zeros (Go's default writes "…:15Z" and "…:15.12Z").
func TestEventTimesHaveMilliseconds(t *testing.T) {
	t.Parallel()
	rdb := redistest.Client(t, redistest.Default(t).Options)
	ns := redistest.Namespace(t, rdb, "resttimes-")
	clk := testclock.New()
	clk.Set(time.Date(2026, 12, 2, 19, 7, 15, 0, time.FixedZone("CET", 3600)))
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: ns, Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(newAPI(t, s, Config{Token: testToken, Limits: s.Config().Limits}))
	t.Cleanup(srv.Close)
	a := &apiT{t: t, url: srv.URL, token: testToken, store: s}
	for _, id := range []string{"a", "b"} {
		if _, err := s.Enqueue(t.Context(), engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: "q"}}); err != nil {
			t.Fatal(err)
		}
		clk.Advance(120 * time.Millisecond)
	}
	want := []string{"2026-12-02T18:07:15.000Z", "2026-12-02T18:07:15.120Z"}
	times := func(where string, bodies []string) {
		t.Helper()
		var got []string
		for _, b := range bodies {
			var e struct{ Time string }
			if err := json.Unmarshal([]byte(b), &e); err != nil {
				t.Fatalf("%s: %q: %v", where, b, err)
			}
			got = append(got, e.Time)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: event times %q, want %q", where, got, want)
		}
	}
	var page struct{ Events []json.RawMessage }
	if err := json.Unmarshal(a.want(http.StatusOK, "GET", "/v1/events", nil).body, &page); err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, e := range page.Events {
		bodies = append(bodies, string(e))
	}
	times("GET /v1/events", bodies)
	bodies = nil
	for _, line := range strings.Split(string(a.do("GET", "/v1/events/stream", nil).body), "\n") {
		if b, ok := strings.CutPrefix(line, "data: "); ok {
			bodies = append(bodies, b)
		}
	}
	times("GET /v1/events/stream", bodies)
}

// An open event stream ends when its server shuts down: Shutdown returns
// nil (it does not wait out the stream's StreamFor, an hour here) and the
// client reads the stream to its end without an error. (http.Server's
// Shutdown does not cancel the contexts of the requests it waits for.)
// On memstore and on Redis, whose blocked read the store wakes.
func TestEventsStreamEndsOnShutdown(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		store func(t *testing.T) engine.Store
	}{
		{"memstore", func(*testing.T) engine.Store { return memstore.New() }},
		{"redis", func(t *testing.T) engine.Store { return testStore(t) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(newAPI(t, c.store(t), Config{Token: testToken, StreamFor: time.Hour}))
			t.Cleanup(srv.Close)
			req, err := http.NewRequestWithContext(t.Context(), "GET", srv.URL+"/v1/events/stream", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+testToken)
			res, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			rd := bufio.NewReader(res.Body)
			// the stream is open: its first keep-alive (no events yet)
			if line, err := rd.ReadString('\n'); err != nil || line != ": keep-alive\n" {
				t.Fatalf("the stream began with %q, %v", line, err)
			}
			// a deadline for a hung shutdown, not a timed assertion
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			if err := srv.Config.Shutdown(ctx); err != nil {
				t.Fatalf("Shutdown with an event stream open: %v", err)
			}
			if rest, err := io.ReadAll(rd); err != nil {
				t.Errorf("the stream after the shutdown: %q, %v; want its end", rest, err)
			}
		})
	}
}

// A stream asked of a server whose Shutdown has begun is refused with 503
// UNAVAILABLE, not opened (a request on a connection the server has not
// closed yet).
func TestEventsStreamAfterShutdown(t *testing.T) {
	t.Parallel()
	h := newAPI(t, memstore.New(), Config{Token: testToken, StreamFor: time.Hour})
	srv := &http.Server{Handler: h}
	req := httptest.NewRequestWithContext(context.WithValue(t.Context(), http.ServerContextKey, srv), "GET", "/v1/events/stream", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	down := h.(*api).down.of(req) // the server's first stream registers with it
	if err := srv.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	<-down.Done() // Shutdown runs its hooks in goroutines of their own
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), `"code":"UNAVAILABLE"`) {
		t.Errorf("a stream after the shutdown began: %d %s, want 503 UNAVAILABLE", rec.Code, rec.Body)
	}
}
