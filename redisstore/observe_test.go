package redisstore

import (
	"context"
	"errors"
	"github.com/weirflow/weir"
	"reflect"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
)

// TestObserveEqualsSingleReads: Observe returns what Queues, GetWorkflow,
// GetJob and the queues' sorted sets return one by one, including not
// found and invalid IDs and records whose retention passed.
func TestObserveEqualsSingleReads(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.Retention = time.Second
	e := newEnv(t, cfg)
	ctx := context.Background()
	s := e.store
	plan := engine.Plan{ID: "w1", Tasks: []engine.TaskSpec{
		{Name: "a", Queue: "q1", Payload: []byte("p"), Undo: &engine.UndoSpec{Queue: "q3"}},
		{Name: "b", Queue: "q2", After: []string{"a"}},
		{Name: "c", Queue: "q1", Priority: -1},
	}}
	if _, err := s.Submit(ctx, engine.SubmitParams{Plan: plan}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Submit(ctx, engine.SubmitParams{Plan: engine.Plan{ID: "w2", Tasks: []engine.TaskSpec{{Name: "x", Queue: "q2"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Enqueue(ctx, engine.EnqueueParams{Job: engine.JobSpec{ID: "j1", Queue: "q1", RunAt: e.clock().Add(time.Minute)}}); err != nil {
		t.Fatal(err)
	}
	cs, err := s.Claim(ctx, engine.ClaimParams{Queues: []string{"q1"}, Max: 1, Lease: time.Minute})
	if err != nil || len(cs) != 1 {
		t.Fatalf("claim: %v %v", cs, err)
	}
	cw, err := s.Claim(ctx, engine.ClaimParams{Queues: []string{"q2"}, Max: 1, Lease: time.Minute})
	if err != nil || len(cw) != 1 {
		t.Fatalf("claim: %v %v", cw, err)
	}
	if _, err := s.Finish(ctx, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: cw[0].Job.ID, Token: cw[0].Lease.Token, Kind: engine.OutcomeCompleted}}}); err != nil {
		t.Fatal(err)
	}
	e.advance(2 * time.Second) // w2 ended a second ago: past its retention, read as not found

	wfs := []string{"w1", "w2", "nope", "bad id"}
	jobs := []string{"w1/a", "w1/a/undo", "w1/b", "w1/c", "w1/zz", "w2/x", "j1", "unknown", "bad id", "w1/a/x"}
	queues := []string{"q1", "q2", "q3", "empty"}
	o, err := s.Observe(ctx, wfs, jobs, queues)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := s.Queues(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o.Queues, qs) {
		t.Errorf("queues: observe %+v, Queues %+v", o.Queues, qs)
	}
	found := 0
	for i, id := range wfs {
		w, err := s.GetWorkflow(ctx, id)
		if weir.Sentinel(o.WorkflowErrs[i]) != weir.Sentinel(err) || (err == nil) != (o.WorkflowErrs[i] == nil) {
			t.Errorf("workflow %s: observe error %v, GetWorkflow %v", id, o.WorkflowErrs[i], err)
		}
		if err == nil {
			found++
		}
		if !reflect.DeepEqual(o.Workflows[i], w) {
			t.Errorf("workflow %s: observe %+v, GetWorkflow %+v", id, o.Workflows[i], w)
		}
	}
	for i, id := range jobs {
		j, err := s.GetJob(ctx, id)
		if weir.Sentinel(o.JobErrs[i]) != weir.Sentinel(err) || (err == nil) != (o.JobErrs[i] == nil) {
			t.Errorf("job %s: observe error %v, GetJob %v", id, o.JobErrs[i], err)
		}
		if err == nil {
			found++
		}
		if !reflect.DeepEqual(o.Jobs[i], j) {
			t.Errorf("job %s: observe %+v, GetJob %+v", id, o.Jobs[i], j)
		}
	}
	if found != 5 {
		t.Errorf("%d records found, want 5: w1, its 3 task jobs and j1", found)
	}
	nonEmpty := 0
	for i, q := range queues {
		var want [3][]string
		for n, kind := range []string{"r", "d", "a"} {
			var v []string
			var err error
			if kind == "r" {
				v, err = readyContents(ctx, e.rdb, s.keys, q)
			} else {
				v, err = e.rdb.ZRange(ctx, s.keys.queue(q, kind), 0, -1).Result()
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(v) > 0 {
				want[n] = v
				nonEmpty++
			}
		}
		got := o.Contents[i]
		if !reflect.DeepEqual([3][]string{got.Ready, got.Delayed, got.Running}, want) {
			t.Errorf("queue %s: observe %+v, sorted sets %v", q, got, want)
		}
	}
	if nonEmpty == 0 {
		t.Error("every queue list is empty: the test state is wrong")
	}
	if _, err := s.Observe(ctx, nil, nil, []string{"bad queue"}); !errors.Is(err, weir.ErrInvalid) {
		t.Errorf("observe of a bad queue name: %v, want ErrInvalid", err)
	}
}
