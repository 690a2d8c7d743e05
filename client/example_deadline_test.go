package client_test

import (
	"context"
	"fmt"
	"time"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/worker"
)

var slowQ = client.NewQueue[string, string]("slow")

// A workflow that must be done within a time: when its deadline passes,
// it is cancelled as by Cancel. The running build is told to stop (its
// context ends); the deploy that never started ends with reason
// "deadline". Nothing but the worker has to be up: its sweep finds the
// deadline.
func ExampleDeadlineIn() {
	ctx := context.Background()
	store := memstore.New()
	w := worker.New(store, worker.Config{Concurrency: 1, SweepInterval: 20 * time.Millisecond})
	worker.Handle(w, slowQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		<-ctx.Done() // a build that takes longer than the deadline allows
		return "", ctx.Err()
	})
	_ = w.Start(ctx)
	defer w.Stop(ctx)

	wf := client.NewWorkflow(client.DeadlineIn(100 * time.Millisecond))
	build := client.AddTask(wf, "build", slowQ, "v1")
	client.AddTask(wf, "deploy", slowQ, "v1").After(build)
	if err := client.New(store).Submit(ctx, wf); err != nil {
		panic(err)
	}
	s, _ := wf.Wait(ctx)
	fmt.Println(s.State, s.DeadlineHit)
	fmt.Println(s.Tasks[0].State, s.Tasks[1].State, s.Tasks[1].Error)
	// Output:
	// cancelled true
	// cancelled cancelled deadline
}
