package client_test

import (
	"context"
	"fmt"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
)

// ListParams.IDPrefix finds the workflows whose ID starts with it, here
// the orders of one day. Like Name and Labels it makes a filtered
// listing: follow NextCursor until it is empty.
func ExampleClient_ListWorkflows_idPrefix() {
	ctx := context.Background()
	c := client.New(memstore.New())
	q := client.NewQueue[string, string]("orders")
	for _, id := range []string{"order-20261205-7", "order-20261206-1", "order-20261206-2"} {
		wf := client.NewWorkflow(client.WorkflowID(id))
		client.AddTask(wf, "ship", q, id)
		if err := c.Submit(ctx, wf); err != nil {
			panic(err)
		}
	}
	p := weir.ListParams{IDPrefix: "order-20261206-"}
	n := 0
	for {
		page, err := c.ListWorkflows(ctx, p)
		if err != nil {
			panic(err)
		}
		n += len(page.Workflows)
		if page.NextCursor == "" {
			break
		}
		p.Cursor = page.NextCursor
	}
	fmt.Println(n, "orders of 2026-12-06")
	// Output:
	// 2 orders of 2026-12-06
}
