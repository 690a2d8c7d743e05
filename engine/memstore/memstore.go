// Package memstore is weir's in-process store: engine.Store implemented on
// top of the reference state machine, engine.Namespace (an engine.Model,
// or an engine.Partitioned of several).
//
// It is not durable: everything is lost when the process exits. It is meant
// for tests and for programs that run producers and workers in one process.
package memstore

import (
	"cmp"
	"context"
	"github.com/weirflow/weir"
	"slices"
	"sync"
	"time"

	"github.com/weirflow/weir/engine"
)

var (
	_ engine.Store       = (*Store)(nil)
	_ engine.StopWatcher = (*Store)(nil)
)

// Store is an engine.Store that keeps everything in memory, in one
// engine.Namespace behind one mutex. Every transition behaves exactly as
// the Namespace's does, given the store's clock reading as "now".
//
// It is not durable: everything is lost when the process exits; for tests
// and single-process use.
//
// All methods are safe for concurrent use. A method called with a context
// that is already done does nothing and returns ctx.Err(). The blocking
// methods (Claim with a Wait, AwaitWorkflow, AwaitJob) sleep until a
// transition of this store changes something, until the earliest moment a
// delayed job or a lease deadline in the claimed queues comes due, or until
// Wake is called; they never poll. A Store starts no goroutine, so it needs
// no Close: dropping it is enough.
type Store struct {
	now func() time.Time

	mu sync.Mutex
	m  engine.Namespace
	// changed is closed, and set to nil, when a transition changed the
	// state; waiters take it (creating it if nil) under mu before they
	// sleep. It is nil while nobody waits, so changes cost nothing then.
	changed chan struct{}

	// stops are the IDs of running jobs asked to stop, in order, the last
	// maxStops of them; stopSeq counts every ID ever added; stopCh is
	// closed (and set to nil) when one is added. WatchStops reads them.
	stops   []string
	stopSeq int
	stopCh  chan struct{}

	// schedSeq counts the puts and resumes of schedules; schedCh is closed
	// (and set to nil) at each. WatchSchedules reads them (schedule.go).
	schedSeq int
	schedCh  chan struct{}

	// streams are the event streams, one per partition (events.go).
	streams []stream

	// workers is the registry of live workers (workers.go).
	workers engine.WorkerTable

	// bad is the error of a configuration the store cannot run (a
	// partition count out of range): every call returns it.
	bad error

	// waitHook, when set (by tests), is called under mu each time a
	// blocking call is about to sleep, with the method's name.
	waitHook func(method string)
}

// Option configures a Store.
type Option func(*Store, *engine.Config)

// WithConfig sets the limits and the retention of ended records. Zero
// Limits mean weir.DefaultLimits; Retention 0 removes an ended workflow or
// job at once (so an AwaitWorkflow or AwaitJob that had not yet looked may
// then see ErrNotFound). The default is engine.DefaultConfig().
func WithConfig(cfg engine.Config) Option {
	return func(_ *Store, c *engine.Config) { *c = cfg }
}

// WithClock makes the store read the current time from now instead of
// time.Now, so tests control time (the model never lets time go backwards:
// an earlier reading counts as the last one). The store calls now with its
// lock held, so now must not call the store.
//
// The clock only supplies "now" to transitions. The durations the store
// waits for (ClaimParams.Wait, and the sleep until the next delayed job or
// lease deadline, computed as the difference between that time and a clock
// reading) are measured in real time, like a context deadline. A test that
// moves its clock forward calls Wake so that blocked calls look again.
func WithClock(now func() time.Time) Option {
	return func(s *Store, _ *engine.Config) { s.now = now }
}

// New returns an empty store. Without options it uses
// engine.DefaultConfig() and time.Now. With Config.Partitions > 1 it is a
// namespace of that many partitions (spec/partitions.md); with a count
// outside [0, engine.MaxPartitions] every call fails with ErrInvalid.
//
// It is not durable: everything is lost when the process exits; for tests
// and single-process use.
func New(opts ...Option) *Store {
	s := &Store{now: time.Now}
	cfg := engine.DefaultConfig()
	for _, o := range opts {
		o(s, &cfg)
	}
	s.bad = cfg.ValidatePartitions()
	s.m = engine.NewNamespace(cfg)
	s.streams = make([]stream, s.m.Parts())
	return s
}

