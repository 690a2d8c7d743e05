package engine

import (
	"maps"
	"slices"
	"time"

	"github.com/weirflow/weir"
)

type workflow struct {
	c       *compiled
	id      string
	state   weir.WorkflowState
	reason  weir.Reason
	created int64
	ended   int64
	expires int64

	run       int // 1 from the submit, +1 a RerunWorkflow (model_rerun.go)
	tasks     []*job
	open      []int // open dependencies per task
	remaining int   // tasks not ended

	traceParent string // SubmitParams.TraceParent
	name        string // SubmitParams.Name
	labels      map[string]string

	deadline    int64 // ms; 0: none (model_deadline.go)
	deadlineHit bool  // the deadline cancelled it

	unabsorbed         bool // some failure was not absorbed
	failedBeforeCancel bool // an unabsorbed failure happened before any cancel
	failFastFired      bool
	cancelReq          bool
	cancelUndo         bool

	// compensation
	undos         []*job  // per task; nil where the task is not compensated
	undoBlockers  []int   // per task: undos of nearest compensated descendants not yet ended
	undoParents   [][]int // per task: nearest compensated ancestors, descending plan order
	undoRemaining int
	undoFailed    bool
}

// Submit validates a plan, writes the workflow and pushes its roots in plan
// order. The same plan under an existing ID is a success with no effect.
func (m *Model) Submit(now time.Time, p SubmitParams) (SubmitResult, error) {
	t := m.tick(now)
	c, err := compile(p.Plan, m.cfg.Limits)
	if err != nil {
		return SubmitResult{}, err
	}
	if err := ValidateTraceParent(p.TraceParent); err != nil {
		return SubmitResult{}, err
	}
	if err := ValidateNameLabels(p.Name, p.Labels); err != nil {
		return SubmitResult{}, err
	}
	if w := m.workflows[p.Plan.ID]; w != nil {
		if w.c.hash == c.hash {
			return SubmitResult{}, nil
		}
		return SubmitResult{}, wrap(weir.ErrWorkflowExists, "workflow %q", p.Plan.ID)
	}
	dl := deadlineAt(&c.plan, t)
	if dl != 0 && dl <= t {
		return SubmitResult{}, DeadlinePassed(dl, t)
	}
	n := len(c.plan.Tasks)
	w := &workflow{
		c: c, id: p.Plan.ID, state: weir.WorkflowRunning, created: t, run: 1,
		tasks: make([]*job, n), open: make([]int, n), remaining: n,
		traceParent: p.TraceParent, deadline: dl, name: p.Name,
	}
	if len(p.Labels) > 0 {
		w.labels = maps.Clone(p.Labels)
	}
	for i, ts := range c.plan.Tasks {
		w.tasks[i] = &job{
			id: weir.TaskJobID(w.id, ts.Name), queue: ts.Queue, payload: ts.Payload,
			priority: ts.Priority, maxAttempts: attemptsOrDefault(ts.MaxAttempts), maxExpiries: expiriesOrDefault(ts.MaxExpiries),
			backoff: ms(backoffOrDefault(ts.Backoff)), timeout: ms(ts.Timeout),
			state: weir.Waiting, created: t, wf: w, task: i, key: ts.Key,
		}
		w.open[i] = len(c.deps[i])
		m.jobs[w.tasks[i].id] = w.tasks[i]
	}
	m.workflows[w.id] = w
	m.emit(weir.EventWorkflowSubmitted, w.id, 0, "", t)
	var fx effects
	for i, j := range w.tasks {
		if w.open[i] == 0 {
			m.promote(j, t, &fx)
		}
	}
	if w.deadline != 0 {
		m.queue(c.plan.Tasks[0].Queue).delayed.add(DeadlineMarker(w.id), w.deadline, 0)
	}
	return SubmitResult{Created: true, Pushed: fx.pushed}, nil
}

