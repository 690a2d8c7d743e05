package client_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
)

// A signal before the task is open is ErrNotOpen, and changes nothing.
func TestSignalBeforeOpen(t *testing.T) {
	ctx := context.Background()
	c := client.New(memstore.New())
	wf := client.NewWorkflow(client.WorkflowID("w"))
	build := client.AddTask(wf, "build", deployQ, "x")
	client.AddSignal[bool](wf, "approve").After(build)
	if err := c.Submit(ctx, wf); err != nil {
		t.Fatal(err)
	}
	if err := wf.Signal(ctx, "approve", true); !errors.Is(err, weir.ErrNotOpen) {
		t.Fatalf("signal before open: %v, want ErrNotOpen", err)
	}
	s, err := wf.Status(ctx)
	if err != nil || s.Tasks[1].State != weir.Waiting || !s.Tasks[1].Signal {
		t.Fatalf("approve is %+v (%v), want a waiting signal task", s.Tasks[1], err)
	}
}

// SignalFail fails the task and the workflow; the same failure again is no
// error, a completion then is ErrSignalled.
func TestSignalFail(t *testing.T) {
	ctx := context.Background()
	c := client.New(memstore.New())
	wf := client.NewWorkflow(client.WorkflowID("w"))
	approve := client.AddSignal[bool](wf, "approve")
	if err := c.Submit(ctx, wf); err != nil {
		t.Fatal(err)
	}
	if err := wf.SignalFail(ctx, "approve", "rejected"); err != nil {
		t.Fatal(err)
	}
	if err := wf.SignalFail(ctx, "approve", "rejected"); err != nil {
		t.Fatalf("the same signal again: %v", err)
	}
	if err := wf.Signal(ctx, "approve", true); !errors.Is(err, weir.ErrSignalled) {
		t.Fatalf("another signal: %v, want ErrSignalled", err)
	}
	s, err := wf.Wait(ctx)
	if !errors.Is(err, weir.ErrFailed) || s.State != weir.WorkflowFailed {
		t.Fatalf("workflow %s, %v; want failed", s.State, err)
	}
	if _, err := client.ResultOf(s, approve); err == nil || s.Tasks[0].Error != "rejected" {
		t.Fatalf("approve: %+v, result error %v", s.Tasks[0], err)
	}
}

// A timeout fails the open task with reason "timeout" at the first sweep
// of its queue after it passed, not before.
func TestSignalTimeout(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	now := time.UnixMilli(1_000_000)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	store := memstore.New(memstore.WithClock(clock))
	c := client.New(store)
	wf := client.NewWorkflow(client.WorkflowID("w"))
	client.AddSignal[bool](wf, "approve", client.SignalTimeout(time.Minute), client.SignalQueue("approvals"))
	if err := c.Submit(ctx, wf); err != nil {
		t.Fatal(err)
	}
	advance(time.Minute - time.Millisecond)
	if _, err := store.ExpireLeases(ctx, engine.ExpireParams{}); err != nil {
		t.Fatal(err)
	}
	if s, _ := wf.Status(ctx); s.Tasks[0].State != weir.Open {
		t.Fatalf("before the timeout: %s, want open", s.Tasks[0].State)
	}
	advance(time.Millisecond)
	res, err := store.ExpireLeases(ctx, engine.ExpireParams{})
	if err != nil || len(res.Expired) != 1 || res.Expired[0].JobID != "w/approve" {
		t.Fatalf("expire: %+v, %v; want w/approve", res, err)
	}
	s, _ := wf.Status(ctx)
	if s.Tasks[0].State != weir.Failed || s.Tasks[0].Error != weir.ReasonTextSignalTimeout || s.State != weir.WorkflowFailed {
		t.Fatalf("after the timeout: %+v in a %s workflow", s.Tasks[0], s.State)
	}
}

// A delayed task waits its delay after its dependency ended, and a
// workflow with a start time holds its roots until then: by the store's
// clock.
func TestDelayAndStartAt(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	now := time.UnixMilli(1_000_000)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	store := memstore.New(memstore.WithClock(clock))
	c := client.New(store)
	start := now.Add(time.Hour)
	wf := client.NewWorkflow(client.WorkflowID("w"), client.StartAt(start))
	a := client.AddTask(wf, "a", deployQ, "x")
	client.AddTask(wf, "b", deployQ, "y", client.Delay(time.Minute)).After(a)
	if err := c.Submit(ctx, wf); err != nil {
		t.Fatal(err)
	}
	j, err := store.GetJob(ctx, "w/a")
	if err != nil || j.State != weir.Queued || !j.RunAt.Equal(start) {
		t.Fatalf("root: %+v, %v; want queued until %v", j, err, start)
	}
	mu.Lock()
	now = start
	mu.Unlock()
	cl, err := store.Claim(ctx, engine.ClaimParams{Queues: []string{"deploy"}, Max: 1, Lease: time.Minute})
	if err != nil || len(cl) != 1 || cl[0].Job.ID != "w/a" {
		t.Fatalf("claim at the start: %+v, %v", cl, err)
	}
	if _, err := store.Finish(ctx, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: "w/a", Token: cl[0].Lease.Token, Kind: engine.OutcomeCompleted}}}); err != nil {
		t.Fatal(err)
	}
	if j, err := store.GetJob(ctx, "w/b"); err != nil || j.State != weir.Queued || !j.RunAt.Equal(start.Add(time.Minute)) {
		t.Fatalf("delayed task: %+v, %v; want queued until a minute after a ended", j, err)
	}
	bad := client.NewWorkflow(client.StartAt(start))
	client.AddSignal[bool](bad, "approve")
	if err := c.Submit(ctx, bad); !errors.Is(err, weir.ErrInvalid) {
		t.Fatalf("a signal root with a start time: %v, want ErrInvalid", err)
	}
}
