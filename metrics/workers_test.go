package metrics_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/metrics"
)

// The worker gauges count the live workers, by queue, their slots and
// their running jobs, as the registry holds them at the scrape; a worker
// removed leaves them.
func TestWorkerCollector(t *testing.T) {
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			reg := store.(engine.WorkerRegistry)
			for _, w := range []weir.WorkerInfo{
				{ID: "a", Concurrency: 4, Running: 3, RunningJobs: []string{"j1", "j2", "j3"}, Queues: []weir.WorkerQueue{{Name: "m", Weight: 2}, {Name: "steps", Weight: 1}}},
				{ID: "b", Concurrency: 2, Running: 0, Queues: []weir.WorkerQueue{{Name: "m", Weight: 1}}},
				{ID: "c", Concurrency: 8, Running: 1, RunningJobs: []string{"j4"}, Queues: []weir.WorkerQueue{{Name: "x", Weight: 1}}},
			} {
				if err := reg.BeatWorker(ctx, engine.BeatWorkerParams{Info: w, TTL: time.Minute}); err != nil {
					t.Fatal(err)
				}
			}
			if err := reg.RemoveWorker(ctx, "c"); err != nil {
				t.Fatal(err)
			}
			want := `
# HELP weir_workers Live worker processes of the namespace (registered, their lease from their last heartbeat not passed), at the scrape.
# TYPE weir_workers gauge
weir_workers 2
# HELP weir_workers_by_queue Live worker processes that claim from the queue.
# TYPE weir_workers_by_queue gauge
weir_workers_by_queue{queue="m"} 2
weir_workers_by_queue{queue="steps"} 1
# HELP weir_workers_concurrency Jobs the live workers may run at once, summed (their Concurrency).
# TYPE weir_workers_concurrency gauge
weir_workers_concurrency 6
# HELP weir_workers_running_jobs Jobs the live workers run, summed, as of their last heartbeat.
# TYPE weir_workers_running_jobs gauge
weir_workers_running_jobs 3
`
			if err := testutil.CollectAndCompare(metrics.NewWorkerCollector(reg, metrics.WorkerCollectorOpts{}), strings.NewReader(want)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

type failingWorkers struct{}

func (failingWorkers) Workers(context.Context) (engine.WorkerList, error) {
	return engine.WorkerList{}, errors.New("store down")
}

// A scrape whose store call fails fails, naming the error.
func TestWorkerCollectorError(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewWorkerCollector(failingWorkers{}, metrics.WorkerCollectorOpts{}))
	if _, err := reg.Gather(); err == nil || !strings.Contains(err.Error(), "store down") {
		t.Fatalf("Gather = %v; want the store's error", err)
	}
}
