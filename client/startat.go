package client

import "time"

// StartAt submits the workflow now and holds its tasks until t, by the
// store's clock (a t already past starts them at once): the workflow is
// listed and can be cancelled meanwhile. The Delay option of a task
// without dependencies counts from t. A workflow that starts later cannot
// have a signal task without dependencies (weir.ErrInvalid at Submit).
func StartAt(t time.Time) WorkflowOption {
	return WorkflowOption{"StartAt(" + t.UTC().Format(time.RFC3339Nano) + ")", func(w *Workflow) { w.startAt = t }}
}