// Config returns the store's configuration (with zero limits replaced by
// the defaults).
func (s *Store) Config() engine.Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m.Config()
}

// Wake makes every blocked Claim, AwaitWorkflow and AwaitJob look at the
// store again now. It is never needed with the default clock; with a clock
// given by WithClock, call it after moving that clock forward, so that
// delayed jobs and expired leases that became due are seen at once.
func (s *Store) Wake() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.broadcastLocked()
}

// broadcastLocked wakes every waiter. s.mu must be held.
func (s *Store) broadcastLocked() {
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// waitChLocked returns the channel closed by the next change, and tells
// the test hook that a caller is about to sleep. s.mu must be held.
func (s *Store) waitChLocked(method string) <-chan struct{} {
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	if s.waitHook != nil {
		s.waitHook(method)
	}
	return s.changed
}

// write runs one transition under the lock and wakes the waiters when it
// succeeded (a failed transition wrote nothing).
func (s *Store) write(ctx context.Context, f func(now time.Time) error) error {
	if err := cmp.Or(ctx.Err(), s.bad); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err := f(s.now())
	// running tasks a sweep's deadline asked to stop (engine.Model.TakeSweepStops)
	s.noteStopsLocked(s.m.TakeSweepStops())
	s.takeEventsLocked()
	if err == nil {
		s.broadcastLocked()
	}
	return err
}

// read runs one read under the lock; reads wake nobody.
func (s *Store) read(ctx context.Context, f func(now time.Time) error) error {
	if err := cmp.Or(ctx.Err(), s.bad); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return f(s.now())
}

// Submit writes a workflow and pushes its root tasks (see engine.Store).
// The plan is copied: the caller may reuse its slices afterwards.
func (s *Store) Submit(ctx context.Context, p engine.SubmitParams) (res engine.SubmitResult, err error) {
	p.Plan = clonePlan(p.Plan)
	err = s.write(ctx, func(now time.Time) (err error) {
		res, err = s.m.Submit(now, p)
		return err
	})
	return res, err
}

// Enqueue writes a plain job and pushes it, or delays it until its RunAt.
// The payload is copied.
func (s *Store) Enqueue(ctx context.Context, p engine.EnqueueParams) (res engine.EnqueueResult, err error) {
	p.Job.Payload = slices.Clone(p.Job.Payload)
	err = s.write(ctx, func(now time.Time) (err error) {
		res, err = s.m.Enqueue(now, p)
		return err
	})
	return res, err
}

// Claim leases up to p.Max jobs from p.Queues (see engine.Store). With
// p.Wait > 0 and nothing to claim, it blocks until a job is claimed (one
// that another goroutine pushes, or a delayed job or an expired lease's
// retry that comes due), until p.Wait has passed in real time (then it
// returns no jobs and no error) or until ctx is done (then it returns
// ctx.Err() and has claimed nothing). Invalid params fail at once.
func (s *Store) Claim(ctx context.Context, p engine.ClaimParams) ([]engine.Claimed, error) {
	if err := cmp.Or(ctx.Err(), s.bad); err != nil {
		return nil, err
	}
	var waitC <-chan time.Time
	if p.Wait > 0 {
		t := time.NewTimer(p.Wait)
		defer t.Stop()
		waitC = t.C
	}
	for {
		claimed, changed, dueIn, err := s.tryClaim(p, p.Wait > 0)
		if err != nil || len(claimed) > 0 || p.Wait <= 0 {
			return claimed, err
		}
		var dueT *time.Timer
		var dueC <-chan time.Time
		if dueIn >= 0 {
			dueT = time.NewTimer(dueIn)
			dueC = dueT.C
		}
		select {
		case <-ctx.Done():
			stopTimer(dueT)
			return nil, ctx.Err()
		case <-waitC:
			stopTimer(dueT)
			return nil, nil
		case <-changed:
		case <-dueC:
		}
		stopTimer(dueT)
	}
}

func stopTimer(t *time.Timer) {
	if t != nil {
		t.Stop()
	}
}

// tryClaim runs one claim (in a store of partitions, one rotation:
// engine.Partitioned.Claim). When it claims nothing and wait is set, it also
// returns the channel closed by the next change and how long until the
// earliest delayed job or lease deadline of the claimed queues comes due
// (-1 if none), both taken under the same lock as the claim, so no change
// between the claim and the sleep is missed. That time is always after the
// model's now unless more than engine.SweepPerClaim items were due at once;
// then the next try sweeps more of them, so a zero wait cannot repeat
// forever.
//
// A claim changes the state when it claims, and also when its sweep expires
// leases (which may end tasks, push dependents, end workflows). An empty
// claim wakes the other waiters only in that second case, recognised by a
// drop in the claimed queues' running counts, so idle claimers never wake
// each other in a loop.
func (s *Store) tryClaim(p engine.ClaimParams, wait bool) (claimed []engine.Claimed, changed <-chan struct{}, dueIn time.Duration, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	claimed, err = s.claimLocked(p)
	if err != nil || len(claimed) > 0 || !wait {
		return claimed, nil, -1, err
	}
	dueIn = -1
	for i := range s.m.Parts() {
		// each partition's due time and clock are its own
		pm := s.m.Part(i)
		if due := pm.NextDue(p.Queues); !due.IsZero() {
			if d := max(0, due.Sub(pm.Now())); dueIn < 0 || d < dueIn {
				dueIn = d
			}
		}
	}
	return nil, s.waitChLocked("Claim"), dueIn, nil
}

// claimLocked runs one claim at the store's time, notes its stops and
// events, and wakes the waiters when it changed the state (see tryClaim).
// s.mu must be held.
func (s *Store) claimLocked(p engine.ClaimParams) ([]engine.Claimed, error) {
	now := s.now()
	before := s.running(now, p.Queues)
	claimed, err := s.m.Claim(now, p)
	s.noteStopsLocked(s.m.TakeSweepStops())
	s.takeEventsLocked()
	switch {
	case len(claimed) > 0:
		s.broadcastLocked()
	case err == nil && s.running(now, p.Queues) != before:
		s.broadcastLocked()
	}
	return claimed, err
}

// ClaimDue claims as Claim does with no Wait (p.Wait is not read) and,
// when it claimed nothing, also returns the time a blocking Claim would
// sleep until at most: the earliest due time of a delayed job or a lease
// deadline in the claimed queues, or of the next start their rate limits
// allow (engine.Namespace.NextDue); zero when there is none. A scenario's
// "due" step reads it (scenario.DueClaimer).
func (s *Store) ClaimDue(ctx context.Context, p engine.ClaimParams) ([]engine.Claimed, time.Time, error) {
	if err := cmp.Or(ctx.Err(), s.bad); err != nil {
		return nil, time.Time{}, err
	}
	p.Wait = 0
	s.mu.Lock()
	defer s.mu.Unlock()
	claimed, err := s.claimLocked(p)
	if err != nil || len(claimed) > 0 {
		return claimed, time.Time{}, err
	}
	return nil, s.m.NextDue(p.Queues), nil
}

// running counts the running jobs of the named queues.
func (s *Store) running(now time.Time, queues []string) int {
	n := 0
	for _, q := range s.m.Queues(now) {
		if slices.Contains(queues, q.Name) {
			n += q.Running
		}
	}
	return n
}

// Finish settles finished attempts and, when p.Claim is set, claims in the
// same step without blocking (see engine.Store).
func (s *Store) Finish(ctx context.Context, p engine.FinishParams) (res engine.FinishResult, err error) {
	err = s.write(ctx, func(now time.Time) (err error) {
		res, err = s.m.Finish(now, p)
		return err
	})
	return res, err
}

// Heartbeat extends many leases at once (see engine.Store).
func (s *Store) Heartbeat(ctx context.Context, p engine.HeartbeatParams) (res []engine.LeaseStatus, err error) {
	err = s.write(ctx, func(now time.Time) (err error) {
		res, err = s.m.Heartbeat(now, p)
		return err
	})
	return res, err
}

// Progress reports a running job's progress and writes its checkpoint,
// fenced by its lease (see engine.Store).
func (s *Store) Progress(ctx context.Context, p engine.ProgressParams) error {
	return s.write(ctx, func(now time.Time) error { return s.m.Progress(now, p) })
}

// ExpireLeases fails the attempts whose lease deadline passed and makes due
// delayed jobs ready, in every queue (see engine.Store). Blocked claims do
// this themselves for their queues, so a single-process program need not
// call it.
func (s *Store) ExpireLeases(ctx context.Context, p engine.ExpireParams) (res engine.ExpireResult, err error) {
	err = s.write(ctx, func(now time.Time) (err error) {
		res, err = s.m.ExpireLeases(now, p)
		return err
	})
	return res, err
}

// CancelWorkflow cancels a running workflow (see engine.Store).
func (s *Store) CancelWorkflow(ctx context.Context, p engine.CancelWorkflowParams) (res engine.CancelResult, err error) {
	err = s.write(ctx, func(now time.Time) (err error) {
		res, err = s.m.CancelWorkflow(now, p)
		s.noteStopsLocked(res.Stopping)
		return err
	})
	return res, err
}

// CancelJob cancels one job (see engine.Store).
func (s *Store) CancelJob(ctx context.Context, p engine.CancelJobParams) (res engine.CancelResult, err error) {
	err = s.write(ctx, func(now time.Time) (err error) {
		res, err = s.m.CancelJob(now, p)
		s.noteStopsLocked(res.Stopping)
		return err
	})
	return res, err
}

// maxStops bounds the stop notices a store keeps for its watchers; a
// watcher that fell further behind checks every job it runs instead.
const maxStops = 10_000

// noteStopsLocked records running jobs asked to stop and wakes
// WatchStops. s.mu must be held.
func (s *Store) noteStopsLocked(ids []string) {
	if len(ids) == 0 {
		return
	}
	s.stops = append(s.stops, ids...)
	s.stopSeq += len(ids)
	if over := len(s.stops) - maxStops; over > 0 {
		s.stops = slices.Delete(s.stops, 0, over)
	}
	if s.stopCh != nil {
		close(s.stopCh)
		s.stopCh = nil
	}
}

// WatchStops implements engine.StopWatcher: it calls fn(nil) at once, then
// fn with the IDs of running jobs that each later cancel asked to stop,
// until ctx is done.
func (s *Store) WatchStops(ctx context.Context, fn func(jobIDs []string)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	seen := s.stopSeq
	s.mu.Unlock()
	fn(nil)
	for {
		s.mu.Lock()
		var ids []string
		missed := false
		if n := s.stopSeq - seen; n > 0 {
			if n > len(s.stops) {
				missed = true
			} else {
				ids = slices.Clone(s.stops[len(s.stops)-n:])
			}
			seen = s.stopSeq
		}
		if s.stopCh == nil {
			s.stopCh = make(chan struct{})
		}
		ch := s.stopCh
		s.mu.Unlock()
		switch {
		case missed:
			fn(nil)
		case len(ids) > 0:
			fn(ids)
		default:
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-ch:
			}
		}
	}
}

