package client_test

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

var payments = client.NewQueue[int, string]("payments")

// Failed jobs stay listable as the queue's dead letters until their
// retention passed; waiting ones are listed in claim order and can be
// purged.
func ExampleClient_ListJobs() {
	ctx := context.Background()
	store := memstore.New()
	c := client.New(store)

	w := worker.New(store, worker.Config{})
	worker.Handle(w, payments, func(ctx context.Context, j *worker.Job[int]) (string, error) {
		if j.Payload < 0 {
			return "", errors.New("negative amount")
		}
		return "ok", nil
	})
	_ = w.Start(ctx)
	for _, amount := range []int{5, -1} {
		job, _ := client.Enqueue(ctx, c, payments, amount, client.ID(fmt.Sprintf("payments-%d", amount)))
		_, _ = job.Wait(ctx)
	}
	_ = w.Stop(ctx)

	page, err := c.ListJobs(ctx, weir.ListJobsParams{Queue: "payments", State: weir.ListFailed})
	for _, j := range page.Jobs {
		fmt.Println("failed:", j.ID, j.Error)
	}
	fmt.Println(err)

	// a dead letter runs again, with its full attempt budget
	fmt.Println(c.RetryJob(ctx, "payments--1", time.Time{}))
	fmt.Println(errors.Is(c.RetryJob(ctx, "payments-5", time.Time{}), weir.ErrJobNotRetryable))

	_, _ = client.Enqueue(ctx, c, payments, 7, client.ID("payments-7"))
	page, _ = c.ListJobs(ctx, weir.ListJobsParams{Queue: "payments", State: weir.ListReady})
	fmt.Println("ready:", len(page.Jobs), page.Jobs[0].ID)
	fmt.Println(c.PurgeQueue(ctx, "payments"))

	// an ended job can be deleted before its retention passed
	fmt.Println(c.DeleteJob(ctx, "payments-5"))
	_, err = client.OpenJob(c, payments, "payments-5").Status(ctx)
	fmt.Println(errors.Is(err, weir.ErrNotFound))
	// Output:
	// failed: payments--1 negative amount
	// <nil>
	// <nil>
	// true
	// ready: 2 payments--1
	// [payments--1 payments-7] <nil>
	// <nil>
	// true
}
