package rest

import (
	"context"
	"github.com/weirflow/weir"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
)

// jobIDs returns the job IDs of a page.
func jobIDs(p jobPage) []string {
	var out []string
	for _, j := range p.Jobs {
		out = append(out, j.ID)
	}
	return out
}

// The inspector's routes list a queue's jobs by state with a cursor,
// cancel a job (a task's ID with its slash escaped) and purge a queue.
func TestInspectRoutes(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{})
	ctx := context.Background()
	auth := []string{"Authorization", "Bearer " + testToken}
	for _, id := range []string{"j1", "j2", "j3"} {
		if _, err := a.store.Enqueue(ctx, engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: "mail"}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.store.Submit(ctx, engine.SubmitParams{Plan: engine.Plan{ID: "w1", UndoOnCancel: true,
		Tasks: []engine.TaskSpec{{Name: "a", Queue: "other"}}}}); err != nil {
		t.Fatal(err)
	}

	// j1 fails: a dead letter of mail
	cl, err := a.store.Claim(ctx, engine.ClaimParams{Queues: []string{"mail"}, Max: 1, Lease: time.Minute})
	if err != nil || len(cl) != 1 || cl[0].Job.ID != "j1" {
		t.Fatalf("claim %v %v", cl, err)
	}
	if _, err := a.store.Finish(ctx, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: "j1", Token: cl[0].Lease.Token, Kind: engine.OutcomeFailed, Error: "smtp down"}}}); err != nil {
		t.Fatal(err)
	}
	failed := strict[jobPage](t, a.want(http.StatusOK, "GET", "/v1/queues/mail/jobs?state=failed", nil, auth...).body)
	if !slices.Equal(jobIDs(failed), []string{"j1"}) || failed.NextCursor != nil || *failed.Jobs[0].Error != "smtp down" {
		t.Errorf("failed page %+v", failed)
	}

	// retry j1 in an hour: delayed, out of the dead letters; again: 409
	at := time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
	rr := strict[jobRetryRec](t, a.want(http.StatusOK, "POST", "/v1/jobs/j1/retry?at="+at.Format(time.RFC3339Nano), nil, auth...).body)
	if rr.ID != "j1" || rr.State != "queued" || rr.RunAt == nil || !rr.RunAt.Equal(at) {
		t.Errorf("retry j1: %+v", rr)
	}
	wantErr(t, a.want(http.StatusConflict, "POST", "/v1/jobs/j1/retry", nil, auth...), weir.ErrJobNotRetryable.Code, "")
	wantErr(t, a.want(http.StatusBadRequest, "POST", "/v1/jobs/j1/retry?at=tomorrow", nil, auth...), weir.ErrInvalid.Code, "at")
	wantErr(t, a.want(http.StatusNotFound, "POST", "/v1/jobs/nope/retry", nil, auth...), weir.ErrNotFound.Code, "")
	delayed := strict[jobPage](t, a.want(http.StatusOK, "GET", "/v1/queues/mail/jobs?state=delayed", nil, auth...).body)
	failed = strict[jobPage](t, a.want(http.StatusOK, "GET", "/v1/queues/mail/jobs?state=failed", nil, auth...).body)
	if !slices.Equal(jobIDs(delayed), []string{"j1"}) || len(failed.Jobs) != 0 || delayed.Jobs[0].Attempts != 0 || delayed.Jobs[0].Error != nil {
		t.Errorf("after the retry: delayed %+v, failed %+v", delayed, failed)
	}

	// ready, one a page, following the cursor
	first := strict[jobPage](t, a.want(http.StatusOK, "GET", "/v1/queues/mail/jobs?state=ready&limit=1", nil, auth...).body)
	if !slices.Equal(jobIDs(first), []string{"j2"}) || first.NextCursor == nil {
		t.Fatalf("first page %+v", first)
	}
	second := strict[jobPage](t, a.want(http.StatusOK, "GET", "/v1/queues/mail/jobs?state=ready&limit=1&cursor="+*first.NextCursor, nil, auth...).body)
	if !slices.Equal(jobIDs(second), []string{"j3"}) || second.NextCursor != nil {
		t.Errorf("second page %+v", second)
	}

	// bad input names its field
	wantErr(t, a.want(http.StatusBadRequest, "GET", "/v1/queues/mail/jobs", nil, auth...), weir.ErrInvalid.Code, "state")
	wantErr(t, a.want(http.StatusBadRequest, "GET", "/v1/queues/mail/jobs?state=dead", nil, auth...), weir.ErrInvalid.Code, "state")
	wantErr(t, a.want(http.StatusBadRequest, "GET", "/v1/queues/mail/jobs?state=ready&limit=0", nil, auth...), weir.ErrInvalid.Code, "limit")
	wantErr(t, a.want(http.StatusBadRequest, "GET", "/v1/queues/mail/jobs?state=failed&cursor=x", nil, auth...), weir.ErrInvalid.Code, "cursor")
	wantErr(t, a.want(http.StatusBadRequest, "GET", "/v1/queues/bad:q/jobs?state=ready", nil, auth...), weir.ErrInvalid.Code, "name")

	// cancel a plain job, then again: ended
	c := strict[jobCancelRec](t, a.want(http.StatusOK, "POST", "/v1/jobs/j2/cancel", nil, auth...).body)
	if c.ID != "j2" || c.State != "cancelled" || c.WorkflowState != nil || !slices.Equal(c.Cancelled, []string{"j2"}) || len(c.Stopping) != 0 {
		t.Errorf("cancel j2 %+v", c)
	}
	wantErr(t, a.want(http.StatusConflict, "POST", "/v1/jobs/j2/cancel", nil, auth...), weir.ErrJobEnded.Code, "")
	wantErr(t, a.want(http.StatusNotFound, "POST", "/v1/jobs/nope/cancel", nil, auth...), weir.ErrNotFound.Code, "")
	// a task's ID, its slash escaped
	c = strict[jobCancelRec](t, a.want(http.StatusOK, "POST", "/v1/jobs/w1%2Fa/cancel", nil, auth...).body)
	wf, err := a.store.GetWorkflow(ctx, "w1")
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != "w1/a" || c.State != "cancelled" || c.WorkflowState == nil || *c.WorkflowState != string(wf.State) {
		t.Errorf("cancel w1/a %+v, workflow %s", c, wf.State)
	}
	cancelled := strict[jobPage](t, a.want(http.StatusOK, "GET", "/v1/queues/other/jobs?state=cancelled", nil, auth...).body)
	if !slices.Equal(jobIDs(cancelled), []string{"w1/a"}) {
		t.Errorf("cancelled in other: %+v", cancelled)
	}

	// purge: j3 is ready, j1 delayed
	p := strict[purgeRec](t, a.want(http.StatusOK, "POST", "/v1/queues/mail/purge", nil, auth...).body)
	if p.Name != "mail" || !slices.Equal(p.Purged, []string{"j3", "j1"}) {
		t.Errorf("purge %+v", p)
	}
	p = strict[purgeRec](t, a.want(http.StatusOK, "POST", "/v1/queues/mail/purge", nil, auth...).body)
	if len(p.Purged) != 0 || p.Purged == nil {
		t.Errorf("second purge %+v", p)
	}
	// delete: ended jobs and workflows go; a task's ID is invalid
	wantErr(t, a.want(http.StatusBadRequest, "DELETE", "/v1/jobs/w1/a", nil, auth...), weir.ErrInvalid.Code, "id")
	d := strict[deletedRec](t, a.want(http.StatusOK, "DELETE", "/v1/jobs/j2", nil, auth...).body)
	if d.ID != "j2" || !d.Deleted {
		t.Errorf("delete j2 %+v", d)
	}
	wantErr(t, a.want(http.StatusNotFound, "DELETE", "/v1/jobs/j2", nil, auth...), weir.ErrNotFound.Code, "")
	wantErr(t, a.want(http.StatusNotFound, "GET", "/v1/jobs/j2", nil, auth...), weir.ErrNotFound.Code, "")
	d = strict[deletedRec](t, a.want(http.StatusOK, "DELETE", "/v1/workflows/w1", nil, auth...).body)
	if d.ID != "w1" || !d.Deleted {
		t.Errorf("delete w1 %+v", d)
	}
	wantErr(t, a.want(http.StatusNotFound, "GET", "/v1/workflows/w1", nil, auth...), weir.ErrNotFound.Code, "")
	if _, err := a.store.Submit(ctx, engine.SubmitParams{Plan: engine.Plan{ID: "w2", Tasks: []engine.TaskSpec{{Name: "a", Queue: "other"}}}}); err != nil {
		t.Fatal(err)
	}
	wantErr(t, a.want(http.StatusConflict, "DELETE", "/v1/workflows/w2", nil, auth...), weir.ErrNotEnded.Code, "")

	cancelled = strict[jobPage](t, a.want(http.StatusOK, "GET", "/v1/queues/mail/jobs?state=cancelled", nil, auth...).body)
	if !slices.Equal(jobIDs(cancelled), []string{"j3", "j1"}) {
		t.Errorf("cancelled in mail, newest first: %v", jobIDs(cancelled))
	}
}

