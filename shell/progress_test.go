package shell_test

import (
	"testing"
	"time"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/shell"
)

// A command writes its progress to $WEIR_PROGRESS and its checkpoint to
// $WEIR_CHECKPOINT; a failed attempt's checkpoint is in $WEIR_CHECKPOINT
// for the retry, and the last progress is on the job's record.
func TestCommandCheckpointAndProgress(t *testing.T) {
	ctx, store := shellWorker(t)
	run := `if [ "$WEIR_ATTEMPT" = 1 ]; then
  echo "40 first half" > "$WEIR_PROGRESS"
  printf 'step=3' > "$WEIR_CHECKPOINT"
  exit 1
fi
echo "100 done" > "$WEIR_PROGRESS"
cat "$WEIR_CHECKPOINT"`
	job, err := client.Enqueue(ctx, client.New(store), shell.Queue("sh"), shell.Payload{Run: run}, client.MaxAttempts(2), client.Backoff(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	out, err := job.Wait(ctx)
	if err != nil || out != "step=3" {
		t.Fatalf("Wait = %q, %v; want the first attempt's checkpoint", out, err)
	}
	rec, err := store.GetJob(ctx, job.ID())
	if err != nil || rec.Progress == nil || rec.Progress.Percent != 100 || rec.Progress.Message != "done" {
		t.Fatalf("progress %+v, %v; want 100 done", rec.Progress, err)
	}
}