// GetWorkflow returns a workflow's snapshot, or ErrNotFound.
func (s *Store) GetWorkflow(ctx context.Context, id string) (w weir.Workflow, err error) {
	err = s.read(ctx, func(now time.Time) (err error) {
		w, err = s.m.GetWorkflow(now, id)
		return err
	})
	return w, err
}

// GetJob returns a job's snapshot, or ErrNotFound.
func (s *Store) GetJob(ctx context.Context, id string) (j weir.Job, err error) {
	err = s.read(ctx, func(now time.Time) (err error) {
		j, err = s.m.GetJob(now, id)
		return err
	})
	return j, err
}

// ListWorkflows pages through workflows, newest first (see engine.Store).
func (s *Store) ListWorkflows(ctx context.Context, p weir.ListParams) (page weir.WorkflowPage, err error) {
	err = s.read(ctx, func(now time.Time) (err error) {
		page, err = s.m.ListWorkflows(now, p)
		return err
	})
	return page, err
}

// AwaitWorkflow blocks until the workflow has ended and returns its final
// snapshot; ErrNotFound for an unknown ID (or one removed by retention),
// ctx.Err() when ctx is done first.
func (s *Store) AwaitWorkflow(ctx context.Context, id string) (weir.Workflow, error) {
	return await(ctx, s, "AwaitWorkflow", func(now time.Time) (weir.Workflow, bool, error) {
		w, err := s.m.GetWorkflow(now, id)
		return w, w.State.Ended(), err
	})
}

