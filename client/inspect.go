package client

import (
	"context"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// ListJobs returns one page of the jobs of a queue in one list: ready,
// delayed or running, in the order the queue holds them, or failed (the
// queue's dead letters), cancelled or completed, newest end first, each
// kept listable until its retention passed (spec/states.md, Job lists).
// Pass the page's NextCursor as the next call's Cursor; it is empty on the
// last page. A bad queue, list, limit or cursor is a *weir.ValidationError.
func (c *Client) ListJobs(ctx context.Context, p weir.ListJobsParams) (weir.JobPage, error) {
	return c.store.ListJobs(ctx, p)
}

// CancelJob cancels the job with that ID, plain or a workflow's task or
// undo job (Job.Cancel does the same for its handle's ID). A job that has
// not started never runs and ends cancelled at once. A running job is told
// to stop: its handler's context is cancelled at the worker's next
// heartbeat, and the job ends cancelled (never retried) unless the handler
// completes anyway. It returns the job's state after the call: cancelled,
// or running for a job told to stop. Cancelling a task's job does not
// cancel its workflow (CancelWorkflow does). An ended job is
// weir.ErrJobEnded; an unknown one weir.ErrNotFound.
func (c *Client) CancelJob(ctx context.Context, id string) (weir.State, error) {
	res, err := c.store.CancelJob(ctx, engine.CancelJobParams{ID: id})
	return res.State, err
}

// PurgeQueue cancels every job waiting in the queue named name (ready or
// delayed), each with the consequences of a cancel for its workflow, and
// returns their IDs: the ready ones in claim order, then the delayed ones.
// Running jobs are not touched.
func (c *Client) PurgeQueue(ctx context.Context, name string) ([]string, error) {
	res, err := c.store.PurgeQueue(ctx, name)
	return res.Purged, err
}

// RetryJob runs a plain job that ended failed or cancelled (a dead letter)
// again, with its full attempt budget: at once when runAt is zero or not
// in the future, else at runAt. Its payload and spec stay; its error,
// result and end are cleared. Any other job (waiting, queued, running,
// completed, or a workflow's task or undo job) is weir.ErrJobNotRetryable
// and nothing changes; an unknown one weir.ErrNotFound.
func (c *Client) RetryJob(ctx context.Context, id string, runAt time.Time) error {
	_, err := c.store.RetryJob(ctx, engine.RetryJobParams{ID: id, RunAt: runAt})
	return err
}

// DeleteJob removes a plain job that ended, at once, as if its retention
// had passed: reads say weir.ErrNotFound afterwards and its ID is free. A
// queued or running job is weir.ErrNotEnded; a workflow's task or undo job
// is a *weir.ValidationError (delete its workflow).
func (c *Client) DeleteJob(ctx context.Context, id string) error {
	return c.store.DeleteJob(ctx, id)
}

// DeleteWorkflow removes a workflow that ended, with its jobs, at once, as
// if its retention had passed. A running or compensating workflow is
// weir.ErrNotEnded.
func (c *Client) DeleteWorkflow(ctx context.Context, id string) error {
	return c.store.DeleteWorkflow(ctx, id)
}

// RerunWorkflow runs the failed part of an ended workflow again
// (Workflow.Rerun does the same for its handle's ID): its failed and
// cancelled tasks and every task downstream of one run again, with fresh
// attempts; the tasks that completed otherwise keep their results, which
// the re-run tasks read as before. The workflow is running again and its record's Run
// is one more; that new run number is returned. A workflow that is running
// or compensating, compensated (its completed work undone), or whose tasks
// all completed is weir.ErrNotRerunnable and nothing changes; an unknown
// one weir.ErrNotFound.
func (c *Client) RerunWorkflow(ctx context.Context, id string) (int, error) {
	res, err := c.store.RerunWorkflow(ctx, engine.RerunWorkflowParams{ID: id})
	return res.Run, err
}
