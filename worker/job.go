package worker

import (
	"context"
	"fmt"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
)

// JobInfo is what a handler knows about the job it runs, whatever its
// payload type. Middleware sees it; typed handlers see it inside Job.
type JobInfo struct {
	ID    string
	Queue string
	// Workflow and Task are set for a workflow task's job and for an undo
	// job (Task is then the task it undoes).
	Workflow string
	Task     string
	// Undo is set for an undo job.
	Undo bool
	// Attempt is this attempt's number, 1 for the first.
	Attempt     int
	MaxAttempts int
	// Expiries counts the earlier attempts whose lease expired (their
	// worker died) within the job's MaxExpiries: they cost no attempt, so
	// the attempts counted against MaxAttempts are Attempt − Expiries.
	Expiries int
	// Deps are the outcomes of a task's dependencies, in its After order; an
	// undo job has one: the task it undoes, with its result. Read them typed
	// with DepResult.
	Deps []weir.DepOutcome
	// RawPayload is the payload as stored (msgpack).
	RawPayload []byte
	// TraceParent is the W3C trace context stored by the submit of the
	// job's workflow or the enqueue of the job, "" when its context
	// carried no span; package weirotel's Middleware continues it.
	TraceParent string
	// Worker is the ID of the worker running this attempt (Worker.ID), the
	// one the store records as the job's worker (weir.Job.Worker).
	Worker string

	result     []byte
	link       *progressLink // progress.go
	checkpoint []byte
	dyn        *additions // dynamic.go; nil for a plain or undo job
}

// Job is a job as a typed handler gets it: its JobInfo and its decoded
// payload.
type Job[P any] struct {
	JobInfo
	Payload P
}

// Handler runs one job, untyped: the form that Middleware wraps. The typed
// function given to Handle sits innermost.
type Handler func(ctx context.Context, j *JobInfo) error

// Middleware wraps every handler of a worker, outermost first (for logging,
// metrics, tracing, limits). It must call next to run the job, and return
// its error (or another one).
type Middleware func(next Handler) Handler

// Handle registers fn as the handler of queue q's jobs on w. The payload
// arrives decoded; fn's result is stored as the job's result. fn's context
// is cancelled when the job or its workflow is cancelled, when the job's
// timeout passes, when the worker loses the job's lease and when a graceful
// shutdown runs out of time; context.Cause tells which (weir.ErrJobCancelled,
// weir.ErrTimeout, weir.ErrLeaseLost, weir.ErrShutdown). fn should return soon after.
//
// What fn returns decides the attempt: nil completes the job; an error
// fails the attempt, retried with backoff while attempts remain, unless it
// is NonRetryable; an error returned because the job was cancelled ends it
// cancelled; one returned because of a shutdown hands the job back without
// counting the attempt. A panic fails the attempt, with its stack as the
// reason.
//
// Handle panics when q already has a handler or w is running: handlers are
// registered once, before Start. HandleSafely returns those mistakes as
// errors instead.
func Handle[P, R any](w *Worker, q client.Queue[P, R], fn func(ctx context.Context, j *Job[P]) (R, error)) {
	if err := HandleSafely(w, q, fn); err != nil {
		panic(err)
	}
}

// HandleSafely is Handle returning an error where Handle panics: an error
// matching weir.ErrHandlerExists when q already has a handler on w, or
// weir.ErrRunning when w is running. Nothing is registered then. It is for
// programs that register handlers from configuration rather than code.
func HandleSafely[P, R any](w *Worker, q client.Queue[P, R], fn func(ctx context.Context, j *Job[P]) (R, error)) error {
	t := &typedHandler[P, R]{q: q, fn: fn}
	return w.register(q.Name(), func(ctx context.Context, info *JobInfo) error {
		j := &Job[P]{JobInfo: *info}
		if err := t.run(ctx, j); err != nil {
			return err
		}
		info.result = j.result
		return nil
	}, t.attempt)
}

// typedHandler is a handler registered by Handle.
type typedHandler[P, R any] struct {
	q  client.Queue[P, R]
	fn func(ctx context.Context, j *Job[P]) (R, error)
}

// run decodes j's payload, runs the handler and stores its encoded result
// in j.
func (t *typedHandler[P, R]) run(ctx context.Context, j *Job[P]) error {
	p, err := t.q.DecodePayload(j.RawPayload)
	if err != nil {
		return NonRetryable(fmt.Errorf("payload: %w", err))
	}
	j.Payload = p
	r, err := t.fn(ctx, j)
	if err != nil {
		return err
	}
	b, err := t.q.EncodeResult(r)
	if err != nil {
		return NonRetryable(fmt.Errorf("result: %w", err))
	}
	j.result = b
	return nil
}

// typedAttempt is one attempt of a typed handler in a run without
// middleware: the Job its handler gets is the attempt's JobInfo, in one
// allocation with the rest of the attempt (execute.go). No middleware
// holds the JobInfo, so that only the handler sees it, as its own copy.
type typedAttempt[P, R any] struct {
	job Job[P]
	attemptLinks
	t *typedHandler[P, R]
}

func (t *typedHandler[P, R]) attempt() jobRun { return &typedAttempt[P, R]{t: t} }

func (a *typedAttempt[P, R]) parts() (*JobInfo, *attemptLinks) {
	return &a.job.JobInfo, &a.attemptLinks
}
func (a *typedAttempt[P, R]) run(ctx context.Context) error { return a.t.run(ctx, &a.job) }

// DepResult returns the result of the dependency named task of job j,
// decoded as an R (the result type of that task's queue). A dependency that
// failed or was cancelled (which an Always task, or an undo job, may see)
// returns a *weir.JobError with its state and reason: errors.Is matches
// weir.ErrFailed or weir.ErrCancelled.
//
//	thumb, err := worker.DepResult[Thumbnail](j, "resize")
func DepResult[R, P any](j *Job[P], task string) (R, error) {
	var zero R
	for _, d := range j.Deps {
		if d.Task != task {
			continue
		}
		if d.State != weir.Completed {
			return zero, &weir.JobError{JobID: weir.TaskJobID(j.Workflow, task), Workflow: j.Workflow, Task: task, State: d.State, Message: d.Error}
		}
		return client.Decode[R](d.Result)
	}
	return zero, fmt.Errorf("%w: %q (job %s)", weir.ErrNoDependency, task, j.ID)
}

// NonRetryable marks err so that the attempt that returns it ends the job
// failed at once, whatever attempts remain. It returns nil for nil.
func NonRetryable(err error) error {
	if err == nil {
		return nil
	}
	return &nonRetryable{err}
}

type nonRetryable struct{ err error }

func (e *nonRetryable) Error() string { return e.err.Error() }
func (e *nonRetryable) Unwrap() error { return e.err }

// Group returns what j, a callback of a client.Chain or client.Batch
// (Then, Catch or Finally), knows of its group's steps: how many
// completed, failed and were cancelled, and the first failure. For any
// other task it summarizes all its dependencies.
func (j *JobInfo) Group() weir.GroupSummary { return weir.SummarizeGroup(j.Task, j.Deps) }