// AwaitJob blocks until the job has ended and returns its final snapshot;
// ErrNotFound for an unknown ID (or one removed by retention), ctx.Err()
// when ctx is done first.
func (s *Store) AwaitJob(ctx context.Context, id string) (weir.Job, error) {
	return await(ctx, s, "AwaitJob", func(now time.Time) (weir.Job, bool, error) {
		j, err := s.m.GetJob(now, id)
		return j, j.State.Ended(), err
	})
}

// await looks with get until it reports an end or an error, sleeping
// between looks until the next change.
func await[T any](ctx context.Context, s *Store, method string, get func(now time.Time) (T, bool, error)) (T, error) {
	var zero T
	for {
		if err := ctx.Err(); err != nil {
			return zero, err
		}
		s.mu.Lock()
		v, ended, err := get(s.now())
		var changed <-chan struct{}
		if err == nil && !ended {
			changed = s.waitChLocked(method)
		}
		s.mu.Unlock()
		if err != nil {
			return zero, err
		}
		if ended {
			return v, nil
		}
		select {
		case <-ctx.Done():
			return zero, ctx.Err()
		case <-changed:
		}
	}
}

// PauseQueue stops claims from a queue until ResumeQueue.
func (s *Store) PauseQueue(ctx context.Context, queue string) error {
	return s.write(ctx, func(now time.Time) error { return s.m.PauseQueue(now, queue) })
}

