package weir

import (
	"errors"
	"fmt"
)

// Error is an error of the store with a stable result code: every store
// returns the same code for the same refusal, and spec/errors.md lists
// them all. Every store sentinel below is an *Error, so callers test with
// errors.Is.
type Error struct {
	// Code is the stable, upper-case result code (spec/errors.md); the REST
	// API's error bodies carry it too.
	Code string
	msg  string
}

func (e *Error) Error() string { return e.msg }

// The store's sentinel errors. Each one is listed once, with its code, in
// spec/errors.md; a store returns them possibly wrapped (with the ID
// concerned), so test them with errors.Is.
var (
	// ErrNotFound is returned when no workflow or job has that ID, or when
	// it ended and its retention passed.
	ErrNotFound = &Error{"NOTFOUND", "weir: not found"}
	// ErrWorkflowExists is returned when a workflow with that ID exists with
	// a different plan.
	ErrWorkflowExists = &Error{"WFEXISTS", "weir: a workflow with this ID exists with a different plan"}
	// ErrJobExists is returned when a job with that ID exists with a
	// different spec.
	ErrJobExists = &Error{"JOBEXISTS", "weir: a job with this ID exists with a different spec"}
	// ErrWorkflowEnded is returned when the workflow has already ended.
	ErrWorkflowEnded = &Error{"WFENDED", "weir: workflow has ended"}
	// ErrJobEnded is returned when the job has already ended.
	ErrJobEnded = &Error{"JOBENDED", "weir: job has ended"}
	// ErrLeaseLost is returned when the lease token is not the job's current
	// one (the lease expired, the job was finished, or the job is unknown).
	// Nothing changed. It is also the cause of a handler's context when its
	// worker lost the job's lease: the job may already run elsewhere, and
	// nothing this attempt returns is stored.
	ErrLeaseLost = &Error{"LEASELOST", "weir: lease lost"}
	// ErrInvalid is returned for bad input; a *ValidationError says which
	// field and why. Nothing was written.
	ErrInvalid = &Error{"INVALID", "weir: invalid input"}
	// ErrTooLarge is returned when a payload, result, plan or batch is over
	// its limit. It comes inside a *ValidationError, which also matches
	// ErrInvalid.
	ErrTooLarge = &Error{"TOOLARGE", "weir: over the size limit"}
	// ErrStoreFull is returned when the store refused a write for lack of
	// memory. Nothing was written.
	ErrStoreFull = &Error{"STOREFULL", "weir: store is full"}
	// ErrUnavailable is returned when the store could not run the
	// transition now (busy, read-only during a failover, connection lost
	// before a reply). The call may be retried: every transition is safe to
	// repeat.
	ErrUnavailable = &Error{"UNAVAILABLE", "weir: store unavailable, retry"}
	// ErrProtocol is returned when the store replied with something this
	// version does not understand (for example a store running another
	// protocol version).
	ErrProtocol = &Error{"PROTOCOL", "weir: protocol mismatch"}
	// ErrJobNotRetryable is returned by RetryJob for a job that is not a
	// plain job ended failed or cancelled: one waiting, queued or running
	// (a repeat after a lost reply finds it so), one that completed, or a
	// workflow's task or undo job, which runs again only with its workflow.
	ErrJobNotRetryable = &Error{"NOTRETRYABLE", "weir: job cannot be retried"}
	// ErrNotEnded is returned by DeleteJob and DeleteWorkflow for a job or
	// workflow that has not ended: only finished records are deleted.
	ErrNotEnded = &Error{"NOTENDED", "weir: has not ended"}
	// ErrNotOpen is returned by a signal to a signal task that is not
	// open yet: its dependencies have not all ended.
	ErrNotOpen = &Error{"NOTOPEN", "weir: signal task is not open yet"}
	// ErrSignalled is returned by a signal to a signal task that has
	// ended otherwise: by another signal (another outcome or value), by
	// its timeout, or cancelled. The same signal again is no error.
	ErrSignalled = &Error{"SIGNALLED", "weir: signal task has ended"}
	// ErrNotRerunnable is returned by RerunWorkflow for a workflow with
	// no failed part to run again: one running or compensating (a repeat
	// after a lost reply finds it running), one whose tasks all completed,
	// or one that compensated (its completed work was undone, so its
	// results are no longer there to keep).
	ErrNotRerunnable = &Error{"NOTRERUNNABLE", "weir: workflow cannot be re-run"}
)

// Errors lists every store sentinel in the order of spec/errors.md.
var Errors = []*Error{
	ErrNotFound, ErrWorkflowExists, ErrJobExists, ErrWorkflowEnded, ErrJobEnded,
	ErrLeaseLost, ErrInvalid, ErrTooLarge, ErrStoreFull, ErrUnavailable, ErrProtocol,
	ErrJobNotRetryable, ErrNotEnded, ErrNotOpen, ErrSignalled, ErrNotRerunnable,
}

// ErrorForCode returns the store sentinel with that result code, or nil.
func ErrorForCode(code string) *Error {
	for _, e := range Errors {
		if e.Code == code {
			return e
		}
	}
	return nil
}

