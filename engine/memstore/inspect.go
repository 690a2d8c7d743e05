package memstore

import (
	"context"
	"github.com/weirflow/weir"
	"time"

	"github.com/weirflow/weir/engine"
)

// ListJobs pages through one list of a queue (see engine.Store).
func (s *Store) ListJobs(ctx context.Context, p weir.ListJobsParams) (page weir.JobPage, err error) {
	err = s.read(ctx, func(now time.Time) (err error) {
		page, err = s.m.ListJobs(now, p)
		return err
	})
	return page, err
}

// RetryJob runs an ended plain job again (see engine.Store).
func (s *Store) RetryJob(ctx context.Context, p engine.RetryJobParams) (res engine.RetryResult, err error) {
	err = s.write(ctx, func(now time.Time) (err error) {
		res, err = s.m.RetryJob(now, p)
		return err
	})
	return res, err
}

// DeleteJob removes an ended plain job now (see engine.Store).
func (s *Store) DeleteJob(ctx context.Context, id string) error {
	return s.write(ctx, func(now time.Time) error { return s.m.DeleteJob(now, id) })
}

// DeleteWorkflow removes an ended workflow now (see engine.Store).
func (s *Store) DeleteWorkflow(ctx context.Context, id string) error {
	return s.write(ctx, func(now time.Time) error { return s.m.DeleteWorkflow(now, id) })
}

// RerunWorkflow runs the failed part of an ended workflow again (see
// engine.Store).
func (s *Store) RerunWorkflow(ctx context.Context, p engine.RerunWorkflowParams) (res engine.RerunResult, err error) {
	err = s.write(ctx, func(now time.Time) (err error) {
		res, err = s.m.RerunWorkflow(now, p)
		return err
	})
	return res, err
}

// QueueContents returns the job IDs a queue holds (empty for an unknown
// queue): ready in claim order, delayed in due order, running in lease
// deadline order, the partitions' lists concatenated in partition order
// (engine.Namespace.QueueContents). It is conformance.QueueInspector and
// what a scenario's "expect queue" step reads.
func (s *Store) QueueContents(ctx context.Context, queue string) (c engine.QueueContents, err error) {
	err = s.read(ctx, func(now time.Time) error {
		c = s.m.QueueContents(now, queue)
		return nil
	})
	return c, err
}
