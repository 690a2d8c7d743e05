// Command cron runs a schedule that enqueues a job every second, fired by
// three workers at once, as three processes sharing a Redis would: each
// tick's job runs once, with the ID "<schedule>.<unix seconds of the
// tick>", however many workers fire.
//
//	go run ./examples/cron                      # in-process store
//	go run ./examples/cron -redis redis://localhost:6379/0
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/worker"
)

// Beat is the job each tick enqueues.
var Beat = client.NewQueue[string, string]("cron.beat")

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
		fmt.Fprintln(os.Stderr, "cron:", err)
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

// run starts three workers that fire schedules, adds the schedule, waits
// for three ticks' jobs, removes the schedule and says how often each of
// those jobs ran.
func run(ctx context.Context, store client.Store, out io.Writer) error {
	var mu sync.Mutex
	runs := map[string]int{}
	ran := make(chan string, 100)
	for range 3 {
		w := worker.New(store, worker.Config{Schedules: true})
		worker.Handle(w, Beat, func(ctx context.Context, j *worker.Job[string]) (string, error) {
			mu.Lock()
			runs[j.ID]++
			mu.Unlock()
			ran <- j.ID
			return "beat " + j.Payload, nil
		})
		if err := w.Start(ctx); err != nil {
			return err
		}
		defer w.Stop(context.WithoutCancel(ctx))
	}

	c := client.New(store)
	job, err := client.ScheduledJob(Beat, "hello", client.MaxAttempts(3))
	if err != nil {
		return err
	}
	if _, err := c.PutSchedule(ctx, client.ScheduleParams{Name: "beat", Every: time.Second, Job: job}); err != nil {
		return err
	}
	var ticks []string
	for len(ticks) < 3 {
		select {
		case id := <-ran:
			if !slices.Contains(ticks, id) {
				ticks = append(ticks, id)
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := c.DeleteSchedule(ctx, "beat"); err != nil {
		return err
	}
	// the jobs are handled and stored before their ID is reported
	for _, id := range ticks {
		if _, err := client.OpenJob(c, Beat, id).Wait(ctx); err != nil {
			return err
		}
	}
	slices.Sort(ticks) // by tick: the IDs' seconds have the same length
	mu.Lock()
	defer mu.Unlock()
	for i, id := range ticks {
		name, _, _ := strings.Cut(id, ".")
		fmt.Fprintf(out, "tick %d of schedule %s: job ran %d time(s)\n", i+1, name, runs[id])
	}
	return nil
}
