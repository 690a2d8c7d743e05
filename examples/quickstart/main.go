// Command quickstart runs a three-task workflow on weir's in-process store:
// two tasks in parallel, then a join that reads both results.
package main

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/worker"
)

// Queues are typed: a payload type and a result type.
var (
	Upper = client.NewQueue[string, string]("upper")
	Join  = client.NewQueue[string, string]("join")
)

func main() {
	ctx := context.Background()
	store := memstore.New() // or store, err := redisstore.New(redisClient, redisstore.Options{}) to share a Redis

	w := worker.New(store, worker.Config{Concurrency: 4})
	worker.Handle(w, Upper, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		return strings.ToUpper(j.Payload), nil
	})
	worker.Handle(w, Join, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		a, _ := worker.DepResult[string](j, "hello")
		b, _ := worker.DepResult[string](j, "world")
		return a + j.Payload + b, nil
	})
	if err := w.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer w.Stop(ctx)

	wf := client.NewWorkflow()
	hello := client.AddTask(wf, "hello", Upper, "hello")
	world := client.AddTask(wf, "world", Upper, "world")
	greet := client.AddTask(wf, "greet", Join, ", ").After(hello, world)
	if err := client.New(store).Submit(ctx, wf); err != nil {
		log.Fatal(err)
	}
	final, err := wf.Wait(ctx)
	if err != nil {
		log.Fatal(err)
	}
	msg, err := client.ResultOf(final, greet)
	fmt.Println(final.State, msg, err) // completed HELLO, WORLD <nil>
}
