package engine

import (
	"github.com/weirflow/weir"
	"strconv"
	"time"
)

// RerunWorkflowParams re-runs the failed part of an ended workflow.
type RerunWorkflowParams struct {
	ID string
}

// RerunResult says what a RerunWorkflow did.
type RerunResult struct {
	// Run is the workflow's run after the call: 2 after its first re-run
	// (its run when the call was refused).
	Run int
	// Reset lists the task jobs that run again, in plan order: every
	// failed or cancelled task and every task downstream of one.
	Reset []string
	// Pushed lists the tasks pushed ready, in plan order, as a submit
	// pushes its roots (a delayed one is not listed, an opened signal task
	// neither).
	Pushed []Pushed
	// WorkflowState is the workflow's state after the call: running on
	// success; the state that refused it with ErrNotRerunnable.
	WorkflowState weir.WorkflowState
}

// RerunWorkflow runs the failed part of a workflow that ended failed,
// cancelled or completed (a CancelJob, an absorbed failure) again
// (spec/states.md, RerunWorkflow): every failed or
// cancelled task and every task downstream of one is reset (attempts,
// lease expiries, result, error, end, cancel and last finish cleared;
// progress and checkpoint kept, as RetryJob keeps them) to waiting with
// its open dependencies counted again, and those with none left are
// promoted in plan order as a submit promotes its roots; the completed
// tasks that are not downstream of a reset one keep their state and
// result. The workflow is running again under its next run number, its
// end, removal time, cancel, FailFast and failure flags cleared, and its
// deadline armed again when it is still ahead (a passed one is not). An
// unknown workflow is ErrNotFound; one running, compensating or
// compensated, or one whose tasks all completed (nothing to re-run),
// ErrNotRerunnable (with WorkflowState and Run set), changing nothing.
func (m *Model) RerunWorkflow(now time.Time, p RerunWorkflowParams) (RerunResult, error) {
	t := m.tick(now)
	w := m.workflows[p.ID]
	if w == nil {
		return RerunResult{}, wrap(weir.ErrNotFound, "workflow %q", p.ID)
	}
	if w.state != weir.WorkflowFailed && w.state != weir.WorkflowCancelled && w.state != weir.WorkflowCompleted {
		return RerunResult{Run: w.run, WorkflowState: w.state},
			wrap(weir.ErrNotRerunnable, "workflow %q is %s", p.ID, w.state)
	}
	n := len(w.tasks)
	reset := make([]bool, n)
	res := RerunResult{Run: w.run, WorkflowState: w.state}
	// the failed part: the failed and cancelled tasks, and everything
	// downstream of one, found through the dependents (with tasks added
	// at run time, a gated task depends on tasks after it in plan order)
	var todo []int
	for i, j := range w.tasks {
		// a catch that did not run because nothing failed (no_failure) is
		// not a failed part: it runs again only downstream of one
		if j.state == weir.Failed || j.state == weir.Cancelled && j.err != weir.ReasonTextNoFailure {
			reset[i] = true
			todo = append(todo, i)
		}
	}
	for len(todo) > 0 {
		k := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, d := range w.c.dependents[k] {
			if !reset[d] {
				reset[d] = true
				todo = append(todo, d)
			}
		}
	}
	for i, j := range w.tasks {
		if reset[i] {
			res.Reset = append(res.Reset, j.id)
		}
	}
	if len(res.Reset) == 0 {
		// completed with nothing failed or cancelled, or cancelled while
		// its last tasks ran, and they all completed
		return res, wrap(weir.ErrNotRerunnable, "workflow %q has no failed or cancelled task", p.ID)
	}
	m.expiry.remove("w:" + w.id)
	w.run++
	w.state, w.reason = weir.WorkflowRunning, ""
	w.ended, w.expires = 0, 0
	w.unabsorbed, w.failedBeforeCancel, w.failFastFired = false, false, false
	w.cancelReq, w.cancelUndo, w.deadlineHit = false, false, false
	w.undos, w.undoBlockers, w.undoParents = nil, nil, nil
	w.undoRemaining, w.undoFailed = 0, false
	w.remaining = len(res.Reset)
	m.emit(weir.EventWorkflowRerun, w.id, 0, strconv.Itoa(w.run), t)
	for i, j := range w.tasks {
		if !reset[i] {
			continue
		}
		j.state = weir.Waiting
		j.attempt, j.expiries = 0, 0
		j.resetAttempts()
		j.result, j.err = nil, ""
		j.ended, j.runAt = 0, 0
		j.cancelReq, j.token, j.deadline, j.last = false, "", 0, nil
		j.unlisted, j.signal = false, ""
		j.readyAt, j.promotedAt = 0, 0
		j.depFailed = false
		w.open[i] = 0
		for _, d := range w.c.deps[i] {
			if reset[d] {
				w.open[i]++
			}
		}
	}
	var fx effects
	for i, j := range w.tasks {
		if reset[i] && w.open[i] == 0 {
			m.promote(j, t, &fx)
		}
	}
	if w.deadline > t {
		m.queue(w.c.plan.Tasks[0].Queue).delayed.add(DeadlineMarker(w.id), w.deadline, 0)
	}
	res.Run, res.Pushed, res.WorkflowState = w.run, fx.pushed, w.state
	return res, nil
}
