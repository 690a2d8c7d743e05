// Command tenants shows concurrency keys: one queue shared by two
// tenants, each job carrying its tenant as its key, and a per-key limit of
// one job at a time. Tenant "big" enqueues 20 reports, then tenant "small"
// one: claims rotate across the keys, so small's report starts in the
// first claim batch instead of after big's 20, and big never runs two at
// once however many worker slots are free.
//
//	go run ./examples/tenants                      # in-process store
//	go run ./examples/tenants -redis redis://localhost:6379/0
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/worker"
)

// Report is the shared queue: the payload is the tenant.
var Report = client.NewQueue[string, string]("tenants.report")

// slots is the worker's concurrency: one claim batch.
const slots = 4

func main() {
	url := flag.String("redis", "", "Redis URL (redis://host:port/db); empty runs on the in-process store")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	store, err := openStore(*url)
	if err == nil {
		err = run(ctx, store, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tenants:", err)
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

// run limits each tenant to one running report, enqueues big's 20 and
// then small's one, runs a worker of four slots and reports when small's
// report started and how many of each tenant's ran at once.
func run(ctx context.Context, store client.Store, out io.Writer) error {
	c := client.New(store)
	if err := c.LimitKeys(ctx, Report.Name(), 1); err != nil {
		return err
	}
	var jobs []*client.Job[string]
	for _, tenant := range append(slices.Repeat([]string{"big"}, 20), "small") {
		j, err := client.Enqueue(ctx, c, Report, tenant, client.ConcurrencyKey(tenant))
		if err != nil {
			return err
		}
		jobs = append(jobs, j)
	}

	var mu sync.Mutex
	started, smallAt := 0, -1
	running, most := map[string]int{}, map[string]int{}
	w := worker.New(store, worker.Config{Concurrency: slots})
	worker.Handle(w, Report, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		tenant := j.Payload
		mu.Lock()
		if tenant == "small" {
			smallAt = started
		}
		started++
		running[tenant]++
		most[tenant] = max(most[tenant], running[tenant])
		mu.Unlock()
		time.Sleep(10 * time.Millisecond) // the report's work
		mu.Lock()
		running[tenant]--
		mu.Unlock()
		return "report for " + tenant, nil
	})
	if err := w.Start(ctx); err != nil {
		return err
	}
	defer w.Stop(context.WithoutCancel(ctx))
	for _, j := range jobs {
		if _, err := j.Wait(ctx); err != nil {
			return err
		}
	}
	mu.Lock()
	defer mu.Unlock()
	fmt.Fprintf(out, "small's report started in the first claim batch (%d slots): %t\n", slots, smallAt >= 0 && smallAt < slots)
	fmt.Fprintf(out, "most reports of big running at once: %d\n", most["big"])
	fmt.Fprintf(out, "most reports of small running at once: %d\n", most["small"])
	return nil
}
