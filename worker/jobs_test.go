package worker_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/worker"
)

// A producer, a waiter and a worker, each on its own store handle, see the
// same job: the result crosses "processes", and the waiter opens the job by
// ID.
func TestResultCrossesProcesses(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		producer := client.New(b.open(t))
		waiter := client.New(b.open(t))
		w := worker.New(b.open(t), fastConfig())
		worker.Handle(w, addQ, func(ctx context.Context, j *worker.Job[AddArgs]) (int, error) {
			return j.Payload.A + j.Payload.B, nil
		})
		start(t, w)

		job, err := client.Enqueue(ctx, producer, addQ, AddArgs{A: 2, B: 40})
		if err != nil {
			t.Fatal(err)
		}
		got, err := client.OpenJob(waiter, addQ, job.ID()).Wait(ctx)
		if err != nil || got != 42 {
			t.Fatalf("Wait = %v, %v; want 42", got, err)
		}
		// Waiting again, from the producer's handle, reads the stored outcome.
		if got, err := job.Wait(ctx); err != nil || got != 42 {
			t.Fatalf("second Wait = %v, %v; want 42", got, err)
		}
		s, err := job.Status(ctx)
		if err != nil || s.State != weir.Completed || s.Attempt != 1 {
			t.Fatalf("status = %+v, %v; want completed after 1 attempt", s, err)
		}
	})
}

// An ID given by the producer deduplicates: the second enqueue is the same
// job, which runs once.
func TestEnqueueWithIDRunsOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		c := client.New(b.open(t))
		for range 2 {
			if _, err := client.Enqueue(ctx, c, echoQ, "hi", client.ID("once")); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := client.Enqueue(ctx, c, echoQ, "other", client.ID("once")); !errors.Is(err, weir.ErrJobExists) {
			t.Fatalf("enqueue of another payload under the same ID = %v; want ErrJobExists", err)
		}
		var runs atomic.Int32
		w := worker.New(b.open(t), fastConfig())
		worker.Handle(w, echoQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
			runs.Add(1)
			return j.Payload, nil
		})
		start(t, w)
		if got, err := client.OpenJob(c, echoQ, "once").Wait(ctx); err != nil || got != "hi" {
			t.Fatalf("Wait = %q, %v", got, err)
		}
		// A later job in the same queue ran after it: had a duplicate been
		// queued, it would have run before this one.
		if _, err := client.Enqueue(ctx, c, echoQ, "after", client.ID("after")); err != nil {
			t.Fatal(err)
		}
		if _, err := client.OpenJob(c, echoQ, "after").Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if n := runs.Load(); n != 2 {
			t.Fatalf("handler ran %d times; want 2 (once per distinct job)", n)
		}
	})
}

func TestWaitUntilContextDone(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		c := client.New(b.open(t))
		job, err := client.Enqueue(testCtx(t), c, echoQ, "nobody runs me")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(testCtx(t), 20*time.Millisecond)
		defer cancel()
		if _, err := job.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Wait = %v; want context.DeadlineExceeded", err)
		}
		if _, err := client.OpenJob(c, echoQ, "no-such-job").Wait(testCtx(t)); !errors.Is(err, weir.ErrNotFound) {
			t.Fatalf("Wait of an unknown job = %v; want ErrNotFound", err)
		}
	})
}

func TestWaitWithWrongQueue(t *testing.T) {
	ctx := testCtx(t)
	b := memBackend()
	c := client.New(b.open(t))
	w := worker.New(b.open(t), fastConfig())
	worker.Handle(w, echoQ, func(ctx context.Context, j *worker.Job[string]) (string, error) { return j.Payload, nil })
	start(t, w)
	job, err := client.Enqueue(ctx, c, echoQ, "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.OpenJob(c, addQ, job.ID()).Wait(ctx); !errors.Is(err, weir.ErrWrongQueue) {
		t.Fatalf("Wait through another queue = %v; want ErrWrongQueue", err)
	}
}

