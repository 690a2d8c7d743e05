package conformance

import (
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// endedLists are the lists checkEach compares after every step.
var endedLists = []weir.JobList{weir.ListFailed, weir.ListCancelled, weir.ListCompleted}

// checkEndedLists compares the ended lists of every queue, each read in
// one call: the jobs, and the cursor (which the stores share for ended
// lists).
func (d *differ) checkEndedLists(queues []weir.QueueInfo) {
	d.t.Helper()
	now := d.clock()
	for _, q := range queues {
		for _, l := range endedLists {
			p := weir.ListJobsParams{Queue: q.Name, State: l, Limit: 1000}
			mp, merr := d.m.ListJobs(now, p)
			sp, serr := d.s.ListJobs(d.ctx, p)
			d.sameErr("list jobs "+q.Name+" "+string(l), merr, serr)
			d.same("list jobs "+q.Name+" "+string(l), mp, d.normPage(sp))
		}
	}
}

// listJobs pages through a random list of a random queue with a small
// limit, each store following its own cursors (a waiting list's cursor is
// the store's own): the pages must hold the same jobs, and end together.
func (d *differ) listJobs() {
	d.t.Helper()
	d.pageJobs(weir.ListJobsParams{
		Queue: sampled(d, []string{"q1", "q2", "q3"}, "queue"),
		State: sampled(d, weir.JobLists, "list"),
		Limit: d.intRange(1, 2, "limit"),
	}, 5)
}

// walkLists pages through every list of every queue to its end, two jobs
// a page, so that every cursor a store hands out (one per partition and
// past it) is followed once a sequence.
func (d *differ) walkLists() {
	d.t.Helper()
	for _, q := range d.m.Queues(d.clock()) {
		for _, l := range weir.JobLists {
			d.pageJobs(weir.ListJobsParams{Queue: q.Name, State: l, Limit: 2}, maxWalkPages)
		}
	}
}

// maxWalkPages bounds walkLists' pages of one list (a sequence holds far
// fewer jobs).
const maxWalkPages = 500

// pageJobs reads up to pages pages of p's list from the model and the
// store, each following its own cursors, and compares them page by page.
func (d *differ) pageJobs(p weir.ListJobsParams, pages int) {
	d.t.Helper()
	now := d.clock()
	sp := p
	for range pages {
		mr, merr := d.m.ListJobs(now, p)
		sr, serr := d.s.ListJobs(d.ctx, sp)
		d.sameErr("list jobs", merr, serr)
		d.same("list jobs "+p.Queue+" "+string(p.State)+" page", mr.Jobs, d.normPage(sr).Jobs)
		if (mr.NextCursor == "") != (sr.NextCursor == "") {
			d.fatalf("list jobs %s %s: model next %q, store next %q", p.Queue, p.State, mr.NextCursor, sr.NextCursor)
		}
		if mr.NextCursor == "" {
			return
		}
		p.Cursor, sp.Cursor = mr.NextCursor, sr.NextCursor
	}
}

// normPage returns a store's page with the model's lease tokens.
func (d *differ) normPage(p weir.JobPage) weir.JobPage {
	for i := range p.Jobs {
		p.Jobs[i] = d.normJob(p.Jobs[i])
	}
	return p
}

// retryJob retries a random job (a plain one mostly, at times a task, an
// undo or an unknown ID), now or at a time ahead or past.
func (d *differ) retryJob() {
	d.t.Helper()
	id := d.anyJobID()
	if len(d.jobs) > 0 && d.bool("plainretry") {
		id = sampled(d, d.jobs, "retryjob")
	}
	at := time.Duration(sampled(d, []int{0, 0, 5, 200, -100}, "retryat")) * time.Millisecond
	d.last = func() {
		now := d.clock()
		p := engine.RetryJobParams{ID: id}
		if at != 0 {
			p.RunAt = now.Add(at)
		}
		mr, merr := d.m.RetryJob(now, p)
		sr, serr := d.s.RetryJob(d.ctx, p)
		d.sameErr("retry job "+id, merr, serr)
		d.same("retry job "+id, mr, sr)
	}
	d.last()
}

// deleteRecord deletes a random plain job or workflow (an ended one when
// the draw finds one, else the refusals).
func (d *differ) deleteRecord() {
	d.t.Helper()
	if d.bool("delwf") {
		id := sampled(d, []string{"w1", "w2", "w3"}, "wf")
		d.last = func() {
			now := d.clock()
			d.sameErr("delete workflow "+id, d.m.DeleteWorkflow(now, id), d.s.DeleteWorkflow(d.ctx, id))
		}
	} else {
		id := d.anyJobID()
		if len(d.jobs) > 0 && d.bool("plaindel") {
			id = sampled(d, d.jobs, "deljob")
		}
		d.last = func() {
			now := d.clock()
			d.sameErr("delete job "+id, d.m.DeleteJob(now, id), d.s.DeleteJob(d.ctx, id))
		}
	}
	d.last()
}
