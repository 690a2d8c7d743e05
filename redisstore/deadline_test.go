package redisstore

import (
	"context"
	"errors"
	"github.com/weirflow/weir"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
)

// A deadline found by a sweep publishes the running tasks it asks to stop
// on the stop channel, as CancelWorkflow does, whether the sweep is an
// ExpireLeases or a claim's: the notice reaches a watching worker without
// a heartbeat.
func TestDeadlinePublishesStops(t *testing.T) {
	for _, byClaim := range []bool{false, true} {
		e := newEnv(t, engine.Config{})
		ctx, cancel := context.WithCancel(bg)
		got := make(chan []string, 4)
		done := make(chan error, 1)
		go func() {
			done <- e.store.WatchStops(ctx, func(ids []string) { got <- ids })
		}()
		if ids := <-got; ids != nil {
			t.Fatalf("first call %v, want nil (listening)", ids)
		}
		p := engine.Plan{ID: "w", DeadlineIn: time.Second, UndoOnCancel: true, Tasks: []engine.TaskSpec{
			{Name: "a", Queue: "q"}, {Name: "b", Queue: "q2"}, {Name: "c", Queue: "q", After: []string{"a"}},
		}}
		if _, err := e.store.Submit(bg, engine.SubmitParams{Plan: p}); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"q", "q2"} {
			if c, err := e.store.Claim(bg, engine.ClaimParams{Queues: []string{q}, Max: 1, Lease: time.Hour}); err != nil || len(c) != 1 {
				t.Fatalf("claim %s: %v %v", q, c, err)
			}
		}
		e.advance(time.Second)
		if byClaim {
			if c, err := e.store.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Hour}); err != nil || len(c) != 0 {
				t.Fatalf("claim after the deadline: %v %v", c, err)
			}
		} else {
			res, err := e.store.ExpireLeases(bg, engine.ExpireParams{})
			if err != nil || len(res.Expired) != 1 || res.Expired[0].JobID != engine.DeadlineMarker("w") || res.Expired[0].WorkflowState != weir.WorkflowRunning {
				t.Fatalf("expire: %+v %v", res, err)
			}
		}
		select {
		case ids := <-got:
			if !slices.Equal(ids, []string{"w/a", "w/b"}) {
				t.Errorf("stop notice %v, want [w/a w/b]", ids)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no stop notice after the deadline's sweep")
		}
		w, err := e.store.GetWorkflow(bg, "w")
		if err != nil || !w.CancelRequested || !w.DeadlineHit || w.Tasks[2].State != weir.Cancelled || w.Tasks[2].Error != weir.ReasonTextDeadline {
			t.Errorf("workflow %+v, %v", w, err)
		}
		cancel()
		_ = <-done
	}
}

// A large workflow (read in pages) shows its deadline as a small one does.
func TestDeadlineOfLargeWorkflow(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	p := engine.Plan{ID: "big", DeadlineIn: time.Hour}
	for i := range tasksPerPage + 1 {
		p.Tasks = append(p.Tasks, engine.TaskSpec{Name: "t" + strconv.Itoa(i), Queue: "q"})
	}
	if _, err := e.store.Submit(bg, engine.SubmitParams{Plan: p}); err != nil {
		t.Fatal(err)
	}
	w, err := e.store.GetWorkflow(bg, "big")
	if err != nil || !w.Deadline.Equal(e.clock().Add(time.Hour).Truncate(time.Millisecond)) || w.DeadlineHit {
		t.Fatalf("deadline %v hit %v, %v; want %v", w.Deadline, w.DeadlineHit, err, e.clock().Add(time.Hour))
	}
}

// A deadline not after the store's now is refused naming both as RFC 3339
// times (the script replies with Unix milliseconds), word for word as the
// model refuses it.
func TestDeadlinePassedNamesTimes(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	now := e.clock().Truncate(time.Millisecond)
	p := engine.Plan{ID: "late", Deadline: now.Add(-90 * time.Minute), Tasks: []engine.TaskSpec{{Name: "a", Queue: "q"}}}
	_, err := e.store.Submit(bg, engine.SubmitParams{Plan: p})
	var ve *weir.ValidationError
	if !errors.As(err, &ve) || ve.Field != "deadline" || !errors.Is(err, weir.ErrInvalid) {
		t.Fatalf("submit: %v, want a validation error of field deadline", err)
	}
	want := now.Add(-90*time.Minute).UTC().Format("2006-01-02T15:04:05.000Z") + " is not after the store's now " + now.UTC().Format("2006-01-02T15:04:05.000Z")
	if !strings.Contains(ve.Problem, want) {
		t.Errorf("problem %q, want it to say %q", ve.Problem, want)
	}
	_, merr := engine.NewModel(engine.DefaultConfig()).Submit(now, engine.SubmitParams{Plan: p})
	if merr == nil || merr.Error() != err.Error() {
		t.Errorf("the store says %q, the model %v", err, merr)
	}
}
