package worker_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/worker"
)

// plainConcurrency is the concurrency of BenchmarkWorkerPlainJob: the
// `weir bench` plain row the issue sets its worker-CPU target on.
const plainConcurrency = 50

// BenchmarkWorkerPlainJob isolates what one plain job costs the worker
// process: one op is one no-op job (the payload and result of `weir
// bench`, an empty msgpack map each) claimed, run and finished by one
// worker at concurrency 50 with an Observer that counts the succeeded
// events, as `weir bench` runs it, on the redis-server of WEIR_REDIS_URL
// (skipped without one). The queue is filled before the clock starts (in
// batches, not measured), so the measured phase is the worker alone:
//
//   - go-cpu-us/job: the process's user + system CPU (getrusage) from the
//     worker's start to the last succeeded event, over the jobs: the
//     worker, its go-redis client and the Go runtime (GC included), not the
//     server; go-user-us/job and go-sys-us/job are its two parts;
//   - allocs/job and B/job: the heap allocations of that phase
//     (runtime.MemStats), over the jobs (allocs/op and B/op say the same,
//     from the testing package);
//   - trips/job: the client's round trips over the jobs.
//
// ns/op is wall time, which the server's speed decides; compare the
// CPU and the allocations.
func BenchmarkWorkerPlainJob(b *testing.B) {
	ctx := context.Background()
	st, trips := workerStore(b, "wpj")
	type empty struct{}
	q := client.NewQueue[empty, empty]("plain")
	payload, err := q.EncodePayload(empty{})
	if err != nil {
		b.Fatal(err)
	}
	batch := make([]engine.EnqueueParams, 0, 100)
	for i := 0; i < b.N; i += cap(batch) {
		batch = batch[:0]
		for range min(cap(batch), b.N-i) {
			batch = append(batch, engine.EnqueueParams{Job: engine.JobSpec{ID: client.NewID(), Queue: q.Name(), Payload: payload}})
		}
		if _, err := st.EnqueueBatch(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	var done atomic.Int64
	reached := make(chan struct{})
	w := worker.New(st, worker.Config{Concurrency: plainConcurrency, ShutdownTimeout: 10 * time.Second,
		Observer: func(e worker.Event) {
			if e.Kind == worker.EventSucceeded && done.Add(1) == int64(b.N) {
				close(reached)
			}
		}})
	worker.Handle(w, q, func(context.Context, *worker.Job[empty]) (empty, error) { return empty{}, nil })
	measureWorker(b, ctx, w, trips, reached, b.N, "job")
}

// workerStore returns a store on a namespace of its own (named after
// prefix) of the redis-server of WEIR_REDIS_URL (the benchmark is skipped
// without one), with a pool as large as weir bench's (it never throttles
// the worker), and the hook that counts its client's round trips.
func workerStore(b *testing.B, prefix string) (*redisstore.Store, *tripHook) {
	srv := redistest.Shared(b)
	opt := *srv.Options
	opt.PoolSize = 128
	rdb := redistest.Client(b, &opt)
	trips := &tripHook{}
	rdb.AddHook(trips)
	st, err := redisstore.New(rdb, redisstore.Options{Namespace: redistest.Namespace(b, rdb, prefix)})
	if err != nil {
		b.Fatal(err)
	}
	if err := st.Load(context.Background()); err != nil {
		b.Fatal(err)
	}
	return st, trips
}

// measureWorker starts w with the clock running, waits for reached, stops
// the clock and w, and reports per unit (units of them, named unit) the
// process's CPU (go-cpu-us, go-user-us, go-sys-us), the heap allocations
// (allocs, B) and the client's round trips (trips) of that phase.
func measureWorker(b *testing.B, ctx context.Context, w *worker.Worker, trips *tripHook, reached <-chan struct{}, units int, unit string) {
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	trips0 := trips.n.Load()
	user0, sys0 := processCPUSplit(b)
	b.ReportAllocs()
	b.ResetTimer()
	if err := w.Start(ctx); err != nil {
		b.Fatal(err)
	}
	<-reached
	b.StopTimer()
	user, sys := processCPUSplit(b)
	user, sys = user-user0, sys-sys0
	runtime.ReadMemStats(&m1)
	trips1 := trips.n.Load()
	if err := w.Stop(ctx); err != nil {
		b.Fatal(err)
	}
	n := float64(units)
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) / n }
	b.ReportMetric(us(user+sys), "go-cpu-us/"+unit)
	b.ReportMetric(us(user), "go-user-us/"+unit)
	b.ReportMetric(us(sys), "go-sys-us/"+unit)
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/n, "allocs/"+unit)
	b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/n, "B/"+unit)
	b.ReportMetric(float64(trips1-trips0)/n, "trips/"+unit)
}
