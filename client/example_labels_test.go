package client_test

import (
	"context"
	"fmt"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
)

// A workflow's name and labels, given at submit, find it again: a
// listing keeps the names that start with ListParams.Name and the
// workflows that carry every label of ListParams.Labels. A filtered
// listing examines at most weir.ListScan workflows a call, so a caller
// follows NextCursor until it is empty, even past a short page.
func ExampleWorkflowLabels() {
	ctx := context.Background()
	c := client.New(memstore.New())
	q := client.NewQueue[string, string]("reports")
	for _, team := range []string{"data", "ops"} {
		wf := client.NewWorkflow(client.WorkflowName("nightly-"+team),
			client.WorkflowLabels(map[string]string{"team": team, "env": "prod"}))
		client.AddTask(wf, "build", q, team)
		if err := c.Submit(ctx, wf); err != nil {
			panic(err)
		}
	}
	p := weir.ListParams{Name: "nightly", Labels: map[string]string{"team": "ops"}}
	for {
		page, err := c.ListWorkflows(ctx, p)
		if err != nil {
			panic(err)
		}
		for _, w := range page.Workflows {
			fmt.Println(w.Name, w.Labels["team"], w.Labels["env"])
		}
		if page.NextCursor == "" {
			break
		}
		p.Cursor = page.NextCursor
	}
	// Output:
	// nightly-ops ops prod
}