// taskEnded runs the consequences of the tasks of work ending: promotion
// of dependents, cancellation of non-Always dependents of a failed or
// cancelled task (and of theirs), FailFast, and the workflow's end once
// every task ended. Ended tasks are handled first in, first out (work
// first); each one's dependents in plan order.
func (m *Model) taskEnded(w *workflow, work []int, now int64, fx *effects) {
	plan := &w.c.plan
	for len(work) > 0 {
		k := work[0]
		work = work[1:]
		t := w.tasks[k]
		w.remaining--
		if t.state == weir.Failed && !w.c.absorbable(k) {
			w.unabsorbed = true
			if !w.cancelReq {
				w.failedBeforeCancel = true
				if plan.FailFast && !w.failFastFired {
					w.failFastFired = true
					for x, tx := range w.tasks {
						if (tx.state == weir.Waiting || tx.state == weir.Queued || tx.state == weir.Open) && !plan.Tasks[x].Always {
							m.cancelTask(tx, weir.ReasonTextFailFast, now, fx)
							work = append(work, x)
						}
					}
				}
			}
		}
		for _, d := range w.c.dependents[k] {
			td := w.tasks[d]
			if td.state != weir.Waiting {
				continue
			}
			if t.state == weir.Completed || plan.Tasks[d].Always {
				if t.state != weir.Completed {
					td.depFailed = true
				}
				w.open[d]--
				if w.open[d] == 0 {
					if plan.Tasks[d].OnFailure && !td.depFailed {
						m.cancelTask(td, weir.ReasonTextNoFailure, now, fx)
						work = append(work, d)
						continue
					}
					m.promote(td, now, fx)
					if td.state == weir.Queued && td.runAt == 0 {
						td.promotedAt = t.ended // pushed ready by this end
					}
				}
				continue
			}
			m.cancelTask(td, weir.DependencyReason(plan.Tasks[k].Name, t.state), now, fx)
			work = append(work, d)
		}
	}
	if w.remaining == 0 {
		m.tasksAllEnded(w, now, fx)
	}
}

// cancelTask ends a waiting or queued task (or undo) as cancelled, without
// its consequences.
func (m *Model) cancelTask(j *job, reason string, now int64, fx *effects) {
	if j.state == weir.Queued || j.state == weir.Open {
		m.unqueue(j)
	}
	m.emit(weir.EventCancelled, j.id, 0, reason, now)
	j.state = weir.Cancelled
	j.runAt = 0
	j.err = reason
	j.ended = now
	fx.cancelled = append(fx.cancelled, j.id)
}

// tasksAllEnded decides a workflow's end once every task ended.
func (m *Model) tasksAllEnded(w *workflow, now int64, fx *effects) {
	m.dropDeadline(w)
	compensable := false
	for i, t := range w.tasks {
		if t.state == weir.Completed && w.c.plan.Tasks[i].Undo != nil {
			compensable = true
			break
		}
	}
	switch {
	case w.cancelReq && (w.cancelUndo || w.failedBeforeCancel) && compensable:
		reason := weir.ReasonCancel
		if w.failedBeforeCancel {
			reason = weir.ReasonFailure
		}
		m.startCompensation(w, reason, now, fx)
	case w.cancelReq:
		m.endWorkflow(w, weir.WorkflowCancelled, now, fx)
	case w.unabsorbed && compensable:
		m.startCompensation(w, weir.ReasonFailure, now, fx)
	case w.unabsorbed:
		m.endWorkflow(w, weir.WorkflowFailed, now, fx)
	default:
		m.endWorkflow(w, weir.WorkflowCompleted, now, fx)
	}
}

func (m *Model) endWorkflow(w *workflow, s weir.WorkflowState, now int64, fx *effects) {
	m.emit(weir.EventWorkflowEnded, w.id, 0, string(s), now)
	w.state = s
	w.ended = now
	w.expires = now + ms(m.cfg.Retention)
	m.expiry.add("w:"+w.id, w.expires, 0)
	fx.wfEnded = true
	m.deliver(w, now)
}

