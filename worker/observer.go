package worker

import (
	"time"

	"github.com/weirflow/weir"
)

// EventKind names what happened.
type EventKind string

// Event kinds.
const (
	// EventStarted: a handler started an attempt.
	EventStarted EventKind = "started"
	// EventSucceeded: an attempt completed the job.
	EventSucceeded EventKind = "succeeded"
	// EventRetried: an attempt failed and the job was queued again, to run
	// at RunAt (also for a lease that expired, Err "lease_expired").
	EventRetried EventKind = "retried"
	// EventFailed: the job ended failed.
	EventFailed EventKind = "failed"
	// EventCancelled: the job ended cancelled.
	EventCancelled EventKind = "cancelled"
	// EventReleased: the job was handed back unrun or unfinished at
	// shutdown, its attempt not counted.
	EventReleased EventKind = "released"
	// EventLeaseLost: the worker lost a job's lease; the attempt's outcome
	// was dropped.
	EventLeaseLost EventKind = "lease_lost"
	// EventPromoted: a finish pushed a job into its queue: a dependent task
	// whose dependencies all ended, or an undo job.
	EventPromoted EventKind = "promoted"
	// EventWorkflowEnded: a finish ended a workflow (WorkflowState says how).
	EventWorkflowEnded EventKind = "workflow_ended"
)

// Event is one thing a worker saw happen. Fields that do not apply to the
// kind are zero; a lease expired by the worker's sweep carries only JobID.
type Event struct {
	Kind  EventKind
	JobID string
	Queue string
	// Workflow and Task are set for a workflow's jobs.
	Workflow string
	Task     string
	Attempt  int
	// Err is the attempt's error, for retried, failed and cancelled.
	Err string
	// RunAt is when a retried job runs again.
	RunAt time.Time
	// Duration is how long the attempt ran, for outcomes of this worker.
	Duration time.Duration
	// WorkflowState is the workflow's state after a workflow_ended.
	WorkflowState weir.WorkflowState
	// TraceParent is the trace context stored with the job (its
	// workflow's, for the promotions and the end a finish caused), for
	// the events of this worker's own attempts; "" otherwise.
	TraceParent string
	// ReadyAt is when the job became ready (engine.Claimed.ReadyAt: its
	// push, or its due time), for a started event; zero when the store
	// did not say.
	ReadyAt time.Time
	// QueueWait is the time from ReadyAt to the claim that leased the job
	// for this attempt, both by the store's clock, for a started event
	// with a ReadyAt.
	QueueWait time.Duration
	// PromotedAfter, for the started event of a task that its
	// dependencies' end pushed (engine.Claimed.PromotedAfter), is when the
	// dependency whose end promoted it ended; PromotionLatency is the time
	// from then to its push (ReadyAt), by the store's clock: 0 when the
	// dependency's finish pushed it, more when a cascade too big for one
	// call pushed it in a later one.
	PromotedAfter    time.Time
	PromotionLatency time.Duration
}

// Observer receives a worker's events, synchronously, from the worker's
// goroutines (concurrently): it must be safe for concurrent use and return
// quickly.
type Observer func(Event)
