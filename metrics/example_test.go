package metrics_test

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/metrics"
	"github.com/weirflow/weir/worker"
)

// A program registers the queue collector and the worker metrics in its
// own registry, feeds the worker metrics with its worker's events and
// serves the registry on /metrics.
func Example() {
	ctx := context.Background()
	store := memstore.New() // or the Redis store of package redisstore
	c := client.New(store)
	emails := client.NewQueue[string, string]("emails")

	wm := metrics.NewWorkerMetrics(metrics.WorkerMetricsOpts{})
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewQueueCollector(c, metrics.QueueCollectorOpts{}), wm)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	w := worker.New(store, worker.Config{Observer: wm.Observe})
	worker.Handle(w, emails, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		return "sent to " + j.Payload, nil
	})
	if err := w.Start(ctx); err != nil {
		panic(err)
	}
	job, err := client.Enqueue(ctx, c, emails, "ada@example.com")
	if err != nil {
		panic(err)
	}
	if _, err := job.Wait(ctx); err != nil {
		panic(err)
	}
	if err := w.Stop(ctx); err != nil {
		panic(err)
	}

	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "weir_worker_attempts_total") || strings.HasPrefix(line, "weir_queue_") ||
			strings.HasPrefix(line, `weir_workflows{state="running"}`) {
			fmt.Println(line)
		}
	}
	// Output:
	// weir_queue_ended_jobs{queue="emails",state="cancelled"} 0
	// weir_queue_ended_jobs{queue="emails",state="failed"} 0
	// weir_queue_jobs{queue="emails",state="delayed"} 0
	// weir_queue_jobs{queue="emails",state="ready"} 0
	// weir_queue_jobs{queue="emails",state="running"} 0
	// weir_queue_oldest_ready_age_seconds{queue="emails"} 0
	// weir_queue_paused{queue="emails"} 0
	// weir_worker_attempts_total{outcome="succeeded",queue="emails"} 1
	// weir_workflows{state="running"} 0
}
