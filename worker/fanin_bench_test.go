package worker_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/worker"
)

// faninWidth is the width of BenchmarkWorkerFaninTask's workflows: the
// `weir bench` fanin shape (10 parallel tasks joined by one).
const faninWidth = 10

// BenchmarkWorkerFaninTask is BenchmarkWorkerPlainJob for the `weir bench`
// fanin row: one op is one task of a workflow of 10 parallel no-op tasks
// joined by one (b.N/11 workflows, at least one), submitted before the
// clock starts, run by one worker at concurrency 50 whose Observer counts
// the workflow_ended events, on the redis-server of WEIR_REDIS_URL
// (skipped without one). It reports the same figures, per task.
func BenchmarkWorkerFaninTask(b *testing.B) {
	ctx := context.Background()
	st, trips := workerStore(b, "wft")
	type empty struct{}
	q := client.NewQueue[empty, empty]("fanin")
	cl := client.New(st)
	wfs := max(1, b.N/(faninWidth+1))
	var wg sync.WaitGroup
	var next atomic.Int64
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(wfs) {
				wf := client.NewWorkflow()
				refs := make([]client.TaskRef, faninWidth)
				for i := range faninWidth {
					refs[i] = client.AddTask(wf, "p"+strconv.Itoa(i), q, empty{})
				}
				client.AddTask(wf, "join", q, empty{}).After(refs...)
				if err := cl.Submit(ctx, wf); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	var ended, bad atomic.Int64
	reached := make(chan struct{})
	w := worker.New(st, worker.Config{Concurrency: plainConcurrency, ShutdownTimeout: 10 * time.Second,
		Observer: func(e worker.Event) {
			if e.Kind != worker.EventWorkflowEnded {
				return
			}
			if e.WorkflowState != weir.WorkflowCompleted {
				bad.Add(1)
			}
			if ended.Add(1) == int64(wfs) {
				close(reached)
			}
		}})
	worker.Handle(w, q, func(context.Context, *worker.Job[empty]) (empty, error) { return empty{}, nil })
	measureWorker(b, ctx, w, trips, reached, wfs*(faninWidth+1), "task")
	if bad.Load() > 0 {
		b.Fatalf("%d workflows did not complete", bad.Load())
	}
}
