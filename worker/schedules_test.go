package worker_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/internal/testclock"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/worker"
)

// clockedBackends are the backends of the schedule tests, each opened on
// a test clock: memstore, miniredis and (with WEIR_REDIS_URL) redis-server.
// Each open of a Redis backend is a new connection pool, as another
// process would have.
func clockedBackends(t *testing.T, clk *testclock.Clock) []backend {
	mem := memstore.New(memstore.WithClock(clk.Now))
	bs := []backend{{name: "memstore", open: func(testing.TB) client.Store { return mem }}}
	servers := []redistest.Server{redistest.Mini(t)}
	if redistest.Wanted() {
		servers = append(servers, redistest.Shared(t))
	}
	for _, srv := range servers {
		ns := redistest.NewNamespace("ws")
		bs = append(bs, backend{name: srv.Name, open: func(t testing.TB) client.Store {
			rdb := redistest.Client(t, srv.Options)
			redistest.CleanupNamespace(t, rdb, ns)
			s, err := redisstore.New(rdb, redisstore.Options{Namespace: ns, Clock: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}})
	}
	return bs
}

// Eight processes race to fire the same tick of a job schedule and of a
// workflow schedule, five ticks in a row: each tick fires once (one
// "fired", seven "stale") and creates one job or one workflow.
func TestScheduleFireRaceExactlyOnce(t *testing.T) {
	clk := testclock.New()
	for _, b := range clockedBackends(t, clk) {
		t.Run(b.name, func(t *testing.T) {
			ctx := testCtx(t)
			const racers = 8
			stores := make([]client.Store, racers)
			for i := range stores {
				stores[i] = b.open(t)
			}
			c := client.New(stores[0])
			start := clk.Now()
			tj, err := client.ScheduledJob(client.NewQueue[int, int]("race"), 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.PutSchedule(ctx, client.ScheduleParams{Name: "j", Every: 10 * time.Second, Job: tj, Start: start}); err != nil {
				t.Fatal(err)
			}
			wf := client.NewWorkflow()
			client.AddTask(wf, "a", client.NewQueue[int, int]("race-wf"), 1)
			if _, err := c.PutSchedule(ctx, client.ScheduleParams{Name: "w", Every: 10 * time.Second, Workflow: wf, Start: start}); err != nil {
				t.Fatal(err)
			}
			var ticks []time.Time
			for range 5 {
				s, err := c.GetSchedule(ctx, "j")
				if err != nil {
					t.Fatal(err)
				}
				clk.Set(s.Next)
				ticks = append(ticks, s.Next)
				for _, name := range []string{"j", "w"} {
					outcomes := race(t, ctx, stores, name)
					if outcomes[engine.FireFired] != 1 || outcomes[engine.FireStale] != racers-1 {
						t.Fatalf("tick %v of %s: outcomes %v, want 1 fired and %d stale", s.Next, name, outcomes, racers-1)
					}
				}
			}
			qs, err := c.Queues(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range qs {
				if q.Name == "race" && q.Ready != len(ticks) || q.Name == "race-wf" && q.Ready != len(ticks) {
					t.Fatalf("queue %s holds %d ready jobs, want one per tick (%d)", q.Name, q.Ready, len(ticks))
				}
			}
			page, err := stores[0].ListWorkflows(ctx, weir.ListParams{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Workflows) != len(ticks) {
				t.Fatalf("%d workflows, want one per tick (%d)", len(page.Workflows), len(ticks))
			}
			for _, tk := range ticks {
				if _, err := stores[0].GetJob(ctx, client.TickID("j", tk)); err != nil {
					t.Fatalf("the job of tick %v: %v", tk, err)
				}
				if _, err := stores[0].GetWorkflow(ctx, client.TickID("w", tk)); err != nil {
					t.Fatalf("the workflow of tick %v: %v", tk, err)
				}
			}
		})
	}
}

// race makes every store read schedule name and fire it at once, and
// counts the outcomes.
func race(t *testing.T, ctx context.Context, stores []client.Store, name string) map[engine.FireOutcome]int {
	t.Helper()
	var mu sync.Mutex
	out := map[engine.FireOutcome]int{}
	var ready, wg sync.WaitGroup
	gate := make(chan struct{})
	now := time.Time{}
	for _, st := range stores {
		sc := st.(engine.Scheduler)
		s, err := sc.GetSchedule(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if now.IsZero() {
			now = s.Next
		}
		ready.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ready.Done()
			<-gate
			r, err := engine.FireDue(ctx, st, sc, s, now)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("fire: %v", err)
			}
			out[r.Outcome]++
		}()
	}
	ready.Wait()
	close(gate)
	wg.Wait()
	return out
}

// Three workers fire a schedule on a test clock: each tick's job runs
// once, and no other job runs.
func TestWorkersFireEachTickOnce(t *testing.T) {
	clk := testclock.New()
	for _, b := range clockedBackends(t, clk) {
		t.Run(b.name, func(t *testing.T) {
			ctx := testCtx(t)
			q := client.NewQueue[struct{}, struct{}]("ticks")
			var mu sync.Mutex
			ran := map[string]int{}
			seen := make(chan string, 100)
			for range 3 {
				cfg := fastConfig()
				cfg.Schedules, cfg.ScheduleRefresh = true, 2*time.Millisecond
				// the test clock jumps a minute a tick: no lease may expire
				cfg.Lease = time.Hour
				w := worker.New(b.open(t), cfg)
				worker.Handle(w, q, func(_ context.Context, j *worker.Job[struct{}]) (struct{}, error) {
					mu.Lock()
					ran[j.ID]++
					mu.Unlock()
					seen <- j.ID
					return struct{}{}, nil
				})
				start(t, w)
			}
			c := client.New(b.open(t))
			job, err := client.ScheduledJob(q, struct{}{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.PutSchedule(ctx, client.ScheduleParams{Name: "tick", Every: time.Minute, Job: job, Start: clk.Now()}); err != nil {
				t.Fatal(err)
			}
			var want []string
			for range 4 {
				s, err := c.GetSchedule(ctx, "tick")
				if err != nil {
					t.Fatal(err)
				}
				clk.Set(s.Next)
				want = append(want, client.TickID("tick", s.Next))
				select {
				case id := <-seen:
					if id != want[len(want)-1] {
						t.Fatalf("ran %s, want %s", id, want[len(want)-1])
					}
					// its finish is stored before the clock moves on
					if _, err := client.OpenJob(c, q, id).Wait(ctx); err != nil {
						t.Fatal(err)
					}
				case <-ctx.Done():
					t.Fatalf("tick %v never ran", s.Next)
				}
			}
			// the fourth tick's fire moved the schedule on before its
			// job ran: nothing is left to fire at this time
			if s, _ := c.GetSchedule(ctx, "tick"); !s.Next.After(clk.Now()) {
				t.Fatalf("next tick %v not after now %v", s.Next, clk.Now())
			}
			mu.Lock()
			defer mu.Unlock()
			var got []string
			for id, n := range ran {
				if n != 1 {
					t.Errorf("%s ran %d times", id, n)
				}
				got = append(got, id)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("ran %v, want %v", got, want)
			}
		})
	}
}

// A worker that read no schedule at its start learns of one added later
// from the store's notice (engine.ScheduleWatcher), not from its refresh,
// which is an hour here.
func TestWorkerLearnsOfNewSchedules(t *testing.T) {
	clk := testclock.New()
	for _, b := range clockedBackends(t, clk) {
		t.Run(b.name, func(t *testing.T) {
			ctx := testCtx(t)
			q := client.NewQueue[struct{}, struct{}]("learn")
			seen := make(chan string, 10)
			cfg := fastConfig()
			cfg.Schedules, cfg.ScheduleRefresh, cfg.Lease = true, time.Hour, time.Hour
			w := worker.New(b.open(t), cfg)
			worker.Handle(w, q, func(_ context.Context, j *worker.Job[struct{}]) (struct{}, error) {
				seen <- j.ID
				return struct{}{}, nil
			})
			start(t, w)
			c := client.New(b.open(t))
			for _, name := range []string{"first", "second"} {
				job, _ := client.ScheduledJob(q, struct{}{})
				// due at once: its first tick is the clock's next second,
				// where the clock goes
				tick := clk.Now().Truncate(time.Second).Add(time.Second)
				clk.Set(tick)
				if _, err := c.PutSchedule(ctx, client.ScheduleParams{Name: name, Every: time.Second, Job: job, Start: tick.Add(-time.Millisecond)}); err != nil {
					t.Fatal(err)
				}
				select {
				case id := <-seen:
					if id != client.TickID(name, clk.Now()) {
						t.Fatalf("ran %s, want the tick of %v", id, clk.Now())
					}
				case <-ctx.Done():
					t.Fatalf("schedule %s added while the worker slept never fired", name)
				}
				// it would tick again at the next second, the next one's tick
				if err := c.DeleteSchedule(ctx, name); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
