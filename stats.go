package weir

import "time"

// Stats is what a metrics scrape reads of a namespace (Store.Stats of the
// Redis and in-process stores, Client.Stats): its queues with their
// counts, what failed and was cancelled in each, the ready-at of the job
// each hands out next, and its workflows by state. A store reads it with
// work bounded by the number of queues, never by the number of jobs
// (spec/metrics.md).
type Stats struct {
	// Time is the store's clock at the read: a queue's oldest ready age is
	// Time less its HeadReadyAt.
	Time time.Time
	// Queues has every queue Queues lists, in the same order.
	Queues []QueueStats
	// Workflows counts the workflows the store holds in each state (every
	// state of WorkflowStates, 0 when none), the ended ones until their
	// retention passed.
	Workflows map[WorkflowState]int
}

// QueueStats is one queue's part of Stats.
type QueueStats struct {
	QueueInfo
	// Failed and Cancelled count the queue's jobs that ended failed or
	// cancelled within retention, as the queue's ended lists hold them (the
	// lists ListJobs reads; RetryJob and DeleteJob take a job out of them).
	Failed    int
	Cancelled int
	// HeadReadyAt is the ready-at (when its push made it ready, or its due
	// time: spec/metrics.md) of the ready job a claim takes next, of the
	// earlier of the heads of the queue's unkeyed and keyed ready jobs;
	// zero when none is ready. Within one priority it is the oldest ready
	// job's.
	HeadReadyAt time.Time
}

// WorkflowStates lists every workflow state, live ones first.
func WorkflowStates() []WorkflowState {
	return []WorkflowState{WorkflowRunning, WorkflowCompensating, WorkflowCompleted, WorkflowFailed,
		WorkflowCancelled, WorkflowCompensated, WorkflowCompensationFailed}
}
