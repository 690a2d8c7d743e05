package client

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// Workflow is a DAG of tasks: a builder until it is submitted, then the
// handle that waits for it, reads its status and cancels it.
//
// Build it with AddTask (each task names the tasks it runs after, which must
// have been added before it, so the graph is acyclic by construction), then
// Client.Submit. Mistakes in building (a dependency added later or from
// another workflow, a payload that does not encode, a change after Submit)
// are kept and returned by Submit and Err; the store checks the rest (names,
// limits) at Submit. The plan is fixed by the first Submit: changing the
// builder afterwards is an error (weir.ErrSubmitted), and submitting again sends
// the same plan, which the store treats as a success with no effect.
//
// A Workflow is safe for concurrent use.
type Workflow struct {
	mu           sync.Mutex
	id           string
	idGiven      bool // by WorkflowID: a schedule refuses it
	failFast     bool
	undoOnCancel bool
	nodes        []*node
	err          error
	plan         *engine.Plan // fixed at the first Submit
	opened       bool         // a handle from OpenWorkflow: no plan
	c            *Client
	startAt      time.Time         // StartAt (startat.go)
	deadline     time.Time         // Deadline (deadline.go)
	deadlineIn   time.Duration     // DeadlineIn (deadline.go)
	webhook      *weir.Webhook     // Webhook (webhook.go)
	name         string            // WorkflowName (labels.go)
	labels       map[string]string // WorkflowLabels (labels.go)
}

type node struct {
	wf       *Workflow
	index    int
	spec     engine.TaskSpec
	existing bool // Existing: a task of the running workflow, by name
}

// WorkflowOption is one option of NewWorkflow, made by WorkflowID,
// FailFast, UndoOnCancel, WorkflowName or WorkflowLabels. It prints as the call that made it, for
// example FailFast(); the zero WorkflowOption does nothing.
type WorkflowOption struct {
	text string
	set  func(*Workflow)
}

// String returns the option as the call that made it.
func (o WorkflowOption) String() string { return o.text }

// WorkflowID gives the workflow its ID instead of a random one. Submitting
// the same plan under an ID again is a success with no effect (each root
// runs once); another plan under that ID is weir.ErrWorkflowExists. IDs match
// ^[A-Za-z0-9_.-]{1,128}$ but not . or .., or a schedule tick's <name>@<digits>
// (engine.ValidID, TickIDIn).
func WorkflowID(id string) WorkflowOption {
	return WorkflowOption{fmt.Sprintf("WorkflowID(%q)", id), func(w *Workflow) { w.id, w.idGiven = id, true }}
}

// FailFast makes the first failure that is not absorbed cancel every task
// that has not started, except Always tasks (which still run once their
// dependencies ended, like finally blocks).
func FailFast() WorkflowOption {
	return WorkflowOption{"FailFast()", func(w *Workflow) { w.failFast = true }}
}

// UndoOnCancel says what Cancel does when not told: run the undo jobs of the
// completed tasks (true, the default) or not. It is fixed at Submit.
func UndoOnCancel(undo bool) WorkflowOption {
	return WorkflowOption{fmt.Sprintf("UndoOnCancel(%t)", undo), func(w *Workflow) { w.undoOnCancel = undo }}
}

// NewWorkflow returns an empty workflow builder with a random ID (or the
// one given by WorkflowID).
func NewWorkflow(opts ...WorkflowOption) *Workflow {
	w := &Workflow{undoOnCancel: true}
	for _, o := range opts {
		if o.set != nil {
			o.set(w)
		}
	}
	if w.id == "" {
		w.id = NewID()
	}
	return w
}

// OpenWorkflow returns the handle of the workflow id, submitted by this or
// another process. It does not check that the workflow exists; its methods
// return weir.ErrNotFound when it does not. It is not a builder: adding to it or
// submitting it is weir.ErrSubmitted.
func (c *Client) OpenWorkflow(id string) *Workflow {
	return &Workflow{id: id, opened: true, c: c}
}

// ID returns the workflow's ID, known before Submit.
func (w *Workflow) ID() string { return w.id }

// Err returns the first mistake made in building the workflow, or nil.
func (w *Workflow) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// TaskRef is a task of a workflow, whatever its result type: what After
// takes. Every *Task[R] is one.
type TaskRef interface {
	taskNode() *node
}

