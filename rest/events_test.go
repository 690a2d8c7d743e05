package rest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/weirflow/weir/engine"
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
	if len(all.Events) != 4 || all.Events[0].Job != "a" || all.Events[2].Type != engine.EventWorkflowSubmitted || all.Next != all.Events[3].ID {
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
	wantErr(t, a.want(http.StatusBadRequest, "GET", "/v1/events?limit=0", nil), engine.ErrInvalid.Code, "limit")
	wantErr(t, a.want(http.StatusBadRequest, "GET", "/v1/events?after=nope", nil), engine.ErrInvalid.Code, "")
	wantErr(t, a.want(http.StatusBadRequest, "GET", "/v1/events?workflow=a/b", nil), engine.ErrInvalid.Code, "workflow")

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
