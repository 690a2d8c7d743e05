package redisstore

import (
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
)

// fanOut is a root task with n dependents (and, with deep, each dependent
// one of its own).
func fanOut(id string, n int, deep bool) engine.Plan {
	p := engine.Plan{ID: id, Tasks: []engine.TaskSpec{{Name: "root", Queue: "q"}}}
	for i := range n {
		name := fmt.Sprintf("d%05d", i)
		p.Tasks = append(p.Tasks, engine.TaskSpec{Name: name, Queue: "q", After: []string{"root"}})
		if deep {
			p.Tasks = append(p.Tasks, engine.TaskSpec{Name: "e" + name[1:], Queue: "q", After: []string{name}})
		}
	}
	return p
}

// claimRoot submits plan and leases its root.
func claimRoot(t *testing.T, e *testEnv, plan engine.Plan) engine.Claimed {
	t.Helper()
	if _, err := e.store.Submit(bg, engine.SubmitParams{Plan: plan}); err != nil {
		t.Fatal(err)
	}
	c, err := e.store.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute})
	if err != nil || len(c) != 1 || c[0].Job.Task != "root" {
		t.Fatalf("claim: %v %v", err, c)
	}
	return c[0]
}

// TestFanOutInBoundedCalls: the finish of a root with 1,000 dependents,
// with a budget of 100 units a call, promotes every one, in plan order, in
// ten calls, and its Settled lists them all, as the model's does.
func TestFanOutInBoundedCalls(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	if err := e.store.SetStepBudget(bg, 100); err != nil {
		t.Fatal(err)
	}
	c := claimRoot(t, e, fanOut("fan", 1000, false))
	res, err := e.store.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted}}})
	if err != nil || res.Settled[0].Err != nil {
		t.Fatalf("finish: %v %v", err, res.Settled)
	}
	// the finish's own call promotes 100, each drain call 100 more
	if n := e.store.drainCalls.Load(); n != 9 {
		t.Errorf("%d drain calls for 1,000 dependents at 100 a call, want 9", n)
	}
	pushed := res.Settled[0].Pushed
	if len(pushed) != 1000 {
		t.Fatalf("%d pushed", len(pushed))
	}
	for i, p := range pushed {
		if want := fmt.Sprintf("fan/d%05d", i); p.JobID != want {
			t.Fatalf("pushed[%d] = %s, want %s", i, p.JobID, want)
		}
	}
	w, err := e.store.GetWorkflow(bg, "fan")
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range w.Tasks[1:] {
		if tk.State != weir.Queued {
			t.Fatalf("%s %s", tk.Name, tk.State)
		}
	}
	if n, _ := e.rdb.Exists(bg, e.store.keys.prefix+"work").Result(); n != 0 {
		t.Error("P work left behind")
	}
	if v, _ := e.rdb.HExists(bg, e.store.keys.seq, "pend").Result(); v {
		t.Error("pend left in the seq hash")
	}
}

// TestCascadeLeftByACrashedCall: a finish whose process stops after the
// first call (its cascade kept in P work) leaves the rest to whoever calls
// next: a claim from another store finishes it first (or is refused and
// drains), then leases; a repeat of the finish returns what the whole
// cascade pushed.
func TestCascadeLeftByACrashedCall(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	if err := e.store.SetStepBudget(bg, 50); err != nil {
		t.Fatal(err)
	}
	c := claimRoot(t, e, fanOut("crash", 300, false))
	out := []engine.Outcome{{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted}}
	settled := make([]engine.Settled, 1)
	n, _, at, stopped, err := e.store.finishOnce(bg, engine.FinishParams{Outcomes: out}, []int{0}, nil, settled)
	if err != nil || n != 1 || !stopped || at != 0 {
		t.Fatalf("first call: n %d, stopped %v at %d, %v", n, stopped, at, err)
	}
	if got := len(settled[0].Pushed); got >= 300 || got == 0 {
		t.Fatalf("the first call pushed %d of 300", got)
	}
	other, err := New(e.rdb, Options{Namespace: e.ns, Clock: e.clock})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := other.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute})
	if err != nil || len(cl) != 1 || cl[0].Job.ID != "crash/d00000" {
		t.Fatalf("claim: %v %v", err, cl)
	}
	if n := other.drainCalls.Load(); n == 0 {
		t.Error("the other store's claim did not drain")
	}
	w, err := other.GetWorkflow(bg, "crash")
	if err != nil {
		t.Fatal(err)
	}
	queued := 0
	for _, tk := range w.Tasks {
		if tk.State == weir.Queued {
			queued++
		}
	}
	if queued != 299 {
		t.Errorf("%d queued after the claim, want 299", queued)
	}
	again, err := e.store.Finish(bg, engine.FinishParams{Outcomes: out})
	if err != nil || again.Settled[0].Err != nil || len(again.Settled[0].Pushed) != 300 {
		t.Fatalf("repeat: %v, %d pushed", err, len(again.Settled[0].Pushed))
	}
}

