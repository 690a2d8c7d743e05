package client

import (
	"time"
)

// Deadline cancels the workflow if it has not ended by t, by the store's
// clock, as Cancel does (undo per UndoOnCancel): its tasks that have not
// started end cancelled with reason "deadline", running ones are told to
// stop, and the workflow record's DeadlineHit is set. A worker of any
// queue finds it within its sweep interval (one of the first task's queue
// at its next claim); no other process has to be up then. t must be after
// the store's now at Submit (weir.ErrInvalid). See spec/states.md,
// Deadline.
func Deadline(t time.Time) WorkflowOption {
	return WorkflowOption{"Deadline(" + t.UTC().Format(time.RFC3339Nano) + ")", func(w *Workflow) {
		w.deadline, w.deadlineIn = t, 0
	}}
}

// DeadlineIn is Deadline d after the Submit, counted by the store's clock
// (whole milliseconds): a repeated Submit of the same workflow is the same
// plan whenever it is sent.
func DeadlineIn(d time.Duration) WorkflowOption {
	return WorkflowOption{"DeadlineIn(" + d.String() + ")", func(w *Workflow) {
		w.deadline, w.deadlineIn = time.Time{}, d
	}}
}
