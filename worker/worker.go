package worker

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
)

// Worker claims jobs from a store and runs them with the handlers
// registered by Handle. Any number of workers, in any number of processes,
// can share a store; together with the store they are all that runs: there
// is no scheduler (each worker expires leases and readies due jobs itself).
//
// A worker holds its jobs by lease, and extends the leases of all its
// running jobs in one heartbeat call per interval. Finishing a job and
// claiming the next one is one store call, made by the goroutine that ran
// the job; with up to two such calls in flight, the outcomes of the jobs
// that end meanwhile go out together in the next call, which claims a job
// for every slot it frees and every slot free (up to Limits.MaxBatch), so
// a busy worker makes one round trip per many jobs. Stop (or the end of Run's
// context) shuts it down gracefully: no more claims, running jobs get a
// deadline, and the jobs still unfinished then are handed back to their
// queues without counting an attempt.
type Worker struct {
	store client.Store
	cfg   Config
	log   *slog.Logger
	id    string // Config.ID or drawn (registry.go)

	mu       sync.Mutex
	handlers map[string]Handler
	typed    map[string]func() jobRun // Handle's handlers, for runs without middleware (execute.go)
	cur      *run
}

// New returns a worker of store with cfg (defaults filled in). Register
// handlers with Handle, then Start or Run it.
func New(store client.Store, cfg Config) *Worker {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 10
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 30 * time.Second
	}
	cfg.Lease = max(cfg.Lease.Truncate(time.Millisecond), time.Millisecond)
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = max(cfg.Lease/3, time.Millisecond)
	}
	if cfg.SweepInterval <= 0 {
		cfg.SweepInterval = time.Second
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 30 * time.Second
	}
	if cfg.ScheduleRefresh <= 0 {
		cfg.ScheduleRefresh = 10 * time.Second
	}
	if cfg.FinishCalls <= 0 {
		cfg.FinishCalls = defaultFinishCalls
	}
	if cfg.Limits == (weir.Limits{}) {
		if r, ok := store.(engine.ConfigReporter); ok {
			cfg.Limits = r.Config().Limits
		}
	}
	if cfg.Limits == (weir.Limits{}) {
		cfg.Limits = weir.DefaultLimits()
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	id := cfg.ID
	if id == "" {
		id = newWorkerID()
	}
	return &Worker{store: store, cfg: cfg, log: log, id: id, handlers: map[string]Handler{}, typed: map[string]func() jobRun{}}
}

// register registers h as the handler of queue's jobs; typed, when not
// nil, runs the same handler without the JobInfo copy that h makes (Handle
// gives it; a run without middleware uses it: execute.go).
func (w *Worker) register(queue string, h Handler, typed func() jobRun) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cur != nil {
		return fmt.Errorf("%w: cannot register a handler of queue %q", weir.ErrRunning, queue)
	}
	if _, dup := w.handlers[queue]; dup {
		return fmt.Errorf("%w: queue %q", weir.ErrHandlerExists, queue)
	}
	w.handlers[queue] = h
	if typed != nil {
		w.typed[queue] = typed
	}
	return nil
}

// Run starts the worker, runs it until ctx is done, then stops it
// gracefully, giving running jobs Config.ShutdownTimeout to finish. It
// returns nil after a graceful stop, or Start's error.
func (w *Worker) Run(ctx context.Context) error {
	if err := w.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.cfg.ShutdownTimeout)
	defer cancel()
	return w.Stop(stopCtx)
}