// ResumeQueue lets claims take from a paused queue again, and wakes the
// claimers blocked on it.
func (s *Store) ResumeQueue(ctx context.Context, queue string) error {
	return s.write(ctx, func(now time.Time) error { return s.m.ResumeQueue(now, queue) })
}

// LimitQueue sets how many jobs of a queue may run at once (see
// engine.Store), and wakes the claimers blocked on it.
func (s *Store) LimitQueue(ctx context.Context, p engine.LimitQueueParams) error {
	return s.write(ctx, func(now time.Time) error { return s.m.LimitQueue(now, p) })
}

// RateLimitQueue sets how many jobs of a queue may start in any period
// (see engine.Store), and wakes the claimers blocked on it.
func (s *Store) RateLimitQueue(ctx context.Context, p engine.RateLimitQueueParams) error {
	return s.write(ctx, func(now time.Time) error { return s.m.RateLimitQueue(now, p) })
}

// LimitKeys sets how many jobs of each concurrency key of a queue may run
// at once (see engine.Store), and wakes the claimers blocked on it.
func (s *Store) LimitKeys(ctx context.Context, p engine.LimitKeysParams) error {
	return s.write(ctx, func(now time.Time) error { return s.m.LimitKeys(now, p) })
}

// PurgeQueue cancels every job waiting in a queue (see engine.Store).
func (s *Store) PurgeQueue(ctx context.Context, queue string) (res engine.PurgeResult, err error) {
	err = s.write(ctx, func(now time.Time) (err error) {
		res, err = s.m.PurgeQueue(now, queue)
		return err
	})
	return res, err
}

// Queues lists every queue the store knows, by name.
func (s *Store) Queues(ctx context.Context) (qs []weir.QueueInfo, err error) {
	err = s.read(ctx, func(now time.Time) error {
		qs = s.m.Queues(now)
		return nil
	})
	return qs, err
}

// clonePlan deep-copies the slices of a plan, which the model keeps.
func clonePlan(p engine.Plan) engine.Plan {
	p.Tasks = slices.Clone(p.Tasks)
	for i := range p.Tasks {
		t := &p.Tasks[i]
		t.Payload = slices.Clone(t.Payload)
		t.After = slices.Clone(t.After)
		if t.Undo != nil {
			u := *t.Undo
			u.Payload = slices.Clone(u.Payload)
			t.Undo = &u
		}
	}
	return p
}
