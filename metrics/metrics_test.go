package metrics_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/metrics"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/worker"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// stores returns a new store of each kind: memstore, and the Redis store
// on each of redistest's servers (miniredis and, with WEIR_REDIS_URL,
// that server), in a namespace of its own removed at the end.
func stores(t *testing.T) map[string]client.Store {
	t.Helper()
	out := map[string]client.Store{"memstore": memstore.New()}
	for _, srv := range redistest.Servers(t) {
		rdb := redistest.Client(t, srv.Options)
		s, err := redisstore.New(rdb, redisstore.Options{Namespace: redistest.Namespace(t, rdb, "metrics")})
		if err != nil {
			t.Fatal(err)
		}
		out[srv.Name] = s
	}
	return out
}

var (
	numQ  = client.NewQueue[int, int]("m")
	stepQ = client.NewQueue[string, string]("steps")
)

// The worker metrics count what a worker did: two jobs that succeed, one
// that fails for good, one retried once then successful, and a two-task
// workflow whose second task its finish promotes and whose end it reports.
func TestWorkerMetrics(t *testing.T) {
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			wm := metrics.NewWorkerMetrics(metrics.WorkerMetricsOpts{})
			w := worker.New(store, worker.Config{Concurrency: 4, Observer: wm.Observe})
			var tries atomic.Int32
			worker.Handle(w, numQ, func(ctx context.Context, j *worker.Job[int]) (int, error) {
				switch j.Payload {
				case 1:
					return 0, worker.NonRetryable(errors.New("no"))
				case 2:
					if tries.Add(1) == 1 {
						return 0, errors.New("once")
					}
				}
				return j.Payload, nil
			})
			worker.Handle(w, stepQ, func(ctx context.Context, j *worker.Job[string]) (string, error) { return j.Payload, nil })
			if err := w.Start(ctx); err != nil {
				t.Fatal(err)
			}
			c := client.New(store)
			var jobs []*client.Job[int]
			for _, p := range []int{0, 3, 1, 2} {
				j, err := client.Enqueue(ctx, c, numQ, p, client.MaxAttempts(3), client.Backoff(time.Millisecond))
				if err != nil {
					t.Fatal(err)
				}
				jobs = append(jobs, j)
			}
			wf := client.NewWorkflow()
			a := client.AddTask(wf, "a", stepQ, "x")
			client.AddTask(wf, "b", stepQ, "y").After(a)
			if err := c.Submit(ctx, wf); err != nil {
				t.Fatal(err)
			}
			for _, j := range jobs {
				_, _ = j.Wait(ctx)
			}
			if s, err := wf.Wait(ctx); err != nil || s.State != weir.WorkflowCompleted {
				t.Fatalf("workflow = %+v, %v", s, err)
			}
			stop, cancelStop := context.WithTimeout(ctx, 5*time.Second)
			defer cancelStop()
			if err := w.Stop(stop); err != nil {
				t.Fatal(err)
			}

			want := `
# HELP weir_worker_attempts_started_total Attempts this worker started, by queue.
# TYPE weir_worker_attempts_started_total counter
weir_worker_attempts_started_total{queue="m"} 5
weir_worker_attempts_started_total{queue="steps"} 2
# HELP weir_worker_attempts_total Attempts of this worker that ended, by queue and outcome (succeeded, retried, failed, cancelled, released, lease_lost).
# TYPE weir_worker_attempts_total counter
weir_worker_attempts_total{outcome="failed",queue="m"} 1
weir_worker_attempts_total{outcome="retried",queue="m"} 1
weir_worker_attempts_total{outcome="succeeded",queue="m"} 3
weir_worker_attempts_total{outcome="succeeded",queue="steps"} 2
# HELP weir_worker_promoted_total Jobs this worker's finishes pushed into their queues (dependents whose dependencies all ended, undo jobs), by queue.
# TYPE weir_worker_promoted_total counter
weir_worker_promoted_total{queue="steps"} 1
# HELP weir_worker_workflows_ended_total Workflows this worker's finishes ended, by end state.
# TYPE weir_worker_workflows_ended_total counter
weir_worker_workflows_ended_total{state="completed"} 1
`
			if err := testutil.CollectAndCompare(wm, strings.NewReader(want),
				"weir_worker_attempts_started_total", "weir_worker_attempts_total",
				"weir_worker_promoted_total", "weir_worker_workflows_ended_total"); err != nil {
				t.Fatal(err)
			}
			// every ended attempt is in the duration histogram once
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(wm)
			mfs, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			var observed uint64
			for _, mf := range mfs {
				if mf.GetName() == "weir_worker_attempt_duration_seconds" {
					for _, m := range mf.GetMetric() {
						observed += m.GetHistogram().GetSampleCount()
					}
				}
			}
			if observed != 7 {
				t.Fatalf("attempt durations observed = %d; want 7 (one per ended attempt)", observed)
			}
		})
	}
}

// The queue collector reports what the store holds at the scrape: ready,
// delayed and running jobs per queue, and which queues are paused.
func TestQueueCollector(t *testing.T) {
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c := client.New(store)
			for _, opt := range []client.JobOption{client.Priority(0), client.Priority(0), client.Delay(time.Hour)} {
				if _, err := client.Enqueue(ctx, c, numQ, 0, opt); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := client.Enqueue(ctx, c, stepQ, "z"); err != nil {
				t.Fatal(err)
			}
			if err := store.PauseQueue(ctx, "steps"); err != nil {
				t.Fatal(err)
			}
			got, err := store.Claim(ctx, engine.ClaimParams{Queues: []string{"m"}, Max: 1, Lease: time.Minute})
			if err != nil || len(got) != 1 {
				t.Fatalf("claim = %d, %v", len(got), err)
			}
			want := `
# HELP weir_queue_jobs Jobs of a queue by state (ready, delayed, running), as the store holds them at the scrape.
# TYPE weir_queue_jobs gauge
weir_queue_jobs{queue="m",state="delayed"} 1
weir_queue_jobs{queue="m",state="ready"} 1
weir_queue_jobs{queue="m",state="running"} 1
weir_queue_jobs{queue="steps",state="delayed"} 0
weir_queue_jobs{queue="steps",state="ready"} 1
weir_queue_jobs{queue="steps",state="running"} 0
# HELP weir_queue_paused 1 while the queue is paused, else 0.
# TYPE weir_queue_paused gauge
weir_queue_paused{queue="m"} 0
weir_queue_paused{queue="steps"} 1
`
			if err := testutil.CollectAndCompare(metrics.NewQueueCollector(c, metrics.QueueCollectorOpts{}), strings.NewReader(want),
				"weir_queue_jobs", "weir_queue_paused"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

type failingSource struct{}

func (failingSource) Queues(context.Context) ([]weir.QueueInfo, error) {
	return nil, errors.New("store down")
}

// A scrape whose store call fails fails, naming the error, instead of
// reporting zero or stale counts.
func TestQueueCollectorError(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewQueueCollector(failingSource{}, metrics.QueueCollectorOpts{}))
	_, err := reg.Gather()
	if err == nil || !strings.Contains(err.Error(), "store down") {
		t.Fatalf("Gather = %v; want the store's error", err)
	}
}
