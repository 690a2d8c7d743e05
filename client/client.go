package client

import (
	"context"
	"crypto/rand"
	"fmt"
	"strconv"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// Store is what a Client (and a worker.Worker) runs on: a weir store, such
// as the in-process *memstore.Store (package engine/memstore) or the Redis
// *redisstore.Store (package redisstore). A program gets one from those
// packages and hands it over; it never calls the store's methods itself.
//
// The methods are the store contract of package engine, which a store of
// one's own implements and checks against package conformance. That
// contract follows the protocol version, not Go semver: it is not stable.
type Store interface {
	engine.Store
}

// Client enqueues jobs, submits workflows and follows them, on any Store:
// the in-process one (engine/memstore) or the Redis one (package redisstore). It
// keeps no state of its own, so any number of clients, in any number of
// processes, can follow the same jobs and workflows. It is safe for
// concurrent use.
type Client struct {
	store Store
}

// New returns a client of store.
func New(store Store) *Client { return &Client{store: store} }

// JobOption is one option of a job: of a plain job (Enqueue) or of a
// workflow task's job (AddTask, NewStep, Then, Catch, Finally). It is made
// by ID, RunAt, Unique or UniqueBy, which apply to plain jobs only (given
// to AddTask they are a *weir.BuildError), or by Delay, Priority,
// MaxAttempts, MaxExpiries, Backoff, Timeout or ConcurrencyKey, which apply
// to both; a task's options apply to its undo job too (but Delay and
// ConcurrencyKey). Later options override earlier ones. A JobOption prints as the call that made it, for
// example MaxAttempts(3); the zero JobOption does nothing.
type JobOption struct {
	text string
	job  func(*engine.JobSpec)
	task func(*engine.TaskSpec) // nil for an option of plain jobs only
}

// String returns the option as the call that made it, such as
// "Priority(-5)".
func (o JobOption) String() string { return o.text }

func jobOption(name string, arg any, job func(*engine.JobSpec), task func(*engine.TaskSpec)) JobOption {
	if s, ok := arg.(string); ok {
		arg = strconv.Quote(s)
	}
	return JobOption{text: fmt.Sprintf("%s(%v)", name, arg), job: job, task: task}
}

// ID gives a plain job its ID instead of a random one. Enqueueing the same
// ID with the same queue, payload and options again is a success that
// changes nothing (the job runs once); with anything different it is
// weir.ErrJobExists. IDs match ^[A-Za-z0-9_.-]{1,128}$ but not . or ..,
// or a schedule tick's <name>@<digits> (engine.ValidID, TickIDIn). A
// task's job ID is weir.TaskJobID(workflow, task), so AddTask refuses ID.
func ID(id string) JobOption {
	return jobOption("ID", id, func(s *engine.JobSpec) { s.ID = id }, nil)
}

// Priority orders the job in its queue: lower runs first, from -1000 to
// 1000; jobs of equal priority run in the order they became ready. The
// default is 0.
func Priority(p int) JobOption {
	return jobOption("Priority", p,
		func(s *engine.JobSpec) { s.Priority = p },
		func(s *engine.TaskSpec) { s.Priority = p })
}

// RunAt delays a plain job's first attempt until t (as read by the store's
// clock). A task starts when its dependencies have ended, so AddTask
// refuses RunAt.
func RunAt(t time.Time) JobOption {
	return jobOption("RunAt", t.Format(time.RFC3339Nano), func(s *engine.JobSpec) { s.RunAt, s.Delay = t, 0 }, nil)
}

// Delay delays the job's first attempt by d, counted by the store's clock
// so that this process's clock does not matter. A plain job waits d after
// it is written (d rounded up to whole milliseconds; a repeated Enqueue of
// the job changes nothing); Delay replaces a RunAt given before it, and
// RunAt replaces it. A task waits d after its dependencies ended (a task
// without dependencies: after Submit, or StartAt) before it is ready to
// run; d is whole milliseconds, and its undo job is not delayed
// (spec/states.md, Delayed tasks). A signal task takes no options.
func Delay(d time.Duration) JobOption {
	return jobOption("Delay", d,
		func(s *engine.JobSpec) { s.Delay, s.RunAt = d, time.Time{} },
		func(s *engine.TaskSpec) { s.Delay = d })
}

// Unique makes a plain job unique by its queue and payload for ttl: while
// another job of the same queue and payload holds that key, Enqueue writes
// nothing and returns the holder (Job.Created is false, Job.ID names it).
// A job takes the key when it is written and holds it for ttl, whether or
// not it ends meanwhile; with ttl 0 it holds it until it ends (completed,
// failed or cancelled). Combined with UniqueBy, the key is UniqueBy's. The
// key is checked and taken in the same atomic step as the enqueue, so two
// producers racing never both write. AddTask refuses it.
func Unique(ttl time.Duration) JobOption {
	return jobOption("Unique", ttl, func(s *engine.JobSpec) {
		if s.Unique == nil {
			s.Unique = &engine.Unique{}
		}
		s.Unique.For = ttl
	}, nil)
}

// UniqueBy makes a plain job unique by key (at most 1,024 bytes) in its
// queue instead of by its payload: while another job of the queue holds
// key, Enqueue writes nothing and returns the holder. The key is held until
// the job ends, or for the ttl of a Unique option given with it. AddTask
// refuses it.
func UniqueBy(key string) JobOption {
	return jobOption("UniqueBy", key, func(s *engine.JobSpec) {
		if s.Unique == nil {
			s.Unique = &engine.Unique{}
		}
		s.Unique.Key = key
	}, nil)
}

// ConcurrencyKey gives the job a concurrency key (a tenant, a customer;
// a name, engine.ValidName). Claims serve a queue's keys in turn, one job
// of each, so that a key with many jobs ready does not hold back the
// first job of another by more than one claim batch, and hold each key to
// the queue's per-key limit (Client.LimitKeys) without waiting on a busy
// key. A task's key does not apply to its undo job (spec/states.md,
// Concurrency keys).
func ConcurrencyKey(key string) JobOption {
	return jobOption("ConcurrencyKey", key,
		func(s *engine.JobSpec) { s.Key = key },
		func(s *engine.TaskSpec) { s.Key = key })
}

// MaxAttempts lets the job run up to n times, the first attempt included,
// while its attempts fail. The default is 1: no retry.
func MaxAttempts(n int) JobOption {
	return jobOption("MaxAttempts", n,
		func(s *engine.JobSpec) { s.MaxAttempts = n },
		func(s *engine.TaskSpec) { s.MaxAttempts = n })
}

// MaxExpiries is how many times the job's lease may expire (its worker
// was killed, as in a deploy, or lost Redis for a lease's length) without
// that costing an attempt: the job is queued again at once. Past it, an
// expiry is a failed attempt, retried while attempts remain, so a job that
// kills its worker every time still ends. The default (0) is
// weir.DefaultMaxExpiries, 1; weir.NoExpiries (-1) makes every expiry a
// failed attempt.
func MaxExpiries(n int) JobOption {
	return jobOption("MaxExpiries", n,
		func(s *engine.JobSpec) { s.MaxExpiries = n },
		func(s *engine.TaskSpec) { s.MaxExpiries = n })
}

// Backoff is the base delay before a retry: retry n waits at least
// d·2^(n-1) (workers add up to a quarter more as jitter), up to the store's
// maximum. The default is weir.DefaultBackoff. Whole milliseconds.
func Backoff(d time.Duration) JobOption {
	return jobOption("Backoff", d,
		func(s *engine.JobSpec) { s.Backoff = d },
		func(s *engine.TaskSpec) { s.Backoff = d })
}

// Timeout bounds each attempt: the handler's context is cancelled after d
// and the attempt fails (and is retried while attempts remain). Whole
// milliseconds; the default is none.
func Timeout(d time.Duration) JobOption {
	return jobOption("Timeout", d,
		func(s *engine.JobSpec) { s.Timeout = d },
		func(s *engine.TaskSpec) { s.Timeout = d })
}

// Enqueue adds a job with payload to queue q and returns its handle. The
// job is durable once Enqueue returns nil. Enqueue is safe to retry with the
// same ID option after an error: a repeat changes nothing. When ctx
// carries an OpenTelemetry span, its trace context is stored with the job
// and its attempts continue that trace (package weirotel).
func Enqueue[P, R any](ctx context.Context, c *Client, q Queue[P, R], payload P, opts ...JobOption) (*Job[R], error) {
	b, err := q.EncodePayload(payload)
	if err != nil {
		return nil, err
	}
	spec := engine.JobSpec{Queue: q.name, Payload: b}
	for _, o := range opts {
		if o.job != nil {
			o.job(&spec)
		}
	}
	if spec.ID == "" {
		spec.ID = NewID()
	}
	res, err := c.store.Enqueue(ctx, engine.EnqueueParams{Job: spec, TraceParent: traceParent(ctx)})
	if err != nil {
		return nil, err
	}
	id := spec.ID
	if res.Existing != "" {
		id = res.Existing
	}
	return &Job[R]{c: c, id: id, queue: q.name, decode: q.DecodeResult, created: res.Created}, nil
}

// OpenJob returns the handle of the job id of queue q, enqueued by this or
// another process: a plain job's ID, or weir.TaskJobID(workflow, task) for
// a workflow task. It does not check that the job exists; its methods
// return weir.ErrNotFound when it does not.
func OpenJob[P, R any](c *Client, q Queue[P, R], id string) *Job[R] {
	return &Job[R]{c: c, id: id, queue: q.name, decode: q.DecodeResult}
}

// Job is the handle of one job whose result is an R. It is safe for
// concurrent use.
type Job[R any] struct {
	c      *Client
	id     string
	queue  string
	decode func([]byte) (R, error)
	// created: Enqueue wrote this job
	created bool
}

// ID returns the job's ID.
func (j *Job[R]) ID() string { return j.id }

// Created reports whether the Enqueue that returned j wrote the job. It is
// false when the same ID already existed (a repeat), when another job held
// the unique key (Unique, UniqueBy; ID is then that job's), and for a
// handle from OpenJob.
func (j *Job[R]) Created() bool { return j.created }

// Wait blocks until the job has ended, or ctx is done, and returns its
// result. A job that failed or was cancelled returns a *weir.JobError with the
// remote reason (errors.Is matches weir.ErrFailed or weir.ErrCancelled); a job that
// is not found (never enqueued, or ended longer ago than the store's
// retention) returns weir.ErrNotFound; ctx's end returns ctx.Err().
func (j *Job[R]) Wait(ctx context.Context) (R, error) {
	var zero R
	s, err := j.c.store.AwaitJob(ctx, j.id)
	if err != nil {
		return zero, err
	}
	if s.Queue != j.queue {
		return zero, fmt.Errorf("%w: job %q is in queue %q, not %q", weir.ErrWrongQueue, j.id, s.Queue, j.queue)
	}
	if s.State != weir.Completed {
		return zero, jobError(s)
	}
	return j.decode(s.Result)
}

// Status returns a snapshot of the job now.
func (j *Job[R]) Status(ctx context.Context) (weir.Job, error) {
	return j.c.store.GetJob(ctx, j.id)
}

// Cancel cancels the job, as Client.CancelJob does with its ID, and
// returns the same: the job's state after the call.
func (j *Job[R]) Cancel(ctx context.Context) (weir.State, error) {
	return j.c.CancelJob(ctx, j.id)
}

func jobError(s weir.Job) *weir.JobError {
	return &weir.JobError{JobID: s.ID, Workflow: s.Workflow, Task: s.Task, State: s.State, Attempt: s.Attempt, Message: s.Error}
}

// PauseQueue stops every worker, in every process, from claiming jobs from
// the queue named name until ResumeQueue. Running jobs go on; enqueueing
// still works. The pause is stored, so it outlives the processes.
func (c *Client) PauseQueue(ctx context.Context, name string) error {
	return c.store.PauseQueue(ctx, name)
}

// ResumeQueue lets workers claim from the queue named name again.
func (c *Client) ResumeQueue(ctx context.Context, name string) error {
	return c.store.ResumeQueue(ctx, name)
}

// LimitQueue lets at most concurrency jobs of the queue named name run at
// once across every worker of every process (0 removes the limit). The
// limit is stored and enforced inside each claim; a slot is free again
// when its job's lease ends, however it ends, so a crashed worker holds
// none for longer than its lease. Jobs running when it is lowered go on.
func (c *Client) LimitQueue(ctx context.Context, name string, concurrency int) error {
	return c.store.LimitQueue(ctx, engine.LimitQueueParams{Queue: name, Concurrency: concurrency})
}

// RateLimitQueue lets at most limit jobs of the queue named name start in
// any window of per, across every worker of every process (a limit of 0
// removes it; per is then not used). The starts are counted inside each
// claim, from the store's clock: a claim the limit refuses sleeps until
// the next start is allowed rather than polling. A start counts for per
// after it however its job ends; a new limit keeps the count, a new per
// starts it afresh. The concurrency limit (LimitQueue) stays as it is.
func (c *Client) RateLimitQueue(ctx context.Context, name string, limit int, per time.Duration) error {
	return c.store.RateLimitQueue(ctx, engine.RateLimitQueueParams{Queue: name, Limit: limit, Period: per})
}

// LimitKeys lets at most concurrency jobs of each concurrency key of the
// queue named name run at once across every worker of every process (0
// removes the limit). A claim skips a key at its limit and serves the
// next key, so a busy tenant never holds back another. Like LimitQueue's,
// the limit is stored and enforced inside each claim, and a key's slot is
// free again when its job's lease ends, however it ends.
func (c *Client) LimitKeys(ctx context.Context, name string, concurrency int) error {
	return c.store.LimitKeys(ctx, engine.LimitKeysParams{Queue: name, Concurrency: concurrency})
}

// Queues lists every queue the store knows, with its counts and whether it
// is paused or limited.
func (c *Client) Queues(ctx context.Context) ([]weir.QueueInfo, error) {
	return c.store.Queues(ctx)
}

// NewID returns a random ID (26 characters, 128 bits), valid as a job or
// workflow ID. It is what Enqueue and NewWorkflow use when given none.
func NewID() string { return rand.Text() }
