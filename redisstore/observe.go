package redisstore

import (
	"context"
	"fmt"
	"github.com/weirflow/weir"

	"github.com/weirflow/weir/engine"
)

// Observation is the observable state of a store for the IDs and queues
// asked of Store.Observe, read by one script, so at one instant.
type Observation struct {
	// Queues is what Queues returns: every queue the store knows, by name.
	Queues []weir.QueueInfo
	// Contents holds, for each queue asked, in the order asked, the IDs of
	// its ready, delayed and running jobs in claim, due and deadline order
	// (nil for an empty list).
	Contents []engine.QueueContents
	// Workflows holds, for each workflow ID asked, what GetWorkflow
	// returns; WorkflowErrs the error (nil or wrapping weir.ErrNotFound).
	Workflows    []weir.Workflow
	WorkflowErrs []error
	// Jobs and JobErrs are the same for each job ID asked and GetJob.
	Jobs    []weir.Job
	JobErrs []error
}

// Observe reads, in one script (one round trip, one instant), what Queues
// returns, the contents of each queue in queues, GetWorkflow of each ID
// in workflows and GetJob of each ID in jobs. It writes nothing but the
// clock, like those reads. It is meant for tests and tools that compare
// a whole state (the conformance suite); workers do not need it.
func (pt *part) Observe(ctx context.Context, workflows, jobs, queues []string) (Observation, error) {
	if err := ctx.Err(); err != nil {
		return Observation{}, err
	}
	for _, q := range queues {
		if !engine.ValidName(q) {
			return Observation{}, invalid("queues", "queue name %q must "+engine.NameRule, q)
		}
	}
	o := Observation{
		Contents:  make([]engine.QueueContents, len(queues)),
		Workflows: make([]weir.Workflow, len(workflows)), WorkflowErrs: make([]error, len(workflows)),
		Jobs: make([]weir.Job, len(jobs)), JobErrs: make([]error, len(jobs)),
	}
	// Only IDs that can name a record reach the script, as in GetWorkflow
	// and GetJob; the others are not found.
	var wAsk, jAsk []int
	for i, id := range workflows {
		if engine.ValidID(id) {
			wAsk = append(wAsk, i)
		} else {
			o.WorkflowErrs[i] = fmt.Errorf("%w: workflow %q", weir.ErrNotFound, id)
		}
	}
	for i, id := range jobs {
		if validJobID(id) {
			jAsk = append(jAsk, i)
		} else {
			o.JobErrs[i] = fmt.Errorf("%w: job %q", weir.ErrNotFound, id)
		}
	}
	sc := scripts["observe"]
	argv := pt.argv(sc, 3+len(wAsk)+len(jAsk)+len(queues))
	argv = append(argv, len(wAsk))
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
	v, err := pt.call(ctx, sc, argv)
	if err != nil {
		return Observation{}, err
	}
	r := newReader(v)
	o.Queues = queuesReply(r)
	for _, i := range wAsk {
		n := r.count()
		if n == 0 {
			o.WorkflowErrs[i] = fmt.Errorf("%w: workflow %q", weir.ErrNotFound, workflows[i])
			continue
		}
		if r.err != nil || r.i+n > len(r.v) {
			return Observation{}, fmt.Errorf("%w: short observe reply", weir.ErrProtocol)
		}
		if o.Workflows[i], err = workflowFromHash(r.v[r.i : r.i+n]); err != nil {
			return Observation{}, err
		}
		r.i += n
	}
	for _, i := range jAsk {
		if !r.flag() {
			o.JobErrs[i] = fmt.Errorf("%w: job %q", weir.ErrNotFound, jobs[i])
			continue
		}
		o.Jobs[i] = r.job()
	}
	for i := range queues {
		o.Contents[i] = engine.QueueContents{Ready: r.strings(), Delayed: r.strings(), Running: r.strings()}
	}
	if r.err != nil {
		return Observation{}, r.err
	}
	if r.i != len(r.v) {
		return Observation{}, fmt.Errorf("%w: observe reply has %d values, %d read", weir.ErrProtocol, len(r.v), r.i)
	}
	return o, nil
}

// QueueContents returns the IDs of queue's ready, delayed and running jobs
// in claim, due and deadline order (nil for an empty list), read by
// Observe.
func (pt *part) QueueContents(ctx context.Context, queue string) (engine.QueueContents, error) {
	o, err := pt.Observe(ctx, nil, nil, []string{queue})
	if err != nil {
		return engine.QueueContents{}, err
	}
	return o.Contents[0], nil
}
