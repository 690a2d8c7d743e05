package engine

import (
	"context"
	"github.com/weirflow/weir"
	"time"
)

// Store is the contract every weir store implements, at the level of
// transitions: each method is one atomic step of the state machine that
// Model defines, and the conformance suite holds a store to the Model.
//
// Every transition is safe to call again after a lost reply: a repeat has
// no further effect. A repeated Finish returns the same Settled as the first
// (so no wake-up is lost); a repeated Submit or Enqueue reports Created
// false; a repeated cancel finds the workflow or job already cancelling or
// ended. The same Claim call sent again by the client library (a broken
// connection) hands out its first run's leases; a new Claim call leases
// other jobs: those of a claim whose reply was lost come back when their
// lease expires. Errors are the sentinels of errors.go, possibly wrapped;
// test them with errors.Is.
type Store interface {
	// Submit writes a workflow and pushes its root tasks. The same plan under
	// the same ID is a success with Created false and no effect; another plan
	// under that ID is ErrWorkflowExists.
	Submit(ctx context.Context, p SubmitParams) (SubmitResult, error)
	// Enqueue writes a plain job and pushes it (or delays it to RunAt).
	Enqueue(ctx context.Context, p EnqueueParams) (EnqueueResult, error)
	// Claim leases up to p.Max jobs from p.Queues (in that order, skipping
	// paused queues), handing each workflow task its dependencies' outcomes.
	// With p.Wait > 0 it blocks until at least one job is claimed, p.Wait
	// has passed or ctx is done; it returns no error for an empty claim.
	Claim(ctx context.Context, p ClaimParams) ([]Claimed, error)
	// Finish settles finished attempts and, when p.Claim is set, claims the
	// next jobs in the same step (never blocking).
	Finish(ctx context.Context, p FinishParams) (FinishResult, error)
	// Heartbeat extends many leases at once and says, per lease, whether the
	// job should stop.
	Heartbeat(ctx context.Context, p HeartbeatParams) ([]LeaseStatus, error)
	// Progress reports a running job's progress and writes its checkpoint,
	// fenced by its lease: a lease no longer held is ErrLeaseLost and
	// changes nothing.
	Progress(ctx context.Context, p ProgressParams) error
	// ExpireLeases fails the attempts whose lease deadline passed (reason
	// "lease_expired") and makes due delayed jobs ready, in every queue.
	ExpireLeases(ctx context.Context, p ExpireParams) (ExpireResult, error)
	// CancelWorkflow cancels a running workflow (see spec/states.md).
	CancelWorkflow(ctx context.Context, p CancelWorkflowParams) (CancelResult, error)
	// CancelJob cancels one job: a waiting or queued one never runs, a
	// running one is told to stop; an ended one is ErrJobEnded.
	CancelJob(ctx context.Context, p CancelJobParams) (CancelResult, error)
	// RetryJob runs a plain job that ended failed or cancelled again, with
	// its full attempt budget, now or at p.RunAt. Any other job is
	// ErrJobNotRetryable; an unknown one ErrNotFound.
	RetryJob(ctx context.Context, p RetryJobParams) (RetryResult, error)
	// DeleteJob removes an ended plain job at once, as if its retention
	// had passed. A queued or running one is ErrNotEnded; a task or undo
	// job's ID is ErrInvalid (it goes with its workflow).
	DeleteJob(ctx context.Context, id string) error
	// DeleteWorkflow removes an ended workflow and its jobs at once, as if
	// its retention had passed. A running or compensating one is
	// ErrNotEnded.
	DeleteWorkflow(ctx context.Context, id string) error
	// RerunWorkflow runs the failed part of an ended workflow again: its
	// failed and cancelled tasks and every task downstream of one;
	// completed tasks keep their results (spec/states.md, RerunWorkflow).
	// A workflow running, compensating or compensated, or one with no
	// failed or cancelled task, is ErrNotRerunnable; an unknown one
	// ErrNotFound.
	RerunWorkflow(ctx context.Context, p RerunWorkflowParams) (RerunResult, error)
	// GetWorkflow returns a workflow's snapshot, or ErrNotFound.
	GetWorkflow(ctx context.Context, id string) (weir.Workflow, error)
	// GetJob returns a job's snapshot, or ErrNotFound.
	GetJob(ctx context.Context, id string) (weir.Job, error)
	// ListWorkflows pages through workflows, newest first.
	ListWorkflows(ctx context.Context, p weir.ListParams) (weir.WorkflowPage, error)
	// ListJobs pages through the jobs of a queue in one state: ready,
	// delayed, running (as the queue holds them), or failed, cancelled,
	// completed (newest end first, until the job's retention passed).
	ListJobs(ctx context.Context, p weir.ListJobsParams) (weir.JobPage, error)
	// AwaitWorkflow blocks until the workflow has ended (or ctx is done) and
	// returns its final snapshot.
	AwaitWorkflow(ctx context.Context, id string) (weir.Workflow, error)
	// AwaitJob blocks until the job has ended (or ctx is done) and returns
	// its final snapshot.
	AwaitJob(ctx context.Context, id string) (weir.Job, error)
	// PauseQueue stops claims from a queue until ResumeQueue; it is durable
	// and every worker obeys it.
	PauseQueue(ctx context.Context, queue string) error
	// ResumeQueue lets claims take from a paused queue again.
	ResumeQueue(ctx context.Context, queue string) error
	// PurgeQueue removes every job waiting in a queue (ready or delayed);
	// each ends cancelled, with the workflow consequences of a cancel.
	PurgeQueue(ctx context.Context, queue string) (PurgeResult, error)
	// Queues lists every queue the store knows, by name.
	Queues(ctx context.Context) ([]weir.QueueInfo, error)
	// LimitQueue sets how many jobs of a queue may run at once across
	// every worker (0: no limit). It is durable, every claim obeys it, and
	// a slot is free again when its job's lease ends however it ends
	// (finish, lease expiry, cancel), so a crashed worker leaks none.
	LimitQueue(ctx context.Context, p LimitQueueParams) error
	// RateLimitQueue sets how many jobs of a queue may start in any period
	// across every worker (a Limit of 0 removes the limit); it leaves the
	// concurrency limit as it is. It is durable and every claim obeys it: a
	// claim it refuses reports, as its next due time, when the next start
	// is allowed, so a blocking claim sleeps until then.
	RateLimitQueue(ctx context.Context, p RateLimitQueueParams) error

	// LimitKeys sets how many jobs of each concurrency key of a queue may
	// run at once across every worker (0: no limit). It is durable, every
	// claim obeys it without a busy key holding back the others, and a
	// key's slot is free again when its job's lease ends however it ends
	// (finish, lease expiry, cancel).
	LimitKeys(ctx context.Context, p LimitKeysParams) error
}

