package rest

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// failJobs enqueues plain jobs with ids in queue and ends each failed.
func failJobs(t *testing.T, s engine.Store, queue string, ids ...string) {
	t.Helper()
	ctx := context.Background()
	for _, id := range ids {
		if _, err := s.Enqueue(ctx, engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: queue}}); err != nil {
			t.Fatal(err)
		}
		cs, err := s.Claim(ctx, engine.ClaimParams{Queues: []string{queue}, Max: 1, Lease: time.Minute})
		if err != nil || len(cs) != 1 {
			t.Fatalf("claim %s: %v %v", id, cs, err)
		}
		res, err := s.Finish(ctx, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: cs[0].Job.ID, Token: cs[0].Lease.Token,
			Kind: engine.OutcomeFailed, Error: "boom", NonRetryable: true}}})
		if err != nil || res.Settled[0].Err != nil {
			t.Fatalf("fail %s: %v %+v", id, err, res)
		}
	}
}

// The bulk routes retry, cancel and delete a bounded number of a queue's
// jobs in one call: a page of a list from a cursor, or the jobs named;
// what they do not take is skipped with its code, and bad bodies are
// refused naming their field.
func TestAPIBulkJobs(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{})
	ctx := context.Background()
	failJobs(t, a.store, "q", "f1", "f2", "f3")
	failJobs(t, a.store, "other", "o1")
	// a workflow's task job in q's failed list: not retried on its own
	a.want(http.StatusCreated, "POST", "/v1/workflows", wfFile{"id": "wt", "tasks": []map[string]any{{"name": "a", "queue": "q", "payload": 1}}})
	cs, err := a.store.Claim(ctx, engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute})
	if err != nil || len(cs) != 1 {
		t.Fatal(cs, err)
	}
	if _, err := a.store.Finish(ctx, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: "wt/a", Token: cs[0].Lease.Token, Kind: engine.OutcomeFailed, Error: "x", NonRetryable: true}}}); err != nil {
		t.Fatal(err)
	}

	// the failed list, newest end first: wt/a, f3, f2, f1
	r := strict[BulkRecord](t, a.want(http.StatusOK, "POST", "/v1/queues/q/jobs/retry", map[string]any{"state": "failed", "limit": 2}).body)
	if !slices.Equal(r.Done, []string{"f3"}) || len(r.Skipped) != 1 || r.Skipped[0].ID != "wt/a" || r.Skipped[0].Code != weir.ErrJobNotRetryable.Code ||
		!r.More || r.NextCursor == nil || r.Queue != "q" || r.Action != "retry" {
		t.Fatalf("retry 2 of the failed list: %+v", r)
	}
	r = strict[BulkRecord](t, a.want(http.StatusOK, "POST", "/v1/queues/q/jobs/retry", map[string]any{"state": "failed", "cursor": *r.NextCursor}).body)
	if !slices.Equal(r.Done, []string{"f2", "f1"}) || len(r.Skipped) != 0 || r.More || r.NextCursor != nil {
		t.Fatalf("retry the rest: %+v", r)
	}
	for _, id := range []string{"f1", "f2", "f3"} {
		if j, err := a.store.GetJob(ctx, id); err != nil || j.State != weir.Queued {
			t.Errorf("%s after the retry: %s %v", id, j.State, err)
		}
	}

	// cancel the ready jobs by name: one of another queue and one unknown skipped
	r = strict[BulkRecord](t, a.want(http.StatusOK, "POST", "/v1/queues/q/jobs/cancel", map[string]any{"ids": []string{"f1", "f2", "o1", "nope"}}).body)
	if !slices.Equal(r.Done, []string{"f1", "f2"}) || len(r.Skipped) != 2 || r.Skipped[0].ID != "o1" || r.Skipped[0].Code != weir.ErrInvalid.Code ||
		r.Skipped[1].Code != weir.ErrNotFound.Code || r.More {
		t.Fatalf("cancel by name: %+v", r)
	}
	r = strict[BulkRecord](t, a.want(http.StatusOK, "POST", "/v1/queues/q/jobs/cancel", map[string]any{"state": "ready"}).body)
	if !slices.Equal(r.Done, []string{"f3"}) {
		t.Fatalf("cancel the ready list: %+v", r)
	}
	r = strict[BulkRecord](t, a.want(http.StatusOK, "POST", "/v1/queues/q/jobs/delete", map[string]any{"state": "cancelled"}).body)
	if len(r.Done) != 3 || r.More {
		t.Fatalf("delete the cancelled list: %+v", r)
	}
	if _, err := a.store.GetJob(ctx, "f1"); err == nil {
		t.Errorf("f1 is still there after the delete")
	}
	if j, err := a.store.GetJob(ctx, "o1"); err != nil || j.State != weir.Failed {
		t.Errorf("o1, of another queue: %s %v", j.State, err)
	}

	// bad input: 400 naming the field
	for _, c := range []struct {
		path  string
		body  any
		field string
	}{
		{"/v1/queues/q/jobs/retry", map[string]any{}, "state"},
		{"/v1/queues/q/jobs/retry", map[string]any{"state": "ready"}, "state"},
		{"/v1/queues/q/jobs/cancel", map[string]any{"state": "failed"}, "state"},
		{"/v1/queues/q/jobs/delete", map[string]any{"state": "bogus"}, "state"},
		{"/v1/queues/q/jobs/retry", map[string]any{"state": "failed", "limit": 1001}, "limit"},
		{"/v1/queues/q/jobs/retry", map[string]any{"state": "failed", "limit": "5"}, "limit"},
		{"/v1/queues/q/jobs/retry", map[string]any{"state": "failed", "ids": []string{"x"}}, "ids"},
		{"/v1/queues/q/jobs/retry", map[string]any{"ids": make([]string, 1001)}, "ids"},
		{"/v1/queues/q/jobs/retry", map[string]any{"ids": []string{""}}, "ids[0]"},
		{"/v1/queues/q/jobs/retry", map[string]any{"state": "failed", "colour": 1}, "colour"},
		{"/v1/queues/q/jobs/retry", map[string]any{"state": nil}, "state"},
		{"/v1/queues/q/jobs/retry", map[string]any{"state": "failed", "cursor": "garbage"}, "cursor"},
		{"/v1/queues/bad%20name/jobs/retry", map[string]any{"state": "failed"}, "name"},
		{"/v1/queues/q/jobs/retry", `{"state":"failed"} {}`, ""},
	} {
		e := wantErr(t, a.want(http.StatusBadRequest, "POST", c.path, c.body), weir.ErrInvalid.Code, c.field)
		if c.field != "" && !strings.Contains(e.Message, strings.TrimSuffix(c.field, "[0]")) {
			t.Errorf("%s %v: message %q does not name %s", c.path, c.body, e.Message, c.field)
		}
	}
}

