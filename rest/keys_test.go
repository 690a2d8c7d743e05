package rest

import (
	"bytes"
	"github.com/weirflow/weir"
	"net/http"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
)

// Concurrency keys over REST: a job body's and a workflow task's key, the
// per-key limit of POST /v1/queues/{name}/key-limit (listed by GET
// /v1/queues), and a claim that serves the second key while the first is
// at its limit.
func TestAPIConcurrencyKeys(t *testing.T) {
	t.Parallel()
	type queues struct {
		Queues []queueRec `json:"queues"`
	}
	everyStore(t, Config{}, func(t *testing.T, a apiStore) {
		r := a.want(http.StatusOK, "POST", "/v1/queues/tenants/key-limit?concurrency=1", nil)
		if string(bytes.TrimSpace(r.body)) != `{"name":"tenants","key_concurrency":1}` {
			t.Errorf("key-limit: %s", r.body)
		}
		for _, b := range []string{
			`{"id": "a1", "queue": "tenants", "key": "acme"}`,
			`{"id": "a2", "queue": "tenants", "key": "acme"}`,
			`{"id": "b1", "queue": "tenants", "key": "globex"}`,
		} {
			a.want(http.StatusCreated, "POST", "/v1/jobs", b)
		}
		j := strict[jobRec](t, a.want(http.StatusOK, "GET", "/v1/jobs/a1", nil).body)
		if j.Key == nil || *j.Key != "acme" {
			t.Errorf("a1's key %v, want acme", j.Key)
		}
		a.want(http.StatusCreated, "POST", "/v1/workflows", wfFile{"id": "w1", "tasks": tasks(tk("t", "true", "queue", "other", "key", "initech"))})
		if j := strict[jobRec](t, a.want(http.StatusOK, "GET", "/v1/jobs/w1%2Ft", nil).body); j.Key == nil || *j.Key != "initech" {
			t.Errorf("the task's key %v, want initech", j.Key)
		}
		q := strict[queues](t, a.want(http.StatusOK, "GET", "/v1/queues", nil).body)
		if len(q.Queues) != 2 || q.Queues[1] != (queueRec{Name: "tenants", Ready: 3, KeyConcurrency: 1}) {
			t.Errorf("queues %+v", q.Queues)
		}
		// acme is at its limit after a1: globex's job behind a2 is claimed
		got, err := a.store.Claim(t.Context(), engine.ClaimParams{Queues: []string{"tenants"}, Max: 10, Lease: time.Minute})
		if err != nil || len(got) != 2 || got[0].Job.ID != "a1" || got[1].Job.ID != "b1" {
			t.Errorf("claim %+v, %v; want a1, b1", got, err)
		}
		wantErr(t, a.want(http.StatusBadRequest, "POST", "/v1/jobs", `{"queue": "tenants", "key": "a b"}`), weir.ErrInvalid.Code, "key")
		for _, v := range []string{"", "-1", "x", "1048577"} {
			wantErr(t, a.want(http.StatusBadRequest, "POST", "/v1/queues/tenants/key-limit?concurrency="+v, nil), weir.ErrInvalid.Code, "concurrency")
		}
		wantErr(t, a.want(http.StatusBadRequest, "POST", "/v1/queues/bad%20name/key-limit?concurrency=1", nil), weir.ErrInvalid.Code, "name")
	})
}
