// Command fanout runs a fan-out/fan-in workflow over 1,000 tasks: one task
// per chunk of a range of numbers sums the squares of its chunk, in
// parallel across workers, and a final task joins the 1,000 partial sums.
// The join starts in the same store step that ends the last chunk.
//
//	go run ./examples/fanout                      # in-process store
//	go run ./examples/fanout -redis redis://localhost:6379/0 -workers 4
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/worker"
)

// Chunk is the half-open range [From, To).
type Chunk struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

var (
	Squares = client.NewQueue[Chunk, int64]("fan.squares")
	Join    = client.NewQueue[int, int64]("fan.join")
)

func main() {
	url := flag.String("redis", "", "Redis URL (redis://host:port/db); empty runs on the in-process store")
	workers := flag.Int("workers", 2, "workers to run in this process")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	store, err := openStore(*url)
	if err == nil {
		err = run(ctx, store, os.Stdout, Options{Tasks: 1000, PerTask: 1000, Workers: *workers})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fanout:", err)
		os.Exit(1)
	}
}

func openStore(url string) (client.Store, error) {
	if url == "" {
		return memstore.New(), nil
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	return redisstore.New(redis.NewClient(opt), redisstore.Options{})
}

// Options size the run.
type Options struct {
	Tasks   int   // fan-out width
	PerTask int64 // numbers per task
	Workers int
}

func register(w *worker.Worker) {
	worker.Handle(w, Squares, func(ctx context.Context, j *worker.Job[Chunk]) (int64, error) {
		var s int64
		for n := j.Payload.From; n < j.Payload.To; n++ {
			s += n * n
		}
		return s, nil
	})
	worker.Handle(w, Join, func(ctx context.Context, j *worker.Job[int]) (int64, error) {
		if len(j.Deps) != j.Payload {
			return 0, worker.NonRetryable(fmt.Errorf("joined %d parts, want %d", len(j.Deps), j.Payload))
		}
		var total int64
		for _, d := range j.Deps {
			s, err := worker.DepResult[int64](j, d.Task)
			if err != nil {
				return 0, err
			}
			total += s
		}
		return total, nil
	})
}

// run sums the squares of 0..Tasks·PerTask-1 in Tasks parallel tasks and
// one join, and prints the total and how long it took.
func run(ctx context.Context, store client.Store, out io.Writer, o Options) error {
	for range o.Workers {
		w := worker.New(store, worker.Config{Concurrency: 16})
		register(w)
		if err := w.Start(ctx); err != nil {
			return err
		}
		defer w.Stop(context.WithoutCancel(ctx))
	}
	began := time.Now()
	wf := client.NewWorkflow()
	parts := make([]client.TaskRef, o.Tasks)
	for i := range o.Tasks {
		from := int64(i) * o.PerTask
		parts[i] = client.AddTask(wf, fmt.Sprintf("part-%04d", i), Squares, Chunk{From: from, To: from + o.PerTask})
	}
	join := client.AddTask(wf, "join", Join, o.Tasks).After(parts...)
	c := client.New(store)
	if err := c.Submit(ctx, wf); err != nil {
		return err
	}
	s, err := wf.Wait(ctx)
	if err != nil {
		return err
	}
	total, err := client.ResultOf(s, join)
	if err != nil {
		return err
	}
	n := int64(o.Tasks) * o.PerTask
	want := (n - 1) * n * (2*n - 1) / 6
	fmt.Fprintf(out, "sum of squares below %d over %d tasks: %d (%v)\n", n, o.Tasks, total, total == want)
	fmt.Fprintf(os.Stderr, "fanout: %d tasks and a join in %v\n", o.Tasks, time.Since(began).Round(time.Millisecond))
	if total != want {
		return fmt.Errorf("total %d, want %d", total, want)
	}
	return nil
}