// POST /v1/workflows/{id}/rerun runs an ended workflow's failed part
// again: 200 with the new run and the reset tasks, the record shows the
// run; a running workflow is a 409 NOTRERUNNABLE, an unknown one a 404.
func TestRerunRoute(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{})
	ctx := context.Background()
	auth := []string{"Authorization", "Bearer " + testToken}
	if _, err := a.store.Submit(ctx, engine.SubmitParams{Plan: engine.Plan{ID: "w1",
		Tasks: []engine.TaskSpec{{Name: "a", Queue: "q"}, {Name: "b", Queue: "q", After: []string{"a"}}}}}); err != nil {
		t.Fatal(err)
	}
	wantErr(t, a.want(http.StatusConflict, "POST", "/v1/workflows/w1/rerun", nil, auth...), weir.ErrNotRerunnable.Code, "")
	cl, err := a.store.Claim(ctx, engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute})
	if err != nil || len(cl) != 1 {
		t.Fatalf("claim %v %v", cl, err)
	}
	if _, err := a.store.Finish(ctx, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: "w1/a", Token: cl[0].Lease.Token, Kind: engine.OutcomeFailed, Error: "boom"}}}); err != nil {
		t.Fatal(err)
	}
	rr := strict[rerunRec](t, a.want(http.StatusOK, "POST", "/v1/workflows/w1/rerun", nil, auth...).body)
	if rr.ID != "w1" || rr.State != "running" || rr.Run != 2 || !slices.Equal(rr.Reset, []string{"w1/a", "w1/b"}) {
		t.Errorf("rerun: %+v", rr)
	}
	rec := a.want(http.StatusOK, "GET", "/v1/workflows/w1", nil, auth...).body
	if !strings.Contains(string(rec), `"run":2`) {
		t.Errorf("record after the rerun: %s", rec)
	}
	wantErr(t, a.want(http.StatusConflict, "POST", "/v1/workflows/w1/rerun", nil, auth...), weir.ErrNotRerunnable.Code, "")
	wantErr(t, a.want(http.StatusNotFound, "POST", "/v1/workflows/nope/rerun", nil, auth...), weir.ErrNotFound.Code, "")
	wantErr(t, a.want(http.StatusUnauthorized, "POST", "/v1/workflows/w1/rerun", nil, "Authorization", ""), codeUnauthorized, "")
}