func TestRetryThenSuccess(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		c := client.New(b.open(t))
		ev := newEvents()
		cfg := fastConfig()
		cfg.Observer = ev.observe
		w := worker.New(b.open(t), cfg)
		var attempts []int
		var mu sync.Mutex
		worker.Handle(w, echoQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
			mu.Lock()
			attempts = append(attempts, j.Attempt)
			mu.Unlock()
			if j.Attempt < 3 {
				return "", fmt.Errorf("flaky %d", j.Attempt)
			}
			return "ok", nil
		})
		start(t, w)
		job, err := client.Enqueue(ctx, c, echoQ, "x", client.MaxAttempts(5), client.Backoff(time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := job.Wait(ctx); err != nil || got != "ok" {
			t.Fatalf("Wait = %q, %v", got, err)
		}
		mu.Lock()
		defer mu.Unlock()
		if fmt.Sprint(attempts) != "[1 2 3]" {
			t.Fatalf("attempts = %v; want [1 2 3]", attempts)
		}
		// The observer hears of an attempt's end after the finish that
		// settled it, so Wait may return before the second retried event
		// came: wait for it, then no other may have come.
		ev.waitFor(t, ctx, worker.EventRetried, job.ID(), 2)
		if n := ev.count(worker.EventRetried, job.ID()); n != 2 {
			t.Fatalf("%d retried events; want 2", n)
		}
		r := ev.waitFor(t, ctx, worker.EventRetried, job.ID(), 1)
		if r.Err != "flaky 1" || r.RunAt.IsZero() {
			t.Fatalf("first retried event = %+v; want Err flaky 1 and a RunAt", r)
		}
	})
}

func TestOutOfAttemptsFails(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		c := client.New(b.open(t))
		w := worker.New(b.open(t), fastConfig())
		worker.Handle(w, echoQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
			return "", fmt.Errorf("attempt %d broke", j.Attempt)
		})
		start(t, w)
		job, err := client.Enqueue(ctx, c, echoQ, "x", client.MaxAttempts(2), client.Backoff(time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		_, err = job.Wait(ctx)
		var je *weir.JobError
		if !errors.As(err, &je) || je.State != weir.Failed || je.Message != "attempt 2 broke" || je.Attempt != 2 {
			t.Fatalf("Wait = %v (%+v); want a JobError failed after 2 attempts with the last message", err, je)
		}
		if !errors.Is(err, weir.ErrFailed) || errors.Is(err, weir.ErrCancelled) {
			t.Fatalf("errors.Is(%v): want ErrFailed only", err)
		}
	})
}

func TestNonRetryableFailsAtOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		c := client.New(b.open(t))
		w := worker.New(b.open(t), fastConfig())
		var runs atomic.Int32
		worker.Handle(w, echoQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
			runs.Add(1)
			return "", worker.NonRetryable(errors.New("bad input"))
		})
		start(t, w)
		job, err := client.Enqueue(ctx, c, echoQ, "x", client.MaxAttempts(10))
		if err != nil {
			t.Fatal(err)
		}
		_, err = job.Wait(ctx)
		var je *weir.JobError
		if !errors.As(err, &je) || je.State != weir.Failed || je.Message != "bad input" || je.Attempt != 1 {
			t.Fatalf("Wait = %v; want failed after 1 attempt with message %q", err, "bad input")
		}
		if n := runs.Load(); n != 1 {
			t.Fatalf("handler ran %d times; want 1", n)
		}
	})
}

func TestPanicIsAFailedAttemptWithStack(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		c := client.New(b.open(t))
		cfg := fastConfig()
		cfg.Concurrency = 1
		w := worker.New(b.open(t), cfg)
		worker.Handle(w, echoQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
			if j.Payload == "panic" && j.Attempt == 1 {
				panic("boom")
			}
			if j.Payload == "panic-always" {
				panic(fmt.Sprintf("boom %d", j.Attempt))
			}
			return j.Payload + " survived", nil
		})
		start(t, w)
		retried, err := client.Enqueue(ctx, c, echoQ, "panic", client.MaxAttempts(2), client.Backoff(time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := retried.Wait(ctx); err != nil || got != "panic survived" {
			t.Fatalf("Wait = %q, %v; want the retry to succeed", got, err)
		}
		failed, err := client.Enqueue(ctx, c, echoQ, "panic-always")
		if err != nil {
			t.Fatal(err)
		}
		_, err = failed.Wait(ctx)
		var je *weir.JobError
		if !errors.As(err, &je) || !strings.HasPrefix(je.Message, "panic: boom 1") || !strings.Contains(je.Message, "goroutine") {
			t.Fatalf("Wait = %v; want a failure with the panic and its stack", err)
		}
		// The worker goes on.
		if got, err := mustEnqueue(t, c, echoQ, "next").Wait(ctx); err != nil || got != "next survived" {
			t.Fatalf("job after panics = %q, %v", got, err)
		}
	})
}

