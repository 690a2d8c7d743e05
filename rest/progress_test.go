package rest

import (
	"context"
	"github.com/weirflow/weir"
	"net/http"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/workflowfile"
)

// The job record and the workflow record show a running job's progress,
// null where none was reported.
func TestRecordsShowProgress(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{})
	ctx := context.Background()
	auth := []string{"Authorization", "Bearer " + testToken}
	if _, err := a.store.Submit(ctx, engine.SubmitParams{Plan: engine.Plan{ID: "w1",
		Tasks: []engine.TaskSpec{{Name: "a", Queue: "q"}, {Name: "b", Queue: "q"}}}}); err != nil {
		t.Fatal(err)
	}
	cl, err := a.store.Claim(ctx, engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute})
	if err != nil || len(cl) != 1 {
		t.Fatalf("claim %v %v", cl, err)
	}
	if err := a.store.Progress(ctx, engine.ProgressParams{JobID: "w1/a", Token: cl[0].Lease.Token,
		Report: &weir.Progress{Percent: 40, Message: "two of five"}}); err != nil {
		t.Fatal(err)
	}
	j := strict[jobRec](t, a.want(http.StatusOK, "GET", "/v1/jobs/w1%2Fa", nil, auth...).body)
	if j.Progress == nil || j.Progress.Percent != 40 || j.Progress.Message != "two of five" || j.Progress.At == nil {
		t.Errorf("job record progress %+v", j.Progress)
	}
	w := strict[workflowfile.Record](t, a.want(http.StatusOK, "GET", "/v1/workflows/w1", nil, auth...).body)
	if p := w.Tasks[0].Progress; p == nil || p.Percent != 40 || w.Tasks[1].Progress != nil {
		t.Errorf("workflow record progress %+v, %+v", w.Tasks[0].Progress, w.Tasks[1].Progress)
	}
}