// Task is the handle of a task whose result is an R, returned by AddTask.
// After and Always set how it depends on other tasks and return the task,
// so they chain; its job's options are given to AddTask.
type Task[R any] struct {
	n *node
}

func (t *Task[R]) taskNode() *node { return t.n }

// Name returns the task's name.
func (t *Task[R]) Name() string { return t.n.spec.Name }

// AddTask adds a task named name that runs a job with payload on queue q,
// with opts (Delay, Priority, MaxAttempts, MaxExpiries, Backoff, Timeout,
// ConcurrencyKey; JobOption says which apply to its undo job too), and
// returns its handle. Names match
// ^[A-Za-z0-9_.-]{1,64}$, are not . or .. (engine.ValidName) and are
// unique in the workflow; the task's job ID is weir.TaskJobID(workflow,
// name). A task with no dependency starts at Submit. An option of plain
// jobs only (ID, RunAt, Unique, UniqueBy) is a *weir.BuildError, returned
// by Submit.
func AddTask[P, R any](w *Workflow, name string, q Queue[P, R], payload P, opts ...JobOption) *Task[R] {
	n := &node{wf: w, index: -1, spec: engine.TaskSpec{Name: name, Queue: q.name}}
	b, err := q.EncodePayload(payload)
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.changeLocked(name) {
		return &Task[R]{n: n}
	}
	if err != nil {
		w.failLocked(&weir.BuildError{Task: name, Problem: err.Error()})
	}
	for _, o := range opts {
		switch {
		case o.task != nil:
			o.task(&n.spec)
		case o.job != nil:
			w.failLocked(&weir.BuildError{Task: name, Problem: fmt.Sprintf("option %s applies to plain jobs only", o)})
		}
	}
	n.spec.Payload = b
	n.index = len(w.nodes)
	w.nodes = append(w.nodes, n)
	return &Task[R]{n: n}
}

// changeLocked reports whether the builder may change; if not, it records
// weir.ErrSubmitted. w.mu must be held.
func (w *Workflow) changeLocked(task string) bool {
	if w.plan == nil && !w.opened {
		return true
	}
	problem := "changed after Submit"
	if w.opened {
		problem = "a workflow opened by ID cannot be changed"
	}
	w.failLocked(&weir.BuildError{Task: task, Problem: problem, Err: weir.ErrSubmitted})
	return false
}

func (w *Workflow) failLocked(err error) {
	if w.err == nil {
		w.err = err
	}
}

// set changes the task's spec under the workflow's lock.
func (t *Task[R]) set(f func(s *engine.TaskSpec)) *Task[R] {
	w := t.n.wf
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.changeLocked(t.n.spec.Name) {
		f(&t.n.spec)
	}
	return t
}

// After makes the task run once deps have completed. Each dependency must
// be a task of the same workflow added before this one; anything else is a
// *weir.BuildError returned by Submit. When a dependency fails or is cancelled,
// the task is cancelled (unless it is Always).
func (t *Task[R]) After(deps ...TaskRef) *Task[R] {
	w := t.n.wf
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.changeLocked(t.n.spec.Name) {
		return t
	}
	for _, d := range deps {
		dn := d.taskNode()
		switch {
		case dn.existing && dn.wf == w:
			t.n.spec.After = append(t.n.spec.After, dn.spec.Name)
		case dn.wf != w:
			w.failLocked(&weir.BuildError{Task: t.n.spec.Name, Problem: fmt.Sprintf("depends on task %q of another workflow", dn.spec.Name)})
		case dn == t.n:
			w.failLocked(&weir.BuildError{Task: t.n.spec.Name, Problem: "depends on itself"})
		case dn.index < 0 || dn.index > t.n.index:
			w.failLocked(&weir.BuildError{Task: t.n.spec.Name, Problem: fmt.Sprintf("depends on task %q, which was added after it", dn.spec.Name)})
		default:
			t.n.spec.After = append(t.n.spec.After, dn.spec.Name)
		}
	}
	return t
}

// Always makes the task run once all its dependencies have ended, whether
// they completed, failed or were cancelled; its handler can read which (see
// package worker). A failure whose dependents are all Always tasks is
// absorbed: it does not fail the workflow. Cancelling the workflow cancels
// Always tasks too.
func (t *Task[R]) Always() *Task[R] { return t.set(func(s *engine.TaskSpec) { s.Always = true }) }

