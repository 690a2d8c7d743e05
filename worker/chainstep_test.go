package worker_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/worker"
)

// roundTrips is a go-redis hook that logs every round trip of a client: a
// single command by name (with whether it failed because the server did not
// have the script or function), a pipeline as "pipeline".
type roundTrips struct {
	mu  sync.Mutex
	log []trip
}

type trip struct {
	name     string
	noScript bool
}

func (h *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.mu.Lock()
		missing := err != nil && (strings.HasPrefix(err.Error(), "NOSCRIPT") || strings.HasPrefix(err.Error(), "ERR Function not found"))
		h.log = append(h.log, trip{name: cmd.Name(), noScript: missing})
		h.mu.Unlock()
		return err
	}
}

func (h *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.mu.Lock()
		h.log = append(h.log, trip{name: "pipeline"})
		h.mu.Unlock()
		return err
	}
}

// mark returns how many round trips were logged so far.
func (h *roundTrips) mark() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.log)
}

func (h *roundTrips) between(a, b int) []trip {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]trip(nil), h.log[a:b]...)
}

// redisOptions lists the Redis servers of the Redis tests: a miniredis
// and, when WEIR_REDIS_URL is set, a private redis-server (the test
// flushes the server's scripts and functions: on the shared server another
// package's test could load the library again between the flush and the
// next step).
func redisOptions(t *testing.T) map[string]*redis.Options {
	t.Helper()
	out := map[string]*redis.Options{"miniredis": redistest.Mini(t).Options}
	if redistest.Wanted() {
		out["redis"] = redistest.Private(t)
	}
	return out
}

// A chain step on the Redis store is one round trip: the finish of a task
// promotes the next one and claims it in the same script call, and the
// worker runs the claimed task on the slot it holds (no wake-up, no second
// claim). Midway a handler flushes the server's scripts and functions: the
// next finish gets NOSCRIPT and is sent again with EVAL (miniredis, a
// server without Functions), or "function not found", loads the library
// and is sent again (redis-server):
// one or two extra round trips of that step, no error, and the chain goes
// on.
func TestChainStepIsOneRoundTrip(t *testing.T) {
	const n, flushAt = 40, 20
	for name, opt := range redisOptions(t) {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t)
			ns := redistest.NewNamespace("wt")
			hook := &roundTrips{}
			rdb := redistest.Client(t, opt)
			rdb.AddHook(hook)
			ls, err := redisstore.New(rdb, redisstore.Options{Namespace: ns})
			if err != nil {
				t.Fatal(err)
			}
			if err := ls.Load(ctx); err != nil { // no NOSCRIPT before the flush
				t.Fatal(err)
			}
			// miniredis, and servers without Redis Functions (Redis 6.2),
			// run the scripts
			scripts := ls.CallPath() == "scripts"
			other := openLua(t, opt, ns) // the producer: another connection pool
			admin := redistest.Client(t, opt)

			spy := newSpy(ls)
			w := worker.New(spy, worker.Config{
				Concurrency:       1,
				Lease:             time.Minute,
				HeartbeatInterval: time.Hour, // no heartbeat or sweep between steps
				SweepInterval:     time.Hour,
			})
			chain := client.NewQueue[int, int]("chain")
			var mu sync.Mutex
			marks := make([]int, n) // round trips logged when task i started
			worker.Handle(w, chain, func(ctx context.Context, j *worker.Job[int]) (int, error) {
				mu.Lock()
				marks[j.Payload] = hook.mark()
				mu.Unlock()
				if j.Payload == flushAt {
					if err := admin.ScriptFlush(ctx).Err(); err != nil {
						return 0, err
					}
					if !scripts {
						if err := admin.FunctionFlush(ctx).Err(); err != nil {
							return 0, err
						}
					}
				}
				return j.Payload, nil
			})
			start(t, w)

			wf := chainWorkflow(chain, n)
			if err := client.New(other).Submit(ctx, wf); err != nil {
				t.Fatal(err)
			}
			final, err := wf.Wait(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if final.State != weir.WorkflowCompleted {
				t.Fatalf("workflow %s: %+v", final.State, final)
			}

			spy.mu.Lock()
			defer spy.mu.Unlock()
			mu.Lock()
			defer mu.Unlock()
			for i := 1; i < n; i++ {
				id := weir.TaskJobID(wf.ID(), fmt.Sprint("t", i))
				if got := spy.claimedBy[id]; got != "Finish" {
					t.Errorf("task %d was claimed by %q; want the finish of task %d", i, got, i-1)
				}
				step := hook.between(marks[i-1], marks[i])
				var calls []string
				for _, tr := range step {
					if !tr.noScript {
						calls = append(calls, tr.name)
					}
				}
				want := "fcall" // the function library
				if scripts {
					want = "evalsha"
				}
				if i == flushAt+1 {
					if scripts && (len(step) != 2 || !step[0].noScript || step[1].name != "eval") {
						t.Errorf("step after the flush made %v; want EVALSHA (NOSCRIPT), then EVAL", step)
					}
					if !scripts && (len(step) != 3 || !step[0].noScript || step[1].name != "function" || step[2].name != "fcall") {
						t.Errorf("step after the flush made %v; want FCALL (function not found), FUNCTION LOAD, FCALL", step)
					}
					continue
				}
				if len(calls) != 1 || calls[0] != want {
					t.Errorf("step %d→%d made round trips %v; want one %s", i-1, i, step, want)
				}
			}
		})
	}
}
