package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/weirflow/weir/engine"
)

// Config configures a Worker. Zero fields take the defaults below.
type Config struct {
	// Queues maps the queues to claim from to their weights. Every queue
	// listed needs a handler. Nil means every queue with a handler, weight 1.
	// Each claim tries the queues in an order drawn at random by weight
	// (a queue of weight 3 comes first three times as often as one of
	// weight 1), or, with StrictPriority, by weight, highest first (then by
	// name), so a queue is served only when those above it are empty.
	Queues         map[string]int
	StrictPriority bool
	// Concurrency is how many jobs run at once. Default 10.
	Concurrency int
	// Lease is how long the store holds a claimed job for this worker
	// without news from it; heartbeats extend it. A worker that dies loses
	// its jobs to another after at most this long. Default 30s.
	Lease time.Duration
	// HeartbeatInterval is how often the worker extends the leases of all
	// its running jobs, in one store call, and learns which were cancelled.
	// It is also how soon a cancel reaches a running handler. Default
	// Lease/3.
	HeartbeatInterval time.Duration
	// SweepInterval is how often (with ±20% jitter) the worker asks the
	// store to expire overdue leases and ready the delayed jobs that came
	// due, in every queue. Default 1s.
	SweepInterval time.Duration
	// ShutdownTimeout is how long Run lets running jobs finish after its
	// context is done, before cancelling them. Default 30s.
	ShutdownTimeout time.Duration
	// Limits are the store's limits (result size, backoff cap, batch size).
	// Zero means engine.DefaultLimits().
	Limits engine.Limits
	// Middleware wraps every handler, the first outermost.
	Middleware []Middleware
	// Observer, when set, receives the worker's events.
	Observer Observer
	// Logger gets the store errors the worker retries. Default
	// slog.Default().
	Logger *slog.Logger
}

// claimWait bounds how long one blocking claim waits for a job before the
// worker claims again (a claim returns as soon as a job comes).
const claimWait = 5 * time.Second

// Errors of Start.
var (
	// ErrRunning: Start was called on a running worker.
	ErrRunning = errors.New("weir: worker already running")
	// ErrNoHandlers: Start was called with no handler registered.
	ErrNoHandlers = errors.New("weir: worker has no handlers")
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
	store engine.Store
	cfg   Config
	log   *slog.Logger

	mu       sync.Mutex
	handlers map[string]Handler
	cur      *run
}

// New returns a worker of store with cfg (defaults filled in). Register
// handlers with Handle, then Start or Run it.
func New(store engine.Store, cfg Config) *Worker {
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
	if cfg.Limits == (engine.Limits{}) {
		cfg.Limits = engine.DefaultLimits()
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Worker{store: store, cfg: cfg, log: log, handlers: map[string]Handler{}}
}

func (w *Worker) register(queue string, h Handler) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cur != nil {
		panic("weir: Handle called on a running worker")
	}
	if _, dup := w.handlers[queue]; dup {
		panic(fmt.Sprintf("weir: queue %q already has a handler", queue))
	}
	w.handlers[queue] = h
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
// again.
func (w *Worker) Start(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cur != nil {
		return ErrRunning
	}
	if len(w.handlers) == 0 {
		return ErrNoHandlers
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
	slices.SortFunc(queues, func(a, b queueWeight) int {
		return cmp.Or(cmp.Compare(b.weight, a.weight), cmp.Compare(a.name, b.name))
	})
	handlers := make(map[string]Handler, len(w.handlers))
	for q, h := range w.handlers {
		for i := len(w.cfg.Middleware) - 1; i >= 0; i-- {
			h = w.cfg.Middleware[i](h)
		}
		handlers[q] = h
	}
	r := &run{
		w: w, cfg: &w.cfg, store: w.store, log: w.log,
		queues: queues, handlers: handlers,
		slots:     make(chan struct{}, w.cfg.Concurrency),
		active:    map[string]*active{},
		fetchDone: make(chan struct{}),
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
	r.loops.Add(2)
	go r.fetch()
	go r.heartbeat()
	go r.sweep()
	if sw, ok := w.store.(engine.StopWatcher); ok {
		r.loops.Add(1)
		go r.watchStops(sw)
	}
	w.cur = r
	return nil
}

// Stop stops the worker gracefully: it stops claiming at once, lets the
// running jobs finish until ctx is done, then cancels their contexts (with
// cause ErrShutdown) and hands back to their queues, without counting an
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
	handlers map[string]Handler

	claimCtx   context.Context // the fetcher's claims; done when Stop begins
	stopClaims context.CancelFunc
	loopCtx    context.Context // heartbeats, sweeps, finishes; done at the end
	stopLoops  context.CancelFunc
	jobCtx     context.Context // the parent of the handlers' contexts

	slots     chan struct{} // one token per running job (or slot being claimed)
	fetchDone chan struct{}
	loops     sync.WaitGroup // heartbeat and sweep
	runners   sync.WaitGroup // claimed jobs whose outcome is not stored yet

	stopOnce sync.Once
	stopped  chan struct{} // closed when stop has ended

	mu       sync.Mutex
	stopping bool
	active   map[string]*active

	fmu      sync.Mutex
	pending  []finished // outcomes waiting for a finish call
	inFlight int        // finish calls running (at most maxInFlight)
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
			a.cancel(ErrShutdown)
		}
		r.mu.Unlock()
		<-done
	}
	r.stopLoops()
	r.loops.Wait()
}

