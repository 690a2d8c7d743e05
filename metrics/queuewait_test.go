package metrics_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/metrics"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/worker"
)

// The queue wait is measured by the store's clock, from when a job became
// ready to its claim: a job enqueued at t0, one delayed to t0+1s, a
// workflow's root task submitted at t0, all claimed at t0+3s (3s, 2s, 3s),
// and its dependent, promoted by the root's finish at t0+3s and claimed
// then (0s, and a promotion latency of 0: the same step).
func TestQueueWait(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	var now atomic.Int64
	now.Store(t0.UnixMilli())
	clock := func() time.Time { return time.UnixMilli(now.Load()).UTC() }
	ss := map[string]client.Store{"memstore": memstore.New(memstore.WithClock(clock))}
	for _, srv := range redistest.Servers(t) {
		rdb := redistest.Client(t, srv.Options)
		s, err := redisstore.New(rdb, redisstore.Options{Namespace: redistest.Namespace(t, rdb, "qwait"), Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		ss[srv.Name] = s
	}
	for name, store := range ss {
		t.Run(name, func(t *testing.T) {
			now.Store(t0.UnixMilli())
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c := client.New(store)
			j1, err := client.Enqueue(ctx, c, numQ, 1)
			if err != nil {
				t.Fatal(err)
			}
			j2, err := client.Enqueue(ctx, c, numQ, 2, client.Delay(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			wf := client.NewWorkflow()
			a := client.AddTask(wf, "a", stepQ, "x")
			client.AddTask(wf, "b", stepQ, "y").After(a)
			if err := c.Submit(ctx, wf); err != nil {
				t.Fatal(err)
			}
			now.Store(t0.Add(3 * time.Second).UnixMilli())

			wm := metrics.NewWorkerMetrics(metrics.WorkerMetricsOpts{})
			w := worker.New(store, worker.Config{Concurrency: 1, Observer: wm.Observe})
			worker.Handle(w, numQ, func(ctx context.Context, j *worker.Job[int]) (int, error) { return j.Payload, nil })
			worker.Handle(w, stepQ, func(ctx context.Context, j *worker.Job[string]) (string, error) { return j.Payload, nil })
			if err := w.Start(ctx); err != nil {
				t.Fatal(err)
			}
			for _, j := range []*client.Job[int]{j1, j2} {
				if _, err := j.Wait(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := wf.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			stop, cancelStop := context.WithTimeout(ctx, 5*time.Second)
			defer cancelStop()
			if err := w.Stop(stop); err != nil {
				t.Fatal(err)
			}
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(wm)
			mfs, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]map[string][2]float64{}
			for _, mf := range mfs {
				for _, m := range mf.GetMetric() {
					if h := m.GetHistogram(); h != nil && len(m.GetLabel()) == 1 {
						if got[mf.GetName()] == nil {
							got[mf.GetName()] = map[string][2]float64{}
						}
						got[mf.GetName()][m.GetLabel()[0].GetValue()] = [2]float64{float64(h.GetSampleCount()), h.GetSampleSum()}
					}
				}
			}
			want := map[string]map[string][2]float64{
				"weir_worker_queue_wait_seconds": {"m": {2, 5}, "steps": {2, 3}},
				// b, promoted by a's finish in the same step
				"weir_worker_promotion_latency_seconds": {"steps": {1, 0}},
			}
			for name, w := range want {
				if fmt.Sprint(got[name]) != fmt.Sprint(w) {
					t.Errorf("%s (count, sum of seconds) by queue = %v; want %v", name, got[name], w)
				}
			}
		})
	}
}
