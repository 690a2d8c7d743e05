package engine

import (
	"github.com/weirflow/weir"
	"slices"
	"time"
)

// validateSignal checks a task's signal fields: a timeout only on a signal
// task, whole milliseconds, not negative, at most 100 years; the fields a
// signal task cannot use (signalFieldConflict); and its delay
// (model_delay.go).
func validateSignal(t TaskSpec) error {
	if err := validateDelay(t); err != nil {
		return err
	}
	if err := signalFieldConflict(t); err != nil {
		return err
	}
	if t.SignalTimeout == 0 {
		return nil
	}
	switch {
	case !t.Signal:
		return invalid(t.Name, "signal_timeout", "a timeout needs a signal task")
	case t.SignalTimeout < 0 || t.SignalTimeout%time.Millisecond != 0 || t.SignalTimeout > maxSignalTimeout:
		return invalid(t.Name, "signal_timeout", "%v is not whole milliseconds in [0, 100 years]", t.SignalTimeout)
	}
	return nil
}

const maxSignalTimeout = 100 * 365 * 24 * time.Hour

// signalFieldConflict refuses, on a signal task, the fields that have
// nothing to apply to (spec/states.md, Signal): no worker claims the task,
// so it has no concurrency key (its undo runs without one), and a failing
// signal fails it without a retry, so without an undo it has no priority,
// attempts, expiries, backoff or attempt timeout; with an undo those are
// the undo's, as for any task. The first such field, in the workflow
// file's order, is named.
func signalFieldConflict(t TaskSpec) error {
	if !t.Signal {
		return nil
	}
	if t.Key != "" {
		return invalid(t.Name, "key", "a signal task is claimed by no worker: a concurrency key holds nothing (its undo runs without one)")
	}
	if t.Undo != nil {
		return nil
	}
	const why = "a signal task runs nothing and a failing signal is never retried: %s applies only to its undo, and it has none"
	switch {
	case t.Priority != 0:
		return invalid(t.Name, "priority", why, "a priority")
	case t.MaxAttempts > 1:
		return invalid(t.Name, "max_attempts", why, "more than one attempt")
	case t.MaxExpiries != 0:
		return invalid(t.Name, "max_expiries", why, "a lease's expiries")
	case t.Backoff != 0:
		return invalid(t.Name, "backoff", why, "a backoff")
	case t.Timeout != 0:
		return invalid(t.Name, "timeout", why+" (the wait for its signal is its SignalTimeout)", "an attempt's timeout")
	}
	return nil
}

// signalTimedOut fails open signal task j whose timeout passed, as a
// sweep finds it due: reason "timeout", with the consequences of a
// failed task.
func (m *Model) signalTimedOut(now int64, j *job) Settled {
	var fx effects
	j.err = weir.ReasonTextSignalTimeout
	m.end(j, weir.Failed, now, &fx)
	return Settled{JobID: j.id, State: j.state, Pushed: fx.pushed, WorkflowState: j.wf.state, WorkflowEnded: fx.wfEnded}
}

// ValidateSignal checks SignalParams as every store does before it looks
// at the task: IDs and names, the kind, the value's size.
func ValidateSignal(p SignalParams, l weir.Limits) error {
	if !ValidID(p.Workflow) {
		return invalid("", "id", "workflow ID %q must "+IDRule, p.Workflow)
	}
	if !ValidName(p.Task) {
		return invalid("", "task", "task name %q must "+NameRule, p.Task)
	}
	if p.Kind != OutcomeCompleted && p.Kind != OutcomeFailed {
		return invalid(p.Task, "kind", "a signal completes or fails a task, not %q", p.Kind)
	}
	if len(p.Value) > l.MaxResult {
		return tooLarge(p.Task, "result", "value of %d bytes, the limit is %d", len(p.Value), l.MaxResult)
	}
	return nil
}

// Signal completes or fails open signal task p.Task of workflow
// p.Workflow, with the consequences of a finished task (promotion,
// Always, FailFast, compensation, the workflow's end). The signal that
// ended the task, sent again, changes nothing and is no error; a task not
// open yet is ErrNotOpen; one that ended otherwise ErrSignalled.
func (m *Model) Signal(now time.Time, p SignalParams) (SignalResult, error) {
	t := m.tick(now)
	if err := ValidateSignal(p, m.cfg.Limits); err != nil {
		return SignalResult{}, err
	}
	w := m.workflows[p.Workflow]
	if w == nil {
		return SignalResult{}, wrap(weir.ErrNotFound, "workflow %q", p.Workflow)
	}
	j := m.jobs[weir.TaskJobID(p.Workflow, p.Task)]
	if j == nil {
		return SignalResult{}, wrap(weir.ErrNotFound, "task %q of workflow %q", p.Task, p.Workflow)
	}
	if !w.c.plan.Tasks[j.task].Signal {
		return SignalResult{}, invalid(p.Task, "task", "task %q is not a signal task", p.Task)
	}
	reason := ""
	if p.Kind == OutcomeFailed {
		reason = m.cutError(p.Reason)
	}
	switch {
	case j.state.Ended():
		if j.signal == p.Kind && (p.Kind == OutcomeFailed && j.err == reason ||
			p.Kind == OutcomeCompleted && slices.Equal(j.result, p.Value)) {
			return SignalResult{State: j.state, WorkflowState: w.state}, nil
		}
		return SignalResult{}, wrap(weir.ErrSignalled, "task %q of workflow %q is %s", p.Task, p.Workflow, j.state)
	case j.state != weir.Open:
		return SignalResult{}, wrap(weir.ErrNotOpen, "task %q of workflow %q is %s", p.Task, p.Workflow, j.state)
	}
	if j.runAt != 0 {
		m.queue(j.queue).delayed.remove(j.id)
	}
	j.signal = p.Kind
	var fx effects
	if p.Kind == OutcomeCompleted {
		j.result = slices.Clone(p.Value)
		m.end(j, weir.Completed, t, &fx)
	} else {
		j.err = reason
		m.end(j, weir.Failed, t, &fx)
	}
	return SignalResult{Signalled: true, State: j.state, Pushed: fx.pushed, WorkflowState: w.state, WorkflowEnded: fx.wfEnded}, nil
}