// claimParams returns a claim of up to n jobs, with the queues in this
// claim's order.
func (r *run) claimParams(n int, wait time.Duration) engine.ClaimParams {
	return engine.ClaimParams{Queues: r.order(), Max: n, Lease: r.cfg.Lease, Wait: wait}
}

// order returns the queues in the order one claim tries them; the caller
// must not change it.
func (r *run) order() []string {
	if r.fixed != nil {
		return r.fixed
	}
	out := make([]string, 0, len(r.queues))
	left := slices.Clone(r.queues)
	total := 0
	for _, q := range left {
		total += q.weight
	}
	for len(left) > 0 {
		x := rand.IntN(total)
		i := 0
		for ; x >= left[i].weight; i++ {
			x -= left[i].weight
		}
		out = append(out, left[i].name)
		total -= left[i].weight
		left = slices.Delete(left, i, i+1)
	}
	return out
}

// fetch claims jobs while slots are free, blocking in the store while there
// is nothing to claim, and starts a runner per claimed job.
func (r *run) fetch() {
	defer close(r.fetchDone)
	retry := newBackoff()
	for {
		select {
		case r.slots <- struct{}{}:
		case <-r.claimCtx.Done():
			return
		}
		n := 1
	more:
		for n < r.cfg.Limits.MaxBatch {
			select {
			case r.slots <- struct{}{}:
				n++
			default:
				break more
			}
		}
		claimed, err := r.store.Claim(r.claimCtx, r.claimParams(n, claimWait))
		if err != nil {
			claimed = nil
		}
		for range n - len(claimed) {
			<-r.slots
		}
		for _, c := range claimed {
			r.runners.Add(1)
			go r.runner(c)
		}
		if err != nil {
			if r.claimCtx.Err() != nil {
				return
			}
			r.log.Warn("weir: claim failed", "error", err)
			if !retry.sleep(r.claimCtx) {
				return
			}
			continue
		}
		retry.reset()
	}
}

// runner runs claimed jobs on the slot it holds: the claimed one, then,
// while storing an outcome hands it a job, that job. A job counts in
// r.runners from its claim until its outcome is stored. A job whose lease
// was lost has nothing to finish: its slot is freed at once.
func (r *run) runner(c engine.Claimed) {
	for {
		o, start, ok := r.execute(c)
		if !ok {
			<-r.slots
			r.runners.Done()
			return
		}
		next, ok := r.complete(finished{c: c, o: o, start: start})
		if !ok {
			return
		}
		c = next
	}
}

