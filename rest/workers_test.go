package rest

import (
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/workflowfile"
)

// GET /v1/workers lists a running worker with what it serves, and no
// longer once it stopped; a store without a registry answers 501.
func TestWorkersRoute(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{})
	l := strict[WorkerList](t, a.want(http.StatusOK, "GET", "/v1/workers", nil).body)
	if len(l.Workers) != 0 || l.Total != 0 || l.Now == nil {
		t.Fatalf("no worker yet: %+v", l)
	}
	w := shellWorker(a.store)
	if err := w.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	l = strict[WorkerList](t, a.want(http.StatusOK, "GET", "/v1/workers", nil).body)
	host, _ := os.Hostname()
	if len(l.Workers) != 1 || l.Total != 1 {
		t.Fatalf("one worker running: %+v", l)
	}
	got := l.Workers[0]
	if got.ID != w.ID() || got.Host != host || got.PID != os.Getpid() || got.Concurrency != 2 ||
		len(got.Queues) != 1 || got.Queues[0] != (WorkerQueueRecord{Name: workflowfile.DefaultQueue, Weight: 1}) ||
		got.Started == nil || got.LastHeartbeat == nil || got.Expires == nil || !got.Expires.After(got.LastHeartbeat.Time) ||
		got.RunningJobs == nil {
		t.Fatalf("the worker: %+v", got)
	}
	if err := w.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	if l := strict[WorkerList](t, a.want(http.StatusOK, "GET", "/v1/workers", nil).body); len(l.Workers) != 0 || l.Total != 0 {
		t.Fatalf("after the worker stopped: %+v", l)
	}

	// a store that keeps no registry
	srv := httptest.NewServer(newAPI(t, struct{ engine.Store }{a.store}, Config{}))
	t.Cleanup(srv.Close)
	res, err := http.Get(srv.URL + "/v1/workers")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotImplemented {
		t.Fatalf("GET /v1/workers on a store without a registry: %d, want 501", res.StatusCode)
	}
}