func mustEnqueue[P, R any](t *testing.T, c *client.Client, q client.Queue[P, R], p P, opts ...client.JobOption) *client.Job[R] {
	t.Helper()
	j, err := client.Enqueue(context.Background(), c, q, p, opts...)
	if err != nil {
		t.Fatalf("enqueue: %v", err)
	}
	return j
}

func TestTimeoutCancelsTheAttempt(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		c := client.New(b.open(t))
		w := worker.New(b.open(t), fastConfig())
		causes := make(chan error, 2)
		worker.Handle(w, blockQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return "", ctx.Err()
		})
		start(t, w)
		job := mustEnqueue(t, c, blockQ, "slow", client.Timeout(5*time.Millisecond), client.MaxAttempts(2), client.Backoff(time.Millisecond))
		_, err := job.Wait(ctx)
		var je *weir.JobError
		if !errors.As(err, &je) || je.State != weir.Failed || je.Attempt != 2 || !strings.Contains(je.Message, "timeout") {
			t.Fatalf("Wait = %v; want failed after 2 timed-out attempts", err)
		}
		for range 2 {
			if c := <-causes; !errors.Is(c, weir.ErrTimeout) {
				t.Fatalf("cause = %v; want ErrTimeout", c)
			}
		}
	})
}

func TestCancelWaitingJobNeverRuns(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		c := client.New(b.open(t))
		job := mustEnqueue(t, c, echoQ, "cancelled")
		if _, err := job.Cancel(ctx); err != nil {
			t.Fatalf("Cancel: %v", err)
		}
		if _, err := job.Wait(ctx); !errors.Is(err, weir.ErrCancelled) {
			t.Fatalf("Wait = %v; want ErrCancelled", err)
		}
		w, ran := serialRecorder(t, b)
		start(t, w)
		if _, err := mustEnqueue(t, c, echoQ, "later").Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if ran := ran(); fmt.Sprint(ran) != "[later]" {
			t.Fatalf("ran %v; want only [later]", ran)
		}
	})
}

func TestCancelRunningJob(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		c := client.New(b.open(t))
		w := worker.New(b.open(t), fastConfig())
		started, cause := handleUntilDone(w, nil)
		start(t, w)
		job := mustEnqueue(t, c, blockQ, "x", client.MaxAttempts(5))
		<-started
		if _, err := client.OpenJob(client.New(b.open(t)), blockQ, job.ID()).Cancel(ctx); err != nil {
			t.Fatalf("Cancel: %v", err)
		}
		if err := <-cause; !errors.Is(err, weir.ErrJobCancelled) {
			t.Fatalf("handler's cause = %v; want ErrJobCancelled", err)
		}
		_, err := job.Wait(ctx)
		var je *weir.JobError
		if !errors.As(err, &je) || !errors.Is(err, weir.ErrCancelled) || je.Attempt != 1 {
			t.Fatalf("Wait = %v; want cancelled after 1 attempt, not retried", err)
		}
		if _, err := job.Cancel(ctx); !errors.Is(err, weir.ErrJobEnded) {
			t.Fatalf("Cancel of an ended job = %v; want ErrJobEnded", err)
		}
	})
}

func TestCancelCompletedJob(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		c := client.New(b.open(t))
		w := worker.New(b.open(t), fastConfig())
		worker.Handle(w, echoQ, func(ctx context.Context, j *worker.Job[string]) (string, error) { return j.Payload, nil })
		start(t, w)
		job := mustEnqueue(t, c, echoQ, "x")
		if _, err := job.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := job.Cancel(ctx); !errors.Is(err, weir.ErrJobEnded) {
			t.Fatalf("Cancel = %v; want ErrJobEnded", err)
		}
		if got, err := job.Wait(ctx); err != nil || got != "x" {
			t.Fatalf("Wait after a refused cancel = %q, %v", got, err)
		}
	})
}

