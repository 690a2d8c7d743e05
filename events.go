package weir

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
)

// EventType names what an event of the event stream says happened
// (spec/events.md).
type EventType string

// The event types. A job's events carry its ID (and, for a task or undo
// job, its workflow and task); a workflow's carry only its ID.
const (
	// EventWorkflowSubmitted: a workflow was written (Reason empty).
	EventWorkflowSubmitted EventType = "workflow_submitted"
	// EventWorkflowCompensating: a workflow started running its undos;
	// Reason is "failure" or "cancel".
	EventWorkflowCompensating EventType = "workflow_compensating"
	// EventWorkflowGrown: a task's finish added tasks to its workflow
	// (spec/states.md, Dynamic tasks); Reason is that task's name.
	EventWorkflowGrown EventType = "workflow_grown"
	// EventWorkflowEnded: a workflow ended; Reason is its final state.
	EventWorkflowEnded EventType = "workflow_ended"
	// EventWorkflowRerun: an ended workflow was re-run
	// (RerunWorkflow); Reason is its new run number ("2" for the first
	// re-run).
	EventWorkflowRerun EventType = "workflow_rerun"
	// EventQueued: a job was pushed into its queue, ready or delayed: a
	// plain job enqueued or retried by RetryJob, a task whose dependencies
	// ended (or a root), an undo job whose turn came.
	EventQueued EventType = "queued"
	// EventOpened: a signal task opened (its dependencies ended).
	EventOpened EventType = "opened"
	// EventStarted: a job was leased; Attempt is the attempt it starts.
	EventStarted EventType = "started"
	// EventRetried: a running job's attempt ended and the job is queued
	// again; Reason is the attempt's error, "lease_expired" or
	// "released".
	EventRetried EventType = "retried"
	// EventCompleted, EventFailed, EventCancelled: a job ended; Reason is
	// its error (empty when completed).
	EventCompleted EventType = "completed"
	EventFailed    EventType = "failed"
	EventCancelled EventType = "cancelled"
)

// Event is one event of a namespace's event stream: a transition of a job
// or a workflow, written by the transition itself (spec/events.md).
type Event struct {
	// ID is the event's position in the stream ("<entry ID>.<n>"): a
	// reader resumes after it. Empty in engine.Model's events.
	ID   string    `json:"id"`
	Type EventType `json:"type"`
	// Time is the store's clock when the transition ran.
	Time time.Time `json:"time"`
	// Workflow is the workflow's ID: a workflow event's, or a task or undo
	// job's workflow; empty for a plain job.
	Workflow string `json:"workflow,omitempty"`
	// Job is the job's ID; empty for a workflow event.
	Job string `json:"job,omitempty"`
	// Task is a task or undo job's task name; empty otherwise.
	Task string `json:"task,omitempty"`
	// Undo: the job is a task's undo job.
	Undo bool `json:"undo,omitempty"`
	// Attempt is the job's attempt count after a started, retried, or
	// completed, failed or cancelled event that ended a running attempt;
	// 0 for the other events.
	Attempt int `json:"attempt"`
	// Reason says why: see the event types.
	Reason string `json:"reason,omitempty"`
	// Worker is the ID of the worker whose attempt the event is about (a
	// started event, or the event of the transition that ended a running
	// attempt: retried, completed, failed, cancelled); empty for the
	// other events and for an attempt whose claim named no worker.
	Worker string `json:"worker,omitempty"`
}

// NewEvent makes the event of type t about id (a job ID, or a workflow ID
// for the workflow types), deriving its workflow and task from the ID.
func NewEvent(t EventType, id string, attempt int, reason string, at time.Time) Event {
	e := Event{Type: t, Time: at, Attempt: attempt, Reason: reason}
	if strings.HasPrefix(string(t), "workflow_") {
		e.Workflow = id
		return e
	}
	e.Job = id
	if wf, rest, ok := strings.Cut(id, "/"); ok {
		e.Workflow = wf
		e.Task, _, e.Undo = strings.Cut(rest, "/")
	}
	return e
}

// MarshalJSON writes the event as its fields' tags say, with Time in
// TimeLayout (UTC, exactly three fraction digits), as records write
// their times. It reads back with encoding/json's default decoding.
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event // the same fields, without this method
	b, err := json.Marshal(plain(e))
	if err != nil {
		return nil, err
	}
	t, err := json.Marshal(e.Time) // as b holds it; a string never holds it unescaped
	if err != nil {
		return nil, err
	}
	old := append([]byte(`"time":`), t...)
	return bytes.Replace(b, old, []byte(`"time":"`+e.Time.UTC().Format(TimeLayout)+`"`), 1), nil
}