// LimitQueueParams sets a queue's limits.
type LimitQueueParams struct {
	Queue string
	// Concurrency is the most jobs of the queue leased at once, 0 to
	// MaxConcurrency; 0 removes the limit. Jobs running when it is lowered
	// go on; claims wait until fewer run than the limit.
	Concurrency int
}

// MaxConcurrency bounds LimitQueueParams.Concurrency.
const MaxConcurrency = 1 << 20

// RateLimitQueueParams sets a queue's rate limit: at most Limit of its jobs
// start (are leased) in any window of Period, across every worker.
type RateLimitQueueParams struct {
	Queue string
	// Limit is the most starts in any window of Period, 0 to MaxRateLimit;
	// 0 removes the limit (Period is then not used).
	Limit int
	// Period is the window's length, whole milliseconds from MinRatePeriod
	// to MaxRatePeriod. Starts count against the limit until Period after
	// them; a new Period starts the count afresh, a new Limit keeps it.
	Period time.Duration
}

// Bounds of RateLimitQueueParams.
const (
	MaxRateLimit  = 10_000
	MinRatePeriod = time.Millisecond
	MaxRatePeriod = 24 * time.Hour
)

// StopWatcher is implemented by stores that tell workers at once when a
// running job is asked to stop (CancelJob, CancelWorkflow), so that its
// handler's context ends without waiting for the next heartbeat. A notice
// is a hint: the heartbeat stays the authority, and a worker answers a
// notice by heartbeating those leases at once. Both stores of this
// module implement it.
type StopWatcher interface {
	// WatchStops calls fn with the IDs of running jobs that a cancel asked
	// to stop, until ctx is done, and then returns ctx's error. It calls
	// fn(nil) once it listens and again after every reconnection: a notice
	// sent while it was not listening is lost, so the caller then checks
	// every job it runs. fn runs on WatchStops's goroutine, one call at a
	// time; IDs the caller does not run are for other workers.
	WatchStops(ctx context.Context, fn func(jobIDs []string)) error
}

// ConfigReporter is implemented by stores that say what they enforce (both
// stores of this module do). A worker given no limits takes the store's, so
// that it never claims a bigger batch, or sends a bigger result, than the
// store accepts.
type ConfigReporter interface {
	// Config returns the store's configuration, defaults filled in.
	Config() Config
}