// execute runs one claimed job and returns its outcome; ok is false when
// the lease was lost, so there is nothing to finish.
func (r *run) execute(c engine.Claimed) (o engine.Outcome, start time.Time, ok bool) {
	j := &c.Job
	o = engine.Outcome{JobID: j.ID, Token: c.Lease.Token}
	h := r.handlers[j.Queue]
	ctx, cancel := context.WithCancelCause(r.jobCtx)
	defer cancel(nil)
	a := &active{token: c.Lease.Token, cancel: cancel}
	r.mu.Lock()
	if r.stopping || h == nil {
		r.mu.Unlock()
		o.Kind = engine.OutcomeReleased
		return o, time.Now(), true
	}
	r.active[j.ID] = a
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		if r.active[j.ID] == a {
			delete(r.active, j.ID)
		}
		r.mu.Unlock()
	}()

	hctx := ctx
	if j.Timeout > 0 {
		var cancelT context.CancelFunc
		hctx, cancelT = context.WithTimeoutCause(ctx, j.Timeout, ErrTimeout)
		defer cancelT()
	}
	info := &JobInfo{
		ID: j.ID, Queue: j.Queue, Workflow: j.Workflow, Task: j.Task, Undo: j.Undo,
		Attempt: j.Attempt, MaxAttempts: j.MaxAttempts, Expiries: j.Expiries, Deps: c.Deps, RawPayload: j.Payload,
	}
	r.observe(Event{Kind: EventStarted, JobID: j.ID, Queue: j.Queue, Workflow: j.Workflow, Task: j.Task, Attempt: j.Attempt})
	start = time.Now()
	err := call(hctx, h, info)
	var pe *panicError
	panicked := errors.As(err, &pe)
	cause := context.Cause(hctx)
	switch {
	case errors.Is(context.Cause(ctx), ErrLeaseLost):
		r.observe(Event{Kind: EventLeaseLost, JobID: j.ID, Queue: j.Queue, Workflow: j.Workflow, Task: j.Task, Attempt: j.Attempt, Duration: time.Since(start)})
		return o, start, false
	case err == nil:
		o.Kind = engine.OutcomeCompleted
		o.Result = info.result
		if len(o.Result) > r.cfg.Limits.MaxResult {
			o = failNow(o, fmt.Sprintf("result is %d bytes, over the limit of %d", len(o.Result), r.cfg.Limits.MaxResult))
		}
	case panicked:
		o.Kind = engine.OutcomeFailed
		o.Error = err.Error()
		o.RetryAfter = r.retryAfter(j)
	case errors.Is(cause, ErrJobCancelled):
		o.Kind = engine.OutcomeCancelled
		o.Error = engine.ReasonTextJobCancelled
		if !errors.Is(err, context.Canceled) {
			o.Error = err.Error()
		}
	case errors.Is(cause, ErrShutdown):
		o.Kind = engine.OutcomeReleased
	default:
		o.Kind = engine.OutcomeFailed
		o.Error = err.Error()
		if errors.Is(cause, ErrTimeout) && errors.Is(err, context.DeadlineExceeded) {
			o.Error = fmt.Sprintf("timeout after %v", j.Timeout)
		}
		var nr *nonRetryable
		if errors.As(err, &nr) {
			o.NonRetryable = true
		} else {
			o.RetryAfter = r.retryAfter(j)
		}
	}
	return o, start, true
}

func failNow(o engine.Outcome, reason string) engine.Outcome {
	return engine.Outcome{JobID: o.JobID, Token: o.Token, Kind: engine.OutcomeFailed, Error: reason, NonRetryable: true}
}

// call runs h, turning a panic into a *panicError that carries the stack.
func call(ctx context.Context, h Handler, info *JobInfo) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &panicError{fmt.Sprintf("panic: %v\n\n%s", v, debug.Stack())}
		}
	}()
	return h(ctx, info)
}

type panicError struct{ msg string }

func (e *panicError) Error() string { return e.msg }

// retryAfter is the delay before retrying j: its backoff doubled per
// attempt made, capped at MaxBackoff, plus jitter of up to a quarter of it
// above (never below: the documented delay is the least a retry waits, and
// the cap still holds); zero when no attempt remains.
func (r *run) retryAfter(j *engine.Job) time.Duration {
	// the attempts that count: lease expiries within the job's budget
	// cost none (engine.JobSpec.MaxExpiries)
	counted := j.Attempt - j.Expiries
	if counted >= j.MaxAttempts {
		return 0
	}
	limit := r.cfg.Limits.MaxBackoff
	d := j.Backoff
	if d <= 0 {
		d = engine.DefaultBackoff
	}
	for i := 1; i < counted && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	d += rand.N(d/4 + 1)
	// whole milliseconds, rounded up, so that truncation never undercuts d
	d = (d + time.Millisecond - 1).Truncate(time.Millisecond)
	return min(max(d, time.Millisecond), limit)
}

// finished is a job whose handler returned; its outcome waits to be
// stored, and it still holds its slot.
type finished struct {
	c     engine.Claimed
	o     engine.Outcome
	start time.Time
}

