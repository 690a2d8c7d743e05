package shell_test

import (
	"context"
	"fmt"
	"github.com/weirflow/weir"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/shell"
	"github.com/weirflow/weir/worker"
)

// A worker that runs shell tasks of the queue "default", and a job for it:
// the command's standard output is the job's result.
func ExampleRegister() {
	ctx := context.Background()
	store := memstore.New() // or redisstore.New(redisClient, redisstore.Options{})

	w := worker.New(store, worker.Config{})
	shell.Register(w, []string{"default"}, weir.DefaultLimits().MaxResult)
	if err := w.Start(ctx); err != nil {
		panic(err)
	}
	defer w.Stop(ctx)

	c := client.New(store)
	job, err := client.Enqueue(ctx, c, shell.Queue("default"), shell.Payload{Run: `echo "hello from $0"`, Dir: "/"})
	if err != nil {
		panic(err)
	}
	out, err := job.Wait(ctx)
	fmt.Printf("%q %v\n", out, err)
	// Output: "hello from sh\n" <nil>
}
