package client_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/worker"
)

var stepQ = client.NewQueue[string, string]("steps")

// A re-run after a fix: the charge step fails (its service was down), so
// the workflow fails; once the service is back, Rerun runs charge and what
// comes after it again, while fetch, which completed, keeps its result
// and does not run twice.
func ExampleWorkflow_Rerun() {
	ctx := context.Background()
	store := memstore.New()
	var up atomic.Bool
	runs := map[string]*atomic.Int32{"fetch": {}, "charge": {}, "mail": {}}
	w := worker.New(store, worker.Config{Concurrency: 1})
	worker.Handle(w, stepQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		runs[j.Payload].Add(1)
		if j.Payload == "charge" && !up.Load() {
			return "", worker.NonRetryable(errors.New("payment service down"))
		}
		return j.Payload + " done", nil
	})
	_ = w.Start(ctx)
	defer w.Stop(ctx)

	c := client.New(store)
	wf := client.NewWorkflow(client.WorkflowID("order-7"))
	fetch := client.AddTask(wf, "fetch", stepQ, "fetch")
	charge := client.AddTask(wf, "charge", stepQ, "charge").After(fetch)
	mail := client.AddTask(wf, "mail", stepQ, "mail").After(charge)
	if err := c.Submit(ctx, wf); err != nil {
		panic(err)
	}
	s, err := wf.Wait(ctx)
	fmt.Println(s.State, s.Run, errors.Is(err, weir.ErrFailed))

	up.Store(true) // the service is back
	run, err := wf.Rerun(ctx)
	if err != nil {
		panic(err)
	}
	s, _ = wf.Wait(ctx)
	out, _ := client.ResultOf(s, mail)
	fmt.Println(s.State, run, out)
	fmt.Println("fetch ran", runs["fetch"].Load(), "charge ran", runs["charge"].Load())
	_, err = wf.Rerun(ctx) // nothing failed any more
	fmt.Println(errors.Is(err, weir.ErrNotRerunnable))
	// Output:
	// failed 1 true
	// completed 2 mail done
	// fetch ran 1 charge ran 2
	// true
}