// TestFailureCascadeInBoundedCalls: a root that fails ends 2,000
// dependents (1,000 through it, 1,000 through those) with their reasons,
// and the workflow, over bounded calls.
func TestFailureCascadeInBoundedCalls(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	if err := e.store.SetStepBudget(bg, 128); err != nil {
		t.Fatal(err)
	}
	c := claimRoot(t, e, fanOut("fail", 1000, true))
	res, err := e.store.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeFailed, Error: "boom", NonRetryable: true}}})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Settled[0]
	if s.Err != nil || s.State != weir.Failed || !s.WorkflowEnded || s.WorkflowState != weir.WorkflowFailed {
		t.Fatalf("settled %+v", s)
	}
	if n := e.store.drainCalls.Load(); n < 10 {
		t.Errorf("%d drain calls for 2,000 cancels at 128 a call", n)
	}
	w, err := e.store.GetWorkflow(bg, "fail")
	if err != nil || w.State != weir.WorkflowFailed {
		t.Fatalf("%v %v", err, w.State)
	}
	for _, tk := range w.Tasks[1:] {
		want := "dependency root failed"
		if tk.Name[0] == 'e' {
			want = "dependency d" + tk.Name[1:] + " cancelled"
		}
		if tk.State != weir.Cancelled || tk.Error != want {
			t.Fatalf("%s: %s %q, want cancelled %q", tk.Name, tk.State, tk.Error, want)
		}
	}
}

// TestPurgeInBoundedCalls: a purge of 700 jobs with a budget of 64 goes
// through every one, in claim order, over several calls.
func TestPurgeInBoundedCalls(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	if err := e.store.SetStepBudget(bg, 64); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 700 {
		id := fmt.Sprintf("j%04d", i)
		if _, err := e.store.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: "q"}}); err != nil {
			t.Fatal(err)
		}
		want = append(want, id)
	}
	res, err := e.store.PurgeQueue(bg, "q")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Purged, want) {
		t.Fatalf("purged %d: %v…", len(res.Purged), res.Purged[:min(5, len(res.Purged))])
	}
	qs, err := e.store.Queues(bg)
	if err != nil || len(qs) != 1 || qs[0].Ready != 0 {
		t.Fatalf("%v %+v", err, qs)
	}
	if err := e.store.SetStepBudget(bg, -1); !errors.Is(err, weir.ErrInvalid) {
		t.Errorf("budget -1: %v", err)
	}
}