// SubmitParams submits one workflow.
type SubmitParams struct {
	Plan Plan
	// TraceParent, when set, is the W3C traceparent of the caller's span
	// (ValidateTraceParent): stored with the workflow and handed back with
	// every claim of its jobs (Claimed.TraceParent). It is not part of the
	// plan: a repeated submit with another one changes nothing.
	TraceParent string
	// Name and Labels, when set, are stored with the workflow to find it by
	// (weir.ListParams; ValidateNameLabels bounds them). Like TraceParent,
	// they are not part of the plan: a repeated submit with others changes
	// nothing, and a re-run keeps them.
	Name   string
	Labels map[string]string
}

// SubmitResult says what a submit did.
type SubmitResult struct {
	// Created is false when the same plan already existed (no effect).
	Created bool
	// Pushed lists the root tasks pushed into their queues, in plan order.
	Pushed []Pushed
}

// Pushed is one job pushed into its queue (a wake-up).
type Pushed struct {
	JobID string
	Queue string
}

// EnqueueParams enqueues one plain job.
type EnqueueParams struct {
	Job JobSpec
	// TraceParent, when set, is the W3C traceparent of the caller's span
	// (ValidateTraceParent): stored with the job and handed back with
	// every claim of it (Claimed.TraceParent). It is not part of the spec:
	// a repeated enqueue with another one changes nothing.
	TraceParent string
}

// EnqueueResult says what an enqueue did.
type EnqueueResult struct {
	// Created is false when the same spec already existed (no effect).
	Created bool
	// State is the job's state after the call: when Existing is set, that
	// job's.
	State weir.State
	// Existing is the ID of the job that holds the job's unique key, when
	// the call found one and wrote nothing (Created false); empty
	// otherwise.
	Existing string
}

// ClaimParams asks for jobs.
type ClaimParams struct {
	// Queues in the order they are tried; each is drained before the next.
	Queues []string
	// Max jobs in this claim, 1 to Limits.MaxBatch.
	Max int
	// Lease is how long each claimed job is held before it expires unless a
	// heartbeat extends it.
	Lease time.Duration
	// Wait, when > 0, is how long Claim may block for a first job. Finish
	// ignores it.
	Wait time.Duration
	// WorkerID, when set, is the claiming worker's registry ID
	// (weir.WorkerInfo.ID, ValidID): recorded with each attempt it starts
	// (weir.Job.Worker, Attempts) and on its events.
	WorkerID string
}

// Claimed is one leased job with what its handler needs.
type Claimed struct {
	Job   weir.Job
	Lease weir.Lease
	// Deps are the outcomes of a task's dependencies, in its After order. An
	// undo job gets one entry: the outcome of the task it undoes.
	Deps []weir.DepOutcome
	// Checkpoint is the job's last checkpoint (Progress), nil when none:
	// what an earlier attempt saved for this one to resume from.
	Checkpoint []byte
	// TraceParent is the trace context stored by the submit of the job's
	// workflow (tasks and undo jobs) or by the enqueue of a plain job, ""
	// when none was given.
	TraceParent string
	// ReadyAt is when the job became ready, by the store's clock: the
	// push that put it into its queue (enqueue, promotion, retry, release,
	// lease expiry), or, for a job pushed delayed, its due time. The
	// claim's time less ReadyAt is the job's queue wait. Zero when the
	// store did not record it (a job pushed by an older version).
	ReadyAt time.Time
	// PromotedAfter, for a task whose dependencies' end pushed it, is when
	// the dependency whose end promoted it ended (ReadyAt less it is the
	// promotion latency); zero for any other push (a root task, a plain
	// job, an undo job, a retry, a release, a lease expiry).
	PromotedAfter time.Time
}

// OutcomeKind is how an attempt ended.
type OutcomeKind string

// Outcome kinds.
const (
	// OutcomeCompleted: the attempt succeeded, with a result.
	OutcomeCompleted OutcomeKind = "completed"
	// OutcomeFailed: the attempt failed; it is retried while attempts remain
	// unless NonRetryable.
	OutcomeFailed OutcomeKind = "failed"
	// OutcomeCancelled: the job stopped because it was told to (or chose to);
	// it is never retried.
	OutcomeCancelled OutcomeKind = "cancelled"
	// OutcomeReleased: the worker hands the job back unrun (shutdown); the
	// attempt is not counted and the job is queued again.
	OutcomeReleased OutcomeKind = "released"
)

