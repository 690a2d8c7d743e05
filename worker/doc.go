// Package worker runs weir jobs: it claims them from a store (a
// client.Store, as client.New takes) and calls the typed handler registered
// for their queue. What a handler sees of its job and every error this
// package returns or cancels a context with are types of package weir.
//
//	w := worker.New(store, worker.Config{Concurrency: 20})
//	worker.Handle(w, Resize, func(ctx context.Context, j *worker.Job[ResizeArgs]) (Image, error) {
//		src, err := worker.DepResult[Image](j, "fetch") // a workflow dependency's result
//		...
//	})
//	err := w.Run(ctx) // until ctx ends, then a graceful stop
//
// A fleet of workers and a store are all that run: there is no scheduler.
// Each worker
//   - claims from its queues (in strict or weighted order), blocking in the
//     store while there is nothing to do, so an idle fleet wakes as soon as
//     a job is pushed or a delayed one comes due;
//   - finishes a job and claims the next one in a single store call, and
//     when busy batches the outcomes of the jobs that end together (at most
//     two such calls in flight), claiming a job for every freed slot;
//   - holds its jobs by lease and extends all its leases in one heartbeat
//     call per interval, which also tells it which jobs were cancelled;
//   - sweeps expired leases (of crashed workers) and due delayed jobs
//     itself, in small bounded calls.
//
// A handler's context is cancelled when its job or workflow is cancelled,
// when the job's timeout passes, when the lease is lost and when a graceful
// shutdown runs out of time; context.Cause says which. A returned error
// fails the attempt (retried with exponential backoff and jitter while
// attempts remain) unless it is NonRetryable; a panic fails the attempt with
// its stack as the reason.
//
// Stop (or the end of Run's context) stops claiming, lets running jobs
// finish until its deadline, then cancels them and hands the unfinished ones
// back to their queues without counting an attempt, so no job is lost or
// run twice by a clean shutdown.
package worker