// TestFailFastInBoundedCalls: a FailFast that fires in a workflow with
// 1,000 waiting tasks cancels every one ("fail_fast") over bounded calls,
// leaves the running task alone, and the workflow fails when it ends.
func TestFailFastInBoundedCalls(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	if err := e.store.SetStepBudget(bg, 100); err != nil {
		t.Fatal(err)
	}
	p := engine.Plan{ID: "ff", FailFast: true, Tasks: []engine.TaskSpec{{Name: "a", Queue: "q"}, {Name: "b", Queue: "q"}}}
	for i := range 1000 {
		p.Tasks = append(p.Tasks, engine.TaskSpec{Name: fmt.Sprintf("d%04d", i), Queue: "q", After: []string{"b"}})
	}
	if _, err := e.store.Submit(bg, engine.SubmitParams{Plan: p}); err != nil {
		t.Fatal(err)
	}
	c, err := e.store.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 2, Lease: time.Minute})
	if err != nil || len(c) != 2 {
		t.Fatalf("claim: %v %d", err, len(c))
	}
	res, err := e.store.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: c[0].Job.ID, Token: c[0].Lease.Token, Kind: engine.OutcomeFailed, Error: "boom", NonRetryable: true}}})
	if err != nil || res.Settled[0].Err != nil || res.Settled[0].WorkflowState != weir.WorkflowRunning {
		t.Fatalf("finish a: %v %+v", err, res.Settled)
	}
	if n := e.store.drainCalls.Load(); n < 9 {
		t.Errorf("%d drain calls for 1,000 cancels at 100 a call", n)
	}
	w, err := e.store.GetWorkflow(bg, "ff")
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range w.Tasks[2:] {
		if tk.State != weir.Cancelled || tk.Error != "fail_fast" {
			t.Fatalf("%s: %s %q", tk.Name, tk.State, tk.Error)
		}
	}
	if w.Tasks[1].State != weir.Running {
		t.Fatalf("b: %s", w.Tasks[1].State)
	}
	res, err = e.store.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: c[1].Job.ID, Token: c[1].Lease.Token, Kind: engine.OutcomeCompleted}}})
	if err != nil || !res.Settled[0].WorkflowEnded || res.Settled[0].WorkflowState != weir.WorkflowFailed {
		t.Fatalf("finish b: %v %+v", err, res.Settled)
	}
}

// TestClaimOfAWideJoin: the claim of a task with 150 dependencies (more
// than a claim returns itself) hands out their outcomes — results,
// errors, states, in After order — as the model does.
func TestClaimOfAWideJoin(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	model := memstore.New(memstore.WithClock(e.clock))
	p := engine.Plan{ID: "wide"}
	var all []string
	for i := range 150 {
		name := fmt.Sprintf("r%03d", 149-i) // After order differs from plan order
		p.Tasks = append(p.Tasks, engine.TaskSpec{Name: name, Queue: "q"})
		all = append([]string{name}, all...)
	}
	p.Tasks = append(p.Tasks, engine.TaskSpec{Name: "join", Queue: "j", After: all, Always: true})
	claimJoin := func(s engine.Store) engine.Claimed {
		if _, err := s.Submit(bg, engine.SubmitParams{Plan: p}); err != nil {
			t.Fatal(err)
		}
		c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 150, Lease: time.Minute})
		if err != nil || len(c) != 150 {
			t.Fatalf("claim: %v %d", err, len(c))
		}
		var outs []engine.Outcome
		for i, x := range c {
			o := engine.Outcome{JobID: x.Job.ID, Token: x.Lease.Token, Kind: engine.OutcomeCompleted, Result: []byte("res " + x.Job.Task)}
			switch i % 3 {
			case 1:
				o.Kind, o.Result, o.Error, o.NonRetryable = engine.OutcomeFailed, nil, "err "+x.Job.Task, true
			case 2:
				o.Result = nil
			}
			outs = append(outs, o)
		}
		if _, err := s.Finish(bg, engine.FinishParams{Outcomes: outs}); err != nil {
			t.Fatal(err)
		}
		j, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"j"}, Max: 1, Lease: time.Minute})
		if err != nil || len(j) != 1 {
			t.Fatalf("claim join: %v %d", err, len(j))
		}
		return j[0]
	}
	got, want := claimJoin(e.store), claimJoin(model)
	if len(got.Deps) != 150 || !reflect.DeepEqual(got.Deps, want.Deps) {
		t.Fatalf("deps differ from the model's:\n got %v\nwant %v", got.Deps[:min(3, len(got.Deps))], want.Deps[:3])
	}
}

