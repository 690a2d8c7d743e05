package engine

import (
	"fmt"

	"github.com/weirflow/weir"
)

// Error is an error of the store with a stable result code (weir.Error).
type Error = weir.Error

// ValidationError says which input was wrong and why (weir.ValidationError).
type ValidationError = weir.ValidationError

// The store's sentinel errors, declared in package weir with their codes:
// the same values, so errors.Is matches either name.
var (
	ErrNotFound       = weir.ErrNotFound
	ErrWorkflowExists = weir.ErrWorkflowExists
	ErrJobExists      = weir.ErrJobExists
	ErrWorkflowEnded  = weir.ErrWorkflowEnded
	ErrJobEnded       = weir.ErrJobEnded
	ErrLeaseLost      = weir.ErrLeaseLost
	ErrInvalid        = weir.ErrInvalid
	ErrTooLarge       = weir.ErrTooLarge
	ErrStoreFull      = weir.ErrStoreFull
	ErrUnavailable    = weir.ErrUnavailable
	ErrProtocol       = weir.ErrProtocol
	// ErrJobNotRetryable: see weir.ErrJobNotRetryable.
	ErrJobNotRetryable = weir.ErrJobNotRetryable
	// ErrNotEnded: see weir.ErrNotEnded.
	ErrNotEnded = weir.ErrNotEnded
	// ErrNotOpen: see weir.ErrNotOpen.
	ErrNotOpen = weir.ErrNotOpen
	// ErrSignalled: see weir.ErrSignalled.
	ErrSignalled = weir.ErrSignalled
	// ErrNotRerunnable: see weir.ErrNotRerunnable.
	ErrNotRerunnable = weir.ErrNotRerunnable
)

// Errors lists every sentinel in the order of spec/errors.md (weir.Errors).
var Errors = weir.Errors

// ErrorForCode returns the sentinel with that result code, or nil.
func ErrorForCode(code string) *Error { return weir.ErrorForCode(code) }

// Sentinel returns the sentinel that err carries (weir.Sentinel).
func Sentinel(err error) *Error { return weir.Sentinel(err) }

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
