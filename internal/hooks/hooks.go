// Package hooks lets weir's own packages reach what they share with each
// other but not with users: functions whose signatures hold package
// engine's types, which the user-facing packages client and worker do not
// export (internal/apicheck). Each hook is set by the package that owns it,
// in its init, so it is set in every program that imports that package.
package hooks

import "github.com/weirflow/weir/engine"

var (
	// AddedTasks returns the tasks of a *client.Workflow builder as a
	// finish adds them to a running workflow (set by package client).
	AddedTasks func(w any) ([]engine.TaskSpec, error)
	// AddTaskSpecs adds tasks given as specs to the attempt of a
	// *worker.JobInfo, as its AddTasks does, gating the finishing task's
	// dependents when gate is set (set by package worker; package shell
	// adds the tasks a command wrote).
	AddTaskSpecs func(j any, tasks []engine.TaskSpec, gate bool) error
)
