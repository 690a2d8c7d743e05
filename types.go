package weir

import "time"

// State is the state of a job, and of the workflow task it runs.
type State string

// Job and task states. A plain job is never Waiting; an undo job is Pending
// until the undos of its task's completed descendants have ended.
const (
	Waiting   State = "waiting"   // a task with open dependencies
	Pending   State = "pending"   // an undo waiting for its descendants' undos
	Queued    State = "queued"    // in its queue, ready or delayed until RunAt
	Open      State = "open"      // a signal task waiting for its signal
	Running   State = "running"   // leased to a worker
	Completed State = "completed" // ended with a result
	Failed    State = "failed"    // ended out of attempts or non-retryable
	Cancelled State = "cancelled" // ended without running to completion
)

// Ended reports whether s is a terminal state: Completed, Failed or
// Cancelled.
func (s State) Ended() bool { return s == Completed || s == Failed || s == Cancelled }

// WorkflowState is the state of a workflow.
type WorkflowState string

// Workflow states. Running and Compensating are the live ones; every other
// state is final.
const (
	WorkflowRunning            WorkflowState = "running"
	WorkflowCompleted          WorkflowState = "completed"
	WorkflowFailed             WorkflowState = "failed"
	WorkflowCancelled          WorkflowState = "cancelled"
	WorkflowCompensating       WorkflowState = "compensating"
	WorkflowCompensated        WorkflowState = "compensated"
	WorkflowCompensationFailed WorkflowState = "compensation_failed"
)

// Ended reports whether s is a terminal state (neither running nor
// compensating, nor empty).
func (s WorkflowState) Ended() bool {
	return s != WorkflowRunning && s != WorkflowCompensating && s != ""
}

// Reason says why a workflow compensates.
type Reason string

// Compensation reasons.
const (
	ReasonFailure Reason = "failure" // an unabsorbed task failure
	ReasonCancel  Reason = "cancel"  // a cancel with undo
)

// Lease is a claimed job's hold: only a finish with this token counts.
type Lease struct {
	Token    string
	Deadline time.Time
}

// Job is a snapshot of one job: a plain job, a workflow task's job or an
// undo job.
type Job struct {
	ID    string
	Queue string
	// Workflow and Task are set for a task's job and an undo job.
	Workflow string
	Task     string
	// Undo is set for an undo job.
	Undo        bool
	Payload     []byte
	Priority    int
	MaxAttempts int
	Backoff     time.Duration
	Timeout     time.Duration
	State       State
	// MaxExpiries is the job's resolved lease-expiry budget (0: none).
	MaxExpiries int
	// Attempt counts the attempts started so far (1 during the first).
	Attempt int
	// Expiries counts the lease expiries that cost no attempt so far: the
	// attempts counted against MaxAttempts are Attempt − Expiries.
	Expiries int
	// RunAt is when a queued job becomes ready (zero for a ready job).
	RunAt time.Time
	// Lease is set while the job is running.
	Lease *Lease
	// CancelRequested is set when a cancel reached the job while it ran.
	CancelRequested bool
	Result          []byte
	// Error is the last failed attempt's reason, or why the job ended.
	Error     string
	CreatedAt time.Time
	EndedAt   time.Time
	// ExpiresAt is when an ended job's record is removed (retention).
	ExpiresAt time.Time
	// Progress is the last progress its handler reported (any attempt),
	// nil when none did.
	Progress *Progress
	// Key is the job's concurrency key (a tenant, a customer), empty for
	// none; an undo job has none (spec/states.md, Concurrency keys).
	Key string
	// Worker is the ID of the worker that leased the job's current or last
	// attempt, "" when none did (or its claim named none).
	Worker string
	// Attempts are the job's last attempts (at most MaxAttemptHistory),
	// oldest first, the current one last (spec/states.md, Attempt
	// history); nil before its first claim.
	Attempts []AttemptRecord
}

// Task is a snapshot of one task of a workflow.
type Task struct {
	Name   string
	Queue  string
	After  []string
	Always bool
	// OnFailure is set for a task that runs only when a dependency did
	// not complete (it is Always too); see client.Task.OnFailure.
	OnFailure bool
	State     State
	Attempt   int
	Result    []byte
	Error     string
	// Undo is nil for a task with no undo job.
	Undo *UndoStatus
	// Progress is the last progress the task's handler reported, nil when
	// none did.
	Progress *Progress
	// Signal is set for a signal task: it is never run by a worker, it
	// ends by a signal (Open while it waits for one).
	Signal bool
	// AddedBy names the task whose finish added this one at run time
	// (spec/states.md, Dynamic tasks); "" for a task of the submitted plan.
	AddedBy string
}

