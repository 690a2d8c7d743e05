package shell_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/shell"
)

// A Go producer may enqueue any Payload: a command no worker could start
// (over shell.MaxCommand bytes, or holding a NUL) fails at its first
// attempt with the reason, and is not retried.
func TestCommandThatCannotStartFailsOnce(t *testing.T) {
	ctx, store := shellWorker(t)
	c := client.New(store)
	for _, run := range []string{": " + strings.Repeat("x", shell.MaxCommand-1), "echo a\x00b"} {
		job, err := client.Enqueue(ctx, c, shell.Queue("sh"), shell.Payload{Run: run}, client.MaxAttempts(3))
		if err != nil {
			t.Fatal(err)
		}
		_, err = job.Wait(ctx)
		var je *weir.JobError
		if !errors.As(err, &je) || !errors.Is(err, weir.ErrFailed) {
			t.Fatalf("%d bytes: %v, want a failed job", len(run), err)
		}
		st, err := job.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Attempt != 1 || !strings.Contains(st.Error, "sh -c") {
			t.Errorf("%d bytes: %d attempts, error %q; want 1 attempt and the reason", len(run), st.Attempt, st.Error)
		}
	}
}
