package client_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/internal/testclock"
)

func TestBuildErrorsSurfaceAtSubmit(t *testing.T) {
	ctx := testCtx(t)
	c := client.New(memstore.New())
	other := client.NewWorkflow()
	foreign := client.AddTask(other, "foreign", strQ, "x")

	cases := map[string]struct {
		build func(wf *client.Workflow)
		task  string
		want  string
	}{
		"later": {func(wf *client.Workflow) {
			a := client.AddTask(wf, "a", strQ, "a")
			b := client.AddTask(wf, "b", strQ, "b")
			a.After(b)
		}, "a", `depends on task "b", which was added after it`},
		"self": {func(wf *client.Workflow) {
			a := client.AddTask(wf, "a", strQ, "a")
			a.After(a)
		}, "a", "depends on itself"},
		"foreign": {func(wf *client.Workflow) {
			client.AddTask(wf, "a", strQ, "a").After(foreign)
		}, "a", `depends on task "foreign" of another workflow`},
		"payload": {func(wf *client.Workflow) {
			client.AddTask(wf, "ch", client.NewQueue[chan int, int]("ch"), make(chan int))
		}, "ch", "encode"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			wf := client.NewWorkflow()
			tc.build(wf)
			err := c.Submit(ctx, wf)
			var be *weir.BuildError
			if !errors.As(err, &be) || be.Task != tc.task || !strings.Contains(be.Problem, tc.want) {
				t.Fatalf("Submit = %v; want a BuildError on %s saying %q", err, tc.task, tc.want)
			}
			if !errors.Is(wf.Err(), err) {
				t.Fatalf("Err = %v; want %v", wf.Err(), err)
			}
			if _, err := c.ListWorkflows(ctx, weir.ListParams{}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.OpenWorkflow(wf.ID()).Status(ctx); !errors.Is(err, weir.ErrNotFound) {
				t.Fatalf("a refused workflow was written: %v", err)
			}
		})
	}
}

// The store checks the rest (names, duplicates, limits) at Submit.
func TestSubmitValidationFromStore(t *testing.T) {
	ctx := testCtx(t)
	c := client.New(memstore.New())
	wf := client.NewWorkflow()
	client.AddTask(wf, "a", strQ, "1")
	client.AddTask(wf, "a", strQ, "2")
	err := c.Submit(ctx, wf)
	var ve *weir.ValidationError
	if !errors.As(err, &ve) || ve.Task != "a" || !errors.Is(err, weir.ErrInvalid) {
		t.Fatalf("Submit with a duplicate name = %v; want a ValidationError on a", err)
	}
	if err := c.Submit(ctx, client.NewWorkflow()); !errors.Is(err, weir.ErrInvalid) {
		t.Fatalf("Submit of an empty workflow = %v; want ErrInvalid", err)
	}
}

func TestSubmitIsIdempotentAndFixesThePlan(t *testing.T) {
	ctx := testCtx(t)
	store := memstore.New()
	c := client.New(store)
	wf := client.NewWorkflow(client.WorkflowID("wf-1"))
	a := client.AddTask(wf, "a", strQ, "a")
	client.AddTask(wf, "b", strQ, "b").After(a)
	for range 2 {
		if err := c.Submit(ctx, wf); err != nil {
			t.Fatal(err)
		}
	}
	qs, _ := c.Queues(ctx)
	if len(qs) != 1 || qs[0].Ready != 1 {
		t.Fatalf("queues = %+v; want the root pushed once", qs)
	}
	// The same plan built again under the same ID: no effect.
	again := client.NewWorkflow(client.WorkflowID("wf-1"))
	a2 := client.AddTask(again, "a", strQ, "a")
	client.AddTask(again, "b", strQ, "b").After(a2)
	if err := client.New(store).Submit(ctx, again); err != nil {
		t.Fatalf("resubmit of the same plan = %v", err)
	}
	// Another plan under that ID is refused.
	diff := client.NewWorkflow(client.WorkflowID("wf-1"))
	client.AddTask(diff, "a", strQ, "other")
	if err := c.Submit(ctx, diff); !errors.Is(err, weir.ErrWorkflowExists) {
		t.Fatalf("another plan under the ID = %v; want ErrWorkflowExists", err)
	}
	// Changing the builder after Submit is an error, and the plan stays.
	client.AddTask(wf, "c", strQ, "c")
	err := c.Submit(ctx, wf)
	var be *weir.BuildError
	if !errors.Is(err, weir.ErrSubmitted) || !errors.As(err, &be) || be.Task != "c" {
		t.Fatalf("Submit after a change = %v; want ErrSubmitted on task c", err)
	}
	a.Always() // also refused
	s, err := wf.Status(ctx)
	if err != nil || len(s.Tasks) != 2 {
		t.Fatalf("status = %+v, %v; want the 2 submitted tasks", s, err)
	}
}