// startCompensation creates the undo job of every completed task that has
// one, and pushes those whose compensated descendants are all done (none
// yet), in reverse plan order. The undo of X waits for the undos of its
// nearest compensated descendants: those reached from X through tasks that
// are not compensated.
func (m *Model) startCompensation(w *workflow, reason weir.Reason, now int64, fx *effects) {
	m.emit(weir.EventWorkflowCompensating, w.id, 0, string(reason), now)
	w.state = weir.WorkflowCompensating
	w.reason = reason
	n := len(w.tasks)
	plan := &w.c.plan
	w.undos = make([]*job, n)
	w.undoBlockers = make([]int, n)
	w.undoParents = make([][]int, n)
	for i, t := range w.tasks {
		if t.state == weir.Completed && plan.Tasks[i].Undo != nil {
			ts := plan.Tasks[i]
			u := &job{
				id: weir.UndoJobID(w.id, ts.Name), queue: ts.Undo.Queue, payload: ts.Undo.Payload,
				priority: ts.Priority, maxAttempts: t.maxAttempts, maxExpiries: t.maxExpiries, backoff: t.backoff, timeout: t.timeout,
				state: weir.Pending, created: now, wf: w, task: i, undo: true,
			}
			w.undos[i] = u
			m.jobs[u.id] = u
			w.undoRemaining++
		}
	}
	// below[v]: some descendant of v is compensated. Searches skip the rest,
	// so a big region without undos is not walked once per compensated task.
	below := make([]bool, n)
	for v := n - 1; v >= 0; v-- {
		for _, d := range w.c.dependents[v] {
			if w.undos[d] != nil || below[d] {
				below[v] = true
				break
			}
		}
	}
	// ncd[v], for v with below[v]: the nearest compensated descendants of
	// v, each once, made from its dependents' in one pass from the last
	// task (a task's dependents come after it in plan order). A task whose
	// one dependent is not compensated shares that dependent's list, so a
	// chain without undos costs one step a task, however many undos sit
	// above it.
	ncd := nearestCompensated(n, w.c.dependents, func(d int) bool { return w.undos[d] != nil }, below)
	for x := n - 1; x >= 0; x-- {
		if w.undos[x] == nil || !below[x] {
			continue
		}
		w.undoBlockers[x] = len(ncd[x])
		for _, y := range ncd[x] {
			w.undoParents[y] = append(w.undoParents[y], x)
		}
	}
	for x := n - 1; x >= 0; x-- {
		if w.undos[x] != nil && w.undoBlockers[x] == 0 {
			m.push(w.undos[x], now, fx)
		}
	}
}

// nearestCompensated returns, for every task v with below[v], the tasks
// with an undo (has) reached from v through tasks without one, each once:
// ncd[v] is its dependents that have an undo and the lists of those that
// do not. Lists are shared, not copied, where v has one dependent without
// an undo; callers only read them.
func nearestCompensated(n int, dependents [][]int, has func(int) bool, below []bool) [][]int {
	ncd := make([][]int, n)
	mark := make([]int, n) // v+1 once y is in ncd[v]
	for v := n - 1; v >= 0; v-- {
		if !below[v] {
			continue
		}
		ds := dependents[v]
		if len(ds) == 1 && !has(ds[0]) {
			ncd[v] = ncd[ds[0]]
			continue
		}
		var out []int
		add := func(y int) {
			if mark[y] != v+1 {
				mark[y] = v + 1
				out = append(out, y)
			}
		}
		for _, d := range ds {
			if has(d) {
				add(d)
			} else if below[d] {
				for _, y := range ncd[d] {
					add(y)
				}
			}
		}
		ncd[v] = out
	}
	return ncd
}

// undoEnded runs the consequences of task i's undo ending.
func (m *Model) undoEnded(w *workflow, i int, now int64, fx *effects) {
	w.undoRemaining--
	if w.undos[i].state != weir.Completed {
		w.undoFailed = true
	}
	if w.undoBlockers[i] == 0 {
		m.releaseUndoParents(w, i, now, fx)
	}
	if w.undoRemaining == 0 {
		if w.undoFailed {
			m.endWorkflow(w, weir.WorkflowCompensationFailed, now, fx)
		} else {
			m.endWorkflow(w, weir.WorkflowCompensated, now, fx)
		}
	}
}

