package engine

import (
	"strings"
	"time"

	"github.com/weirflow/weir"
)

// Workflow deadlines (spec/states.md, Deadline): a plan's Deadline (or
// DeadlineIn after the submit, by the store's clock) puts a marker into
// the delayed set of its first task's queue; a sweep that finds it due
// cancels the workflow as CancelWorkflow does (undo per its UndoOnCancel),
// its unstarted tasks with reason "deadline". A workflow whose cancel was
// requested, or whose tasks all ended, loses its marker.

// DeadlineSuffix ends the member of a deadline marker: "<workflow>/!deadline",
// never a job ID (a task name has no "!").
const DeadlineSuffix = "/!deadline"

// DeadlineMarker is the delayed-set member of workflow id's deadline.
func DeadlineMarker(id string) string { return id + DeadlineSuffix }

// deadlineOf returns the workflow of marker m, or "" when m is no marker.
func deadlineOf(m string) string {
	id, ok := strings.CutSuffix(m, DeadlineSuffix)
	if !ok {
		return ""
	}
	return id
}

// validateDeadline checks a plan's Deadline and DeadlineIn: at most one,
// the time after the Unix epoch, the duration whole milliseconds in (0,
// 100 years].
func validateDeadline(p Plan) error {
	switch {
	case !p.Deadline.IsZero() && p.DeadlineIn != 0:
		return invalid("", "deadline", "a plan has a deadline or a deadline_in, not both")
	case !p.Deadline.IsZero() && p.Deadline.UnixMilli() <= 0:
		return invalid("", "deadline", "%v is before the Unix epoch", p.Deadline)
	case p.DeadlineIn < 0 || p.DeadlineIn%time.Millisecond != 0 || p.DeadlineIn > maxSignalTimeout:
		return invalid("", "deadline_in", "%v is not whole milliseconds in [0, 100 years]", p.DeadlineIn)
	}
	return nil
}

// DeadlinePassed is the error of a submit whose deadline (Unix ms) is not
// after the store's now (Unix ms): a ValidationError of field deadline
// naming both as RFC 3339 times in UTC with milliseconds, as records show
// times. Every store's submit returns it (the Redis store from its
// script's reply).
func DeadlinePassed(deadline, now int64) error {
	return invalid("", "deadline", "%s is not after the store's now %s: give a later time, or a duration after the submit (2h)",
		stamp(deadline), stamp(now))
}

// stamp is t (Unix ms) as "2006-01-02T15:04:05.000Z".
func stamp(t int64) string { return time.UnixMilli(t).UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// deadlineAt is the deadline of plan p submitted at now (ms; 0: none).
func deadlineAt(p *Plan, now int64) int64 {
	switch {
	case !p.Deadline.IsZero():
		return p.Deadline.UnixMilli()
	case p.DeadlineIn > 0:
		return now + ms(p.DeadlineIn)
	}
	return 0
}

// dropDeadline takes w's deadline marker out of its queue's delayed set.
func (m *Model) dropDeadline(w *workflow) {
	if w.deadline != 0 {
		m.queue(w.c.plan.Tasks[0].Queue).delayed.remove(DeadlineMarker(w.id))
	}
}

// deadlinePassed cancels w, whose deadline marker a sweep found due at
// now, as CancelWorkflow with its UndoOnCancel would, with reason
// "deadline"; the Settled names the marker.
func (m *Model) deadlinePassed(now int64, w *workflow) Settled {
	w.deadlineHit = true
	res := m.cancelWorkflow(w, w.c.plan.UndoOnCancel, weir.ReasonTextDeadline, now)
	m.sweepStops = append(m.sweepStops, res.Stopping...)
	return Settled{JobID: DeadlineMarker(w.id), State: weir.Cancelled, Pushed: res.Pushed, WorkflowState: w.state, WorkflowEnded: w.state.Ended()}
}

// TakeSweepStops returns the running jobs that deadlines found by sweeps
// asked to stop since the last call, in order, and forgets them: a store
// built on the model tells its workers (as the Redis store publishes them).
func (m *Model) TakeSweepStops() []string {
	s := m.sweepStops
	m.sweepStops = nil
	return s
}
