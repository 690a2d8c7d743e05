package engine

// Shared helpers of the rule tests (model_test.go, validate_test.go). Every
// name here starts with rt so that other test files of the package can define
// their own helpers freely.

import (
	"errors"
	"github.com/weirflow/weir"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// rtT0 is the time every harness starts at: a whole millisecond, far from
// the zero time (which the model reports as "unset").
var rtT0 = time.UnixMilli(1_700_000_000_000).UTC()

// rtLease is the lease every harness claim asks for.
const rtLease = 30 * time.Second

// rtWF is the workflow ID the task helpers act on unless a test submits
// another one.
const rtWF = "wf"

// rtSmallLimits are limits small enough to pass cheaply in tests.
func rtSmallLimits() weir.Limits {
	return weir.Limits{
		MaxTasks:    4,
		MaxEdges:    3,
		MaxPayload:  8,
		MaxResult:   8,
		MaxError:    16,
		MaxAttempts: 5,
		MaxBatch:    3,
		MaxLease:    time.Minute,
		MaxBackoff:  10 * time.Second,
	}
}

// rtHarness drives one Model with a clock the test moves by hand. Its
// helpers fail the test on any unexpected error, so a scenario reads as a
// list of steps and checks.
type rtHarness struct {
	t   *testing.T
	m   *Model
	now time.Time
	// wf is the workflow the task helpers act on: the last one submitted.
	wf string
	// submitted is what the last submit returned.
	submitted SubmitResult
}

func rtNewWith(t *testing.T, cfg Config) *rtHarness {
	return &rtHarness{t: t, m: NewModel(cfg), now: rtT0, wf: rtWF}
}

// advance moves the harness clock forward.
func (h *rtHarness) advance(d time.Duration) { h.now = h.now.Add(d) }

// at is rtT0 + d, for expected times.
func rtAt(d time.Duration) time.Time { return rtT0.Add(d) }

func (h *rtHarness) submit(p Plan) SubmitResult {
	h.t.Helper()
	r, err := h.m.Submit(h.now, SubmitParams{Plan: p})
	if err != nil {
		h.t.Fatalf("submit %s: %v", p.ID, err)
	}
	h.wf, h.submitted = p.ID, r
	return r
}

func (h *rtHarness) enqueue(s JobSpec) EnqueueResult {
	h.t.Helper()
	r, err := h.m.Enqueue(h.now, EnqueueParams{Job: s})
	if err != nil {
		h.t.Fatalf("enqueue %s: %v", s.ID, err)
	}
	return r
}

// claim claims up to max jobs from queues, with rtLease.
func (h *rtHarness) claim(max int, queues ...string) []Claimed {
	h.t.Helper()
	c, err := h.m.Claim(h.now, ClaimParams{Queues: queues, Max: max, Lease: rtLease})
	if err != nil {
		h.t.Fatalf("claim %v: %v", queues, err)
	}
	return c
}

// claimIDs claims up to max jobs and returns their IDs in claim order.
func (h *rtHarness) claimIDs(max int, queues ...string) []string {
	h.t.Helper()
	var ids []string
	for _, c := range h.claim(max, queues...) {
		ids = append(ids, c.Job.ID)
	}
	return ids
}

// claimJob claims one job from queue and fails unless it is id.
func (h *rtHarness) claimJob(queue, id string) Claimed {
	h.t.Helper()
	c := h.claim(1, queue)
	if len(c) != 1 || c[0].Job.ID != id {
		h.t.Fatalf("claim from %q: want job %s, got %v", queue, id, rtClaimedIDs(c))
	}
	return c[0]
}

// start claims the job of task of the current workflow from its queue.
func (h *rtHarness) start(task string) Claimed {
	h.t.Helper()
	return h.claimJob(h.task(task).Queue, weir.TaskJobID(h.wf, task))
}

// startUndo claims the undo job of task from its undo queue.
func (h *rtHarness) startUndo(task string) Claimed {
	h.t.Helper()
	u := h.task(task).Undo
	if u == nil {
		h.t.Fatalf("task %s has no undo", task)
	}
	return h.claimJob(u.Queue, weir.UndoJobID(h.wf, task))
}

// finish runs one Finish call and fails the test on a call error.
func (h *rtHarness) finish(os ...Outcome) FinishResult {
	h.t.Helper()
	r, err := h.m.Finish(h.now, FinishParams{Outcomes: os})
	if err != nil {
		h.t.Fatalf("finish: %v", err)
	}
	return r
}

// finishOne settles one outcome and fails unless it settled without error.
func (h *rtHarness) finishOne(o Outcome) Settled {
	h.t.Helper()
	s := h.finish(o).Settled[0]
	if s.Err != nil {
		h.t.Fatalf("finish %s: %v", o.JobID, s.Err)
	}
	return s
}

func rtDone(c Claimed, result string) Outcome {
	return Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: OutcomeCompleted, Result: []byte(result)}
}