// Outcome is one finished attempt.
type Outcome struct {
	JobID string
	Token string
	Kind  OutcomeKind
	// Result of a completed attempt (at most Limits.MaxResult bytes).
	Result []byte
	// Error is the reason of a failed or cancelled attempt.
	Error string
	// NonRetryable ends a failed job at once.
	NonRetryable bool
	// RetryAfter, when > 0, replaces the job's backoff for this retry (the
	// worker uses it to add jitter). It is rounded up to whole milliseconds.
	RetryAfter time.Duration
	// Add, on a completed attempt of a workflow's task, adds these tasks
	// to its workflow in the same step (spec/states.md, Dynamic tasks).
	// Each may depend (After) on the finishing task, on tasks listed before
	// it in Add, and on the workflow's other tasks (only ended ones with
	// GateDependents). Any other outcome drops them, as does a finish of a
	// workflow whose cancel was requested or whose FailFast fired.
	Add []TaskSpec
	// GateDependents makes the finishing task's waiting dependents wait
	// for every task of Add too (they get them as dependencies, after
	// their own).
	GateDependents bool
}

// FinishParams finishes attempts and may claim the next jobs.
type FinishParams struct {
	Outcomes []Outcome
	// Claim, when set, claims in the same step, after the outcomes.
	Claim *ClaimParams
}

// FinishResult has one Settled per outcome, in order, and the claimed jobs.
type FinishResult struct {
	Settled []Settled
	Claimed []Claimed
}

// Settled is what one outcome did. A repeated finish (same job, same token)
// returns the same Settled as the first, so a lost reply loses no wake-up.
type Settled struct {
	JobID string
	// Err is nil, or ErrLeaseLost when the token was not the job's lease (or
	// the job is unknown); then nothing changed.
	Err error
	// State is the job's state right after the finish: Queued when retried.
	State weir.State
	// RunAt is when a retried job becomes ready.
	RunAt time.Time
	// Pushed lists every job this finish pushed into a queue: promoted
	// dependents, undo jobs, in the order they were pushed.
	Pushed []Pushed
	// WorkflowState is the workflow's state right after the finish, for a
	// task or undo job; WorkflowEnded is set when this finish ended it.
	WorkflowState weir.WorkflowState
	WorkflowEnded bool
}

// HeartbeatParams extends leases.
type HeartbeatParams struct {
	Leases []LeaseRef
	// Extend sets each live lease's deadline to now + Extend.
	Extend time.Duration
}

// LeaseRef names one lease.
type LeaseRef struct {
	JobID string
	Token string
}

// LeaseStatus is the answer for one lease of a heartbeat.
type LeaseStatus struct {
	JobID string
	// Lost: the lease is no longer held; the handler must stop and not finish.
	Lost bool
	// Cancel: the job (or its workflow) was cancelled; the handler should stop
	// and finish as cancelled.
	Cancel   bool
	Deadline time.Time
}

// ExpireParams bounds one sweep.
type ExpireParams struct {
	// Max bounds the expired leases and the promoted delayed jobs of each
	// queue in this call; 0 means Limits.MaxBatch.
	Max int
}

// ExpireResult says what a sweep did.
type ExpireResult struct {
	// Expired lists the jobs whose lease expired, with what that did.
	Expired []Settled
	// Due lists the delayed jobs made ready.
	Due []Pushed
}

// CancelWorkflowParams cancels a workflow.
type CancelWorkflowParams struct {
	ID string
	// Undo overrides the workflow's UndoOnCancel when set.
	Undo *bool
}

// CancelJobParams cancels one job.
type CancelJobParams struct {
	ID string
}

// CancelResult says what a cancel did.
type CancelResult struct {
	// Cancelled lists the jobs ended cancelled by this call, in plan order
	// for a workflow.
	Cancelled []string
	// Stopping lists running jobs told to stop.
	Stopping []string
	// Pushed lists jobs pushed by this call (Always dependents of a cancelled
	// job, undo jobs when compensation started at once).
	Pushed []Pushed
	// WorkflowState is the workflow's state after the call (for a job of a
	// workflow too).
	WorkflowState weir.WorkflowState
	// State is the job's state after a CancelJob.
	State weir.State
}

// PurgeResult says what a purge did.
type PurgeResult struct {
	// Purged lists the removed jobs: ready ones in queue order, then
	// delayed ones in due order.
	Purged []string
	// Pushed lists jobs pushed as a consequence (Always dependents, undos).
	Pushed []Pushed
}
