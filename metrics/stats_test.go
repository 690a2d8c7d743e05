package metrics_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/metrics"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/worker"
)

// The collector reports, by the store's clock, what Stats reads at the
// scrape: per queue the jobs that ended failed and cancelled, and how
// long the job a claim takes next has been ready (of the unkeyed and the
// keyed ready jobs, the earlier head); and the workflows by state. A
// store of several partitions merges its partitions' counts.
func TestQueueCollectorStats(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	var now atomic.Int64
	clock := func() time.Time { return time.UnixMilli(now.Load()).UTC() }
	parted := engine.DefaultConfig()
	parted.Partitions = 3
	ss := map[string]client.Store{
		"memstore":            memstore.New(memstore.WithClock(clock)),
		"memstore/partitions": memstore.New(memstore.WithClock(clock), memstore.WithConfig(parted)),
	}
	for _, srv := range redistest.Servers(t) {
		for _, parts := range []int{1, 3} {
			rdb := redistest.Client(t, srv.Options)
			s, err := redisstore.New(rdb, redisstore.Options{Namespace: redistest.Namespace(t, rdb, "stats"), Clock: clock, Config: engine.Config{Partitions: parts}})
			if err != nil {
				t.Fatal(err)
			}
			name := srv.Name
			if parts > 1 {
				name += "/partitions"
			}
			ss[name] = s
		}
	}
	if os.Getenv("WEIR_REDIS_CLUSTER") != "" {
		cc := redistest.Cluster(t)
		s, err := redisstore.New(cc, redisstore.Options{Namespace: redistest.Namespace(t, cc, "stats"), Clock: clock, Config: engine.Config{Partitions: 3}})
		if err != nil {
			t.Fatal(err)
		}
		ss["cluster/partitions"] = s
	}
	failQ := client.NewQueue[int, int]("f")
	keyQ := client.NewQueue[int, int]("k")
	for name, store := range ss {
		t.Run(name, func(t *testing.T) {
			now.Store(t0.UnixMilli())
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c := client.New(store)
			enqueue := func(q client.Queue[int, int], p int, opts ...client.JobOption) *client.Job[int] {
				t.Helper()
				j, err := client.Enqueue(ctx, c, q, p, opts...)
				if err != nil {
					t.Fatal(err)
				}
				return j
			}
			// at t0: the heads of m and k (k's keyed), a running
			// workflow's root in steps, one to cancel
			enqueue(numQ, 1)
			enqueue(keyQ, 1, client.ConcurrencyKey("a"))
			running := client.NewWorkflow()
			client.AddTask(running, "a", stepQ, "x")
			if err := c.Submit(ctx, running); err != nil {
				t.Fatal(err)
			}
			cancelled := client.NewWorkflow()
			client.AddTask(cancelled, "a", stepQ, "y")
			if err := c.Submit(ctx, cancelled); err != nil {
				t.Fatal(err)
			}
			if _, err := cancelled.Cancel(ctx); err != nil {
				t.Fatal(err)
			}
			// at t0+2s: later jobs, a job that fails and one cancelled
			now.Store(t0.Add(2 * time.Second).UnixMilli())
			enqueue(numQ, 2)
			enqueue(keyQ, 2)
			failing := enqueue(failQ, 1)
			later := enqueue(failQ, 2, client.Delay(time.Hour))
			if _, err := c.CancelJob(ctx, later.ID()); err != nil {
				t.Fatal(err)
			}
			w := worker.New(store, worker.Config{})
			worker.Handle(w, failQ, func(ctx context.Context, j *worker.Job[int]) (int, error) {
				return 0, worker.NonRetryable(errors.New("no"))
			})
			if err := w.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := failing.Wait(ctx); err == nil {
				t.Fatal("the failing job succeeded")
			}
			stop, cancelStop := context.WithTimeout(ctx, 5*time.Second)
			defer cancelStop()
			if err := w.Stop(stop); err != nil {
				t.Fatal(err)
			}
			now.Store(t0.Add(5 * time.Second).UnixMilli())

			want := `
# HELP weir_queue_ended_jobs Jobs of a queue that ended failed or cancelled (state) within retention, as the queue's ended lists hold them at the scrape.
# TYPE weir_queue_ended_jobs gauge
weir_queue_ended_jobs{queue="f",state="cancelled"} 1
weir_queue_ended_jobs{queue="f",state="failed"} 1
weir_queue_ended_jobs{queue="k",state="cancelled"} 0
weir_queue_ended_jobs{queue="k",state="failed"} 0
weir_queue_ended_jobs{queue="m",state="cancelled"} 0
weir_queue_ended_jobs{queue="m",state="failed"} 0
weir_queue_ended_jobs{queue="steps",state="cancelled"} 0
weir_queue_ended_jobs{queue="steps",state="failed"} 0
# HELP weir_queue_oldest_ready_age_seconds How long the ready job a claim takes next from the queue has been ready, by the store's clock (with one priority, the oldest ready job); 0 when none is ready.
# TYPE weir_queue_oldest_ready_age_seconds gauge
weir_queue_oldest_ready_age_seconds{queue="f"} 0
weir_queue_oldest_ready_age_seconds{queue="k"} 5
weir_queue_oldest_ready_age_seconds{queue="m"} 5
weir_queue_oldest_ready_age_seconds{queue="steps"} 5
# HELP weir_workflows Workflows the store holds by state at the scrape (ended ones until their retention passed).
# TYPE weir_workflows gauge
weir_workflows{state="cancelled"} 1
weir_workflows{state="compensated"} 0
weir_workflows{state="compensating"} 0
weir_workflows{state="compensation_failed"} 0
weir_workflows{state="completed"} 0
weir_workflows{state="failed"} 0
weir_workflows{state="running"} 1
`
			qc := metrics.NewQueueCollector(c, metrics.QueueCollectorOpts{})
			if err := testutil.CollectAndCompare(qc, strings.NewReader(want),
				"weir_queue_ended_jobs", "weir_queue_oldest_ready_age_seconds", "weir_workflows"); err != nil {
				t.Fatal(err)
			}
			// the store's own counts agree
			want2 := `
# HELP weir_queue_jobs Jobs of a queue by state (ready, delayed, running), as the store holds them at the scrape.
# TYPE weir_queue_jobs gauge
weir_queue_jobs{queue="f",state="delayed"} 0
weir_queue_jobs{queue="f",state="ready"} 0
weir_queue_jobs{queue="f",state="running"} 0
weir_queue_jobs{queue="k",state="delayed"} 0
weir_queue_jobs{queue="k",state="ready"} 2
weir_queue_jobs{queue="k",state="running"} 0
weir_queue_jobs{queue="m",state="delayed"} 0
weir_queue_jobs{queue="m",state="ready"} 2
weir_queue_jobs{queue="m",state="running"} 0
weir_queue_jobs{queue="steps",state="delayed"} 0
weir_queue_jobs{queue="steps",state="ready"} 1
weir_queue_jobs{queue="steps",state="running"} 0
`
			if err := testutil.CollectAndCompare(qc, strings.NewReader(want2), "weir_queue_jobs"); err != nil {
				t.Fatal(err)
			}
			// the ended jobs count until their retention passed
			now.Store(t0.Add(2*time.Second + engine.DefaultRetention).UnixMilli())
			want3 := `
# HELP weir_queue_ended_jobs Jobs of a queue that ended failed or cancelled (state) within retention, as the queue's ended lists hold them at the scrape.
# TYPE weir_queue_ended_jobs gauge
weir_queue_ended_jobs{queue="f",state="cancelled"} 0
weir_queue_ended_jobs{queue="f",state="failed"} 0
weir_queue_ended_jobs{queue="k",state="cancelled"} 0
weir_queue_ended_jobs{queue="k",state="failed"} 0
weir_queue_ended_jobs{queue="m",state="cancelled"} 0
weir_queue_ended_jobs{queue="m",state="failed"} 0
weir_queue_ended_jobs{queue="steps",state="cancelled"} 0
weir_queue_ended_jobs{queue="steps",state="failed"} 0
`
			if err := testutil.CollectAndCompare(qc, strings.NewReader(want3), "weir_queue_ended_jobs"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// queuesOnly is a source without Stats.
type queuesOnly struct{ client.Store }

func (q queuesOnly) Queues(ctx context.Context) ([]weir.QueueInfo, error) { return q.Store.Queues(ctx) }

// A client whose store has no Stats still reports the queues' counts,
// from Queues, and nothing of what needs Stats.
func TestQueueCollectorWithoutStats(t *testing.T) {
	store := memstore.New()
	ctx := context.Background()
	c := client.New(store)
	if _, err := client.Enqueue(ctx, c, numQ, 0); err != nil {
		t.Fatal(err)
	}
	qc := metrics.NewQueueCollector(client.New(queuesOnly{store}), metrics.QueueCollectorOpts{})
	n, err := testutil.GatherAndCount(newRegistry(t, qc))
	if err != nil {
		t.Fatal(err)
	}
	// ready, delayed, running and paused of queue m
	if n != 4 {
		t.Fatalf("%d series; want 4 (weir_queue_jobs and weir_queue_paused of one queue)", n)
	}
	if _, err := client.New(queuesOnly{store}).Stats(ctx); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Stats of a store without it = %v; want errors.ErrUnsupported", err)
	}
}

func newRegistry(t *testing.T, cs ...prometheus.Collector) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(cs...)
	return reg
}

// Every series of both collectors passes Prometheus's own lint (the
// checks of promtool check metrics): names, units, help texts.
func TestMetricsLint(t *testing.T) {
	store := memstore.New()
	ctx := context.Background()
	c := client.New(store)
	if _, err := client.Enqueue(ctx, c, numQ, 0); err != nil {
		t.Fatal(err)
	}
	wm := metrics.NewWorkerMetrics(metrics.WorkerMetricsOpts{})
	wm.Observe(worker.Event{Kind: worker.EventStarted, Queue: "m"})
	wm.Observe(worker.Event{Kind: worker.EventSucceeded, Queue: "m"})
	problems, err := testutil.GatherAndLint(newRegistry(t, metrics.NewQueueCollector(c, metrics.QueueCollectorOpts{}), wm))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}
