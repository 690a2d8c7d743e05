package client_test

import (
	"context"
	"fmt"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/worker"
)

var mailQ = client.NewQueue[string, string]("mail")

// The event stream: every transition of a workflow or job wrote its
// events in the same step; a reader pages through them from a cursor, or
// follows them as they come.
func ExampleClient_Events() {
	ctx := context.Background()
	store := memstore.New()
	w := worker.New(store, worker.Config{Concurrency: 1})
	worker.Handle(w, mailQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		return "sent to " + j.Payload, nil
	})
	_ = w.Start(ctx)
	defer w.Stop(ctx)

	c := client.New(store)
	wf := client.NewWorkflow(client.WorkflowID("welcome-7"))
	client.AddTask(wf, "mail", mailQ, "ana@example.com")
	if err := c.Submit(ctx, wf); err != nil {
		panic(err)
	}
	if _, err := wf.Wait(ctx); err != nil {
		panic(err)
	}

	page, err := c.Events(ctx, client.EventsParams{Workflow: "welcome-7"})
	if err != nil {
		panic(err)
	}
	for _, e := range page.Events {
		fmt.Printf("%s %s task=%q attempt=%d reason=%q\n", e.Type, e.Workflow, e.Task, e.Attempt, e.Reason)
	}

	// follow from where the page ended: the next events, as they come
	fctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.FollowEvents(fctx, client.EventsParams{After: page.Next}, func(e weir.Event) error {
			fmt.Println("then:", e.Type, e.Job)
			cancel()
			return nil
		})
	}()
	if _, err := client.Enqueue(ctx, c, mailQ, "bob@example.com", client.ID("mail-bob")); err != nil {
		panic(err)
	}
	<-done
	// Output:
	// workflow_submitted welcome-7 task="" attempt=0 reason=""
	// queued welcome-7 task="mail" attempt=0 reason=""
	// started welcome-7 task="mail" attempt=1 reason=""
	// completed welcome-7 task="mail" attempt=1 reason=""
	// workflow_ended welcome-7 task="" attempt=0 reason="completed"
	// then: queued mail-bob
}
