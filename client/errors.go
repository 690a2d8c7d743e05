package client

import (
	"errors"
	"fmt"

	"github.com/weirflow/weir/engine"
)

// Sentinels for errors.Is. A *JobError or *WorkflowError matches ErrFailed
// or ErrCancelled by how the job or workflow ended.
var (
	// ErrFailed matches a job that ended failed (out of attempts or
	// non-retryable) and a workflow that failed, including one whose failure
	// was then compensated.
	ErrFailed = errors.New("weir: failed")
	// ErrCancelled matches a job or a workflow that was cancelled, including
	// a workflow whose cancel was then compensated.
	ErrCancelled = errors.New("weir: cancelled")
	// ErrSubmitted: a workflow builder was changed after Submit, or a
	// workflow opened by ID was used as a builder. It comes inside a
	// *BuildError.
	ErrSubmitted = errors.New("weir: workflow already submitted")
	// ErrNotSubmitted: a workflow that was never submitted was asked for its
	// status, waited for or cancelled.
	ErrNotSubmitted = errors.New("weir: workflow not submitted")
	// ErrWrongQueue: a job opened with one queue belongs to another (its
	// result type may differ, so it is not decoded).
	ErrWrongQueue = errors.New("weir: job belongs to another queue")
)

// The store's errors that callers of this package meet most, for errors.Is
// without importing engine.
var (
	ErrNotFound       = engine.ErrNotFound
	ErrJobEnded       = engine.ErrJobEnded
	ErrWorkflowEnded  = engine.ErrWorkflowEnded
	ErrJobExists      = engine.ErrJobExists
	ErrWorkflowExists = engine.ErrWorkflowExists
)

// JobError is how a job (or a workflow task) ended when it did not complete:
// the error Job.Wait returns, and the error of a dependency or task result
// that is not there. It matches ErrFailed or ErrCancelled with errors.Is.
type JobError struct {
	JobID string
	// Workflow and Task are set for a workflow task.
	Workflow string
	Task     string
	// State is engine.Failed or engine.Cancelled (engine.Waiting, Queued or
	// Running for a task result asked for before the task ended).
	State engine.State
	// Attempt counts the attempts that started.
	Attempt int
	// Message is the remote reason: the handler's error text, the panic and
	// its stack, "lease_expired", or why the job was cancelled.
	Message string
}

func (e *JobError) Error() string {
	what := "job " + e.JobID
	if e.Task != "" {
		what = "task " + e.Task
	}
	if e.Message == "" {
		return fmt.Sprintf("weir: %s %s", what, e.State)
	}
	return fmt.Sprintf("weir: %s %s: %s", what, e.State, e.Message)
}

// Is reports whether target is ErrFailed or ErrCancelled matching e.State.
func (e *JobError) Is(target error) bool {
	return (target == ErrFailed && e.State == engine.Failed) ||
		(target == ErrCancelled && e.State == engine.Cancelled)
}

// WorkflowError is how a workflow ended when it did not complete: the error
// Workflow.Wait returns. It matches ErrFailed or ErrCancelled with errors.Is
// by why the workflow did not complete (a compensated workflow matches the
// reason it compensated for).
type WorkflowError struct {
	ID     string
	State  engine.WorkflowState
	Reason engine.Reason
	// Task and Message are the first failed task, in plan order, and its
	// reason; when no task failed, the first cancelled one.
	Task    string
	Message string
}

func (e *WorkflowError) Error() string {
	s := fmt.Sprintf("weir: workflow %s %s", e.ID, e.State)
	if e.Task != "" {
		s += fmt.Sprintf(": task %s: %s", e.Task, e.Message)
	}
	return s
}

// Is reports whether target is ErrFailed or ErrCancelled matching why the
// workflow did not complete.
func (e *WorkflowError) Is(target error) bool {
	switch target {
	case ErrFailed:
		return e.State == engine.WorkflowFailed || e.Reason == engine.ReasonFailure
	case ErrCancelled:
		return e.State == engine.WorkflowCancelled || e.Reason == engine.ReasonCancel
	}
	return false
}

// BuildError is a mistake in building a workflow, found by the builder and
// returned by Submit (and Workflow.Err). Nothing was written.
type BuildError struct {
	// Task is the task concerned, if any.
	Task    string
	Problem string
	// Err is ErrSubmitted for a change after Submit, else nil.
	Err error
}

func (e *BuildError) Error() string {
	if e.Task != "" {
		return fmt.Sprintf("weir: workflow task %q: %s", e.Task, e.Problem)
	}
	return "weir: workflow: " + e.Problem
}

func (e *BuildError) Unwrap() error { return e.Err }
