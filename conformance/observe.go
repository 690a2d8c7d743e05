package conformance

import (
	"context"
	"github.com/weirflow/weir"
	"sort"

	"github.com/weirflow/weir/engine"
)

// Observer is an optional capability: a store that implements it returns,
// in one call, everything the suite compares after each step of a random
// sequence (for a network store, one round trip instead of one per
// record). Observe returns what Queues returns, the contents of each queue
// asked (as QueueInspector would), and what GetWorkflow and GetJob return
// for each ID asked, in the order asked. The suite still compares the
// store's own reads (Queues, QueueContents, GetWorkflow, GetJob) at the
// end of every sequence, in the scenarios and in the error cases, so an
// Observer adds speed, not trust.
//
// redisstore.Store.Observe has this shape; convert its redisstore.Observation with
// conformance.Observation(o).
type Observer interface {
	Observe(ctx context.Context, workflows, jobs, queues []string) (Observation, error)
}

// Observation is what Observer.Observe returns: Contents, Workflows and
// WorkflowErrs, Jobs and JobErrs hold one entry per queue, workflow ID and
// job ID asked, in the order asked; an error entry is nil or wraps the
// sentinel GetWorkflow or GetJob would return (weir.ErrNotFound).
type Observation struct {
	Queues       []weir.QueueInfo
	Contents     []engine.QueueContents
	Workflows    []weir.Workflow
	WorkflowErrs []error
	Jobs         []weir.Job
	JobErrs      []error
}

// observedIDs is what the differ asks for: every workflow ID used, every
// task and undo job ID of their plans, then the plain job IDs used.
func (d *differ) observedIDs() (wfs, jobs []string) {
	for id := range d.plans {
		wfs = append(wfs, id)
	}
	sort.Strings(wfs)
	for _, id := range wfs {
		for _, t := range d.plans[id].Tasks {
			jobs = append(jobs, weir.TaskJobID(id, t.Name), weir.UndoJobID(id, t.Name))
		}
	}
	return wfs, append(jobs, d.jobs...)
}

// checkObserved is checkEach through one Observe call.
func (d *differ) checkObserved() {
	d.t.Helper()
	now := d.clock()
	mq := d.m.Queues(now)
	names := make([]string, len(mq))
	for i, q := range mq {
		names[i] = q.Name
	}
	wfs, jobs := d.observedIDs()
	o, err := d.obs.Observe(d.ctx, wfs, jobs, names)
	if err != nil {
		d.fatalf("observe: %v", err)
	}
	if len(o.Contents) != len(names) || len(o.Workflows) != len(wfs) || len(o.WorkflowErrs) != len(wfs) ||
		len(o.Jobs) != len(jobs) || len(o.JobErrs) != len(jobs) {
		d.fatalf("observe returned %d queue contents, %d/%d workflows, %d/%d jobs for %d, %d, %d asked",
			len(o.Contents), len(o.Workflows), len(o.WorkflowErrs), len(o.Jobs), len(o.JobErrs), len(names), len(wfs), len(jobs))
	}
	d.same("queues", mq, o.Queues)
	d.checkEndedLists(mq)
	for i, q := range names {
		d.same("queue "+q+" contents", d.m.QueueContents(now, q), o.Contents[i])
	}
	for i, id := range wfs {
		mw, merr := d.m.GetWorkflow(now, id)
		d.sameErr("get workflow "+id, merr, o.WorkflowErrs[i])
		d.same("workflow "+id, mw, o.Workflows[i])
	}
	for i, id := range jobs {
		mj, merr := d.m.GetJob(now, id)
		d.sameErr("get job "+id, merr, o.JobErrs[i])
		sj := o.Jobs[i]
		if o.JobErrs[i] == nil {
			sj = d.normJob(sj)
		}
		d.same("job "+id, mj, sj)
	}
}
