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

// A handler's checkpoint reaches its retry, on every store; its progress
// shows in the job's record; a handler's progress after its attempt ended
// (a stale lease) is refused with ErrLeaseLost and changes nothing.
func TestCheckpointReachesRetry(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		store := b.open(t)
		q := client.NewQueue[string, string]("ckpt")
		seen := make(chan []byte, 2)
		stale := make(chan *worker.Job[string], 1)
		w := worker.New(store, fastConfig())
		worker.Handle(w, q, func(ctx context.Context, j *worker.Job[string]) (string, error) {
			seen <- j.LastCheckpoint()
			if j.Attempt == 1 {
				if err := j.Checkpoint(ctx, []byte("half")); err != nil {
					return "", err
				}
				if err := j.Progress(ctx, 50, "half way"); err != nil {
					return "", err
				}
				stale <- j
				return "", errors.New("crash")
			}
			return string(j.LastCheckpoint()), nil
		})
		start(t, w)
		job, err := client.Enqueue(ctx, client.New(store), q, "x", client.MaxAttempts(2), client.Backoff(time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		got, err := job.Wait(ctx)
		if err != nil || got != "half" {
			t.Fatalf("Wait = %q, %v; want the checkpoint %q", got, err, "half")
		}
		if first, second := <-seen, <-seen; first != nil || string(second) != "half" {
			t.Fatalf("checkpoints handed = %q, %q; want none, then %q", first, second, "half")
		}
		old := <-stale
		if err := old.Progress(ctx, 99, "late"); !errors.Is(err, weir.ErrLeaseLost) {
			t.Fatalf("progress of an ended attempt = %v; want ErrLeaseLost", err)
		}
		rec, err := store.GetJob(ctx, job.ID())
		if err != nil || rec.Progress == nil || rec.Progress.Percent != 50 || rec.Progress.Message != "half way" {
			t.Fatalf("record progress = %+v, %v; want 50 %q", rec.Progress, err, "half way")
		}
	})
}

// A JobInfo not run by a worker has no lease to report under.
func TestProgressOutsideWorker(t *testing.T) {
	var j worker.JobInfo
	if err := j.Progress(context.Background(), 1, ""); err == nil {
		t.Fatal("Progress without a lease succeeded")
	}
	if j.LastCheckpoint() != nil {
		t.Fatal("LastCheckpoint of a new JobInfo is not nil")
	}
}
