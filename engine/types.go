package engine

import "time"

// State is the state of a job, and of the workflow task it runs.
type State string

// Job and task states. A plain job is never Waiting; an undo job is Pending
// until the undos of its task's completed descendants have ended.
const (
	Waiting   State = "waiting"   // a task with open dependencies
	Pending   State = "pending"   // an undo waiting for its descendants' undos
	Queued    State = "queued"    // in its queue, ready or delayed until RunAt
	Running   State = "running"   // leased to a worker
	Completed State = "completed" // ended with a result
	Failed    State = "failed"    // ended out of attempts or non-retryable
	Cancelled State = "cancelled" // ended without running to completion
)

// Ended reports whether s is a terminal state.
func (s State) Ended() bool { return s == Completed || s == Failed || s == Cancelled }

// WorkflowState is the state of a workflow.
type WorkflowState string

// Workflow states.
const (
	WorkflowRunning            WorkflowState = "running"
	WorkflowCompleted          WorkflowState = "completed"
	WorkflowFailed             WorkflowState = "failed"
	WorkflowCancelled          WorkflowState = "cancelled"
	WorkflowCompensating       WorkflowState = "compensating"
	WorkflowCompensated        WorkflowState = "compensated"
	WorkflowCompensationFailed WorkflowState = "compensation_failed"
)

// Ended reports whether s is a terminal state.
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

// Plan is a workflow as submitted: its ID, its tasks in plan order and its
// options. Dependencies name tasks listed earlier, so a plan is acyclic.
type Plan struct {
	ID    string
	Tasks []TaskSpec
	// FailFast: the first unabsorbed failure cancels every task that has not
	// started, except Always tasks.
	FailFast bool
	// UndoOnCancel is what Cancel does when the caller does not say: run the
	// undos of completed tasks (true) or not. Fixed at submit. The client
	// package defaults it to true.
	UndoOnCancel bool
}

// TaskSpec is one node of a plan.
type TaskSpec struct {
	Name    string
	Queue   string
	Payload []byte
	// After names the tasks this one depends on; each must be listed earlier.
	After []string
	// Always: run once all dependencies ended, whether they completed,
	// failed or were cancelled.
	Always bool
	// Undo is the compensation job run if the workflow compensates after this
	// task completed. It runs with the task's priority and retry policy.
	Undo     *UndoSpec
	Priority int
	// MaxAttempts counts every attempt, the first included; 0 means 1.
	MaxAttempts int
	// Backoff is the base retry delay: attempt n waits Backoff·2^(n-1),
	// capped at MaxBackoff. 0 means DefaultBackoff.
	Backoff time.Duration
	// Timeout bounds one attempt; 0 means none (the lease still applies).
	Timeout time.Duration
	// MaxExpiries is how many times the job's lease may expire (its worker
	// was killed, or lost Redis for a lease's length) without that costing
	// an attempt: the job is queued again at once, reason lease_expired.
	// Past it, an expiry is a failed attempt, retried while attempts
	// remain. 0 means DefaultMaxExpiries; NoExpiries (-1) means none.
	MaxExpiries int
}

// UndoSpec is a task's compensation job.
type UndoSpec struct {
	Queue   string
	Payload []byte
}

// JobSpec is a plain job (one outside any workflow).
type JobSpec struct {
	// ID is given by the caller (the client generates a random one when the
	// user gives none); a second enqueue with the same ID and spec is a
	// success with no effect.
	ID       string
	Queue    string
	Payload  []byte
	Priority int
	// RunAt delays the first attempt; zero means now.
	RunAt       time.Time
	MaxAttempts int
	Backoff     time.Duration
	Timeout     time.Duration
	// MaxExpiries is how many times the job's lease may expire (its worker
	// was killed, or lost Redis for a lease's length) without that costing
	// an attempt: the job is queued again at once, reason lease_expired.
	// Past it, an expiry is a failed attempt, retried while attempts
	// remain. 0 means DefaultMaxExpiries; NoExpiries (-1) means none.
	MaxExpiries int
}

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
}

// Task is a snapshot of one task of a workflow.
type Task struct {
	Name    string
	Queue   string
	After   []string
	Always  bool
	State   State
	Attempt int
	Result  []byte
	Error   string
	// Undo is nil for a task with no undo job.
	Undo *UndoStatus
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
	ID           string
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
	// Tasks is in plan order.
	Tasks []Task
}

// TaskJobID is the job ID of a workflow's task. Plain job IDs cannot
// contain '/', so task jobs never collide with them.
func TaskJobID(workflow, task string) string { return workflow + "/" + task }

// UndoJobID is the job ID of a task's undo job.
func UndoJobID(workflow, task string) string { return workflow + "/" + task + "/undo" }
