package engine

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weirflow/weir"
)

// ListJobs pages through one list of a queue (spec/states.md, Job
// listings). Ready, delayed and running jobs come in the order the queue
// holds them (claim order, due order, lease-deadline order); ended ones
// newest end first (end time, then ID, both descending), each listed from
// its end until its end plus retention, while its record exists. A task
// that CancelWorkflow ended before it started is not listed. The cursor is
// the store's own: the model's is "<a>:<b>:<id>" of the previous page's last
// job in a waiting list, "<ended ms>:<id>" in an ended one.
func (m *Model) ListJobs(now time.Time, p weir.ListJobsParams) (weir.JobPage, error) {
	t := m.peek(now)
	limit, err := ValidateListJobs(p)
	if err != nil {
		return weir.JobPage{}, err
	}
	q := m.queues[p.Queue]
	switch p.State {
	case weir.ListReady, weir.ListDelayed, weir.ListRunning:
		var after *item
		// a ready list's keyed part follows its unkeyed part; a cursor in
		// it starts with "k"
		cursor, afterKeyed := strings.CutPrefix(p.Cursor, "k")
		if afterKeyed && p.State != weir.ListReady {
			return weir.JobPage{}, badCursor(p.Cursor)
		}
		if cursor != "" {
			parts := strings.SplitN(cursor, ":", 3)
			if len(parts) != 3 || !validJobRef(parts[2]) {
				return weir.JobPage{}, badCursor(p.Cursor)
			}
			a, err1 := strconv.ParseInt(parts[0], 10, 64)
			b, err2 := strconv.ParseInt(parts[1], 10, 64)
			if err1 != nil || err2 != nil {
				return weir.JobPage{}, badCursor(p.Cursor)
			}
			after = &item{id: parts[2], a: a, b: b}
		}
		if q == nil {
			return weir.JobPage{}, nil
		}
		set := &q.ready
		switch p.State {
		case weir.ListDelayed:
			set = &q.delayed
		case weir.ListRunning:
			set = &q.active
		}
		all := set.sorted()
		nUnkeyed := len(all)
		if p.State == weir.ListReady {
			all = append(all, q.keyedSorted()...)
		}
		var page weir.JobPage
		var last item
		lastKeyed := false
		for i, it := range all {
			keyedPart := i >= nUnkeyed
			if after != nil && (afterKeyed && !keyedPart || afterKeyed == keyedPart && !after.less(it)) {
				continue
			}
			if deadlineOf(it.id) != "" {
				continue // a workflow's deadline marker (model_deadline.go): no job
			}
			if len(page.Jobs) == limit {
				page.NextCursor = strconv.FormatInt(last.a, 10) + ":" + strconv.FormatInt(last.b, 10) + ":" + last.id
				if lastKeyed {
					page.NextCursor = "k" + page.NextCursor
				}
				break
			}
			page.Jobs = append(page.Jobs, m.jobs[it.id].snapshot())
			last, lastKeyed = it, keyedPart
		}
		return page, nil
	}
	var afterEnd int64
	var afterID string
	if p.Cursor != "" {
		e, id, ok := strings.Cut(p.Cursor, ":")
		ended, err := strconv.ParseInt(e, 10, 64)
		if !ok || err != nil || ended < 0 || !validJobRef(id) {
			return weir.JobPage{}, badCursor(p.Cursor)
		}
		afterEnd, afterID = ended, id
	}
	// no check of q: a task cancelled before it was ever queued is listed
	// under its queue, which may be unknown (Queues shows a queue once a
	// job was queued in it)
	var all []*job
	for _, j := range m.jobs {
		if j.queue != p.Queue || j.state != weir.State(p.State) || j.unlisted || j.ended+ms(m.cfg.Retention) <= t {
			continue
		}
		if p.Cursor != "" && !endedBefore(j.ended, j.id, afterEnd, afterID) {
			continue
		}
		all = append(all, j)
	}
	slices.SortFunc(all, func(x, y *job) int {
		if endedBefore(y.ended, y.id, x.ended, x.id) {
			return -1
		}
		return 1
	})
	var page weir.JobPage
	for i, j := range all {
		if i == limit {
			last := all[i-1]
			page.NextCursor = strconv.FormatInt(last.ended, 10) + ":" + last.id
			break
		}
		page.Jobs = append(page.Jobs, j.snapshot())
	}
	return page, nil
}

// endedBefore reports whether a job that ended at (e1, id1) lists after one
// that ended at (e2, id2): an ended list is newest first.
func endedBefore(e1 int64, id1 string, e2 int64, id2 string) bool {
	if e1 != e2 {
		return e1 < e2
	}
	return id1 < id2
}

