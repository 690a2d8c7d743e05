package client

import (
	"time"

	"github.com/weirflow/weir/engine"
)

// StartAt submits the workflow now and holds its tasks until t, by the
// store's clock (a t already past starts them at once): the workflow is
// listed and can be cancelled meanwhile. A Delay of a task without
// dependencies counts from t. A workflow that starts later cannot have a
// signal task without dependencies (weir.ErrInvalid at Submit).
func StartAt(t time.Time) WorkflowOption {
	return WorkflowOption{"StartAt(" + t.UTC().Format(time.RFC3339Nano) + ")", func(w *Workflow) { w.startAt = t }}
}

// Delay makes the task wait d after its dependencies ended (a task without
// dependencies: after Submit, or StartAt) before it is ready to run,
// counted by the store's clock; whole milliseconds. A signal task has no
// delay (weir.ErrInvalid at Submit).
func (t *Task[R]) Delay(d time.Duration) *Task[R] {
	return t.set(func(s *engine.TaskSpec) { s.Delay = d })
}
