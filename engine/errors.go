package engine

import (
	"errors"
	"fmt"
)

// Error is a weir error with a stable result code. The same code is returned
// by the Lua scripts and listed in spec/errors.md; every sentinel below is an
// *Error, so callers test with errors.Is.
type Error struct {
	// Code is the stable, upper-case result code shared with the scripts.
	Code string
	msg  string
}

func (e *Error) Error() string { return e.msg }

// Sentinel errors. Each one is listed once, with its code, in spec/errors.md.
var (
	// ErrNotFound: no workflow or job has that ID (or it ended and its
	// retention passed).
	ErrNotFound = &Error{"NOTFOUND", "weir: not found"}
	// ErrWorkflowExists: a workflow with that ID exists with a different plan.
	ErrWorkflowExists = &Error{"WFEXISTS", "weir: a workflow with this ID exists with a different plan"}
	// ErrJobExists: a job with that ID exists with a different spec.
	ErrJobExists = &Error{"JOBEXISTS", "weir: a job with this ID exists with a different spec"}
	// ErrWorkflowEnded: the workflow has already ended.
	ErrWorkflowEnded = &Error{"WFENDED", "weir: workflow has ended"}
	// ErrJobEnded: the job has already ended.
	ErrJobEnded = &Error{"JOBENDED", "weir: job has ended"}
	// ErrLeaseLost: the lease token is not the job's current one (the lease
	// expired, the job was finished, or the job is unknown). Nothing changed.
	ErrLeaseLost = &Error{"LEASELOST", "weir: lease lost"}
	// ErrInvalid: bad input; a *ValidationError says which field and why.
	// Nothing was written.
	ErrInvalid = &Error{"INVALID", "weir: invalid input"}
	// ErrTooLarge: a payload, result, plan or batch is over its limit. It
	// comes inside a *ValidationError, which also matches ErrInvalid.
	ErrTooLarge = &Error{"TOOLARGE", "weir: over the size limit"}
	// ErrStoreFull: the store refused a write for lack of memory. Nothing
	// was written.
	ErrStoreFull = &Error{"STOREFULL", "weir: store is full"}
	// ErrUnavailable: the store could not run the transition now (busy,
	// read-only during a failover, connection lost before a reply). The call
	// may be retried: every transition is safe to repeat.
	ErrUnavailable = &Error{"UNAVAILABLE", "weir: store unavailable, retry"}
	// ErrProtocol: the store replied with something this version does not
	// understand (for example a store running another protocol version).
	ErrProtocol = &Error{"PROTOCOL", "weir: protocol mismatch"}
)

// Errors lists every sentinel in the order of spec/errors.md.
var Errors = []*Error{
	ErrNotFound, ErrWorkflowExists, ErrJobExists, ErrWorkflowEnded, ErrJobEnded,
	ErrLeaseLost, ErrInvalid, ErrTooLarge, ErrStoreFull, ErrUnavailable, ErrProtocol,
}

// ErrorForCode returns the sentinel with that result code, or nil.
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

func invalid(task, field, format string, args ...any) error {
	return &ValidationError{Task: task, Field: field, Problem: fmt.Sprintf(format, args...)}
}

func tooLarge(task, field, format string, args ...any) error {
	return &ValidationError{Task: task, Field: field, Problem: fmt.Sprintf(format, args...), TooLarge: true}
}

// wrap adds the ID it concerns to a sentinel, keeping errors.Is working.
func wrap(err *Error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", err, fmt.Sprintf(format, args...))
}

// Sentinel returns the sentinel that err carries: the *Error it wraps, or
// ErrTooLarge / ErrInvalid for a *ValidationError. It returns nil for nil
// and for an error that carries no result code.
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