// TestSubmitOfManyRootsInBoundedCalls: a plan with 1,000 roots, at a
// budget of 100, is written by its submit, which pushes 100 roots; drain
// calls push the rest, and the result lists all 1,000 in plan order, as
// the model's does.
func TestSubmitOfManyRootsInBoundedCalls(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	if err := e.store.SetStepBudget(bg, 100); err != nil {
		t.Fatal(err)
	}
	p := engine.Plan{ID: "roots"}
	for i := range 1000 {
		p.Tasks = append(p.Tasks, engine.TaskSpec{Name: fmt.Sprintf("t%04d", i), Queue: "q"})
	}
	res, err := e.store.Submit(bg, engine.SubmitParams{Plan: p})
	if err != nil || !res.Created {
		t.Fatalf("submit: %v %v", err, res.Created)
	}
	if n := e.store.drainCalls.Load(); n != 9 {
		t.Errorf("%d drain calls for 900 roots past the budget, want 9", n)
	}
	want, err := memstore.New(memstore.WithClock(e.clock)).Submit(bg, engine.SubmitParams{Plan: p})
	if err != nil || !reflect.DeepEqual(res, want) {
		t.Fatalf("the result differs from the model's (%v): %d pushed", err, len(res.Pushed))
	}
	qs, err := e.store.Queues(bg)
	if err != nil || len(qs) != 1 || qs[0].Ready != 1000 {
		t.Fatalf("%v %+v", err, qs)
	}
}

// TestCompensationInBoundedCalls: a workflow of 600 tasks, most with an
// undo, whose last task fails after all others completed, starts its
// compensation over many calls at a budget of 40; the finish's result, the
// undo jobs' blockers and the order in which the undos run are the
// model's.
func TestCompensationInBoundedCalls(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	if err := e.store.SetStepBudget(bg, 40); err != nil {
		t.Fatal(err)
	}
	model := memstore.New(memstore.WithClock(e.clock))
	p := bigPlan("comp", 600)
	for i := range p.Tasks {
		p.Tasks[i].Queue = "q"
		if i%7 != 3 { // a few without one: chains and regions without undos
			p.Tasks[i].Undo = &engine.UndoSpec{Queue: "undo"}
		}
	}
	last := p.Tasks[len(p.Tasks)-1].Name
	run := func(s engine.Store) (engine.FinishResult, []string) {
		if _, err := s.Submit(bg, engine.SubmitParams{Plan: p}); err != nil {
			t.Fatal(err)
		}
		var res engine.FinishResult
		for {
			c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 50, Lease: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if len(c) == 0 {
				break
			}
			var outs []engine.Outcome
			for _, x := range c {
				o := engine.Outcome{JobID: x.Job.ID, Token: x.Lease.Token, Kind: engine.OutcomeCompleted}
				if x.Job.Task == last {
					o.Kind, o.NonRetryable, o.Error = engine.OutcomeFailed, true, "boom"
				}
				outs = append(outs, o)
			}
			if res, err = s.Finish(bg, engine.FinishParams{Outcomes: outs}); err != nil {
				t.Fatal(err)
			}
		}
		// run the undos one at a time, in the order they come
		var order []string
		for {
			c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"undo"}, Max: 1, Lease: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if len(c) == 0 {
				break
			}
			order = append(order, c[0].Job.ID)
			if _, err := s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: c[0].Job.ID, Token: c[0].Lease.Token, Kind: engine.OutcomeCompleted}}}); err != nil {
				t.Fatal(err)
			}
		}
		return res, order
	}
	got, gotOrder := run(e.store)
	want, wantOrder := run(model)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the last finish differs from the model's: %d settled, %d pushed against %d, %d", len(got.Settled), len(got.Settled[len(got.Settled)-1].Pushed), len(want.Settled), len(want.Settled[len(want.Settled)-1].Pushed))
	}
	if len(gotOrder) < 400 || !slices.Equal(gotOrder, wantOrder) {
		t.Fatalf("undo order: %d undos against the model's %d, or another order", len(gotOrder), len(wantOrder))
	}
	if n := e.store.drainCalls.Load(); n < 20 {
		t.Errorf("%d drain calls", n)
	}
	w, err := e.store.GetWorkflow(bg, "comp")
	mw, _ := model.GetWorkflow(bg, "comp")
	if err != nil || !reflect.DeepEqual(w, mw) || w.State != weir.WorkflowCompensated {
		t.Fatalf("the workflow differs from the model's (%v): %s", err, w.State)
	}
	if n, _ := e.rdb.Exists(bg, e.store.keys.compensationLists("comp")).Result(); n != 0 {
		t.Error("the compensation's lists were left behind")
	}
}

