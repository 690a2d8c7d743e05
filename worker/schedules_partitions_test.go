package worker_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/internal/testclock"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/worker"
)

// partitionedBackends are the backends of namespaces of parts partitions
// on a test clock: memstore, miniredis, and (with WEIR_REDIS_URL)
// redis-server and (with WEIR_REDIS_CLUSTER) the Redis Cluster.
func partitionedBackends(t *testing.T, clk *testclock.Clock, parts int) []backend {
	mc := engine.DefaultConfig()
	mc.Partitions = parts
	mem := memstore.New(memstore.WithConfig(mc), memstore.WithClock(clk.Now))
	bs := []backend{{name: "memstore", open: func(testing.TB) client.Store { return mem }}}
	type srv struct {
		name string
		rdb  func(t testing.TB) redis.UniversalClient
	}
	var srvs []srv
	servers := []redistest.Server{redistest.Mini(t)}
	if redistest.Wanted() {
		servers = append(servers, redistest.Shared(t))
	}
	for _, s := range servers {
		srvs = append(srvs, srv{s.Name, func(t testing.TB) redis.UniversalClient { return redistest.Client(t, s.Options) }})
	}
	if os.Getenv("WEIR_REDIS_CLUSTER") != "" {
		srvs = append(srvs, srv{"cluster", func(t testing.TB) redis.UniversalClient { return redistest.Cluster(t) }})
	}
	for _, s := range srvs {
		ns := redistest.NewNamespace("wsp")
		bs = append(bs, backend{name: s.name, open: func(t testing.TB) client.Store {
			rdb := s.rdb(t)
			redistest.CleanupNamespace(t, rdb, ns)
			st, err := redisstore.New(rdb, redisstore.Options{Namespace: ns, Config: engine.Config{Partitions: parts}, Clock: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			return st
		}})
	}
	return bs
}

// Two workers with Schedules on a namespace of 8 partitions fire a
// workflow schedule: the tick's workflow, "<name>@<seconds>", lives in the
// schedule's partition, runs both its tasks and completes, and the
// schedule records it as its last.
func TestWorkersFireScheduleOnPartitions(t *testing.T) {
	const parts = 8
	clk := testclock.New()
	for _, b := range partitionedBackends(t, clk, parts) {
		t.Run(b.name, func(t *testing.T) {
			ctx := testCtx(t)
			q := client.NewQueue[int, int]("psched")
			for range 2 {
				cfg := fastConfig()
				cfg.Schedules, cfg.ScheduleRefresh, cfg.Lease = true, time.Hour, time.Hour
				w := worker.New(b.open(t), cfg)
				worker.Handle(w, q, func(_ context.Context, j *worker.Job[int]) (int, error) { return j.Payload + 1, nil })
				start(t, w)
			}
			c := client.New(b.open(t))
			wf := client.NewWorkflow()
			a := client.AddTask(wf, "a", q, 1)
			client.AddTask(wf, "b", q, 2).After(a)
			name := "nightly" // partition 2 of 8
			if p := engine.Partition(name, parts); p != 2 {
				t.Fatalf("%s lands in partition %d", name, p)
			}
			// due at once: its first tick is the clock's next hour, where
			// the clock goes; the workers hear of the put
			tick := clk.Now().Truncate(time.Hour).Add(time.Hour)
			clk.Set(tick)
			if _, err := c.PutSchedule(ctx, client.ScheduleParams{Name: name, Every: time.Hour, Workflow: wf, Start: tick.Add(-time.Millisecond)}); err != nil {
				t.Fatal(err)
			}
			id := client.TickIDIn(name, tick, parts)
			if id != name+"@"+strconv.FormatInt(tick.Unix(), 10) {
				t.Fatalf("tick ID %q", id)
			}
			var got weir.Workflow
			for {
				// the fire may not have come yet: the await of an ID not
				// written yet is ErrNotFound
				s, err := c.OpenWorkflow(id).Wait(ctx)
				if err == nil {
					got = s
					break
				}
				if ctx.Err() != nil {
					t.Fatalf("the tick's workflow %s: %v", id, err)
				}
				time.Sleep(5 * time.Millisecond)
			}
			if got.State != weir.WorkflowCompleted || len(got.Tasks) != 2 {
				t.Fatalf("the tick's workflow: %+v", got)
			}
			s, err := c.GetSchedule(ctx, name)
			if err != nil || s.LastID != id || !s.LastTick.Equal(tick) {
				t.Fatalf("schedule after the fire: %+v, %v", s, err)
			}
		})
	}
}
