package client

import (
	"fmt"
	"slices"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/hooks"
)

// Dynamic tasks (spec/states.md, Dynamic tasks): a running task adds tasks
// to its own workflow as it completes. The tasks to add are built as a
// workflow is, with AddTask, After, Always, Undo and ConcurrencyKey on a
// builder from NewWorkflow, and handed to the job's AddTasks (package
// worker); Existing names the running workflow's tasks they depend on.

// Existing returns a reference to the task named name of the running
// workflow, for the After of tasks added to it at run time (the finishing
// task itself, or any other of its tasks: only ended ones when the
// finishing task's dependents are gated). It is not a task of w: w's
// Submit would find no such task.
func Existing(w *Workflow, name string) TaskRef {
	return &Task[struct{}]{n: &node{wf: w, index: -1, existing: true, spec: engine.TaskSpec{Name: name}}}
}

func init() {
	hooks.AddedTasks = func(w any) ([]engine.TaskSpec, error) { return addedTasks(w.(*Workflow)) }
}

// addedTasks returns the tasks of w, in the order added, as a finish adds
// them to a running workflow, or w's first building mistake. It is for
// package worker (JobInfo.AddTasks, through internal/hooks); w is not
// changed.
func addedTasks(w *Workflow) ([]engine.TaskSpec, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return nil, w.err
	}
	if w.opened {
		return nil, &weir.BuildError{Problem: "a workflow opened by ID has no tasks to add", Err: weir.ErrSubmitted}
	}
	out := make([]engine.TaskSpec, len(w.nodes))
	for i, n := range w.nodes {
		s := n.spec
		s.After = slices.Clone(s.After)
		out[i] = s
	}
	if len(out) == 0 {
		return nil, &weir.BuildError{Problem: fmt.Sprintf("workflow builder %q has no task to add", w.id)}
	}
	return out, nil
}
