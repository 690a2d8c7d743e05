package metrics_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/lua"
	"github.com/weirflow/weir/metrics"
	"github.com/weirflow/weir/worker"
)

// The queue wait is measured by the store's clock, from when a job became
// ready to its claim: a job enqueued at t0, one delayed to t0+1s, a
// workflow's root task submitted at t0, all claimed at t0+3s (3s, 2s, 3s),
// and its dependent, promoted by the root's finish at t0+3s and claimed
// then (0s).
func TestQueueWait(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	var now atomic.Int64
	now.Store(t0.UnixMilli())
	clock := func() time.Time { return time.UnixMilli(now.Load()).UTC() }
	ss := map[string]client.Store{"memstore": memstore.New(memstore.WithClock(clock))}
	for _, srv := range redistest.Servers(t) {
		rdb := redistest.Client(t, srv.Options)
		s, err := lua.New(rdb, lua.Options{Namespace: redistest.Namespace(t, rdb, "qwait"), Clock: clock})
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
			got := map[string][2]float64{}
			for _, mf := range mfs {
				if mf.GetName() != "weir_worker_queue_wait_seconds" {
					continue
				}
				for _, m := range mf.GetMetric() {
					h := m.GetHistogram()
					got[m.GetLabel()[0].GetValue()] = [2]float64{float64(h.GetSampleCount()), h.GetSampleSum()}
				}
			}
			want := map[string][2]float64{"m": {2, 5}, "steps": {2, 3}}
			if len(got) != len(want) || got["m"] != want["m"] || got["steps"] != want["steps"] {
				t.Fatalf("queue wait (count, sum of seconds) by queue = %v; want %v", got, want)
			}
		})
	}
}
