package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
)

// GET /v1/jobs/{id} shows the job's worker and attempt history (a
// released attempt, then the running one), and the events of its attempts their
// worker.
func TestJobRecordShowsAttempts(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{})
	ctx := context.Background()
	auth := []string{"Authorization", "Bearer " + testToken}
	if _, err := a.store.Enqueue(ctx, engine.EnqueueParams{Job: engine.JobSpec{ID: "j1", Queue: "q", MaxAttempts: 3}}); err != nil {
		t.Fatal(err)
	}
	claim := func(worker string) engine.Claimed {
		t.Helper()
		cl, err := a.store.Claim(ctx, engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute, WorkerID: worker})
		if err != nil || len(cl) != 1 {
			t.Fatalf("claim %v %v", cl, err)
		}
		return cl[0]
	}
	c := claim("w1")
	// a release queues it again at once (a failure would wait for its backoff)
	if _, err := a.store.Finish(ctx, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: "j1", Token: c.Lease.Token,
		Kind: engine.OutcomeReleased}}}); err != nil {
		t.Fatal(err)
	}
	claim("w2")
	j := strict[jobRec](t, a.want(http.StatusOK, "GET", "/v1/jobs/j1", nil, auth...).body)
	if j.Worker == nil || *j.Worker != "w2" || len(j.AttemptHistory) != 2 {
		t.Fatalf("worker %v, attempts %+v", j.Worker, j.AttemptHistory)
	}
	h0, h1 := j.AttemptHistory[0], j.AttemptHistory[1]
	if h0.Attempt != 1 || h0.Worker == nil || *h0.Worker != "w1" || h0.Outcome == nil || *h0.Outcome != "released" ||
		h0.Error != nil || h0.StartedAt == nil || h0.EndedAt == nil || h0.DurationMS == nil {
		t.Errorf("first attempt %+v", h0)
	}
	if h1.Attempt != 1 || h1.Worker == nil || *h1.Worker != "w2" || h1.Outcome != nil || h1.EndedAt != nil || h1.DurationMS != nil {
		t.Errorf("running attempt %+v", h1)
	}
	var page struct {
		Events []struct {
			Type, Job, Worker string
		}
	}
	if err := json.Unmarshal(a.want(http.StatusOK, "GET", "/v1/events", nil, auth...).body, &page); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range page.Events {
		got = append(got, e.Type+":"+e.Worker)
	}
	if want := []string{"queued:", "started:w1", "retried:w1", "started:w2"}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}