// Start starts claiming and running jobs in the background and returns. The
// values of ctx (not its cancellation) are passed on to the handlers'
// contexts; stop the worker with Stop. A stopped worker can be started
// again. On a store that keeps a worker registry (engine.WorkerRegistry)
// Start first writes the worker's record, one call bounded by ctx and
// by 5 seconds: a store that does not answer delays Start that long at
// most (the failure is logged; the next heartbeat writes the record).
func (w *Worker) Start(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cur != nil {
		return weir.ErrRunning
	}
	if len(w.handlers) == 0 {
		return weir.ErrNoHandlers
	}
	if err := validWorkerID(w.id); err != nil {
		return err
	}
	weights := w.cfg.Queues
	if weights == nil {
		weights = map[string]int{}
		for q := range w.handlers {
			weights[q] = 1
		}
	}
	var queues []queueWeight
	for q, wt := range weights {
		if _, ok := w.handlers[q]; !ok {
			return fmt.Errorf("weir: queue %q is in Config.Queues but has no handler", q)
		}
		if wt <= 0 {
			return fmt.Errorf("weir: queue %q has weight %d; weights are positive", q, wt)
		}
		queues = append(queues, queueWeight{q, wt})
	}
	var sc engine.Scheduler
	if w.cfg.Schedules {
		var ok bool
		if sc, ok = w.store.(engine.Scheduler); !ok {
			return fmt.Errorf("weir: Config.Schedules is set but the store (%T) keeps no schedules", w.store)
		}
	}
	slices.SortFunc(queues, func(a, b queueWeight) int {
		return cmp.Or(cmp.Compare(b.weight, a.weight), cmp.Compare(a.name, b.name))
	})
	handlers := make(map[string]handlerEntry, len(w.handlers))
	for q, h := range w.handlers {
		for i := len(w.cfg.Middleware) - 1; i >= 0; i-- {
			h = w.cfg.Middleware[i](h)
		}
		e := handlerEntry{h: h}
		if len(w.cfg.Middleware) == 0 {
			e.typed = w.typed[q]
		}
		handlers[q] = e
	}
	r := &run{
		w: w, cfg: &w.cfg, store: w.store, log: w.log,
		queues: queues, handlers: handlers,
		slots:     make(chan struct{}, w.cfg.Concurrency),
		active:    map[string]*active{},
		fetchDone: make(chan struct{}),
		handoff:   make(chan work),
		poolDone:  make(chan struct{}),
		stopped:   make(chan struct{}),
	}
	if w.cfg.StrictPriority || len(queues) == 1 {
		for _, q := range queues {
			r.fixed = append(r.fixed, q.name)
		}
	}
	r.claimCtx, r.stopClaims = context.WithCancel(context.WithoutCancel(ctx))
	r.loopCtx, r.stopLoops = context.WithCancel(context.WithoutCancel(ctx))
	r.jobCtx = context.WithoutCancel(ctx)
	// registered before the first claim, so that a worker that runs jobs
	// is listed (one call, bounded; a failure is logged and the next
	// heartbeat writes the record)
	if r.registrar = newRegistrar(r, w.id, time.Now()); r.registrar != nil {
		rctx, cancel := context.WithTimeout(ctx, registerTimeout)
		r.beatWorker(rctx)
		cancel()
	}
	r.loops.Add(2)
	go r.fetch()
	go r.heartbeat()
	go r.sweep()
	if sw, ok := w.store.(engine.StopWatcher); ok {
		r.loops.Add(1)
		go r.watchStops(sw)
	}
	if sc != nil {
		r.loops.Add(1)
		go r.fireSchedules(sc)
	}
	w.cur = r
	return nil
}

// Stop stops the worker gracefully: it stops claiming at once, lets the
// running jobs finish until ctx is done, then cancels their contexts (with
// cause weir.ErrShutdown) and hands back to their queues, without counting an
// attempt, the jobs whose handlers then return an error. It returns once
// every handler has returned and every goroutine of the worker has ended,
// so a handler that ignores its context delays it. Stop of a worker that is
// not running does nothing.
func (w *Worker) Stop(ctx context.Context) error {
	w.mu.Lock()
	r := w.cur
	w.mu.Unlock()
	if r == nil {
		return nil
	}
	r.stop(ctx)
	r.deregister(ctx)
	w.mu.Lock()
	if w.cur == r {
		w.cur = nil
	}
	w.mu.Unlock()
	return nil
}

type queueWeight struct {
	name   string
	weight int
}

// run is one Start..Stop of a worker.
type run struct {
	w        *Worker
	cfg      *Config
	store    engine.Store
	log      *slog.Logger
	queues   []queueWeight // by weight, highest first
	fixed    []string      // the order of every claim, when it never changes
	handlers map[string]handlerEntry
	// registrar keeps the worker's registry record; nil when the store
	// keeps no registry (registry.go)
	registrar *registrar

	claimCtx   context.Context // the fetcher's claims; done when Stop begins
	stopClaims context.CancelFunc
	loopCtx    context.Context // heartbeats, sweeps, finishes; done at the end
	stopLoops  context.CancelFunc
	jobCtx     context.Context // the parent of the handlers' contexts

	slots     chan struct{} // one token per running job (or slot being claimed)
	fetchDone chan struct{}
	loops     sync.WaitGroup // heartbeat and sweep
	runners   sync.WaitGroup // claimed jobs whose outcome is not stored yet
	handoff   chan work      // to an idle runner goroutine (pool.go)
	pool      sync.WaitGroup // runner goroutines
	poolDone  chan struct{}  // closed once every job's outcome is stored

	stopOnce sync.Once
	stopped  chan struct{} // closed when stop has ended

	mu       sync.Mutex
	stopping bool
	active   map[string]*active

	fmu      sync.Mutex
	pending  []finished   // outcomes waiting for a finish call
	inFlight int          // finish calls running (at most cfg.FinishCalls)
	spare    [][]finished // emptied batch slices, for reuse (finish.go)
}

// active is a running job.
type active struct {
	token  string
	cancel context.CancelCauseFunc
}

// stop runs once; a concurrent second call waits for the first.
func (r *run) stop(ctx context.Context) {
	r.stopOnce.Do(func() {
		r.stopNow(ctx)
		close(r.stopped)
	})
	<-r.stopped
}

func (r *run) stopNow(ctx context.Context) {
	r.mu.Lock()
	r.stopping = true
	r.mu.Unlock()
	r.stopClaims()
	<-r.fetchDone // no runner is added after this
	done := make(chan struct{})
	go func() {
		r.runners.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		r.mu.Lock()
		for _, a := range r.active {
			a.cancel(weir.ErrShutdown)
		}
		r.mu.Unlock()
		<-done
	}
	// every job's outcome is stored, and no work is handed out any more
	close(r.poolDone)
	r.pool.Wait()
	r.stopLoops()
	r.loops.Wait()
}
