package worker_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/worker"
)

// TestAddTasksFanOut: many workflows, each a split whose handler adds a
// run-time number of tasks gated into a join, run on every store with
// concurrent slots, so that the worker's batched finishes carry additions;
// every join sees all its workflow's added tasks.
func TestAddTasksFanOut(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		store := b.open(t)
		split := client.NewQueue[int, int]("dsplit")
		part := client.NewQueue[int, int]("dpart")
		join := client.NewQueue[struct{}, int]("djoin")
		w := worker.New(store, fastConfig())
		worker.Handle(w, split, func(ctx context.Context, j *worker.Job[int]) (int, error) {
			add := client.NewWorkflow()
			me := client.Existing(add, j.Task)
			for i := range j.Payload {
				client.AddTask(add, fmt.Sprintf("p%d", i), part, i+1).After(me)
			}
			return j.Payload, j.AddTasks(add, worker.GateDependents())
		})
		worker.Handle(w, part, func(ctx context.Context, j *worker.Job[int]) (int, error) { return j.Payload, nil })
		worker.Handle(w, join, func(ctx context.Context, j *worker.Job[struct{}]) (int, error) {
			sum := 0
			for _, d := range j.Deps[1:] {
				n, err := worker.DepResult[int](j, d.Task)
				if err != nil {
					return 0, err
				}
				sum += n
			}
			return sum, nil
		})
		start(t, w)
		c := client.New(store)
		var wfs []*client.Workflow
		var joins []*client.Task[int]
		for n := 1; n <= 12; n++ {
			wf := client.NewWorkflow()
			s := client.AddTask(wf, "split", split, n)
			joins = append(joins, client.AddTask(wf, "join", join, struct{}{}).After(s))
			if err := c.Submit(ctx, wf); err != nil {
				t.Fatal(err)
			}
			wfs = append(wfs, wf)
		}
		for i, wf := range wfs {
			n := i + 1
			st, err := wf.Wait(ctx)
			if err != nil {
				t.Fatalf("workflow %d: %v", n, err)
			}
			got, err := client.ResultOf(st, joins[i])
			if want := n * (n + 1) / 2; err != nil || got != want {
				t.Errorf("workflow %d: join = %d, %v; want %d", n, got, err, want)
			}
			if len(st.Tasks) != 2+n {
				t.Errorf("workflow %d has %d tasks, want %d", n, len(st.Tasks), 2+n)
			}
		}
	})
}

// TestAddTasksRefused: an addition the store refuses (a name the workflow
// has) fails the attempt, not retried, with the store's reason; a plain
// job cannot add tasks.
func TestAddTasksRefused(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		store := b.open(t)
		q := client.NewQueue[string, string]("drefuse")
		w := worker.New(store, fastConfig())
		var plainErr error
		worker.Handle(w, q, func(ctx context.Context, j *worker.Job[string]) (string, error) {
			add := client.NewWorkflow()
			client.AddTask(add, j.Payload, q, "x")
			err := j.AddTasks(add)
			if j.Workflow == "" {
				plainErr = err
			}
			return "", nil
		})
		start(t, w)
		c := client.New(store)
		wf := client.NewWorkflow()
		client.AddTask(wf, "a", q, "a", client.MaxAttempts(3)) // adds a task named "a": refused
		if err := c.Submit(ctx, wf); err != nil {
			t.Fatal(err)
		}
		st, err := wf.Wait(ctx)
		if !errors.Is(err, weir.ErrFailed) || st.Tasks[0].Attempt != 1 || !strings.Contains(st.Tasks[0].Error, "refused") {
			t.Fatalf("got %v, task %+v; want the attempt failed for good, refused", err, st.Tasks[0])
		}
		if len(st.Tasks) != 1 {
			t.Errorf("%d tasks, want 1", len(st.Tasks))
		}
		job, err := client.Enqueue(ctx, c, q, "p")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := job.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if !errors.Is(plainErr, weir.ErrInvalid) {
			t.Errorf("AddTasks in a plain job: %v, want ErrInvalid", plainErr)
		}
	})
}
