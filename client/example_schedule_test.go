package client_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/worker"
)

var reports = client.NewQueue[string, string]("reports")

// A schedule that enqueues a report job at 10:00 Paris time on weekdays,
// fired by a worker. Any number of workers may fire schedules: each tick
// starts one job, whose ID is the schedule's name and the tick's unix
// seconds. Ticks come by the store's clock: here a clock the example moves
// itself; a real program leaves WithClock out.
func ExampleClient_PutSchedule() {
	ctx := context.Background()
	var clock atomic.Int64 // unix ms
	clock.Store(time.Date(2030, 1, 7, 8, 0, 0, 0, time.UTC).UnixMilli())
	now := func() time.Time { return time.UnixMilli(clock.Load()).UTC() }
	store := memstore.New(memstore.WithClock(now)) // or redisstore.New(redisClient, redisstore.Options{})

	c := client.New(store)
	job, err := client.ScheduledJob(reports, "sales")
	if err != nil {
		panic(err)
	}
	s, err := c.PutSchedule(ctx, client.ScheduleParams{
		Name: "daily-report", Cron: "0 10 * * MON-FRI", TZ: "Europe/Paris",
		Job: job, Overlap: weir.OverlapSkip, Start: now(),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("next tick:", s.Next)

	ran := make(chan string)
	w := worker.New(store, worker.Config{Schedules: true})
	worker.Handle(w, reports, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		ran <- j.ID + " " + j.Payload
		return "done", nil
	})
	clock.Store(s.Next.UnixMilli()) // the tick comes
	_ = w.Start(ctx)
	defer w.Stop(ctx)
	fmt.Println("ran:", <-ran)
	// Output:
	// next tick: 2030-01-07 09:00:00 +0000 UTC
	// ran: daily-report.1894006800 sales
}