// OnFailure makes the task a catch: it waits for all its dependencies like
// an Always task, but runs only if at least one of them failed or was
// cancelled; when all completed, it ends cancelled with error "no_failure"
// without running (and without failing the workflow). It needs at least
// one dependency. Catch callbacks of Chain and Batch are such tasks.
func (t *Task[R]) OnFailure() *Task[R] {
	return t.set(func(s *engine.TaskSpec) { s.Always, s.OnFailure = true, true })
}

// Undo gives task t a compensation job: payload on queue q. It runs only if
// the workflow compensates (it fails, or is cancelled with undo) after t
// completed, once the undos of the tasks that ran after t have ended, so
// undos run in reverse order of the work. Its handler reads t's result as
// its only dependency (see package worker).
func Undo[R, UP, UR any](t *Task[R], q Queue[UP, UR], payload UP) *Task[R] {
	b, err := q.EncodePayload(payload)
	if err != nil {
		w := t.n.wf
		w.mu.Lock()
		w.failLocked(&weir.BuildError{Task: t.n.spec.Name, Problem: "undo: " + err.Error()})
		w.mu.Unlock()
		return t
	}
	return t.set(func(s *engine.TaskSpec) { s.Undo = &engine.UndoSpec{Queue: q.name, Payload: b} })
}

// Submit writes the workflow and starts its tasks that have no dependency.
// It returns the builder's first mistake, if any, with nothing written, or
// the store's error (*weir.ValidationError for a plan the store refuses).
// Submit is idempotent: the first call fixes the plan, and submitting the
// same workflow again, after an error or not, sends the same plan, which
// the store accepts once. When ctx carries an OpenTelemetry span, its
// trace context is stored with the workflow (by the first submit) and
// every attempt of its tasks continues that trace (package weirotel).
func (c *Client) Submit(ctx context.Context, w *Workflow) error {
	w.mu.Lock()
	if w.opened {
		w.mu.Unlock()
		return &weir.BuildError{Problem: "a workflow opened by ID has no plan to submit", Err: weir.ErrSubmitted}
	}
	if w.err != nil {
		w.mu.Unlock()
		return w.err
	}
	if w.plan == nil {
		p := engine.Plan{ID: w.id, FailFast: w.failFast, UndoOnCancel: w.undoOnCancel, Tasks: make([]engine.TaskSpec, len(w.nodes)),
			StartAt: w.startAt, Deadline: w.deadline, DeadlineIn: w.deadlineIn, Webhook: cloneWebhook(w.webhook)}
		for i, n := range w.nodes {
			p.Tasks[i] = n.spec
		}
		w.plan = &p
	}
	w.c = c
	plan := *w.plan
	name, labels := w.name, w.labels
	w.mu.Unlock()
	_, err := c.store.Submit(ctx, engine.SubmitParams{Plan: plan, TraceParent: traceParent(ctx), Name: name, Labels: labels})
	return err
}

func (w *Workflow) client() (*Client, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.c == nil {
		return nil, fmt.Errorf("%w: workflow %q", weir.ErrNotSubmitted, w.id)
	}
	return w.c, nil
}

// Wait blocks until the workflow has ended, or ctx is done, and returns its
// final snapshot. A workflow that did not complete returns a
// *weir.WorkflowError as well as the snapshot (errors.Is matches weir.ErrFailed or
// weir.ErrCancelled); read task results from the snapshot with ResultOf.
func (w *Workflow) Wait(ctx context.Context) (weir.Workflow, error) {
	c, err := w.client()
	if err != nil {
		return weir.Workflow{}, err
	}
	s, err := c.store.AwaitWorkflow(ctx, w.id)
	if err != nil {
		return s, err
	}
	if s.State != weir.WorkflowCompleted {
		return s, workflowError(s)
	}
	return s, nil
}

// Status returns a snapshot of the workflow now.
func (w *Workflow) Status(ctx context.Context) (weir.Workflow, error) {
	c, err := w.client()
	if err != nil {
		return weir.Workflow{}, err
	}
	return c.store.GetWorkflow(ctx, w.id)
}

// CancelOption is one option of CancelWorkflow and Workflow.Cancel, made
// by WithUndo. It prints as the call that made it, for example
// WithUndo(false).
type CancelOption struct {
	undo *bool
}

// String returns the option as the call that made it.
func (o CancelOption) String() string {
	if o.undo == nil {
		return "CancelOption{}"
	}
	return fmt.Sprintf("WithUndo(%t)", *o.undo)
}