// ValidateListJobs checks a job listing's queue, list and limit (not its
// cursor, which belongs to the store) and returns its page size. Every
// store checks them so.
func ValidateListJobs(p weir.ListJobsParams) (int, error) {
	if !ValidName(p.Queue) {
		return 0, invalid("", "queue", "queue name %q must "+NameRule, p.Queue)
	}
	if !p.State.Valid() {
		return 0, invalid("", "state", "unknown job list %q (ready, delayed, running, failed, cancelled or completed)", p.State)
	}
	limit := p.Limit
	if limit == 0 {
		limit = 100
	}
	if limit < 1 || limit > 1000 {
		return 0, invalid("", "limit", "%d is outside [1, 1000]", p.Limit)
	}
	return limit, nil
}

func badCursor(c string) error {
	return invalid("", "cursor", "%q is not a cursor this store returned", c)
}

// validJobRef reports whether id is the form of a job ID: a plain ID, a
// task's <wf>/<task> or an undo's <wf>/<task>/undo.
func validJobRef(id string) bool {
	parts := strings.Split(id, "/")
	switch len(parts) {
	case 1:
		if wf, ok := weir.WebhookOf(id); ok {
			return ValidID(wf)
		}
		return ValidID(id)
	case 2:
		return ValidID(parts[0]) && ValidName(parts[1])
	case 3:
		return ValidID(parts[0]) && ValidName(parts[1]) && parts[2] == "undo"
	}
	return false
}

// RetryJob runs a plain job that ended failed or cancelled again: it is
// queued (ready, or delayed until p.RunAt) with its attempts, lease
// expiries, error, result and end cleared, and it leaves the expiry index
// and its ended list. Its ID, spec, payload and creation time stay. A
// task or undo job, a job not ended, and a completed one are
// ErrJobNotRetryable (with State set), changing nothing.
func (m *Model) RetryJob(now time.Time, p RetryJobParams) (RetryResult, error) {
	t := m.tick(now)
	j := m.jobs[p.ID]
	if j == nil {
		return RetryResult{}, wrap(weir.ErrNotFound, "job %q", p.ID)
	}
	switch {
	case j.wf != nil:
		return RetryResult{State: j.state}, wrap(weir.ErrJobNotRetryable, "job %q is a job of workflow %q", p.ID, j.wf.id)
	case j.state != weir.Failed && j.state != weir.Cancelled:
		return RetryResult{State: j.state}, wrap(weir.ErrJobNotRetryable, "job %q is %s", p.ID, j.state)
	}
	m.expiry.remove("j:" + j.id)
	j.attempt, j.expiries = 0, 0
	j.resetAttempts()
	j.err, j.result = "", nil
	j.ended, j.expires = 0, 0
	j.cancelReq, j.token, j.deadline, j.last = false, "", 0, nil
	j.runAt = 0
	if !p.RunAt.IsZero() {
		j.runAt = p.RunAt.UnixMilli()
	}
	var fx effects
	m.push(j, t, &fx)
	return RetryResult{State: j.state, RunAt: toTime(j.runAt), Pushed: fx.pushed}, nil
}

// DeleteJob removes an ended plain job now, as the expiry of its retention
// would: reads find it no more, its ID is free and it leaves its ended
// list. The ID of a task or undo job is invalid (deleted with its
// workflow); an unknown job ErrNotFound; one not ended ErrNotEnded.
func (m *Model) DeleteJob(now time.Time, id string) error {
	m.tick(now)
	if strings.Contains(id, "/") {
		return invalid("", "id", "job %q is a workflow's: delete its workflow", id)
	}
	j := m.jobs[id]
	if j == nil {
		return wrap(weir.ErrNotFound, "job %q", id)
	}
	if !j.state.Ended() {
		return wrap(weir.ErrNotEnded, "job %q is %s", id, j.state)
	}
	m.expiry.remove("j:" + id)
	delete(m.jobs, id)
	return nil
}

// DeleteWorkflow removes an ended workflow and its task and undo jobs now,
// as the expiry of its retention would. An unknown workflow is
// ErrNotFound; a running or compensating one ErrNotEnded.
func (m *Model) DeleteWorkflow(now time.Time, id string) error {
	m.tick(now)
	w := m.workflows[id]
	if w == nil {
		return wrap(weir.ErrNotFound, "workflow %q", id)
	}
	if !w.state.Ended() {
		return wrap(weir.ErrNotEnded, "workflow %q is %s", id, w.state)
	}
	m.expiry.remove("w:" + id)
	m.removeWorkflow(w)
	return nil
}
