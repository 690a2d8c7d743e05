package engine

import "github.com/weirflow/weir"
import "context"

// Signaller is implemented by stores that end signal tasks
// (TaskSpec.Signal): both stores of this module. It is its own interface,
// as StopWatcher is, so that a Store written before signals still
// compiles; the client package says ErrUnsupported for a store without it.
type Signaller interface {
	// Signal completes or fails an open signal task (spec/states.md,
	// Signal). The same signal again is a success with Signalled false; a
	// task that is not open yet is ErrNotOpen; one that ended otherwise is
	// ErrSignalled.
	Signal(ctx context.Context, p SignalParams) (SignalResult, error)
}

// SignalParams names a signal task and how it ends.
type SignalParams struct {
	Workflow string
	Task     string
	// Kind is OutcomeCompleted or OutcomeFailed.
	Kind OutcomeKind
	// Value is the task's result when it completes (at most MaxResult
	// bytes); ignored when it fails.
	Value []byte
	// Reason is the task's error when it fails (cut to MaxError bytes);
	// ignored when it completes.
	Reason string
}

// SignalResult is what a signal did.
type SignalResult struct {
	// Signalled is false for a repeat of the signal that ended the task:
	// nothing changed.
	Signalled bool
	// State is the task's state: Completed or Failed.
	State weir.State
	// Pushed lists the wake-ups the task's end caused, in push order.
	Pushed []Pushed
	// WorkflowState is the workflow's state after the signal.
	WorkflowState weir.WorkflowState
	// WorkflowEnded: this signal moved the workflow to a terminal state.
	WorkflowEnded bool
}
