package worker_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/worker"
)

// tripHook counts a client's round trips (a pipeline is one).
type tripHook struct{ n atomic.Int64 }

func (h *tripHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *tripHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}
func (h *tripHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmds)
	}
}

// benchStore is a store for the throughput benchmarks, with its round
// trips counted and, on a real server, its commands.
type benchStore struct {
	store client.Store
	rdb   *redis.Client // nil for memstore
	trips *tripHook
	real  bool
}

// commands returns the server's command count and the µs it spent in
// scripts (INFO commandstats; zero off a real server).
func (s *benchStore) commands(b *testing.B) (int64, float64) {
	if !s.real {
		return 0, 0
	}
	st := redistest.CommandStats(b, s.rdb)
	_, us := st.Sum(redistest.ScriptCommands...)
	return st.Measured().Calls(), us
}

// eachThroughputStore runs f on memstore, miniredis and, with
// WEIR_REDIS_URL, that server (a fresh namespace; its command counts
// include whatever else runs on the server meanwhile).
func eachThroughputStore(b *testing.B, f func(b *testing.B, s *benchStore)) {
	b.Run("memstore", func(b *testing.B) { f(b, &benchStore{store: memstore.New(), trips: &tripHook{}}) })
	open := func(b *testing.B, opt *redis.Options, real bool) *benchStore {
		rdb := redistest.Client(b, opt)
		h := &tripHook{}
		rdb.AddHook(h)
		ns := redistest.Namespace(b, rdb, "wt")
		st, err := redisstore.New(rdb, redisstore.Options{Namespace: ns})
		if err != nil {
			b.Fatal(err)
		}
		if err := st.Load(context.Background()); err != nil {
			b.Fatal(err)
		}
		return &benchStore{store: st, rdb: rdb, trips: h, real: real}
	}
	for _, srv := range redistest.Servers(b) {
		b.Run(srv.Name, func(b *testing.B) { f(b, open(b, srv.Options, srv.Real())) })
	}
}

// BenchmarkWorkerThroughput: one op is one no-op plain job run by one
// worker of the given concurrency, from a queue filled beforehand (so the
// worker is saturated). It reports client round trips per job and, on a
// real server, Redis commands per job (inside Lua included) of the
// worker's calls.
func BenchmarkWorkerThroughput(b *testing.B) {
	for _, conc := range []int{1, 10, 50} {
		b.Run("c="+strconv.Itoa(conc), func(b *testing.B) {
			eachThroughputStore(b, func(b *testing.B, s *benchStore) {
				ctx := context.Background()
				// Fill the queue, 8 enqueuers at a time.
				q := client.NewQueue[string, string]("bench")
				payload, err := q.EncodePayload("x")
				if err != nil {
					b.Fatal(err)
				}
				var wg sync.WaitGroup
				var failed atomic.Value
				for g := range 8 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := g; i < b.N; i += 8 {
							_, err := s.store.Enqueue(ctx, engine.EnqueueParams{Job: engine.JobSpec{ID: "j" + strconv.Itoa(i), Queue: "bench", Payload: payload}})
							if err != nil {
								failed.Store(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				if err := failed.Load(); err != nil {
					b.Fatal(err)
				}
				var left atomic.Int64
				left.Store(int64(b.N))
				done := make(chan struct{})
				w := worker.New(s.store, worker.Config{Concurrency: conc})
				worker.Handle(w, q, func(ctx context.Context, j *worker.Job[string]) (string, error) {
					if left.Add(-1) == 0 {
						close(done)
					}
					return "", nil
				})
				cmds0, us0 := s.commands(b)
				trips0 := s.trips.n.Load()
				cpu0 := processCPU(b)
				b.ReportAllocs()
				b.ResetTimer()
				if err := w.Start(ctx); err != nil {
					b.Fatal(err)
				}
				<-done
				if err := w.Stop(ctx); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if s.real {
					// The worker's process CPU (user and system) per
					// job; on memstore and miniredis the store runs in
					// the process too.
					b.ReportMetric(float64(processCPU(b)-cpu0)/float64(time.Microsecond)/float64(b.N), "go-cpu-us/job")
				}
				if s.rdb != nil {
					b.ReportMetric(float64(s.trips.n.Load()-trips0)/float64(b.N), "trips/job")
				}
				if s.real {
					cmds, us := s.commands(b)
					b.ReportMetric(float64(cmds-cmds0)/float64(b.N), "cmds/job")
					b.ReportMetric((us-us0)/float64(b.N), "lua-us/job")
				}
			})
		})
	}
}