// WithUndo says whether the cancel runs the undo jobs of the tasks that
// completed, overriding the workflow's UndoOnCancel.
func WithUndo(undo bool) CancelOption { return CancelOption{undo: &undo} }

// CancelWorkflow cancels the workflow with that ID, from any process
// (Workflow.Cancel does the same for its handle's ID): tasks that have not
// started never run (Always tasks included); running ones have their
// handler's context cancelled at their worker's next heartbeat. Once none
// runs, the workflow compensates (runs the undo jobs of completed tasks) or
// ends cancelled, as WithUndo or UndoOnCancel say. It returns the
// workflow's state after the call: cancelled, compensating, or running
// while told-to-stop tasks run. Cancelling again has no effect; cancelling
// an ended workflow is weir.ErrWorkflowEnded; an unknown one
// weir.ErrNotFound.
func (c *Client) CancelWorkflow(ctx context.Context, id string, opts ...CancelOption) (weir.WorkflowState, error) {
	p := engine.CancelWorkflowParams{ID: id}
	for _, o := range opts {
		if o.undo != nil {
			p.Undo = o.undo
		}
	}
	res, err := c.store.CancelWorkflow(ctx, p)
	return res.WorkflowState, err
}

// Cancel cancels the workflow, as Client.CancelWorkflow does with its ID,
// and returns the same: the workflow's state after the call. A builder
// not submitted yet is weir.ErrNotSubmitted.
func (w *Workflow) Cancel(ctx context.Context, opts ...CancelOption) (weir.WorkflowState, error) {
	c, err := w.client()
	if err != nil {
		return "", err
	}
	return c.CancelWorkflow(ctx, w.id, opts...)
}

// Rerun runs the failed part of the ended workflow again, as
// Client.RerunWorkflow does with its ID, and returns the same: its new run
// number; Wait then waits for the end of that run. A builder not submitted
// yet is weir.ErrNotSubmitted.
func (w *Workflow) Rerun(ctx context.Context) (int, error) {
	c, err := w.client()
	if err != nil {
		return 0, err
	}
	return c.RerunWorkflow(ctx, w.id)
}

// ListWorkflows returns one page of workflows, newest first, optionally of
// one state; pass the page's NextCursor to get the next one.
func (c *Client) ListWorkflows(ctx context.Context, p weir.ListParams) (weir.WorkflowPage, error) {
	return c.store.ListWorkflows(ctx, p)
}

// ResultOf returns the result of task t from a workflow snapshot (from Wait
// or Status), decoded as t's result type. A task that has not completed
// returns a *weir.JobError saying its state and reason; a snapshot without
// a task of t's name, weir.ErrNotFound. ResultOf reads t's name only, so
// a process that did not submit the workflow reads its results with the
// handles of the same builder, built again and not submitted (the function
// that builds the workflow, called again). A handler reads its own
// dependencies' results with worker.DepResult instead.
func ResultOf[R any](s weir.Workflow, t *Task[R]) (R, error) {
	var zero R
	name := t.Name()
	for _, t := range s.Tasks {
		if t.Name != name {
			continue
		}
		if t.State != weir.Completed {
			return zero, &weir.JobError{JobID: weir.TaskJobID(s.ID, name), Workflow: s.ID, Task: name, State: t.State, Attempt: t.Attempt, Message: t.Error}
		}
		return decode[R](t.Result)
	}
	return zero, fmt.Errorf("%w: workflow %q has no task %q", weir.ErrNotFound, s.ID, name)
}

func workflowError(s weir.Workflow) *weir.WorkflowError {
	e := &weir.WorkflowError{ID: s.ID, State: s.State, Reason: s.Reason}
	pick := func(ok func(weir.Task) (bool, string)) bool {
		for _, t := range s.Tasks {
			if hit, msg := ok(t); hit {
				e.Task, e.Message = t.Name, msg
				return true
			}
		}
		return false
	}
	_ = pick(func(t weir.Task) (bool, string) { return t.State == weir.Failed, t.Error }) ||
		pick(func(t weir.Task) (bool, string) {
			if t.Undo == nil || (t.Undo.State != weir.Failed && t.Undo.State != weir.Cancelled) {
				return false, ""
			}
			return true, "undo " + string(t.Undo.State) + ": " + t.Undo.Error
		}) ||
		pick(func(t weir.Task) (bool, string) { return t.State == weir.Cancelled, t.Error })
	return e
}