// UndoStatus is the state of a task's undo job. State is empty until the
// workflow compensates (and stays empty for a task that did not complete).
type UndoStatus struct {
	Queue   string
	State   State
	Attempt int
	Error   string
}

// Workflow is a snapshot of a workflow.
type Workflow struct {
	ID string
	// Name and Labels are what the submit gave to find the workflow by
	// (ListParams.Name, ListParams.Labels); empty when none. They are not
	// part of the plan, and a re-run keeps them.
	Name         string
	Labels       map[string]string
	State        WorkflowState
	Reason       Reason
	FailFast     bool
	UndoOnCancel bool
	// CancelRequested is set once Cancel was called; CancelUndo is whether
	// that cancel asked for undo.
	CancelRequested bool
	CancelUndo      bool
	PlanHash        string
	CreatedAt       time.Time
	EndedAt         time.Time
	ExpiresAt       time.Time
	// Deadline is when the workflow is cancelled if it has not ended
	// (zero: none); DeadlineHit is set once its deadline cancelled it.
	Deadline    time.Time
	DeadlineHit bool
	// Webhook is the plan's webhook, nil when none.
	Webhook *WebhookStatus
	// Run is the workflow's run: 1 from its submit, one more at each
	// RerunWorkflow.
	Run int
	// Tasks is in plan order.
	Tasks []Task
}

// DepOutcome is the outcome of a dependency handed to a task's handler: the
// dependency's name, how it ended, and its result or reason.
type DepOutcome struct {
	Task   string
	State  State
	Result []byte
	Error  string
}

// QueueInfo counts one queue's jobs.
type QueueInfo struct {
	Name    string
	Paused  bool
	Ready   int
	Delayed int
	Running int
	// Concurrency is the most jobs of the queue that run at once across
	// every worker (LimitQueue); 0 means no limit.
	Concurrency int
	// RateLimit is the most jobs of the queue that start in any window of
	// RatePeriod across every worker (RateLimitQueue); 0 means no limit,
	// and RatePeriod is then 0.
	RateLimit  int
	RatePeriod time.Duration
	// KeyConcurrency is the most jobs of one concurrency key of the queue
	// that run at once (LimitKeys); 0 means no limit.
	KeyConcurrency int
}

// ListParams pages through workflows.
type ListParams struct {
	// State filters on one state when set.
	State WorkflowState
	// Limit is the page size, 1 to 1000; 0 means 100.
	Limit int
	// Cursor is the previous page's NextCursor; empty for the first page.
	Cursor string
	// Name, when set, keeps the workflows whose name starts with it (a
	// prefix: the whole name matches too).
	Name string
	// Labels, when set, keeps the workflows that carry every given label
	// with the given value.
	//
	// A call with Name, Labels or IDPrefix examines at most ListScan
	// workflows (per partition) after the cursor; its page may then be
	// short, or empty, and still have a NextCursor: go on until NextCursor
	// is empty.
	Labels map[string]string
	// IDPrefix, when set, keeps the workflows whose ID starts with it (the
	// whole ID matches too): at most 128 bytes of the ID characters
	// A-Z a-z 0-9 _ . - @. The page is then in ID order (bytes, ascending)
	// instead of newest first, and its NextCursor is the last ID examined.
	// Only workflows whose ID has the prefix are examined (State, Name and
	// Labels tested on them, at most ListScan a call): the Redis store
	// reads them from an index of IDs, so that a prefix few IDs start
	// with costs a call no more than those few.
	IDPrefix string
}

// ListScan is the most workflows a filtered ListWorkflows call (ListParams
// Name, Labels or IDPrefix set) examines in one partition.
const ListScan = 1000

// WorkflowPage is one page of a listing.
type WorkflowPage struct {
	Workflows []Workflow
	// NextCursor is empty on the last page.
	NextCursor string
}

// TaskJobID is the job ID of a workflow's task. Plain job IDs cannot
// contain '/', so task jobs never collide with them.
func TaskJobID(workflow, task string) string { return workflow + "/" + task }

// UndoJobID is the job ID of a task's undo job.
func UndoJobID(workflow, task string) string { return workflow + "/" + task + "/undo" }
