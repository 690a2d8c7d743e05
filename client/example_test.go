package client_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/worker"
)

// Queue definitions are shared by producers and workers.
var upper = client.NewQueue[string, string]("upper")

func Example() {
	ctx := context.Background()
	store := memstore.New() // or redisstore.New(redisClient, redisstore.Options{})

	w := worker.New(store, worker.Config{})
	worker.Handle(w, upper, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		return strings.ToUpper(j.Payload), nil
	})
	_ = w.Start(ctx)
	defer w.Stop(ctx)

	c := client.New(store)
	job, err := client.Enqueue(ctx, c, upper, "hello")
	if err != nil {
		panic(err)
	}
	out, err := job.Wait(ctx) // out is a string: the queue's result type
	fmt.Println(out, err)
	// Output: HELLO <nil>
}

func ExampleEnqueue() {
	ctx := context.Background()
	c := client.New(memstore.New())
	// An ID makes the enqueue idempotent: the second one is the same job.
	for range 2 {
		job, err := client.Enqueue(ctx, c, upper, "once", client.ID("greeting-42"), client.MaxAttempts(3))
		fmt.Println(job.ID(), err)
	}
	// Output:
	// greeting-42 <nil>
	// greeting-42 <nil>
}

func ExampleJob_Cancel() {
	ctx := context.Background()
	c := client.New(memstore.New())
	job, _ := client.Enqueue(ctx, c, upper, "never runs")
	fmt.Println(job.Cancel(ctx))
	_, err := job.Wait(ctx)
	fmt.Println(errors.Is(err, weir.ErrCancelled))
	_, err = job.Cancel(ctx)
	fmt.Println(errors.Is(err, weir.ErrJobEnded))
	// Output:
	// cancelled <nil>
	// true
	// true
}

func ExampleNewWorkflow() {
	ctx := context.Background()
	store := memstore.New()
	w := worker.New(store, worker.Config{})
	worker.Handle(w, upper, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		s := j.Payload
		for _, d := range j.Deps { // the results of the tasks it ran after
			prev, err := worker.DepResult[string](j, d.Task)
			if err != nil {
				return "", err
			}
			s = prev + " " + s
		}
		return strings.ToUpper(s), nil
	})
	_ = w.Start(ctx)
	defer w.Stop(ctx)

	wf := client.NewWorkflow(client.WorkflowID("greet"))
	hello := client.AddTask(wf, "hello", upper, "hello")
	world := client.AddTask(wf, "world", upper, "world").After(hello)
	c := client.New(store)
	if err := c.Submit(ctx, wf); err != nil {
		panic(err)
	}
	s, err := wf.Wait(ctx)
	fmt.Println(s.State, err)
	fmt.Println(client.ResultOf(s, world))
	// Output:
	// completed <nil>
	// HELLO WORLD <nil>
}

func ExampleClient_OpenWorkflow() {
	ctx := context.Background()
	store := memstore.New()
	wf := client.NewWorkflow(client.WorkflowID("nightly-2030-01-01"))
	client.AddTask(wf, "report", upper, "report")
	_ = client.New(store).Submit(ctx, wf)

	// Another process, knowing only the ID:
	other := client.New(store).OpenWorkflow("nightly-2030-01-01")
	fmt.Println(other.Cancel(ctx))
	_, err := other.Wait(ctx)
	fmt.Println(errors.Is(err, weir.ErrCancelled))
	// Output:
	// cancelled <nil>
	// true
}

func ExampleMaxExpiries() {
	ctx := context.Background()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	store := memstore.New(memstore.WithClock(func() time.Time { return now }))
	c := client.New(store)
	job, _ := client.Enqueue(ctx, c, upper, "x", client.MaxAttempts(1), client.MaxExpiries(1))
	// A worker takes the job and is killed (a deploy): its lease runs out.
	die := func() weir.State {
		_, _ = store.Claim(ctx, engine.ClaimParams{Queues: []string{"upper"}, Max: 1, Lease: time.Minute})
		now = now.Add(time.Minute)
		res, _ := store.ExpireLeases(ctx, engine.ExpireParams{})
		return res.Expired[0].State
	}
	fmt.Println(die()) // within the budget: queued again at once, no attempt lost
	fmt.Println(die()) // past it: the one attempt failed
	_, err := job.Wait(ctx)
	fmt.Println(errors.Is(err, weir.ErrFailed))
	// Output:
	// queued
	// failed
	// true
}