func rtFailed(c Claimed, msg string) Outcome {
	return Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: OutcomeFailed, Error: msg}
}

func rtFatal(c Claimed, msg string) Outcome {
	o := rtFailed(c, msg)
	o.NonRetryable = true
	return o
}

func (h *rtHarness) complete(c Claimed, result string) Settled {
	h.t.Helper()
	return h.finishOne(rtDone(c, result))
}

func (h *rtHarness) fail(c Claimed, msg string) Settled {
	h.t.Helper()
	return h.finishOne(rtFailed(c, msg))
}

// run claims task and completes it with the result "r:<task>".
func (h *rtHarness) run(task string) Settled {
	h.t.Helper()
	return h.complete(h.start(task), "r:"+task)
}

// runFail claims task and fails it for good with the error "boom <task>".
func (h *rtHarness) runFail(task string) Settled {
	h.t.Helper()
	return h.finishOne(rtFatal(h.start(task), "boom "+task))
}

// runUndo claims task's undo and completes it.
func (h *rtHarness) runUndo(task string) Settled {
	h.t.Helper()
	return h.complete(h.startUndo(task), "")
}

// failUndo claims task's undo and fails it for good.
func (h *rtHarness) failUndo(task string) Settled {
	h.t.Helper()
	return h.finishOne(rtFatal(h.startUndo(task), "undo boom "+task))
}

func (h *rtHarness) cancel(undo *bool) CancelResult {
	h.t.Helper()
	r, err := h.m.CancelWorkflow(h.now, CancelWorkflowParams{ID: h.wf, Undo: undo})
	if err != nil {
		h.t.Fatalf("cancel %s: %v", h.wf, err)
	}
	return r
}

func (h *rtHarness) cancelJob(id string) CancelResult {
	h.t.Helper()
	r, err := h.m.CancelJob(h.now, CancelJobParams{ID: id})
	if err != nil {
		h.t.Fatalf("cancel job %s: %v", id, err)
	}
	return r
}

func (h *rtHarness) heartbeat(c Claimed, extend time.Duration) LeaseStatus {
	h.t.Helper()
	r, err := h.m.Heartbeat(h.now, HeartbeatParams{Leases: []LeaseRef{{JobID: c.Job.ID, Token: c.Lease.Token}}, Extend: extend})
	if err != nil {
		h.t.Fatalf("heartbeat %s: %v", c.Job.ID, err)
	}
	return r[0]
}

func (h *rtHarness) expire() ExpireResult {
	h.t.Helper()
	r, err := h.m.ExpireLeases(h.now, ExpireParams{})
	if err != nil {
		h.t.Fatalf("expire: %v", err)
	}
	return r
}

func (h *rtHarness) workflow() weir.Workflow {
	h.t.Helper()
	w, err := h.m.GetWorkflow(h.now, h.wf)
	if err != nil {
		h.t.Fatalf("get workflow %s: %v", h.wf, err)
	}
	return w
}

func (h *rtHarness) wfState() weir.WorkflowState {
	h.t.Helper()
	return h.workflow().State
}

func (h *rtHarness) task(name string) weir.Task {
	h.t.Helper()
	for _, t := range h.workflow().Tasks {
		if t.Name == name {
			return t
		}
	}
	h.t.Fatalf("workflow %s has no task %s", h.wf, name)
	return weir.Task{}
}

func (h *rtHarness) job(id string) weir.Job {
	h.t.Helper()
	j, err := h.m.GetJob(h.now, id)
	if err != nil {
		h.t.Fatalf("get job %s: %v", id, err)
	}
	return j
}

// ready lists the ready job IDs of queue in claim order.
func (h *rtHarness) ready(queue string) []string {
	return h.m.QueueContents(h.now, queue).Ready
}

// states is "name=state ..." for the current workflow's tasks, in plan order.
func (h *rtHarness) states() string {
	h.t.Helper()
	var b []string
	for _, t := range h.workflow().Tasks {
		b = append(b, t.Name+"="+string(t.State))
	}
	return strings.Join(b, " ")
}

func (h *rtHarness) wantStates(want string) {
	h.t.Helper()
	if got := h.states(); got != want {
		h.t.Fatalf("task states:\n got  %s\n want %s", got, want)
	}
}