// ValidationError says which input was wrong and why. It matches ErrInvalid
// with errors.Is, and ErrTooLarge too when a limit was passed.
type ValidationError struct {
	// Task is the task's name, when the problem is in one task of a plan.
	Task string
	// Field names the offending field ("id", "queue", "after", "payload"...).
	Field string
	// Problem says what is wrong, in words.
	Problem string
	// TooLarge is set when a size or count limit was passed.
	TooLarge bool
}

func (e *ValidationError) Error() string {
	where := e.Field
	if e.Task != "" {
		where = fmt.Sprintf("task %q: %s", e.Task, e.Field)
	}
	return fmt.Sprintf("weir: invalid %s: %s", where, e.Problem)
}

// Is reports whether target is ErrInvalid, or ErrTooLarge for a limit.
func (e *ValidationError) Is(target error) bool {
	return target == ErrInvalid || (e.TooLarge && target == ErrTooLarge)
}

// Sentinel returns the store sentinel that err carries: the *Error it
// wraps, or ErrTooLarge / ErrInvalid for a *ValidationError. It returns nil
// for nil and for an error that carries no result code.
func Sentinel(err error) *Error {
	var v *ValidationError
	if errors.As(err, &v) {
		if v.TooLarge {
			return ErrTooLarge
		}
		return ErrInvalid
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// How a job or workflow ended, for errors.Is. A *JobError or *WorkflowError
// matches ErrFailed or ErrCancelled by how the job or workflow ended.
var (
	// ErrFailed matches a job that ended failed (out of attempts or
	// non-retryable) and a workflow that failed, including one whose failure
	// was then compensated.
	ErrFailed = errors.New("weir: failed")
	// ErrCancelled matches a job or a workflow that was cancelled, including
	// a workflow whose cancel was then compensated.
	ErrCancelled = errors.New("weir: cancelled")
)

// Errors of package client's handles and workflow builder.
var (
	// ErrSubmitted is returned when a workflow builder was changed after
	// Submit, or a workflow opened by ID was used as a builder. It comes
	// inside a *BuildError.
	ErrSubmitted = errors.New("weir: workflow already submitted")
	// ErrNotSubmitted is returned when a workflow that was never submitted
	// was asked for its status, waited for or cancelled.
	ErrNotSubmitted = errors.New("weir: workflow not submitted")
	// ErrWrongQueue is returned when a job opened with one queue belongs to
	// another (its result type may differ, so it is not decoded).
	ErrWrongQueue = errors.New("weir: job belongs to another queue")
)

// JobError is how a job (or a workflow task) ended when it did not complete:
// the error that waiting for a job returns, and the error of a dependency or
// task result that is not there. It matches ErrFailed or ErrCancelled with
// errors.Is.
type JobError struct {
	JobID string
	// Workflow and Task are set for a workflow task.
	Workflow string
	Task     string
	// State is Failed or Cancelled (Waiting, Queued or Running for a task
	// result asked for before the task ended).
	State State
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
	return (target == ErrFailed && e.State == Failed) ||
		(target == ErrCancelled && e.State == Cancelled)
}

// WorkflowError is how a workflow ended when it did not complete: the error
// that waiting for a workflow returns. It matches ErrFailed or ErrCancelled
// with errors.Is by why the workflow did not complete (a compensated
// workflow matches the reason it compensated for).
type WorkflowError struct {
	ID     string
	State  WorkflowState
	Reason Reason
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
		return e.State == WorkflowFailed || e.Reason == ReasonFailure
	case ErrCancelled:
		return e.State == WorkflowCancelled || e.Reason == ReasonCancel
	}
	return false
}

// BuildError is a mistake in building a workflow with package client, found
// by the builder and returned by Submit (and the builder's Err). Nothing was
// written.
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

// Unwrap returns Err.
func (e *BuildError) Unwrap() error { return e.Err }

// Causes of a worker handler's context being cancelled, for context.Cause
// (with ErrLeaseLost, when the worker lost the job's lease).
var (
	// ErrJobCancelled is the cause when the job, or its workflow, was
	// cancelled.
	ErrJobCancelled = errors.New("weir: job cancelled")
	// ErrTimeout is the cause when the job's timeout passed.
	ErrTimeout = errors.New("weir: job timed out")
	// ErrShutdown is the cause when the worker is shutting down and the
	// grace period ended; the job is handed back to its queue without
	// counting the attempt.
	ErrShutdown = errors.New("weir: worker shutting down")
)

// Errors of package worker's set-up and of its handlers' helpers.
var (
	// ErrRunning is returned when Start was called on a running worker, and
	// when a handler is registered on a running worker.
	ErrRunning = errors.New("weir: worker already running")
	// ErrNoHandlers is returned when Start was called with no handler
	// registered.
	ErrNoHandlers = errors.New("weir: worker has no handlers")
	// ErrHandlerExists is returned when a handler is registered for a queue
	// that already has one on that worker.
	ErrHandlerExists = errors.New("weir: queue already has a handler")
	// ErrNoDependency is returned when a handler asked for the result of a
	// task that is not a dependency of its job.
	ErrNoDependency = errors.New("weir: not a dependency of this job")
)
