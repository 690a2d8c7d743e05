package redisstore

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redistest"
)

// benchEnv is a store on the server clock (as in production: TIME, TTLs),
// over a client that counts round trips.
type benchEnv struct {
	store *Store
	rdb   *redis.Client
	real  bool
	trips *tripCounter
	// skipCmds and skipTrips are left out of the report (set-up done
	// between measured ops).
	skipCmds, skipTrips int64
	skipUsec            float64
}

// tripCounter is a go-redis hook counting client round trips (a pipeline
// is one).
type tripCounter struct{ n int64 }

func (c *tripCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *tripCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n++
		return next(ctx, cmd)
	}
}
func (c *tripCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n++
		return next(ctx, cmds)
	}
}

// eachBenchEnv runs f on miniredis and, with WEIR_REDIS_URL, on a private
// redis-server (so that INFO commandstats counts only f's commands).
func eachBenchEnv(b *testing.B, f func(b *testing.B, e *benchEnv)) {
	b.Run("miniredis", func(b *testing.B) {
		f(b, openBenchEnv(b, redistest.Client(b, redistest.Mini(b).Options), false))
	})
	if realRedis() {
		b.Run("redis", func(b *testing.B) { f(b, openBenchEnv(b, privateRedis(b), true)) })
	}
}

func openBenchEnv(b *testing.B, rdb *redis.Client, real bool) *benchEnv {
	tc := &tripCounter{}
	rdb.AddHook(tc)
	s, err := New(rdb, Options{Namespace: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Load(bg); err != nil {
		b.Fatal(err)
	}
	return &benchEnv{store: s, rdb: rdb, real: real, trips: tc}
}

// counters starts measuring: it resets the server's command stats and the
// trip count.
func (e *benchEnv) counters(b *testing.B) {
	if e.real {
		if err := e.rdb.ConfigResetStat(bg).Err(); err != nil {
			b.Fatal(err)
		}
	}
	e.trips.n = 0
	e.skipCmds, e.skipTrips, e.skipUsec = 0, 0, 0
}

// calls returns the server's command count (0 on miniredis).
func (e *benchEnv) calls(b *testing.B) int64 {
	if !e.real {
		return 0
	}
	return redistest.CommandStats(b, e.rdb).Measured().Calls()
}

// scriptUsec returns the server time spent in the transitions' calls
// (FCALL, EVALSHA, EVAL), in µs (INFO commandstats; 0 on miniredis): the
// scripts' cost on the one Redis core, less noisy than wall time on a
// shared machine.
func (e *benchEnv) scriptUsec(b *testing.B) float64 {
	if !e.real {
		return 0
	}
	_, us := redistest.CommandStats(b, e.rdb).Sum(redistest.ScriptCommands...)
	return us
}

// skip runs f and leaves its commands, script time and round trips out of
// the report.
func (e *benchEnv) skip(b *testing.B, f func()) {
	c0, u0, t0 := e.calls(b), e.scriptUsec(b), e.trips.n
	f()
	e.skipCmds += e.calls(b) - c0
	e.skipUsec += e.scriptUsec(b) - u0
	e.skipTrips += e.trips.n - t0
}

// report reports Redis commands (real server only: INFO commandstats,
// commands inside Lua included) and client round trips per unit.
func (e *benchEnv) report(b *testing.B, units int, unit string) {
	trips := e.trips.n - e.skipTrips
	if e.real {
		b.ReportMetric(float64(e.calls(b)-e.skipCmds)/float64(units), "cmds/"+unit)
		b.ReportMetric((e.scriptUsec(b)-e.skipUsec)/float64(units), "lua-us/"+unit)
	}
	b.ReportMetric(float64(trips)/float64(units), "trips/"+unit)
}

// enqueueN enqueues n plain jobs on queue q, 500 a pipeline.
func (e *benchEnv) enqueueN(b *testing.B, prefix string, n int) {
	ctx := context.Background()
	for i := 0; i < n; {
		var ps []engine.EnqueueParams
		for k := 0; k < 500 && i < n; k, i = k+1, i+1 {
			ps = append(ps, engine.EnqueueParams{Job: engine.JobSpec{ID: prefix + strconv.Itoa(i), Queue: "q"}})
		}
		rs, err := e.store.EnqueueBatch(ctx, ps)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range rs {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
		}
	}
}

// BenchmarkEnqueue: one op is one Enqueue call (one job).
func BenchmarkEnqueue(b *testing.B) {
	eachBenchEnv(b, func(b *testing.B, e *benchEnv) {
		e.counters(b)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := e.store.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "e" + strconv.Itoa(i), Queue: "q"}}); err != nil {
				b.Fatal(err)
			}
			i++
		}
		e.report(b, i, "op")
	})
}

// BenchmarkClaimFinish: one op is one plain job claimed and finished, by
// a loop that finishes k jobs and claims k more in each call (the first
// claim alone), as a busy worker does.
func BenchmarkClaimFinish(b *testing.B) {
	for _, k := range []int{1, 8, 50} {
		b.Run("batch="+strconv.Itoa(k), func(b *testing.B) {
			eachBenchEnv(b, func(b *testing.B, e *benchEnv) {
				e.enqueueN(b, "j", b.N)
				cp := engine.ClaimParams{Queues: []string{"q"}, Max: k, Lease: time.Minute}
				e.counters(b)
				b.ReportAllocs()
				b.ResetTimer()
				done, _ := drain(b, e.store, cp)
				b.StopTimer()
				if done != b.N {
					b.Fatalf("%d of %d jobs done", done, b.N)
				}
				e.report(b, b.N, "job")
			})
		})
	}
}

// BenchmarkChainStep: one op is one step of a chain workflow: the running
// task's finish, which promotes the next task and claims it in the same
// call. The chain has 100 or 10,000 tasks: a step's cost should not depend
// on the workflow's size.
func BenchmarkChainStep(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run("tasks="+strconv.Itoa(n), func(b *testing.B) {
			eachBenchEnv(b, func(b *testing.B, e *benchEnv) { chainSteps(b, e, n) })
		})
	}
}

// chainSteps runs b.N steps of n-task chains (a new chain, outside the
// measurement, whenever one ends).
func chainSteps(b *testing.B, e *benchEnv, n int) {
	plan := func(id string) engine.Plan {
		p := engine.Plan{ID: id}
		for i := range n {
			ts := engine.TaskSpec{Name: "t" + strconv.Itoa(i), Queue: "q"}
			if i > 0 {
				ts.After = []string{"t" + strconv.Itoa(i-1)}
			}
			p.Tasks = append(p.Tasks, ts)
		}
		return p
	}
	cp := engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute}
	var claimed []engine.Claimed
	next := func(wf int) {
		b.StopTimer()
		e.skip(b, func() {
			if _, err := e.store.Submit(bg, engine.SubmitParams{Plan: plan("c" + strconv.Itoa(wf))}); err != nil {
				b.Fatal(err)
			}
			var err error
			if claimed, err = e.store.Claim(bg, cp); err != nil || len(claimed) != 1 {
				b.Fatalf("claim: %v, %d claimed", err, len(claimed))
			}
		})
		b.StartTimer()
	}
	wf := 0
	e.counters(b)
	next(wf)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(claimed) == 0 {
			wf++
			next(wf)
		}
		c := claimed[0]
		res, err := e.store.Finish(bg, engine.FinishParams{
			Outcomes: []engine.Outcome{{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted}},
			Claim:    &cp,
		})
		if err != nil {
			b.Fatal(err)
		}
		claimed = res.Claimed
	}
	b.StopTimer()
	e.report(b, b.N, "step")
}
