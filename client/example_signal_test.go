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

var deployQ = client.NewQueue[string, string]("deploy")

// An approval step: deploy waits for a person's signal, sent from any
// process (here the same one) once the build ended; the value the signal
// carries is the approve task's result.
func ExampleAddSignal() {
	ctx := context.Background()
	store := memstore.New()
	w := worker.New(store, worker.Config{Concurrency: 1})
	worker.Handle(w, deployQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		by, err := worker.DepResult[string](j, "approve")
		return "deployed " + j.Payload + ", approved by " + by, err
	})
	_ = w.Start(ctx)
	defer w.Stop(ctx)

	c := client.New(store)
	wf := client.NewWorkflow(client.WorkflowID("release-42"))
	approve := client.AddSignal[string](wf, "approve")
	deploy := client.AddTask(wf, "deploy", deployQ, "v42").After(approve)
	if err := c.Submit(ctx, wf); err != nil {
		panic(err)
	}
	s, _ := wf.Status(ctx)
	fmt.Println(s.Tasks[0].State)

	// later, from anywhere: the approver's answer
	h := c.OpenWorkflow("release-42")
	if err := h.Signal(ctx, "approve", "ana"); err != nil {
		panic(err)
	}
	err := h.Signal(ctx, "approve", "bob")
	fmt.Println(errors.Is(err, weir.ErrSignalled))

	s, _ = wf.Wait(ctx)
	out, _ := client.ResultOf(s, deploy)
	fmt.Println(s.State, out)
	// Output:
	// open
	// true
	// completed deployed v42, approved by ana
}

// A workflow that starts at a time, and a task that waits after its
// dependency: both by the store's clock. (Here the start is already past,
// so the first task is ready at once; the second waits 10ms after it.)
func ExampleStartAt() {
	ctx := context.Background()
	store := memstore.New()
	w := worker.New(store, worker.Config{Concurrency: 1})
	worker.Handle(w, deployQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		return "done " + j.Payload, nil
	})
	_ = w.Start(ctx)
	defer w.Stop(ctx)

	wf := client.NewWorkflow(client.StartAt(time.Now().Add(-time.Minute)))
	build := client.AddTask(wf, "build", deployQ, "build")
	client.AddTask(wf, "cool-down", deployQ, "cool-down", client.Delay(10*time.Millisecond)).After(build)
	if err := client.New(store).Submit(ctx, wf); err != nil {
		panic(err)
	}
	s, _ := wf.Wait(ctx)
	fmt.Println(s.State)
	// Output:
	// completed
}
