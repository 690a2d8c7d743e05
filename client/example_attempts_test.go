package client_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/worker"
)

var flakyQ = client.NewQueue[string, string]("flaky")

// A job's record keeps its last attempts (weir.MaxAttemptHistory): which
// worker ran each, when, for how long, and how it ended; the events of an
// attempt name its worker too.
func ExampleJob_Status_attempts() {
	ctx := context.Background()
	store := memstore.New()
	w := worker.New(store, worker.Config{ID: "host-a.1", Concurrency: 1})
	tries := 0
	worker.Handle(w, flakyQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		if tries++; tries < 3 {
			return "", errors.New("timeout talking to " + j.Payload)
		}
		return "ok", nil
	})
	_ = w.Start(ctx)
	defer w.Stop(ctx)

	c := client.New(store)
	j, err := client.Enqueue(ctx, c, flakyQ, "smtp.example.com", client.ID("mail-9"), client.MaxAttempts(5), client.Backoff(time.Millisecond))
	if err != nil {
		panic(err)
	}
	if _, err := j.Wait(ctx); err != nil {
		panic(err)
	}
	s, err := j.Status(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("worker:", s.Worker)
	for _, a := range s.Attempts {
		fmt.Printf("attempt %d by %s: %s %q\n", a.Attempt, a.Worker, a.Outcome, a.Error)
	}
	// Output:
	// worker: host-a.1
	// attempt 1 by host-a.1: failed "timeout talking to smtp.example.com"
	// attempt 2 by host-a.1: failed "timeout talking to smtp.example.com"
	// attempt 3 by host-a.1: completed ""
}
