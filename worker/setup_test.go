package worker_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/worker"
)

// HandleSafely returns the mistakes Handle panics on, registers nothing
// then, and Handle's panic carries the same error.
func TestHandleSafelyReturnsErrors(t *testing.T) {
	ctx := testCtx(t)
	s := memstore.New()
	w := worker.New(s, fastConfig())
	first := func(ctx context.Context, j *worker.Job[string]) (string, error) { return "first", nil }
	second := func(ctx context.Context, j *worker.Job[string]) (string, error) { return "second", nil }
	if err := worker.HandleSafely(w, echoQ, first); err != nil {
		t.Fatalf("first HandleSafely: %v", err)
	}
	err := worker.HandleSafely(w, echoQ, second)
	if !errors.Is(err, weir.ErrHandlerExists) || !strings.Contains(err.Error(), `"echo"`) {
		t.Fatalf("second HandleSafely of echo = %v; want weir.ErrHandlerExists naming the queue", err)
	}
	func() {
		defer func() {
			v := recover()
			if e, ok := v.(error); !ok || !errors.Is(e, weir.ErrHandlerExists) {
				t.Fatalf("Handle of a handled queue panicked with %v; want an error matching weir.ErrHandlerExists", v)
			}
		}()
		worker.Handle(w, echoQ, second)
	}()
	start(t, w)
	if err := worker.HandleSafely(w, addQ, func(ctx context.Context, j *worker.Job[AddArgs]) (int, error) { return 0, nil }); !errors.Is(err, weir.ErrRunning) {
		t.Fatalf("HandleSafely on a running worker = %v; want weir.ErrRunning", err)
	}
	// The refused handlers were not registered: echo runs the first one.
	c := client.New(s)
	job := mustEnqueue(t, c, echoQ, "x")
	if got, err := job.Wait(ctx); err != nil || got != "first" {
		t.Fatalf("echo job = %q, %v; want the first handler's result", got, err)
	}
	stopNow(t, w)
	// A stopped worker takes handlers again.
	if err := worker.HandleSafely(w, addQ, func(ctx context.Context, j *worker.Job[AddArgs]) (int, error) { return 0, nil }); err != nil {
		t.Fatalf("HandleSafely on a stopped worker: %v", err)
	}
}

// A worker given no Limits works within its store's: it claims no more
// jobs at once than the store's MaxBatch (a bigger claim is refused, and no
// job would run), sweeps in calls the store accepts, and fails at once a
// result over the store's MaxResult.
func TestWorkerTakesTheStoresLimits(t *testing.T) {
	lim := weir.DefaultLimits()
	lim.MaxBatch = 2
	lim.MaxResult = 16
	cfg := engine.Config{Limits: lim, Retention: time.Hour}
	stores := map[string]func(t *testing.T) client.Store{
		"memstore": func(*testing.T) client.Store { return memstore.New(memstore.WithConfig(cfg)) },
		"miniredis": func(t *testing.T) client.Store {
			return openLuaWith(t, redistest.Mini(t).Options, cfg)
		},
	}
	if redistest.Wanted() {
		stores["redis"] = func(t *testing.T) client.Store {
			return openLuaWith(t, redistest.Shared(t).Options, cfg)
		}
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			s := open(t)
			c := client.New(s)
			wcfg := fastConfig()
			wcfg.Concurrency = 8 // more than the store's MaxBatch
			var logged lockedBuffer
			wcfg.Logger = slog.New(slog.NewTextHandler(&logged, nil))
			w := worker.New(s, wcfg)
			worker.Handle(w, echoQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
				return j.Payload, nil
			})
			var jobs []*client.Job[string]
			for range 6 {
				jobs = append(jobs, mustEnqueue(t, c, echoQ, "ok"))
			}
			big := mustEnqueue(t, c, echoQ, strings.Repeat("x", 40), client.MaxAttempts(3))
			start(t, w)
			for _, j := range jobs {
				if got, err := j.Wait(ctx); err != nil || got != "ok" {
					t.Fatalf("job %s = %q, %v; want ok", j.ID(), got, err)
				}
			}
			_, err := big.Wait(ctx)
			var je *weir.JobError
			if !errors.As(err, &je) || je.State != weir.Failed || je.Attempt != 1 || !strings.Contains(je.Message, "over the limit of 16") {
				t.Fatalf("big result: %v; want failed at the first attempt, over the limit of 16", err)
			}
			time.Sleep(5 * wcfg.SweepInterval) // a few sweeps
			if l := logged.String(); l != "" {
				t.Fatalf("the worker logged store errors:\n%s", l)
			}
		})
	}
}

// openLuaWith opens a redisstore.Store with cfg in a namespace of its own.
func openLuaWith(t *testing.T, opt *redis.Options, cfg engine.Config) client.Store {
	t.Helper()
	rdb := redistest.Client(t, opt)
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: redistest.Namespace(t, rdb, "wl"), Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// lockedBuffer is a bytes.Buffer safe for concurrent writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
