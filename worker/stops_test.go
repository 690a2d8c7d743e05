package worker_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/worker"
)

// slowBeatConfig heartbeats once an hour: a handler that stops sooner
// learned of its cancel from the store's stop notice, not from a
// heartbeat.
func slowBeatConfig() worker.Config {
	return worker.Config{Concurrency: 4, Lease: 2 * time.Hour, HeartbeatInterval: time.Hour, SweepInterval: 20 * time.Millisecond}
}

// blockUntilStopped registers a handler on blockQ that reports its start
// and then the cause of its context's end.
func blockUntilStopped(w *worker.Worker) (started chan string, cause chan error) {
	started, cause = make(chan string, 16), make(chan error, 16)
	worker.Handle(w, blockQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		started <- j.ID
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return "", ctx.Err()
	})
	return started, cause
}

// A cancel from another process reaches a running handler through the
// store's stop notice (engine.StopWatcher), without waiting for the next
// heartbeat: with heartbeats an hour apart the handler still stops.
func TestCancelReachesHandlerBeforeHeartbeat(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		w := worker.New(b.open(t), slowBeatConfig())
		started, cause := blockUntilStopped(w)
		start(t, w)
		c := client.New(b.open(t))

		// A plain job, by CancelJob.
		job := mustEnqueue(t, c, blockQ, "x")
		<-started
		if _, err := client.OpenJob(client.New(b.open(t)), blockQ, job.ID()).Cancel(ctx); err != nil {
			t.Fatalf("Cancel: %v", err)
		}
		select {
		case err := <-cause:
			if !errors.Is(err, weir.ErrJobCancelled) {
				t.Fatalf("handler's cause = %v; want ErrJobCancelled", err)
			}
		case <-ctx.Done():
			t.Fatal("the cancelled job's handler was not stopped before the next heartbeat")
		}
		if _, err := job.Wait(ctx); !errors.Is(err, weir.ErrCancelled) {
			t.Fatalf("Wait = %v; want cancelled", err)
		}

		// Two running tasks of a workflow, by CancelWorkflow.
		wf := client.NewWorkflow()
		client.AddTask(wf, "a", blockQ, "a")
		client.AddTask(wf, "b", blockQ, "b")
		if err := c.Submit(ctx, wf); err != nil {
			t.Fatal(err)
		}
		<-started
		<-started
		if _, err := client.New(b.open(t)).OpenWorkflow(wf.ID()).Cancel(ctx, client.WithUndo(false)); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			select {
			case err := <-cause:
				if !errors.Is(err, weir.ErrJobCancelled) {
					t.Fatalf("task handler's cause = %v; want ErrJobCancelled", err)
				}
			case <-ctx.Done():
				t.Fatal("a cancelled workflow's running task was not stopped before the next heartbeat")
			}
		}
		if _, err := wf.Wait(ctx); !errors.Is(err, weir.ErrCancelled) {
			t.Fatalf("workflow Wait = %v; want cancelled", err)
		}
	})
}
