package worker

import (
	"strings"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// settled reports what finishing c did.
func (r *run) settled(c *engine.Claimed, o engine.Outcome, s engine.Settled, d time.Duration) {
	if r.cfg.Observer == nil {
		return
	}
	j := &c.Job
	e := Event{JobID: j.ID, Queue: j.Queue, Workflow: j.Workflow, Task: j.Task, Attempt: j.Attempt, Duration: d, TraceParent: c.TraceParent}
	switch {
	case s.Err != nil:
		e.Kind = EventLeaseLost
	case o.Kind == engine.OutcomeReleased && s.State == weir.Queued:
		e.Kind = EventReleased
	default:
		e.Kind, e.Err, e.RunAt = stateEvent(s), o.Error, s.RunAt
	}
	r.observe(e)
	r.consequences(s, c.TraceParent)
}

func stateEvent(s engine.Settled) EventKind {
	switch s.State {
	case weir.Completed:
		return EventSucceeded
	case weir.Queued:
		return EventRetried
	case weir.Failed:
		return EventFailed
	default:
		return EventCancelled
	}
}

// consequences reports the pushes and the workflow end of a settle. The
// settled job's own push (a release, or a lease expiry within its budget,
// queues it again at once) is its retry, reported as such, not a
// promotion.
func (r *run) consequences(s engine.Settled, tp string) {
	for _, p := range s.Pushed {
		if p.JobID == s.JobID {
			continue
		}
		r.observe(Event{Kind: EventPromoted, JobID: p.JobID, Queue: p.Queue, TraceParent: tp})
	}
	if s.WorkflowEnded {
		wf, _, _ := cutTaskJobID(s.JobID)
		r.observe(Event{Kind: EventWorkflowEnded, Workflow: wf, WorkflowState: s.WorkflowState, TraceParent: tp})
	}
}

// cutTaskJobID splits a task or undo job ID (weir.TaskJobID,
// weir.UndoJobID) into workflow and task; plain job IDs have no '/'.
func cutTaskJobID(id string) (wf, task string, ok bool) {
	wf, rest, ok := strings.Cut(id, "/")
	if !ok {
		return "", "", false
	}
	task, _, _ = strings.Cut(rest, "/")
	return wf, task, true
}

func (r *run) observe(e Event) {
	if r.cfg.Observer != nil {
		r.cfg.Observer(e)
	}
}

// startedEvent is the started event of claimed job c, with its queue wait
// when the store said when it became ready: the claim's time (its lease
// deadline less the lease the worker asked for, by the store's clock)
// less its ready-at.
func (r *run) startedEvent(c *engine.Claimed) Event {
	j := &c.Job
	e := Event{Kind: EventStarted, JobID: j.ID, Queue: j.Queue, Workflow: j.Workflow, Task: j.Task, Attempt: j.Attempt, TraceParent: c.TraceParent}
	if !c.ReadyAt.IsZero() {
		e.ReadyAt = c.ReadyAt
		e.QueueWait = max(0, c.Lease.Deadline.Add(-r.cfg.Lease).Sub(c.ReadyAt))
		if !c.PromotedAfter.IsZero() {
			e.PromotedAfter = c.PromotedAfter
			e.PromotionLatency = max(0, c.ReadyAt.Sub(c.PromotedAfter))
		}
	}
	return e
}