func TestOpenedWorkflowIsNotABuilder(t *testing.T) {
	ctx := testCtx(t)
	c := client.New(memstore.New())
	h := c.OpenWorkflow("nope")
	if _, err := h.Status(ctx); !errors.Is(err, weir.ErrNotFound) {
		t.Fatalf("Status of an unknown workflow = %v; want ErrNotFound", err)
	}
	client.AddTask(h, "x", strQ, "x")
	if err := h.Err(); !errors.Is(err, weir.ErrSubmitted) {
		t.Fatalf("AddTask on an opened workflow: Err = %v; want ErrSubmitted", err)
	}
	if err := c.Submit(ctx, h); !errors.Is(err, weir.ErrSubmitted) {
		t.Fatalf("Submit of an opened workflow = %v; want ErrSubmitted", err)
	}
}

func TestHandleBeforeSubmit(t *testing.T) {
	ctx := testCtx(t)
	wf := client.NewWorkflow()
	if wf.ID() == "" || !engine.ValidID(wf.ID()) {
		t.Fatalf("ID = %q", wf.ID())
	}
	if _, err := wf.Wait(ctx); !errors.Is(err, weir.ErrNotSubmitted) {
		t.Fatalf("Wait before Submit = %v", err)
	}
	if _, err := wf.Status(ctx); !errors.Is(err, weir.ErrNotSubmitted) {
		t.Fatalf("Status before Submit = %v", err)
	}
	if _, err := wf.Cancel(ctx); !errors.Is(err, weir.ErrNotSubmitted) {
		t.Fatalf("Cancel before Submit = %v", err)
	}
}

// Options reach the plan: FailFast, UndoOnCancel and every task setting.
func TestPlanOptions(t *testing.T) {
	ctx := testCtx(t)
	c := client.New(memstore.New())
	wf := client.NewWorkflow(client.FailFast(), client.UndoOnCancel(false))
	a := client.AddTask(wf, "a", strQ, "a", client.Priority(2), client.MaxAttempts(3), client.Timeout(5e9), client.Backoff(2e9), client.MaxExpiries(weir.NoExpiries))
	client.Undo(a, argsQ, Args{Name: "undo-a"})
	client.AddTask(wf, "b", strQ, "b").After(a).Always()
	if err := c.Submit(ctx, wf); err != nil {
		t.Fatal(err)
	}
	s, err := wf.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !s.FailFast || s.UndoOnCancel || s.State != weir.WorkflowRunning {
		t.Fatalf("workflow = %+v", s)
	}
	if ta := s.Tasks[0]; ta.Undo == nil || ta.Undo.Queue != "args" || ta.State != weir.Queued {
		t.Fatalf("task a = %+v", ta)
	}
	if tb := s.Tasks[1]; !tb.Always || fmt.Sprint(tb.After) != "[a]" || tb.State != weir.Waiting {
		t.Fatalf("task b = %+v", tb)
	}
	j, err := client.OpenJob(c, strQ, weir.TaskJobID(wf.ID(), "a")).Status(ctx)
	if err != nil || j.Priority != 2 || j.MaxAttempts != 3 || j.Timeout != 5e9 || j.Backoff != 2e9 || j.MaxExpiries != 0 {
		t.Fatalf("job of a = %+v, %v", j, err)
	}
	// Results of unfinished tasks say their state.
	_, err = client.ResultOf(s, a)
	var je *weir.JobError
	if !errors.As(err, &je) || je.State != weir.Queued || je.Task != "a" {
		t.Fatalf("ResultOf an unfinished task = %v", err)
	}
	// A handle of another builder reads by its name: one the snapshot does
	// not have is ErrNotFound.
	if _, err := client.ResultOf(s, client.AddTask(client.NewWorkflow(), "zz", strQ, "")); !errors.Is(err, weir.ErrNotFound) {
		t.Fatalf("ResultOf an unknown task = %v", err)
	}
}