// maxInFlight is how many finish calls a worker keeps in flight at once;
// outcomes that come while they run go out together in the next call.
const maxInFlight = 2

// complete queues f's outcome for storing. When fewer than maxInFlight
// finish calls run, the calling goroutine stores every queued outcome
// itself (no hand-off), in one call that also claims jobs for the freed
// slots, and keeps going while outcomes queued meanwhile wait; it returns
// one claimed job to run next (the others get runners of their own). Else
// it returns at once: a running call takes the outcome when it returns.
func (r *run) complete(f finished) (engine.Claimed, bool) {
	r.fmu.Lock()
	r.pending = append(r.pending, f)
	if r.inFlight >= maxInFlight {
		r.fmu.Unlock()
		return engine.Claimed{}, false
	}
	r.inFlight++
	next, ok := r.flush()
	return next, ok
}

// flush stores the queued outcomes, batch by batch, with r.fmu held on
// entry and released on return, counted in r.inFlight until then. As soon
// as a call hands it a job it returns that job and leaves what is still
// queued to a new goroutine, so the job starts without waiting for the
// next call.
func (r *run) flush() (engine.Claimed, bool) {
	for len(r.pending) > 0 {
		n := min(len(r.pending), r.cfg.Limits.MaxBatch)
		batch := slices.Clone(r.pending[:n])
		r.pending = append(r.pending[:0], r.pending[n:]...)
		r.fmu.Unlock()
		claimed := r.finishBatch(batch)
		for _, c := range claimed[min(1, len(claimed)):] {
			go r.runner(c)
		}
		r.fmu.Lock()
		if len(claimed) > 0 {
			if len(r.pending) > 0 {
				go func() {
					r.fmu.Lock()
					if c, ok := r.flush(); ok {
						r.runner(c)
					}
				}()
			} else {
				r.inFlight--
			}
			r.fmu.Unlock()
			return claimed[0], true
		}
	}
	r.inFlight--
	r.fmu.Unlock()
	return engine.Claimed{}, false
}

// finishBatch stores a batch of outcomes and, unless the worker is
// stopping, claims in the same call up to one job per slot the batch holds
// plus the slots free now; it returns the claimed jobs (counted in
// r.runners, each holding a slot) and frees the slots left over. A store
// error is retried (without the claim) until the leases would have expired.
func (r *run) finishBatch(batch []finished) []engine.Claimed {
	defer func() {
		for range batch {
			r.runners.Done()
		}
	}()
	slots := len(batch)
	p := engine.FinishParams{Outcomes: make([]engine.Outcome, len(batch))}
	for i, f := range batch {
		p.Outcomes[i] = f.o
	}
	r.mu.Lock()
	stopping := r.stopping
	r.mu.Unlock()
	if !stopping {
	more:
		for slots < r.cfg.Limits.MaxBatch {
			select {
			case r.slots <- struct{}{}:
				slots++
			default:
				break more
			}
		}
		cp := r.claimParams(slots, 0)
		p.Claim = &cp
	}
	res, err := r.finishRetry(&p)
	var claimed []engine.Claimed
	switch {
	case err == nil:
		for i, f := range batch {
			r.settled(f.c, p.Outcomes[i], res.Settled[i], time.Since(f.start))
		}
		claimed = res.Claimed
	case errors.Is(err, engine.ErrInvalid):
		// An outcome was refused (a lower result limit than ours): store
		// them one by one, so that only that one becomes a failure.
		for _, f := range batch {
			r.finishOne(f)
		}
	default:
		for _, f := range batch {
			r.log.Error("weir: finish failed; the job's lease will expire", "job", f.o.JobID, "error", err)
		}
	}
	if len(claimed) > slots { // a store may hand out more
		for _, extra := range claimed[slots:] {
			r.release(extra)
		}
		claimed = claimed[:slots]
	}
	r.runners.Add(len(claimed)) // before the batch's Done calls: the count never passes zero
	for range slots - len(claimed) {
		<-r.slots
	}
	return claimed
}