// GET /v1/whoami says what the token may do; a read-only token may not
// act on jobs.
func TestAPIWhoami(t *testing.T) {
	t.Parallel()
	const readTok = "read-only-token-of-the-tests"
	a := newTestAPI(t, Config{ReadTokens: []string{readTok}})
	if w := strict[WhoamiRecord](t, a.want(http.StatusOK, "GET", "/v1/whoami", nil).body); w.Access != "write" || !w.Token {
		t.Errorf("the read-write token: %+v", w)
	}
	ro := []string{"Authorization", "Bearer " + readTok}
	if w := strict[WhoamiRecord](t, a.want(http.StatusOK, "GET", "/v1/whoami", nil, ro...).body); w.Access != "read" {
		t.Errorf("a read-only token: %+v", w)
	}
	wantErr(t, a.want(http.StatusForbidden, "POST", "/v1/queues/q/jobs/retry", map[string]any{"state": "failed"}, ro...), codeReadOnly, "")
	wantErr(t, a.want(http.StatusUnauthorized, "GET", "/v1/whoami", nil, "Authorization", "Bearer wrong-token-of-the-tests"), codeUnauthorized, "")
	n := newTokenlessAPI(t, Config{})
	if w := strict[WhoamiRecord](t, n.want(http.StatusOK, "GET", "/v1/whoami", nil).body); w.Access != "write" || w.Token {
		t.Errorf("no token: %+v", w)
	}
}
