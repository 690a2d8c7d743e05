package worker

import (
	"fmt"
	"sync"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/hooks"
)

// Dynamic tasks (spec/states.md, Dynamic tasks): a task's handler adds
// tasks to its own workflow; they are written with the task's completed
// finish, in the same step, and dropped when the attempt does not
// complete.

// additions are the tasks a handler added, shared by the JobInfo copies of
// one attempt.
type additions struct {
	mu    sync.Mutex
	tasks []engine.TaskSpec
	gate  bool
}

// AddOption is an option of AddTasks.
type AddOption struct {
	text string
	gate bool
}

// String returns the option as the call that made it.
func (o AddOption) String() string { return o.text }

// GateDependents makes the finishing task's dependents that wait (those
// not yet run) wait for the added tasks too: they get every added task as
// a dependency, after their own, and read their results with DepResult.
// Added tasks may then depend only on the finishing task, on each other
// and on tasks that ended.
func GateDependents() AddOption { return AddOption{text: "GateDependents()", gate: true} }

// AddTasks adds the tasks of add (built with client.AddTask and friends
// on a client.NewWorkflow; client.Existing names the workflow's tasks
// they depend on, this one included) to the job's workflow. They are
// written atomically with the job's completed finish, so that a fan-out
// whose width is known only at run time is one workflow; a failed,
// cancelled or released attempt adds nothing. It returns add's first
// building mistake (nothing is added then) or an error for a job that is
// not a workflow's task. Calls add up; GateDependents given to any of them
// holds for all.
//
// The store checks the additions with the finish: a name the workflow
// already has, a dependency it does not have, or a grown plan past the
// store's limits fails the attempt, not retried, with the store's reason.
func (j *JobInfo) AddTasks(add *client.Workflow, opts ...AddOption) error {
	if j.Workflow == "" || j.Undo || j.dyn == nil {
		return fmt.Errorf("%w: job %q is not a workflow's task: only a task adds tasks", weir.ErrInvalid, j.ID)
	}
	tasks, err := hooks.AddedTasks(add)
	if err != nil {
		return err
	}
	gate := false
	for _, o := range opts {
		gate = gate || o.gate
	}
	return j.addTaskSpecs(tasks, gate)
}

func init() {
	hooks.AddTaskSpecs = func(j any, tasks []engine.TaskSpec, gate bool) error {
		return j.(*JobInfo).addTaskSpecs(tasks, gate)
	}
}

// addTaskSpecs is AddTasks for tasks given as specs rather than built
// with package client: for runners that read them from elsewhere (package
// shell reads a file in the workflow-file syntax, through internal/hooks).
func (j *JobInfo) addTaskSpecs(tasks []engine.TaskSpec, gate bool) error {
	if j.Workflow == "" || j.Undo || j.dyn == nil {
		return fmt.Errorf("%w: job %q is not a workflow's task: only a task adds tasks", weir.ErrInvalid, j.ID)
	}
	j.dyn.mu.Lock()
	defer j.dyn.mu.Unlock()
	j.dyn.tasks = append(j.dyn.tasks, tasks...)
	j.dyn.gate = j.dyn.gate || gate
	return nil
}

// addTo gives completed outcome o the tasks the handler added, checked as
// the store will check them first: a refused addition fails the attempt.
func (j *JobInfo) addTo(o engine.Outcome, lim weir.Limits) engine.Outcome {
	if j.dyn == nil {
		return o
	}
	j.dyn.mu.Lock()
	defer j.dyn.mu.Unlock()
	if len(j.dyn.tasks) == 0 {
		return o
	}
	o.Add, o.GateDependents = j.dyn.tasks, j.dyn.gate
	if err := engine.ValidateAdd(o, lim); err != nil {
		return failNow(o, "added tasks refused: "+err.Error())
	}
	return o
}
