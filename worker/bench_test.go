package worker_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/worker"
)

// eachBenchBackend runs f as a sub-benchmark on every backend.
func eachBenchBackend(b *testing.B, f func(b *testing.B, open func() client.Store)) {
	for i, be := range backends(b) {
		b.Run(be.name, func(b *testing.B) {
			be := backends(b)[i] // a fresh backend for each run of the function
			f(b, func() client.Store { return be.open(b) })
		})
	}
}

func BenchmarkEnqueue(b *testing.B) {
	eachBenchBackend(b, func(b *testing.B, open func() client.Store) {
		c := client.New(open())
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := client.Enqueue(ctx, c, echoQ, "payload"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkClaimAndFinish: one op is one job run by a worker of
// concurrency 1 (so every job after the first comes from the finish of the
// one before).
func BenchmarkClaimAndFinish(b *testing.B) {
	eachBenchBackend(b, func(b *testing.B, open func() client.Store) {
		ctx := context.Background()
		c := client.New(open())
		var jobs []*client.Job[string]
		for range b.N {
			j, err := client.Enqueue(ctx, c, echoQ, "x")
			if err != nil {
				b.Fatal(err)
			}
			jobs = append(jobs, j)
		}
		done := make(chan struct{}, b.N)
		w := worker.New(open(), worker.Config{Concurrency: 1})
		worker.Handle(w, echoQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
			done <- struct{}{}
			return j.Payload, nil
		})
		b.ReportAllocs()
		b.ResetTimer()
		if err := w.Start(ctx); err != nil {
			b.Fatal(err)
		}
		for range b.N {
			<-done
		}
		if _, err := jobs[len(jobs)-1].Wait(ctx); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		_ = w.Stop(ctx)
	})
}

// BenchmarkPromotion runs a chain of tasks (each after the one before);
// one op is one promotion: A finishes, B starts. It reports the latency
// from A's handler returning to B's handler starting, p50 and p99.
func BenchmarkPromotion(b *testing.B) {
	eachBenchBackend(b, func(b *testing.B, open func() client.Store) {
		ctx := context.Background()
		n := min(b.N+1, 1000)
		var mu sync.Mutex
		starts := make(map[string]time.Time, n)
		ends := make(map[string]time.Time, n)
		chain := client.NewQueue[int, int]("chain")
		w := worker.New(open(), worker.Config{Concurrency: 1})
		worker.Handle(w, chain, func(ctx context.Context, j *worker.Job[int]) (int, error) {
			now := time.Now()
			mu.Lock()
			starts[j.Task] = now
			mu.Unlock()
			defer func() {
				mu.Lock()
				ends[j.Task] = time.Now()
				mu.Unlock()
			}()
			return j.Payload, nil
		})
		if err := w.Start(ctx); err != nil {
			b.Fatal(err)
		}
		defer w.Stop(ctx)
		c := client.New(open())
		var lat []time.Duration
		b.ReportAllocs()
		for runs := 0; runs*(n-1) < b.N; runs++ {
			wf := chainWorkflow(chain, n)
			if err := c.Submit(ctx, wf); err != nil {
				b.Fatal(err)
			}
			if _, err := wf.Wait(ctx); err != nil {
				b.Fatal(err)
			}
			mu.Lock()
			for i := 1; i < n; i++ {
				lat = append(lat, starts[fmt.Sprint("t", i)].Sub(ends[fmt.Sprint("t", i-1)]))
			}
			clear(starts)
			clear(ends)
			mu.Unlock()
		}
		slices.Sort(lat)
		if len(lat) > 0 {
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		}
	})
}
