package workflowfile

import "github.com/weirflow/weir/engine"

// ParseAdded reads a file of tasks that a running shell task adds to its
// own workflow (spec/workflow-file.md, "Adding tasks at run time"; the
// file WEIR_ADD_TASKS names): a document with tasks, in the syntax of a
// workflow file's, and gate_dependents. A task's after may name the
// workflow's tasks (the one that adds them included) as well as tasks
// listed before it; the store checks those names and the grown plan's
// limits with the finish. It returns the tasks in file order and whether
// the finishing task's dependents are gated on them; a problem is an
// *Error, as Parse's.
func ParseAdded(name string, data []byte, o Options) (tasks []engine.TaskSpec, gate bool, err error) {
	lf, err := parse(name, data, o, true)
	if err != nil {
		return nil, false, err
	}
	return lf.Plan.Tasks, lf.gate, nil
}