// releaseUndoParents counts task i's undo, ended and no longer waiting for
// its descendants, as done for its nearest compensated ancestors. An undo
// cancelled while it still waited is counted only once its own descendants'
// undos ended, so an ancestor's undo never overtakes them.
func (m *Model) releaseUndoParents(w *workflow, i int, now int64, fx *effects) {
	for _, p := range w.undoParents[i] {
		w.undoBlockers[p]--
		if w.undoBlockers[p] != 0 {
			continue
		}
		switch u := w.undos[p]; {
		case u.state == weir.Pending:
			m.push(u, now, fx)
		case u.state.Ended():
			m.releaseUndoParents(w, p, now, fx)
		}
	}
}

// CancelWorkflow cancels every task that has not started (Always tasks too),
// tells running ones to stop, and ends the workflow once none runs. Undo,
// when nil, is the workflow's UndoOnCancel. A second cancel, or a cancel of a
// compensating workflow, has no effect; an ended workflow is ErrWorkflowEnded.
func (m *Model) CancelWorkflow(now time.Time, p CancelWorkflowParams) (CancelResult, error) {
	t := m.tick(now)
	w := m.workflows[p.ID]
	if w == nil {
		return CancelResult{}, wrap(weir.ErrNotFound, "workflow %q", p.ID)
	}
	if w.state.Ended() {
		return CancelResult{WorkflowState: w.state}, wrap(weir.ErrWorkflowEnded, "workflow %q is %s", p.ID, w.state)
	}
	if w.cancelReq || w.state == weir.WorkflowCompensating {
		return CancelResult{WorkflowState: w.state}, nil
	}
	undo := w.c.plan.UndoOnCancel
	if p.Undo != nil {
		undo = *p.Undo
	}
	return m.cancelWorkflow(w, undo, weir.ReasonTextWorkflowCancelled, t), nil
}

// cancelWorkflow cancels running workflow w, whose cancel was not requested
// yet: its unstarted tasks end cancelled with reason, running ones are told
// to stop; undo says whether a compensation may follow.
func (m *Model) cancelWorkflow(w *workflow, undo bool, reason string, t int64) CancelResult {
	w.cancelReq = true
	w.cancelUndo = undo
	m.dropDeadline(w)
	var fx effects
	var stopping []string
	for _, j := range w.tasks {
		switch j.state {
		case weir.Waiting, weir.Queued, weir.Open:
			m.cancelTask(j, reason, t, &fx)
			j.unlisted = true
			w.remaining--
		case weir.Running:
			j.cancelReq = true
			stopping = append(stopping, j.id)
		}
	}
	if w.remaining == 0 {
		m.tasksAllEnded(w, t, &fx)
	}
	return CancelResult{Cancelled: fx.cancelled, Stopping: stopping, Pushed: fx.pushed, WorkflowState: w.state}
}

func (w *workflow) snapshot() weir.Workflow {
	plan := &w.c.plan
	s := weir.Workflow{
		ID: w.id, Name: w.name, Labels: maps.Clone(w.labels), State: w.state, Reason: w.reason, FailFast: plan.FailFast,
		UndoOnCancel: plan.UndoOnCancel, CancelRequested: w.cancelReq, CancelUndo: w.cancelUndo,
		PlanHash: w.c.hash, CreatedAt: toTime(w.created), EndedAt: toTime(w.ended),
		ExpiresAt: toTime(w.expires), Tasks: make([]weir.Task, len(w.tasks)),
		Deadline: toTime(w.deadline), DeadlineHit: w.deadlineHit, Webhook: webhookStatus(plan, w.run), Run: w.run,
	}
	for i, j := range w.tasks {
		ts := plan.Tasks[i]
		t := weir.Task{
			Name: ts.Name, Queue: ts.Queue, After: slices.Clone(ts.After), Always: ts.Always, OnFailure: ts.OnFailure,
			State: j.state, Attempt: j.attempt, Result: slices.Clone(j.result), Error: j.err,
			Progress: j.progressOf(),
			Signal:   ts.Signal, AddedBy: j.addedBy,
		}
		if ts.Undo != nil {
			t.Undo = &weir.UndoStatus{Queue: ts.Undo.Queue}
			if w.undos != nil && w.undos[i] != nil {
				u := w.undos[i]
				t.Undo.State, t.Undo.Attempt, t.Undo.Error = u.state, u.attempt, u.err
			}
		}
		s.Tasks[i] = t
	}
	return s
}