// finishRetry runs p, retrying a store error (without the claim: one whose
// reply was lost must not be repeated) until the lease would have expired.
// It returns ErrInvalid and ErrProtocol at once.
func (r *run) finishRetry(p *engine.FinishParams) (engine.FinishResult, error) {
	retry := newBackoff()
	giveUp := time.Now().Add(r.cfg.Lease)
	for {
		res, err := r.store.Finish(r.loopCtx, *p)
		if err == nil {
			if len(res.Settled) != len(p.Outcomes) {
				return res, fmt.Errorf("%w: %d settled for %d outcomes", engine.ErrProtocol, len(res.Settled), len(p.Outcomes))
			}
			return res, nil
		}
		p.Claim = nil
		if errors.Is(err, engine.ErrInvalid) || errors.Is(err, engine.ErrProtocol) || time.Now().After(giveUp) {
			return res, err
		}
		r.log.Warn("weir: finish failed, retrying", "jobs", len(p.Outcomes), "error", err)
		if !retry.sleep(r.loopCtx) {
			return res, err
		}
	}
}

// finishOne stores one outcome without a claim; a completed outcome whose
// result the store refuses is stored as a failure instead.
func (r *run) finishOne(f finished) {
	o := f.o
	p := engine.FinishParams{Outcomes: []engine.Outcome{o}}
	for {
		res, err := r.finishRetry(&p)
		if err == nil {
			r.settled(f.c, o, res.Settled[0], time.Since(f.start))
			return
		}
		if errors.Is(err, engine.ErrInvalid) && o.Kind == engine.OutcomeCompleted {
			// The store refused the result (a lower limit than ours).
			o = failNow(o, "result refused by the store: "+err.Error())
			p.Outcomes[0] = o
			continue
		}
		r.log.Error("weir: finish failed; the job's lease will expire", "job", o.JobID, "error", err)
		return
	}
}

// release hands a job back unrun.
func (r *run) release(c engine.Claimed) {
	o := engine.Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeReleased}
	_ = r.finishNoClaim(c, o)
}

func (r *run) finishNoClaim(c engine.Claimed, o engine.Outcome) error {
	res, err := r.store.Finish(r.loopCtx, engine.FinishParams{Outcomes: []engine.Outcome{o}})
	if err != nil {
		r.log.Warn("weir: release failed; the job's lease will expire", "job", o.JobID, "error", err)
		return err
	}
	r.settled(c, o, res.Settled[0], 0)
	return nil
}

// settled reports what finishing c did.
func (r *run) settled(c engine.Claimed, o engine.Outcome, s engine.Settled, d time.Duration) {
	if r.cfg.Observer == nil {
		return
	}
	j := &c.Job
	e := Event{JobID: j.ID, Queue: j.Queue, Workflow: j.Workflow, Task: j.Task, Attempt: j.Attempt, Duration: d}
	switch {
	case s.Err != nil:
		e.Kind = EventLeaseLost
	case o.Kind == engine.OutcomeReleased && s.State == engine.Queued:
		e.Kind = EventReleased
	default:
		e.Kind, e.Err, e.RunAt = stateEvent(s), o.Error, s.RunAt
	}
	r.observe(e)
	r.consequences(s)
}

func stateEvent(s engine.Settled) EventKind {
	switch s.State {
	case engine.Completed:
		return EventSucceeded
	case engine.Queued:
		return EventRetried
	case engine.Failed:
		return EventFailed
	default:
		return EventCancelled
	}
}

// consequences reports the pushes and the workflow end of a settle. The
// settled job's own push (a release, or a lease expiry within its budget,
// queues it again at once) is its retry, reported as such, not a
// promotion.
func (r *run) consequences(s engine.Settled) {
	for _, p := range s.Pushed {
		if p.JobID == s.JobID {
			continue
		}
		r.observe(Event{Kind: EventPromoted, JobID: p.JobID, Queue: p.Queue})
	}
	if s.WorkflowEnded {
		wf, _, _ := cutTaskJobID(s.JobID)
		r.observe(Event{Kind: EventWorkflowEnded, Workflow: wf, WorkflowState: s.WorkflowState})
	}
}

// cutTaskJobID splits a task or undo job ID (engine.TaskJobID,
// engine.UndoJobID) into workflow and task; plain job IDs have no '/'.
func cutTaskJobID(id string) (wf, task string, ok bool) {
	wf, rest, ok := strings.Cut(id, "/")
	if !ok {
		return "", "", false
	}
	task, _, _ = strings.Cut(rest, "/")
	return wf, task, true
}

func (r *run) observe(e Event) {
	if r.cfg.Observer != nil {
		r.cfg.Observer(e)
	}
}

