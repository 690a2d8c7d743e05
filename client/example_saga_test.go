package client_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/worker"
)

// Queues of a small booking saga: each step may be undone.
var (
	reserve = client.NewQueue[string, string]("reserve")
	release = client.NewQueue[string, string]("release")
	charge  = client.NewQueue[string, string]("charge")
)

// bookingWorker runs the saga's queues: reserving works, charging fails
// for good, releasing records what it released in log.
func bookingWorker(ctx context.Context, store *memstore.Store, log *[]string, mu *sync.Mutex) *worker.Worker {
	w := worker.New(store, worker.Config{Concurrency: 1})
	worker.Handle(w, reserve, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		return "reserved " + j.Payload, nil
	})
	worker.Handle(w, charge, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		return "", worker.NonRetryable(errors.New("card declined"))
	})
	worker.Handle(w, release, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		mu.Lock()
		*log = append(*log, "released "+j.Payload)
		mu.Unlock()
		return "", nil
	})
	_ = w.Start(ctx)
	return w
}

// A saga: each completed step that has an undo is undone, in reverse
// order of the DAG, when a later step fails.
func ExampleUndo() {
	ctx := context.Background()
	store := memstore.New()
	var mu sync.Mutex
	var log []string
	w := bookingWorker(ctx, store, &log, &mu)
	defer w.Stop(ctx)

	wf := client.NewWorkflow(client.WorkflowID("trip"))
	flight := client.Undo(client.AddTask(wf, "flight", reserve, "flight"), release, "flight")
	hotel := client.Undo(client.AddTask(wf, "hotel", reserve, "hotel"), release, "hotel").After(flight)
	client.AddTask(wf, "pay", charge, "card").After(hotel)
	if err := client.New(store).Submit(ctx, wf); err != nil {
		panic(err)
	}
	s, err := wf.Wait(ctx)
	fmt.Println(s.State, errors.Is(err, weir.ErrFailed))
	mu.Lock()
	fmt.Println(log)
	mu.Unlock()
	// Output:
	// compensated true
	// [released hotel released flight]
}

// FailFast: the first failure cancels every task that has not started;
// running ones finish.
func ExampleFailFast() {
	ctx := context.Background()
	store := memstore.New()
	var mu sync.Mutex
	var log []string
	w := bookingWorker(ctx, store, &log, &mu)
	defer w.Stop(ctx)

	wf := client.NewWorkflow(client.WorkflowID("ff"), client.FailFast())
	pay := client.AddTask(wf, "pay", charge, "card")
	client.AddTask(wf, "seat", reserve, "seat").After(pay)
	if err := client.New(store).Submit(ctx, wf); err != nil {
		panic(err)
	}
	s, _ := wf.Wait(ctx)
	fmt.Println(s.State)
	for _, t := range s.Tasks {
		fmt.Println(t.Name, t.State, t.Error)
	}
	// Output:
	// failed
	// pay failed card declined
	// seat cancelled fail_fast
}

// Always: a task that runs once its dependencies ended, whatever their
// outcome (a cleanup). A failure whose every dependent is Always is
// absorbed: the workflow completes (spec/states.md).
func ExampleTask_Always() {
	ctx := context.Background()
	store := memstore.New()
	var mu sync.Mutex
	var log []string
	w := bookingWorker(ctx, store, &log, &mu)
	defer w.Stop(ctx)

	wf := client.NewWorkflow(client.WorkflowID("always"))
	pay := client.AddTask(wf, "pay", charge, "card")
	client.AddTask(wf, "cleanup", release, "temp files").After(pay).Always()
	if err := client.New(store).Submit(ctx, wf); err != nil {
		panic(err)
	}
	s, _ := wf.Wait(ctx)
	fmt.Println(s.State, s.Tasks[0].State)
	mu.Lock()
	fmt.Println(log)
	mu.Unlock()
	// Output:
	// completed failed
	// [released temp files]
}