// TestCancelOfManyQueuedInBoundedCalls: a cancel of a workflow with 990
// queued tasks, at a budget of 100, takes them out of their queue over
// several calls and then starts the compensation of the 10 that
// completed; its result and the workflow are the model's.
func TestCancelOfManyQueuedInBoundedCalls(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	if err := e.store.SetStepBudget(bg, 100); err != nil {
		t.Fatal(err)
	}
	model := memstore.New(memstore.WithClock(e.clock))
	p := engine.Plan{ID: "many", UndoOnCancel: true}
	for i := range 1000 {
		p.Tasks = append(p.Tasks, engine.TaskSpec{Name: fmt.Sprintf("t%04d", i), Queue: "q", Undo: &engine.UndoSpec{Queue: "undo"}})
	}
	run := func(s engine.Store) engine.CancelResult {
		if _, err := s.Submit(bg, engine.SubmitParams{Plan: p}); err != nil {
			t.Fatal(err)
		}
		c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 10, Lease: time.Minute})
		if err != nil || len(c) != 10 {
			t.Fatalf("claim: %v %d", err, len(c))
		}
		var outs []engine.Outcome
		for _, x := range c {
			outs = append(outs, engine.Outcome{JobID: x.Job.ID, Token: x.Lease.Token, Kind: engine.OutcomeCompleted})
		}
		if _, err := s.Finish(bg, engine.FinishParams{Outcomes: outs}); err != nil {
			t.Fatal(err)
		}
		r, err := s.CancelWorkflow(bg, engine.CancelWorkflowParams{ID: "many"})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	before := e.store.drainCalls.Load()
	got, want := run(e.store), run(model)
	if !reflect.DeepEqual(got, want) || got.WorkflowState != weir.WorkflowCompensating || len(got.Pushed) != 10 {
		t.Fatalf("the cancel differs from the model's: %s, %d cancelled, %d pushed", got.WorkflowState, len(got.Cancelled), len(got.Pushed))
	}
	if n := e.store.drainCalls.Load() - before; n < 9 {
		t.Errorf("%d drain calls for 890 queued tasks past the budget", n)
	}
	qs, err := e.store.Queues(bg)
	mq, _ := model.Queues(bg)
	if err != nil || !reflect.DeepEqual(qs, mq) {
		t.Fatalf("queues %+v, the model's %+v (%v)", qs, mq, err)
	}
}

// TestCascadeFinishedByACallThatFails: the rest of a crashed call's
// cascade, finished first by a call that then fails on its own (a cancel
// of an unknown job), is written all the same: every dependent is queued.
func TestCascadeFinishedByACallThatFails(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	if err := e.store.SetStepBudget(bg, 50); err != nil {
		t.Fatal(err)
	}
	c := claimRoot(t, e, fanOut("rest", 60, false))
	out := []engine.Outcome{{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted}}
	if _, _, _, stopped, err := e.store.finishOnce(bg, engine.FinishParams{Outcomes: out}, []int{0}, nil, make([]engine.Settled, 1)); err != nil || !stopped {
		t.Fatalf("first call: stopped %v, %v", stopped, err)
	}
	if _, err := e.store.CancelJob(bg, engine.CancelJobParams{ID: "no-such-job"}); !errors.Is(err, weir.ErrNotFound) {
		t.Fatalf("cancel of an unknown job: %v", err)
	}
	w, err := e.store.GetWorkflow(bg, "rest")
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range w.Tasks[1:] {
		if tk.State != weir.Queued {
			t.Fatalf("%s: %s, want queued", tk.Name, tk.State)
		}
	}
}