// heartbeat extends the leases of every running job, one call per interval
// (split by the batch limit), and cancels the handlers of the jobs that
// were cancelled or whose lease was lost.
func (r *run) heartbeat() {
	defer r.loops.Done()
	t := time.NewTicker(r.cfg.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-r.loopCtx.Done():
			return
		case <-t.C:
		}
		r.beat()
	}
}

// watchStops answers the store's stop notices (engine.StopWatcher): a
// cancel of a job this worker runs makes it heartbeat that lease at once,
// so the handler's context ends now rather than at the next heartbeat; a
// (re)connection, after which notices may have been missed, makes it
// heartbeat every lease.
func (r *run) watchStops(sw engine.StopWatcher) {
	defer r.loops.Done()
	err := sw.WatchStops(r.loopCtx, func(ids []string) {
		if ids == nil {
			r.beat()
			return
		}
		r.mu.Lock()
		var refs []engine.LeaseRef
		for _, id := range ids {
			if a := r.active[id]; a != nil {
				refs = append(refs, engine.LeaseRef{JobID: id, Token: a.token})
			}
		}
		r.mu.Unlock()
		r.beatLeases(refs)
	})
	if err != nil && r.loopCtx.Err() == nil {
		r.log.Warn("weir: watching for cancels stopped; heartbeats still deliver them", "error", err)
	}
}

// beat heartbeats every running job's lease.
func (r *run) beat() {
	r.mu.Lock()
	refs := make([]engine.LeaseRef, 0, len(r.active))
	for id, a := range r.active {
		refs = append(refs, engine.LeaseRef{JobID: id, Token: a.token})
	}
	r.mu.Unlock()
	r.beatLeases(refs)
}

// beatLeases extends refs (in calls of at most the batch limit) and
// cancels the handlers of the jobs that were cancelled or whose lease was
// lost.
func (r *run) beatLeases(refs []engine.LeaseRef) {
	for len(refs) > 0 {
		n := min(len(refs), r.cfg.Limits.MaxBatch)
		chunk := refs[:n]
		refs = refs[n:]
		st, err := r.store.Heartbeat(r.loopCtx, engine.HeartbeatParams{Leases: chunk, Extend: r.cfg.Lease})
		if err != nil {
			if r.loopCtx.Err() == nil {
				r.log.Warn("weir: heartbeat failed", "leases", len(chunk), "error", err)
			}
			continue
		}
		r.mu.Lock()
		for i, s := range st {
			if i >= len(chunk) {
				break
			}
			a := r.active[chunk[i].JobID]
			if a == nil || a.token != chunk[i].Token {
				continue // finished meanwhile
			}
			switch {
			case s.Lost:
				a.cancel(ErrLeaseLost)
			case s.Cancel:
				a.cancel(ErrJobCancelled)
			}
		}
		r.mu.Unlock()
	}
}

// sweep expires overdue leases and readies due delayed jobs, in every
// queue, once per SweepInterval (jittered), in bounded calls.
func (r *run) sweep() {
	defer r.loops.Done()
	const perCall, callsPerSweep = 100, 10
	for {
		d := r.cfg.SweepInterval
		d = d*4/5 + rand.N(d*2/5+1)
		t := time.NewTimer(d)
		select {
		case <-r.loopCtx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		for range callsPerSweep {
			res, err := r.store.ExpireLeases(r.loopCtx, engine.ExpireParams{Max: perCall})
			if err != nil {
				if r.loopCtx.Err() == nil {
					r.log.Warn("weir: lease sweep failed", "error", err)
				}
				break
			}
			for _, s := range res.Expired {
				wf, task, _ := cutTaskJobID(s.JobID)
				r.observe(Event{Kind: stateEvent(s), JobID: s.JobID, Workflow: wf, Task: task, Err: engine.ReasonTextLeaseExpired, RunAt: s.RunAt})
				r.consequences(s)
			}
			if len(res.Expired) < perCall && len(res.Due) < perCall {
				break
			}
		}
	}
}

// backoff spaces the retries of a failing store call: 50ms doubling to 5s,
// with jitter.
type backoff struct{ d time.Duration }

func newBackoff() *backoff { return &backoff{} }

func (b *backoff) reset() { b.d = 0 }

// sleep waits for the next retry; false when ctx ended first.
func (b *backoff) sleep(ctx context.Context) bool {
	b.d = min(max(2*b.d, 50*time.Millisecond), 5*time.Second)
	t := time.NewTimer(b.d/2 + rand.N(b.d/2+1))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