func ExampleUniqueBy() {
	ctx := context.Background()
	store := memstore.New()
	c := client.New(store)
	// One refresh per account at a time: a second enqueue while the first
	// is queued or running returns the first.
	first, _ := client.Enqueue(ctx, c, upper, "refresh", client.UniqueBy("account-7"))
	second, _ := client.Enqueue(ctx, c, upper, "refresh again", client.UniqueBy("account-7"))
	fmt.Println(second.ID() == first.ID(), first.Created(), second.Created())

	// Once the first has ended, the key is free.
	w := worker.New(store, worker.Config{})
	worker.Handle(w, upper, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		return strings.ToUpper(j.Payload), nil
	})
	_ = w.Start(ctx)
	defer w.Stop(ctx)
	out, _ := first.Wait(ctx)
	third, _ := client.Enqueue(ctx, c, upper, "later", client.UniqueBy("account-7"))
	fmt.Println(out, third.Created(), third.ID() != first.ID())
	// Output:
	// true true false
	// REFRESH true true
}

func ExampleUnique() {
	ctx := context.Background()
	c := client.New(memstore.New())
	// The same payload in the same queue within 10 minutes is enqueued once,
	// even after the first has ended.
	for range 2 {
		job, _ := client.Enqueue(ctx, c, upper, "daily digest for ann", client.Unique(10*time.Minute))
		fmt.Println(job.Created())
	}
	// Output:
	// true
	// false
}

func ExampleClient_LimitQueue() {
	ctx := context.Background()
	c := client.New(memstore.New())
	// However many workers and processes serve "upper", at most 2 of its
	// jobs run at once (a partner API allows two connections).
	if err := c.LimitQueue(ctx, "upper", 2); err != nil {
		panic(err)
	}
	qs, _ := c.Queues(ctx)
	fmt.Println(qs[0].Name, qs[0].Concurrency)
	// Output: upper 2
}

func ExampleClient_RateLimitQueue() {
	ctx := context.Background()
	store := memstore.New()
	c := client.New(store)
	// However many workers and processes serve "upper", at most 2 of its
	// jobs start in any minute (a partner API allows two calls a minute).
	if err := c.RateLimitQueue(ctx, "upper", 2, time.Minute); err != nil {
		panic(err)
	}
	for _, s := range []string{"a", "b", "c"} {
		if _, err := client.Enqueue(ctx, c, upper, s); err != nil {
			panic(err)
		}
	}
	// A claim, as a worker's, takes the two the limit lets start now; the
	// third waits for the minute to pass (a worker sleeps until then).
	claimed, _ := store.Claim(ctx, engine.ClaimParams{Queues: []string{"upper"}, Max: 3, Lease: time.Minute})
	qs, _ := c.Queues(ctx)
	fmt.Println(len(claimed), qs[0].Ready, qs[0].RateLimit, qs[0].RatePeriod)
	// Output: 2 1 2 1m0s
}

func ExampleConcurrencyKey() {
	ctx := context.Background()
	store := memstore.New()
	c := client.New(store)
	// Each tenant runs at most one job of "reports" at once; tenant
	// "big" has three jobs ready before tenant "small" enqueues its one.
	if err := c.LimitKeys(ctx, "reports", 1); err != nil {
		panic(err)
	}
	reports := client.NewQueue[string, string]("reports")
	for _, t := range []string{"big", "big", "big", "small"} {
		if _, err := client.Enqueue(ctx, c, reports, t, client.ConcurrencyKey(t)); err != nil {
			panic(err)
		}
	}
	// One claim of up to ten jobs: one job of each tenant, "big" first
	// (it was first in turn); its other jobs wait for its slot.
	got, err := store.Claim(ctx, engine.ClaimParams{Queues: []string{"reports"}, Max: 10, Lease: time.Minute})
	if err != nil {
		panic(err)
	}
	for _, j := range got {
		fmt.Println(j.Job.Key)
	}
	// Output:
	// big
	// small
}

func ExampleConcurrencyKey_task() {
	ctx := context.Background()
	store := memstore.New()
	c := client.New(store)
	w := client.NewWorkflow()
	client.AddTask(w, "render", upper, "acme report", client.ConcurrencyKey("acme"))
	if err := c.Submit(ctx, w); err != nil {
		panic(err)
	}
	j, _ := store.GetJob(ctx, weir.TaskJobID(w.ID(), "render"))
	fmt.Println(j.Key)
	// Output: acme
}
