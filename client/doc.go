// Package client is weir's producer API: typed queue definitions, plain
// jobs and workflows (DAGs of jobs), on any Store: the in-process
// engine/memstore, or the Redis store of package redisstore. The snapshots it
// returns, their states and every error it returns are types of package
// weir.
//
// A Queue[P, R] names a queue with the type of its payload P and of its
// result R. Producers and workers share it, so the compiler checks that
// what is enqueued is what the handler takes and that a result is read as
// what the handler returns:
//
//	var Resize = client.NewQueue[ResizeArgs, Image]("resize")
//
//	job, err := client.Enqueue(ctx, c, Resize, ResizeArgs{Width: 100}, client.MaxAttempts(3))
//	img, err := job.Wait(ctx) // an Image, or a *weir.JobError with the remote reason
//
// Jobs and workflows live in the store, not in the client: any process can
// reopen them by ID (OpenJob, Client.OpenWorkflow), wait for them (the store
// pushes the outcome; nothing polls), cancel them and read their status.
//
// A workflow is built task by task; a task runs after tasks added before it,
// so the graph is acyclic by construction:
//
//	wf := client.NewWorkflow()
//	fetch := client.AddTask(wf, "fetch", Fetch, url)
//	small := client.AddTask(wf, "small", Resize, ResizeArgs{Width: 100}).After(fetch)
//	client.Undo(small, Delete, "small") // compensation, if the workflow fails
//	err := c.Submit(ctx, wf)
//	s, err := wf.Wait(ctx)
//	img, err := client.ResultOf(s, small)
//
// Handlers read their dependencies' results with worker.DepResult. The
// rules (what runs when a task fails, FailFast, Always, compensation,
// cancel) are those of spec/states.md.
//
// Errors are values, all declared in package weir: a job or workflow that
// did not complete is a *weir.JobError or *weir.WorkflowError (errors.As),
// which errors.Is matches with weir.ErrFailed or weir.ErrCancelled; the
// store's sentinels (weir.ErrNotFound, weir.ErrJobEnded, ...) come from any
// store, possibly wrapped.
package client