// Cancelling a workflow with nothing running ends it at once; a cancelled
// workflow's Wait error matches ErrCancelled.
func TestCancelQueuedWorkflow(t *testing.T) {
	ctx := testCtx(t)
	c := client.New(memstore.New())
	wf := client.NewWorkflow()
	a := client.AddTask(wf, "a", strQ, "a")
	client.AddTask(wf, "b", strQ, "b").After(a)
	if err := c.Submit(ctx, wf); err != nil {
		t.Fatal(err)
	}
	if _, err := wf.Cancel(ctx, client.WithUndo(true)); err != nil {
		t.Fatal(err)
	}
	s, err := wf.Wait(ctx)
	var we *weir.WorkflowError
	if !errors.As(err, &we) || !errors.Is(err, weir.ErrCancelled) || errors.Is(err, weir.ErrFailed) ||
		we.State != weir.WorkflowCancelled || we.Task != "a" || s.State != weir.WorkflowCancelled {
		t.Fatalf("Wait = %v; want cancelled, first task a", err)
	}
	if _, err := wf.Cancel(ctx); !errors.Is(err, weir.ErrWorkflowEnded) {
		t.Fatalf("second Cancel = %v; want ErrWorkflowEnded", err)
	}
}

func TestListWorkflows(t *testing.T) {
	ctx := testCtx(t)
	c := client.New(memstore.New())
	for i := range 5 {
		wf := client.NewWorkflow(client.WorkflowID(fmt.Sprint("wf", i)))
		client.AddTask(wf, "a", strQ, "a")
		if err := c.Submit(ctx, wf); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if _, err := wf.Cancel(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	var seen []string
	cursor := ""
	for {
		page, err := c.ListWorkflows(ctx, weir.ListParams{State: weir.WorkflowCancelled, Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range page.Workflows {
			seen = append(seen, w.ID)
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	if len(seen) != 3 {
		t.Fatalf("listed %v; want the 3 cancelled ones", seen)
	}
	for _, id := range seen {
		if id != "wf0" && id != "wf2" && id != "wf4" {
			t.Fatalf("listed %s, which is running", id)
		}
	}
}

// The options of plain jobs only are refused by AddTask, with nothing
// written; the zero JobOption does nothing.
func TestAddTaskRefusesPlainJobOptions(t *testing.T) {
	ctx := testCtx(t)
	c := client.New(memstore.New())
	for _, opt := range []client.JobOption{client.ID("x"), client.RunAt(time.Now()), client.Unique(time.Second), client.UniqueBy("k")} {
		wf := client.NewWorkflow()
		client.AddTask(wf, "a", strQ, "a", client.JobOption{}, opt)
		err := c.Submit(ctx, wf)
		var be *weir.BuildError
		if !errors.As(err, &be) || be.Task != "a" || !strings.Contains(be.Problem, opt.String()) {
			t.Fatalf("AddTask with %s: Submit = %v; want a *weir.BuildError naming it", opt, err)
		}
		if _, err := wf.Status(ctx); !errors.Is(err, weir.ErrNotSubmitted) {
			t.Fatalf("AddTask with %s: Status = %v; want ErrNotSubmitted", opt, err)
		}
	}
	j, err := client.Enqueue(ctx, c, strQ, "x", client.JobOption{}, client.ID("plain"))
	if err != nil || j.ID() != "plain" {
		t.Fatalf("Enqueue with the zero JobOption: %v, %v", j, err)
	}
}

// The Delay option delays a task (the one way to delay a job or a task):
// a root from the submit, a dependent from its dependency's end, both by
// the store's clock; the task's undo job is not delayed. A bad delay is
// the store's ErrInvalid.
func TestDelayOptionDelaysTask(t *testing.T) {
	ctx := testCtx(t)
	clock := testclock.New()
	store := memstore.New(memstore.WithClock(clock.Now))
	c := client.New(store)
	wf := client.NewWorkflow(client.WorkflowID("w"))
	a := client.AddTask(wf, "a", strQ, "a", client.Delay(time.Minute))
	client.Undo(a, strQ, "undo a")
	client.AddTask(wf, "b", strQ, "b", client.Delay(time.Hour)).After(a)
	if err := c.Submit(ctx, wf); err != nil {
		t.Fatal(err)
	}
	if j, err := store.GetJob(ctx, "w/a"); err != nil || j.State != weir.Queued || !j.RunAt.Equal(testclock.Epoch.Add(time.Minute)) {
		t.Fatalf("root with Delay(1m): %+v, %v; want queued until a minute after the submit", j, err)
	}
	clock.Advance(time.Minute)
	cl, err := store.Claim(ctx, engine.ClaimParams{Queues: []string{strQ.Name()}, Max: 1, Lease: time.Minute})
	if err != nil || len(cl) != 1 || cl[0].Job.ID != "w/a" {
		t.Fatalf("claim once due: %+v, %v", cl, err)
	}
	clock.Advance(time.Second)
	if _, err := store.Finish(ctx, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: "w/a", Token: cl[0].Lease.Token, Kind: engine.OutcomeCompleted}}}); err != nil {
		t.Fatal(err)
	}
	ended := testclock.Epoch.Add(time.Minute + time.Second)
	if j, err := store.GetJob(ctx, "w/b"); err != nil || j.State != weir.Queued || !j.RunAt.Equal(ended.Add(time.Hour)) {
		t.Fatalf("dependent with Delay(1h): %+v, %v; want queued until an hour after a ended", j, err)
	}
	if st, err := wf.Cancel(ctx); err != nil || st != weir.WorkflowCompensating {
		t.Fatalf("Cancel = %v, %v; want compensating (a's undo)", st, err)
	}
	if j, err := store.GetJob(ctx, weir.UndoJobID("w", "a")); err != nil || j.State != weir.Queued || !j.RunAt.IsZero() {
		t.Fatalf("undo of a: %+v, %v; want queued at once (Delay is not an undo's)", j, err)
	}
	bad := client.NewWorkflow()
	client.AddTask(bad, "a", strQ, "a", client.Delay(time.Millisecond/2))
	if err := c.Submit(ctx, bad); !errors.Is(err, weir.ErrInvalid) {
		t.Fatalf("Delay(500µs) on a task: %v, want ErrInvalid (whole milliseconds)", err)
	}
}

// A workflow is cancelled from the client by ID or from its handle, with
// the same result: the workflow's state after the call.
func TestCancelWorkflowFromClientAndHandle(t *testing.T) {
	ctx := testCtx(t)
	store := memstore.New()
	c := client.New(store)
	idle := client.NewWorkflow(client.WorkflowID("idle"))
	client.AddTask(idle, "a", strQ, "a")
	busy := client.NewWorkflow(client.WorkflowID("busy"))
	client.AddTask(busy, "a", upper, "a")
	for _, wf := range []*client.Workflow{idle, busy} {
		if err := c.Submit(ctx, wf); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := c.CancelWorkflow(ctx, "idle", client.WithUndo(false)); err != nil || st != weir.WorkflowCancelled {
		t.Fatalf("CancelWorkflow of a workflow with nothing running = %v, %v; want cancelled", st, err)
	}
	if _, err := idle.Cancel(ctx); !errors.Is(err, weir.ErrWorkflowEnded) {
		t.Fatalf("Workflow.Cancel once ended = %v; want ErrWorkflowEnded", err)
	}
	if _, err := store.Claim(ctx, engine.ClaimParams{Queues: []string{upper.Name()}, Max: 1, Lease: time.Minute}); err != nil {
		t.Fatal(err)
	}
	for _, cancel := range []func() (weir.WorkflowState, error){
		func() (weir.WorkflowState, error) { return busy.Cancel(ctx) },
		func() (weir.WorkflowState, error) { return c.CancelWorkflow(ctx, "busy") },
	} {
		if st, err := cancel(); err != nil || st != weir.WorkflowRunning {
			t.Fatalf("cancel of a workflow with a running task = %v, %v; want running (told to stop)", st, err)
		}
	}
	if _, err := c.CancelWorkflow(ctx, "nope"); !errors.Is(err, weir.ErrNotFound) {
		t.Fatalf("CancelWorkflow of an unknown ID = %v; want ErrNotFound", err)
	}
	if _, err := c.OpenWorkflow("nope").Cancel(ctx); !errors.Is(err, weir.ErrNotFound) {
		t.Fatalf("Workflow.Cancel of an unknown ID = %v; want ErrNotFound", err)
	}
}
