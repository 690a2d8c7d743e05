package client_test

import (
	"context"
	"fmt"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/worker"
)

var thumbnails = client.NewQueue[string, string]("thumbnails")

// Every worker registers itself while it runs: its ID, host, pid,
// queues, concurrency, last heartbeat and running jobs. One that stops
// leaves the list at once; one that dies leaves it when its lease from its
// last heartbeat has passed.
func ExampleClient_Workers() {
	ctx := context.Background()
	store := memstore.New() // or redisstore.New(redisClient, redisstore.Options{})
	c := client.New(store)

	w := worker.New(store, worker.Config{ID: "thumbs-1", Concurrency: 4, Queues: map[string]int{"thumbnails": 2}})
	worker.Handle(w, thumbnails, func(ctx context.Context, j *worker.Job[string]) (string, error) { return j.Payload, nil })
	if err := w.Start(ctx); err != nil {
		panic(err)
	}
	ws, err := c.Workers(ctx)
	if err != nil {
		panic(err)
	}
	for _, wi := range ws {
		fmt.Println(wi.ID, wi.Queues, "concurrency", wi.Concurrency, "running", wi.Running, "ttl", wi.Expires.Sub(wi.LastHeartbeat))
	}

	_ = w.Stop(ctx)
	ws, _ = c.Workers(ctx)
	fmt.Println("after stop:", len(ws))
	// Output:
	// thumbs-1 [{thumbnails 2}] concurrency 4 running 0 ttl 30s
	// after stop: 0
}
