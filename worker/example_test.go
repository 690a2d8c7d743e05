package worker_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/worker"
)

type Order struct {
	ID    string `json:"id"`
	Items int    `json:"items"`
}

var ship = client.NewQueue[Order, string]("ship")

func ExampleHandle() {
	ctx := context.Background()
	store := memstore.New()
	w := worker.New(store, worker.Config{Concurrency: 4})
	worker.Handle(w, ship, func(ctx context.Context, j *worker.Job[Order]) (string, error) {
		if j.Payload.Items == 0 {
			// Retrying cannot help: fail now, whatever attempts remain.
			return "", worker.NonRetryable(errors.New("empty order"))
		}
		return fmt.Sprintf("parcel for %s (%d items)", j.Payload.ID, j.Payload.Items), nil
	})
	if err := w.Start(ctx); err != nil {
		panic(err)
	}
	defer w.Stop(ctx)

	c := client.New(store)
	ok, _ := client.Enqueue(ctx, c, ship, Order{ID: "A-1", Items: 3})
	bad, _ := client.Enqueue(ctx, c, ship, Order{ID: "A-2"}, client.MaxAttempts(5))
	fmt.Println(ok.Wait(ctx))
	_, err := bad.Wait(ctx)
	var je *weir.JobError
	if errors.As(err, &je) {
		fmt.Println(je.State, je.Attempt, je.Message)
	}
	// Output:
	// parcel for A-1 (3 items) <nil>
	// failed 1 empty order
}

func ExampleDepResult() {
	ctx := context.Background()
	store := memstore.New()
	count := client.NewQueue[[]string, int]("count")
	sum := client.NewQueue[struct{}, int]("sum")
	w := worker.New(store, worker.Config{})
	worker.Handle(w, count, func(ctx context.Context, j *worker.Job[[]string]) (int, error) {
		return len(j.Payload), nil
	})
	worker.Handle(w, sum, func(ctx context.Context, j *worker.Job[struct{}]) (int, error) {
		total := 0
		for _, d := range j.Deps {
			n, err := worker.DepResult[int](j, d.Task)
			if err != nil {
				return 0, err
			}
			total += n
		}
		return total, nil
	})
	_ = w.Start(ctx)
	defer w.Stop(ctx)

	wf := client.NewWorkflow()
	a := client.AddTask(wf, "a", count, []string{"x", "y"})
	b := client.AddTask(wf, "b", count, []string{"z"})
	total := client.AddTask(wf, "total", sum, struct{}{}).After(a, b)
	c := client.New(store)
	_ = c.Submit(ctx, wf)
	s, _ := wf.Wait(ctx)
	fmt.Println(client.ResultOf(s, total))
	// Output: 3 <nil>
}

func ExampleConfig_middleware() {
	ctx := context.Background()
	store := memstore.New()
	logging := func(next worker.Handler) worker.Handler {
		return func(ctx context.Context, j *worker.JobInfo) error {
			err := next(ctx, j)
			fmt.Printf("%s attempt %d: err=%v\n", j.Queue, j.Attempt, err)
			return err
		}
	}
	w := worker.New(store, worker.Config{Middleware: []worker.Middleware{logging}})
	worker.Handle(w, ship, func(ctx context.Context, j *worker.Job[Order]) (string, error) {
		return "ok", nil
	})
	_ = w.Start(ctx)
	defer w.Stop(ctx)
	job, _ := client.Enqueue(ctx, client.New(store), ship, Order{ID: "B-1", Items: 1})
	_, _ = job.Wait(ctx)
	// Output: ship attempt 1: err=<nil>
}

// Stop shuts a worker down gracefully: it claims nothing more and waits
// for the running jobs (up to Config.ShutdownTimeout, after which their
// context ends with ErrShutdown and they go back to their queues without
// losing an attempt).
func ExampleWorker_Stop() {
	ctx := context.Background()
	store := memstore.New()
	w := worker.New(store, worker.Config{ShutdownTimeout: 10 * time.Second})
	started := make(chan struct{})
	worker.Handle(w, ship, func(ctx context.Context, j *worker.Job[Order]) (string, error) {
		close(started)
		time.Sleep(50 * time.Millisecond) // a job that takes a while
		return "shipped " + j.Payload.ID, nil
	})
	if err := w.Start(ctx); err != nil {
		panic(err)
	}
	job, _ := client.Enqueue(ctx, client.New(store), ship, Order{ID: "B-7", Items: 1})
	<-started
	fmt.Println(w.Stop(ctx)) // returns once the running job finished
	fmt.Println(job.Wait(ctx))
	// Output:
	// <nil>
	// shipped B-7 <nil>
}

// A long handler saves a checkpoint after each step; when an attempt
// fails, the retry resumes from the last checkpoint instead of starting
// over, and its progress shows in the job's record.
func ExampleJobInfo_Checkpoint() {
	ctx := context.Background()
	store := memstore.New()
	sum := client.NewQueue[int, int]("sum")
	w := worker.New(store, worker.Config{})
	worker.Handle(w, sum, func(ctx context.Context, j *worker.Job[int]) (int, error) {
		step, total := 1, 0
		if b := j.LastCheckpoint(); b != nil {
			_, _ = fmt.Sscanf(string(b), "%d %d", &step, &total)
			fmt.Printf("attempt %d resumes at step %d\n", j.Attempt, step)
		}
		for ; step <= j.Payload; step++ {
			if step == 4 && j.Attempt == 1 {
				return 0, errors.New("the machine went away")
			}
			total += step
			if err := j.Checkpoint(ctx, fmt.Appendf(nil, "%d %d", step+1, total)); err != nil {
				return 0, err
			}
			if err := j.Progress(ctx, float64(100*step/j.Payload), fmt.Sprintf("step %d of %d", step, j.Payload)); err != nil {
				return 0, err
			}
		}
		return total, nil
	})
	_ = w.Start(ctx)
	defer w.Stop(ctx)

	c := client.New(store)
	job, _ := client.Enqueue(ctx, c, sum, 5, client.MaxAttempts(2), client.Backoff(time.Millisecond))
	fmt.Println(job.Wait(ctx))
	rec, _ := store.GetJob(ctx, job.ID())
	fmt.Println(rec.Progress.Percent, rec.Progress.Message)
	// Output:
	// attempt 2 resumes at step 4
	// 15 <nil>
	// 100 step 5 of 5
}
