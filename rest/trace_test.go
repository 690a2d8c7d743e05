package rest

import (
	"net/http"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
)

// POST /v1/jobs and POST /v1/workflows store the request's traceparent
// header with the job or workflow: a claim of the job, or of the
// workflow's task, hands it back; a malformed header is ignored.
func TestAPIStoresTraceParent(t *testing.T) {
	t.Parallel()
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	everyStore(t, Config{}, func(t *testing.T, a apiStore) {
		a.want(http.StatusCreated, "POST", "/v1/jobs", `{"id": "traced", "queue": "tq", "payload": 1}`, "traceparent", tp)
		a.want(http.StatusCreated, "POST", "/v1/workflows", `{"id": "tw", "tasks": [{"name": "a", "queue": "tw", "payload": 1}]}`, "traceparent", tp)
		a.want(http.StatusCreated, "POST", "/v1/jobs", `{"id": "bad", "queue": "bq", "payload": 1}`, "traceparent", "00-nonsense")
		for q, want := range map[string]string{"tq": tp, "tw": tp, "bq": ""} {
			got, err := a.store.Claim(t.Context(), engine.ClaimParams{Queues: []string{q}, Max: 1, Lease: time.Minute})
			if err != nil || len(got) != 1 {
				t.Fatalf("claim from %s: %v, %v", q, got, err)
			}
			if got[0].TraceParent != want {
				t.Errorf("claim of %s: traceparent %q, want %q", got[0].Job.ID, got[0].TraceParent, want)
			}
		}
	})
}
