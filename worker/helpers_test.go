package worker_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/worker"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// backend is one shared store that can be opened several times, as separate
// processes would (separate connections to one Redis).
type backend struct {
	name string
	open func(t testing.TB) client.Store
}

// backends lists the stores every end-to-end test runs on.
func backends(t testing.TB) []backend {
	t.Helper()
	bs := []backend{memBackend()}
	return append(bs, redisBackends(t)...)
}

func memBackend() backend {
	s := memstore.New()
	return backend{name: "memstore", open: func(testing.TB) client.Store { return s }}
}

// eachBackend runs f as a subtest on every backend, each with a new store.
func eachBackend(t *testing.T, f func(t *testing.T, b backend)) {
	t.Helper()
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) { f(t, b) })
	}
}

// testCtx is a context that bounds a test (a safety net, never asserted).
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// fastConfig is a worker config with short intervals, so that cancels and
// lease news arrive soon. No test asserts on timing.
func fastConfig() worker.Config {
	return worker.Config{
		Concurrency:       4,
		Lease:             10 * time.Second,
		HeartbeatInterval: 5 * time.Millisecond,
		SweepInterval:     20 * time.Millisecond,
	}
}

// start starts w and stops it (with no grace) when the test ends.
func start(t *testing.T, w *worker.Worker) {
	t.Helper()
	if err := w.Start(context.Background()); err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { stopNow(t, w) })
}

func stopNow(t *testing.T, w *worker.Worker) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.Stop(ctx); err != nil {
		t.Errorf("stop: %v", err)
	}
}

// events collects a worker's events.
type events struct {
	mu      sync.Mutex
	all     []worker.Event
	changed chan struct{} // closed at the next event
}

func newEvents() *events { return &events{changed: make(chan struct{})} }

func (e *events) observe(ev worker.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
	close(e.changed)
	e.changed = make(chan struct{})
}

func (e *events) list() []worker.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]worker.Event(nil), e.all...)
}

func match(ev worker.Event, kind worker.EventKind, jobID string) bool {
	return ev.Kind == kind && (jobID == "" || ev.JobID == jobID)
}

func (e *events) count(kind worker.EventKind, jobID string) int {
	n := 0
	for _, ev := range e.list() {
		if match(ev, kind, jobID) {
			n++
		}
	}
	return n
}

// waitFor blocks until n events of kind for jobID (any job when empty)
// came, and returns the n-th.
func (e *events) waitFor(t *testing.T, ctx context.Context, kind worker.EventKind, jobID string, n int) worker.Event {
	t.Helper()
	for {
		e.mu.Lock()
		seen := 0
		for _, ev := range e.all {
			if match(ev, kind, jobID) {
				seen++
				if seen == n {
					e.mu.Unlock()
					return ev
				}
			}
		}
		ch := e.changed
		e.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("waiting for %d %s events of %q: %v; got %v", n, kind, jobID, ctx.Err(), e.list())
		}
	}
}

// Queues used by the tests.
type AddArgs struct {
	A, B int
}

var (
	addQ   = client.NewQueue[AddArgs, int]("add")
	echoQ  = client.NewQueue[string, string]("echo")
	blockQ = client.NewQueue[string, string]("block")
)

// handleUntilDone registers for blockQ on w a handler that closes started
// when it runs, waits for its context to end, sends the context's cause on
// cause (buffered) and returns what ret returns ("", ctx.Err() when ret is
// nil). It is for one job: a second would close started again.
func handleUntilDone(w *worker.Worker, ret func(ctx context.Context) (string, error)) (started <-chan struct{}, cause <-chan error) {
	s, c := make(chan struct{}), make(chan error, 1)
	worker.Handle(w, blockQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		close(s)
		<-ctx.Done()
		c <- context.Cause(ctx)
		if ret != nil {
			return ret(ctx)
		}
		return "", ctx.Err()
	})
	return s, c
}

// serialRecorder returns a worker of b that runs one job at a time and
// handles echoQ by recording each payload, and a func that returns the
// payloads run so far, in the order they ran.
func serialRecorder(t *testing.T, b backend) (*worker.Worker, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var ran []string
	cfg := fastConfig()
	cfg.Concurrency = 1
	w := worker.New(b.open(t), cfg)
	worker.Handle(w, echoQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		mu.Lock()
		ran = append(ran, j.Payload)
		mu.Unlock()
		return "", nil
	})
	return w, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(ran)
	}
}

// chainWorkflow returns a workflow of n tasks on q, t0 to t(n-1), each
// after the one before, task i's payload i.
func chainWorkflow(q client.Queue[int, int], n int) *client.Workflow {
	wf := client.NewWorkflow()
	var prev *client.Task[int]
	for i := range n {
		t := client.AddTask(wf, fmt.Sprint("t", i), q, i)
		if prev != nil {
			t.After(prev)
		}
		prev = t
	}
	return wf
}
