package lua

import (
	"context"
	"fmt"
	"strconv"

	"github.com/weirflow/weir/engine"
)

// Observation is the observable state of a store for the IDs and queues
// asked of Store.Observe, read by one script, so at one instant.
type Observation struct {
	// Queues is what Queues returns: every queue the store knows, by name.
	Queues []engine.QueueInfo
	// Contents holds, for each queue asked, in the order asked, the IDs of
	// its ready, delayed and running jobs in claim, due and deadline order
	// (nil for an empty list).
	Contents []engine.QueueContents
	// Workflows holds, for each workflow ID asked, what GetWorkflow
	// returns; WorkflowErrs the error (nil or wrapping engine.ErrNotFound).
	Workflows    []engine.Workflow
	WorkflowErrs []error
	// Jobs and JobErrs are the same for each job ID asked and GetJob.
	Jobs    []engine.Job
	JobErrs []error
}

// Observe reads, in one script (one round trip, one instant), what Queues
// returns, the contents of each queue in queues, GetWorkflow of each ID
// in workflows and GetJob of each ID in jobs. It writes nothing but the
// clock, like those reads. It is meant for tests and tools that compare
// a whole state (the conformance suite); workers do not need it.
func (s *Store) Observe(ctx context.Context, workflows, jobs, queues []string) (Observation, error) {
	if err := ctx.Err(); err != nil {
		return Observation{}, err
	}
	for _, q := range queues {
		if !engine.ValidName(q) {
			return Observation{}, invalid("queues", "queue name %q must match ^[A-Za-z0-9_.-]{1,64}$", q)
		}
	}
	o := Observation{
		Contents:  make([]engine.QueueContents, len(queues)),
		Workflows: make([]engine.Workflow, len(workflows)), WorkflowErrs: make([]error, len(workflows)),
		Jobs: make([]engine.Job, len(jobs)), JobErrs: make([]error, len(jobs)),
	}
	// Only IDs that can name a record reach the script, as in GetWorkflow
	// and GetJob; the others are not found.
	var wAsk, jAsk []int
	for i, id := range workflows {
		if engine.ValidID(id) {
			wAsk = append(wAsk, i)
		} else {
			o.WorkflowErrs[i] = fmt.Errorf("%w: workflow %q", engine.ErrNotFound, id)
		}
	}
	for i, id := range jobs {
		if validJobID(id) {
			jAsk = append(jAsk, i)
		} else {
			o.JobErrs[i] = fmt.Errorf("%w: job %q", engine.ErrNotFound, id)
		}
	}
	now := ""
	if s.clock != nil {
		now = strconv.FormatInt(s.clock().UnixMilli(), 10)
	}
	argv := make([]any, 0, 6+len(wAsk)+len(jAsk)+len(queues))
	argv = append(argv, now, s.cfg.Retention.Milliseconds(), s.cfg.Limits.MaxBackoff.Milliseconds(), len(wAsk))
	for _, i := range wAsk {
		argv = append(argv, workflows[i])
	}
	argv = append(argv, len(jAsk))
	for _, i := range jAsk {
		argv = append(argv, jobs[i])
	}
	argv = append(argv, len(queues))
	for _, q := range queues {
		argv = append(argv, q)
	}
	v, err := scripts["observe"].rs.Run(ctx, s.rdb, s.keys.common(), argv...).Result()
	if err != nil {
		return Observation{}, mapErr(err)
	}
	items, ok := v.([]any)
	if !ok || len(items) != 1+len(wAsk)+len(jAsk)+3*len(queues) {
		return Observation{}, fmt.Errorf("%w: observe reply is %T of unexpected length", engine.ErrProtocol, v)
	}
	r := newReader(items[0])
	o.Queues = make([]engine.QueueInfo, r.count())
	for i := range o.Queues {
		o.Queues[i] = engine.QueueInfo{Name: r.str(), Paused: r.flag(), Ready: int(r.int()), Delayed: int(r.int()), Running: int(r.int())}
	}
	if r.err != nil {
		return Observation{}, r.err
	}
	k := 1
	for _, i := range wAsk {
		switch it := items[k].(type) {
		case int64:
			o.WorkflowErrs[i] = fmt.Errorf("%w: workflow %q", engine.ErrNotFound, workflows[i])
		case []any:
			if o.Workflows[i], err = workflowFromHash(it); err != nil {
				return Observation{}, err
			}
		default:
			return Observation{}, fmt.Errorf("%w: observe workflow reply is %T", engine.ErrProtocol, it)
		}
		k++
	}
	for _, i := range jAsk {
		if _, ok := items[k].(int64); ok {
			o.JobErrs[i] = fmt.Errorf("%w: job %q", engine.ErrNotFound, jobs[i])
		} else {
			r := newReader(items[k])
			o.Jobs[i] = r.job()
			if r.err != nil {
				return Observation{}, r.err
			}
		}
		k++
	}
	for i := range queues {
		var lists [3][]string
		for n := range lists {
			r := newReader(items[k])
			for range r.v {
				lists[n] = append(lists[n], r.str())
			}
			if r.err != nil {
				return Observation{}, r.err
			}
			k++
		}
		o.Contents[i] = engine.QueueContents{Ready: lists[0], Delayed: lists[1], Running: lists[2]}
	}
	return o, nil
}

// QueueContents returns the IDs of queue's ready, delayed and running jobs
// in claim, due and deadline order (nil for an empty list), read by
// Observe.
func (s *Store) QueueContents(ctx context.Context, queue string) (engine.QueueContents, error) {
	o, err := s.Observe(ctx, nil, nil, []string{queue})
	if err != nil {
		return engine.QueueContents{}, err
	}
	return o.Contents[0], nil
}
