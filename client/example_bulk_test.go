package client_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/worker"
)

// A queue's dead letters run again in bounded calls: each looks at a
// page of the failed list and says where the next goes on.
func ExampleClient_RetryJobs() {
	ctx := context.Background()
	store := memstore.New()
	c := client.New(store)
	refunds := client.NewQueue[int, string]("refunds")

	w := worker.New(store, worker.Config{})
	worker.Handle(w, refunds, func(ctx context.Context, j *worker.Job[int]) (string, error) {
		return "", worker.NonRetryable(errors.New("the bank is down"))
	})
	_ = w.Start(ctx)
	for i := range 3 {
		job, _ := client.Enqueue(ctx, c, refunds, i, client.ID(fmt.Sprintf("refund-%d", i)))
		_, _ = job.Wait(ctx)
	}
	_ = w.Stop(ctx)

	p := client.JobsParams{Queue: "refunds", State: weir.ListFailed, Limit: 2}
	for {
		res, err := c.RetryJobs(ctx, p)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("retried:", res.Done, "more:", res.NextCursor != "")
		if res.NextCursor == "" {
			break
		}
		p.Cursor = res.NextCursor
	}
	// Output:
	// retried: [refund-2 refund-1] more: true
	// retried: [refund-0] more: false
}