func (h *rtHarness) wantWorkflow(want weir.WorkflowState) {
	h.t.Helper()
	if got := h.wfState(); got != want {
		h.t.Fatalf("workflow %s is %s, want %s", h.wf, got, want)
	}
}

// wantPushed checks the job IDs of pushes (nil and empty are the same).
func (h *rtHarness) wantPushed(what string, got []Pushed, want ...string) {
	h.t.Helper()
	rtSameIDs(h.t, what, rtPushedIDs(got), want)
}

// tj is the job ID of task of the current workflow; uj of its undo.
func (h *rtHarness) tj(task string) string { return weir.TaskJobID(h.wf, task) }
func (h *rtHarness) uj(task string) string { return weir.UndoJobID(h.wf, task) }

// rtCase is one row of a scenario table: plan (when it has tasks) is
// submitted first, then run drives the model and checks.
type rtCase struct {
	name string
	cfg  *Config
	plan Plan
	run  func(h *rtHarness)
}

func rtRun(t *testing.T, cases []rtCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if c.cfg != nil {
				cfg = *c.cfg
			}
			h := rtNewWith(t, cfg)
			if len(c.plan.Tasks) > 0 {
				h.submit(c.plan)
			}
			c.run(h)
		})
	}
}

// Plan builders. rtT puts a task in a queue named after it, so start(name)
// claims exactly that task.

func rtT(name string, after ...string) TaskSpec {
	return TaskSpec{Name: name, Queue: name, After: after}
}

func rtAlways(t TaskSpec) TaskSpec { t.Always = true; return t }

func rtOn(queue string, t TaskSpec) TaskSpec { t.Queue = queue; return t }

func rtAttempts(n int, t TaskSpec) TaskSpec { t.MaxAttempts = n; return t }

// rtExpiries sets t's MaxExpiries.
func rtExpiries(n int, t TaskSpec) TaskSpec { t.MaxExpiries = n; return t }

// rtUndoable gives t an undo job in the queue "undo-<name>".
func rtUndoable(t TaskSpec) TaskSpec {
	t.Undo = &UndoSpec{Queue: "undo-" + t.Name, Payload: []byte("u:" + t.Name)}
	return t
}

func rtPlan(tasks ...TaskSpec) Plan { return Plan{ID: rtWF, Tasks: tasks} }

func rtFailFast(p Plan) Plan { p.FailFast = true; return p }

func rtUndoOnCancel(p Plan) Plan { p.UndoOnCancel = true; return p }

func rtBool(b bool) *bool { return &b }

func rtConfig(mod func(*Config)) *Config {
	c := DefaultConfig()
	mod(&c)
	return &c
}

// Assertions.

func rtPushedIDs(ps []Pushed) []string {
	var ids []string
	for _, p := range ps {
		ids = append(ids, p.JobID)
	}
	return ids
}

func rtClaimedIDs(cs []Claimed) []string {
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.Job.ID)
	}
	return ids
}

// rtSameIDs compares two lists of IDs, nil and empty being the same.
func rtSameIDs(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: got %q, want %q", what, got, want)
	}
}

func rtEq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

func rtDeepEq(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got  %+v\n want %+v", what, got, want)
	}
}

func rtErrIs(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

// rtValidation checks that err is a *ValidationError about task and field,
// matching ErrInvalid, and ErrTooLarge exactly when tooLarge.
func rtValidation(t *testing.T, err error, task, field string, tooLarge bool) {
	t.Helper()
	if !errors.Is(err, weir.ErrInvalid) {
		t.Fatalf("got error %v, want ErrInvalid", err)
	}
	if errors.Is(err, weir.ErrTooLarge) != tooLarge {
		t.Fatalf("errors.Is(%v, ErrTooLarge) = %v, want %v", err, !tooLarge, tooLarge)
	}
	var ve *weir.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v is not a *ValidationError", err)
	}
	if ve.Task != task || ve.Field != field {
		t.Fatalf("error names task %q field %q, want task %q field %q (%v)", ve.Task, ve.Field, task, field, err)
	}
	if ve.Problem == "" {
		t.Fatalf("error %v says no problem", err)
	}
}

// rtErrText is an error's text, or "" for nil.
func rtErrText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// rtUndoIn gives t an undo job in queue.
func rtUndoIn(queue string, t TaskSpec) TaskSpec {
	t.Undo = &UndoSpec{Queue: queue, Payload: []byte("u:" + t.Name)}
	return t
}
