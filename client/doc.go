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
// # One way per action
//
// Each action has one way, and one name, the same in Go, in the store
// contract (engine.Store), in REST (whose routes keep HTTP verbs) and in
// the CLI (whose workflow commands leave out the noun: weir cancel ID,
// weir rerun ID, beside weir cancel-job ID):
//
//   - An action on a stored job or workflow is a Client method that takes
//     its ID: CancelJob, RetryJob, DeleteJob, CancelWorkflow, RerunWorkflow,
//     DeleteWorkflow. A handle (Job, Workflow) has the actions of its ID as
//     methods of the same verb, Job.Cancel, Workflow.Cancel and
//     Workflow.Rerun, which call the Client's and return the same: the
//     job's weir.State, the workflow's weir.WorkflowState, the new run.
//   - A job's options are JobOptions, given to Enqueue for a plain job and
//     to AddTask (NewStep, Then, Catch, Finally) for a task: Delay and
//     ConcurrencyKey among them apply to both; a task's handle sets only
//     how it depends on others (After, Always, OnFailure) and its Undo.
//   - A finished workflow's task result is read with ResultOf, from a
//     snapshot and a task handle, which gives the result's type. A handler
//     reads its own dependencies' results with worker.DepResult: that is
//     another action (the job it is handed carries them; no snapshot).
//   - A schedule is put and deleted: PutSchedule and DeleteSchedule, as
//     the store's engine.Scheduler, PUT and DELETE /v1/schedules/{name},
//     and weir schedule put|delete.
//   - A namespace's partitions are one setting, engine.Config.Partitions,
//     given to either store (redisstore.Options.Config,
//     memstore.WithConfig).
//
// Errors are values, all declared in package weir: a job or workflow that
// did not complete is a *weir.JobError or *weir.WorkflowError (errors.As),
// which errors.Is matches with weir.ErrFailed or weir.ErrCancelled; the
// store's sentinels (weir.ErrNotFound, weir.ErrJobEnded, ...) come from any
// store, possibly wrapped.
package client