// Jobs run by priority, lower first, FIFO among equals.
func TestPriorityOrder(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		c := client.New(b.open(t))
		var jobs []*client.Job[string]
		for i, p := range []int{5, -3, 0, 5, -3, 100} {
			jobs = append(jobs, mustEnqueue(t, c, echoQ, fmt.Sprintf("%d:p%d", i, p), client.Priority(p)))
		}
		w, ran := serialRecorder(t, b)
		start(t, w)
		for _, j := range jobs {
			if _, err := j.Wait(ctx); err != nil {
				t.Fatal(err)
			}
		}
		want := "[1:p-3 4:p-3 2:p0 0:p5 3:p5 5:p100]"
		if order := ran(); fmt.Sprint(order) != want {
			t.Fatalf("order = %v; want %v", order, want)
		}
	})
}

// With StrictPriority, a queue of higher weight is drained first.
func TestStrictQueuePriority(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		c := client.New(b.open(t))
		low := client.NewQueue[string, string]("low")
		high := client.NewQueue[string, string]("high")
		var jobs []*client.Job[string]
		for i := range 3 {
			jobs = append(jobs, mustEnqueue(t, c, low, fmt.Sprint("low", i)))
			jobs = append(jobs, mustEnqueue(t, c, high, fmt.Sprint("high", i)))
		}
		var order []string
		var mu sync.Mutex
		h := func(ctx context.Context, j *worker.Job[string]) (string, error) {
			mu.Lock()
			order = append(order, j.Payload)
			mu.Unlock()
			return "", nil
		}
		cfg := fastConfig()
		cfg.Concurrency = 1
		cfg.StrictPriority = true
		cfg.Queues = map[string]int{"low": 1, "high": 2}
		w := worker.New(b.open(t), cfg)
		worker.Handle(w, low, h)
		worker.Handle(w, high, h)
		start(t, w)
		for _, j := range jobs {
			if _, err := j.Wait(ctx); err != nil {
				t.Fatal(err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if want := "[high0 high1 high2 low0 low1 low2]"; fmt.Sprint(order) != want {
			t.Fatalf("order = %v; want %v", order, want)
		}
	})
}

// Weighted queues: every queue is served, none starves.
func TestWeightedQueuesServeAll(t *testing.T) {
	ctx := testCtx(t)
	b := memBackend()
	c := client.New(b.open(t))
	a := client.NewQueue[int, int]("wa")
	z := client.NewQueue[int, int]("wz")
	var jobs []*client.Job[int]
	for i := range 100 {
		jobs = append(jobs, mustEnqueue(t, c, a, i))
	}
	for i := range 10 {
		jobs = append(jobs, mustEnqueue(t, c, z, i))
	}
	cfg := fastConfig()
	cfg.Concurrency = 1
	cfg.Queues = map[string]int{"wa": 5, "wz": 1}
	w := worker.New(b.open(t), cfg)
	var mu sync.Mutex
	var firstZ, doneA int = -1, 0
	var n int
	worker.Handle(w, a, func(ctx context.Context, j *worker.Job[int]) (int, error) {
		mu.Lock()
		n++
		doneA++
		mu.Unlock()
		return 0, nil
	})
	worker.Handle(w, z, func(ctx context.Context, j *worker.Job[int]) (int, error) {
		mu.Lock()
		if firstZ < 0 {
			firstZ = doneA
		}
		n++
		mu.Unlock()
		return 0, nil
	})
	start(t, w)
	for _, j := range jobs {
		if _, err := j.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if n != 110 {
		t.Fatalf("%d jobs ran; want 110", n)
	}
	// A strict order would run all 100 of wa first; by weight, wz comes
	// first with probability 1/6 per claim, so all 100 of wa first has
	// probability (5/6)^100 ≈ 1e-8.
	if firstZ == 100 {
		t.Fatalf("wz first ran after all of wa: not weighted")
	}
}

func TestStartErrors(t *testing.T) {
	s := memBackend().open(t)
	w := worker.New(s, fastConfig())
	if err := w.Start(context.Background()); !errors.Is(err, weir.ErrNoHandlers) {
		t.Fatalf("Start with no handler = %v; want ErrNoHandlers", err)
	}
	cfg := fastConfig()
	cfg.Queues = map[string]int{"echo": 1, "unhandled": 1}
	w = worker.New(s, cfg)
	worker.Handle(w, echoQ, func(ctx context.Context, j *worker.Job[string]) (string, error) { return "", nil })
	if err := w.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "unhandled") {
		t.Fatalf("Start with a queue without handler = %v; want an error naming it", err)
	}
	w = worker.New(s, fastConfig())
	worker.Handle(w, echoQ, func(ctx context.Context, j *worker.Job[string]) (string, error) { return "", nil })
	start(t, w)
	if err := w.Start(context.Background()); !errors.Is(err, weir.ErrRunning) {
		t.Fatalf("second Start = %v; want ErrRunning", err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Handle on a running worker did not panic")
		}
	}()
	worker.Handle(w, addQ, func(ctx context.Context, j *worker.Job[AddArgs]) (int, error) { return 0, nil })
}

func TestDuplicateHandlerPanics(t *testing.T) {
	w := worker.New(memBackend().open(t), fastConfig())
	worker.Handle(w, echoQ, func(ctx context.Context, j *worker.Job[string]) (string, error) { return "", nil })
	defer func() {
		if recover() == nil {
			t.Fatal("second Handle of a queue did not panic")
		}
	}()
	worker.Handle(w, echoQ, func(ctx context.Context, j *worker.Job[string]) (string, error) { return "", nil })
}

// A payload that does not decode fails at once: retrying cannot help.
func TestUndecodablePayloadFails(t *testing.T) {
	ctx := testCtx(t)
	b := memBackend()
	c := client.New(b.open(t))
	// Same queue name, another payload type: what a producer built against
	// an old definition would send.
	old := client.NewQueue[[]string, int]("add")
	job := mustEnqueue(t, c, old, []string{"not", "a", "struct"}, client.MaxAttempts(3))
	w := worker.New(b.open(t), fastConfig())
	worker.Handle(w, addQ, func(ctx context.Context, j *worker.Job[AddArgs]) (int, error) { return 0, nil })
	start(t, w)
	_, err := job.Wait(ctx)
	var je *weir.JobError
	if !errors.As(err, &je) || je.Attempt != 1 || !strings.Contains(je.Message, "payload") {
		t.Fatalf("Wait = %v; want failed at the first attempt on the payload", err)
	}
}

func TestMiddlewareOrderAndObserver(t *testing.T) {
	ctx := testCtx(t)
	b := memBackend()
	c := client.New(b.open(t))
	var mu sync.Mutex
	var trace []string
	mw := func(name string) worker.Middleware {
		return func(next worker.Handler) worker.Handler {
			return func(ctx context.Context, j *worker.JobInfo) error {
				mu.Lock()
				trace = append(trace, name+">"+j.Queue)
				mu.Unlock()
				err := next(ctx, j)
				mu.Lock()
				trace = append(trace, "<"+name)
				mu.Unlock()
				return err
			}
		}
	}
	ev := newEvents()
	cfg := fastConfig()
	cfg.Middleware = []worker.Middleware{mw("outer"), mw("inner")}
	cfg.Observer = ev.observe
	w := worker.New(b.open(t), cfg)
	worker.Handle(w, echoQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		mu.Lock()
		trace = append(trace, "handler")
		mu.Unlock()
		return j.Payload, nil
	})
	start(t, w)
	job := mustEnqueue(t, c, echoQ, "x")
	if _, err := job.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	ev.waitFor(t, ctx, worker.EventSucceeded, job.ID(), 1)
	mu.Lock()
	got := fmt.Sprint(trace)
	mu.Unlock()
	if want := "[outer>echo inner>echo handler <inner <outer]"; got != want {
		t.Fatalf("trace = %v; want %v", got, want)
	}
	var kinds []worker.EventKind
	for _, e := range ev.list() {
		if e.JobID == job.ID() {
			kinds = append(kinds, e.Kind)
		}
	}
	if fmt.Sprint(kinds) != "[started succeeded]" {
		t.Fatalf("events = %v; want [started succeeded]", kinds)
	}
}
