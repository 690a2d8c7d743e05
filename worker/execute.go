package worker

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// runJobs runs claimed jobs on the slot c holds: c, then, while storing
// an outcome hands it a job, that job. A job counts in r.runners from its
// claim until its outcome is stored. A job whose lease was lost has
// nothing to finish: its slot is freed at once. c points into the slice
// its claim returned, which nothing changes.
func (r *run) runJobs(c *engine.Claimed) {
	for {
		o, start, ok := r.execute(c)
		if !ok {
			<-r.slots
			r.runners.Done()
			return
		}
		next, ok := r.complete(finished{c: c, o: o, start: start})
		if !ok {
			return
		}
		c = next
	}
}

// attempt is what one run of a job keeps on the heap, allocated at once:
// the handler's JobInfo, its progress link and its entry in r.active.
type attempt struct {
	info JobInfo
	attemptLinks
}

// attemptLinks are an attempt's progress link and entry in r.active.
type attemptLinks struct {
	link progressLink
	act  active
}

// handlerEntry is the handler of a queue in a run: h (its middleware
// applied), and, for a handler of Handle in a run without middleware,
// typed, which makes an attempt that runs it with the JobInfo of the
// attempt as its Job's (no copy, one allocation).
type handlerEntry struct {
	h     Handler
	typed func() jobRun
}

// jobRun is an attempt of a typed handler (job.go).
type jobRun interface {
	parts() (*JobInfo, *attemptLinks)
	run(ctx context.Context) error
}

// execute runs one claimed job and returns its outcome; ok is false when
// the lease was lost, so there is nothing to finish.
func (r *run) execute(c *engine.Claimed) (o engine.Outcome, start time.Time, ok bool) {
	j := &c.Job
	o = engine.Outcome{JobID: j.ID, Token: c.Lease.Token}
	e := r.handlers[j.Queue]
	ctx, cancel := context.WithCancelCause(r.jobCtx)
	defer cancel(nil)
	var (
		info  *JobInfo
		links *attemptLinks
		jr    jobRun
	)
	if e.typed != nil {
		jr = e.typed()
		info, links = jr.parts()
	} else {
		at := &attempt{}
		info, links = &at.info, &at.attemptLinks
	}
	links.act, links.link = active{token: c.Lease.Token, cancel: cancel}, progressLink{store: r.store, token: c.Lease.Token}
	a := &links.act
	r.mu.Lock()
	if r.stopping || e.h == nil {
		r.mu.Unlock()
		o.Kind = engine.OutcomeReleased
		return o, time.Now(), true
	}
	r.active[j.ID] = a
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		if r.active[j.ID] == a {
			delete(r.active, j.ID)
		}
		r.mu.Unlock()
	}()

	hctx := ctx
	if j.Timeout > 0 {
		var cancelT context.CancelFunc
		hctx, cancelT = context.WithTimeoutCause(ctx, j.Timeout, weir.ErrTimeout)
		defer cancelT()
	}
	*info = JobInfo{
		ID: j.ID, Queue: j.Queue, Workflow: j.Workflow, Task: j.Task, Undo: j.Undo,
		Attempt: j.Attempt, MaxAttempts: j.MaxAttempts, Expiries: j.Expiries, Deps: c.Deps, RawPayload: j.Payload,
		TraceParent: c.TraceParent, Worker: r.w.id,
	}
	info.link, info.checkpoint = &links.link, c.Checkpoint
	if j.Workflow != "" && !j.Undo {
		info.dyn = &additions{}
	}
	r.observe(r.startedEvent(c))
	start = time.Now()
	err := call(hctx, e.h, jr, info)
	panicked := err != nil && isPanic(err)
	cause := context.Cause(hctx)
	switch {
	case errors.Is(context.Cause(ctx), weir.ErrLeaseLost):
		r.observe(Event{Kind: EventLeaseLost, JobID: j.ID, Queue: j.Queue, Workflow: j.Workflow, Task: j.Task, Attempt: j.Attempt, Duration: time.Since(start), TraceParent: c.TraceParent})
		return o, start, false
	case err == nil:
		o.Kind = engine.OutcomeCompleted
		o.Result = info.result
		if len(o.Result) > r.cfg.Limits.MaxResult {
			o = failNow(o, fmt.Sprintf("result is %d bytes, over the limit of %d", len(o.Result), r.cfg.Limits.MaxResult))
		} else {
			o = info.addTo(o, r.cfg.Limits)
		}
	case panicked:
		o.Kind = engine.OutcomeFailed
		o.Error = err.Error()
		o.RetryAfter = r.retryAfter(j)
	case errors.Is(cause, weir.ErrJobCancelled):
		o.Kind = engine.OutcomeCancelled
		o.Error = weir.ReasonTextJobCancelled
		if !errors.Is(err, context.Canceled) {
			o.Error = err.Error()
		}
	case errors.Is(cause, weir.ErrShutdown):
		o.Kind = engine.OutcomeReleased
	default:
		o.Kind = engine.OutcomeFailed
		o.Error = err.Error()
		if errors.Is(cause, weir.ErrTimeout) && errors.Is(err, context.DeadlineExceeded) {
			o.Error = fmt.Sprintf("timeout after %v", j.Timeout)
		}
		var nr *nonRetryable
		if errors.As(err, &nr) {
			o.NonRetryable = true
		} else {
			o.RetryAfter = r.retryAfter(j)
		}
	}
	return o, start, true
}

func failNow(o engine.Outcome, reason string) engine.Outcome {
	return engine.Outcome{JobID: o.JobID, Token: o.Token, Kind: engine.OutcomeFailed, Error: reason, NonRetryable: true}
}

// call runs jr, or h with info when jr is nil, turning a panic into a
// *panicError that carries the stack.
func call(ctx context.Context, h Handler, jr jobRun, info *JobInfo) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &panicError{fmt.Sprintf("panic: %v\n\n%s", v, debug.Stack())}
		}
	}()
	if jr != nil {
		return jr.run(ctx)
	}
	return h(ctx, info)
}

type panicError struct{ msg string }

// isPanic reports whether err is, or wraps, a *panicError (its variable
// escapes: a call only for errors keeps it off a job that succeeds).
func isPanic(err error) bool {
	var pe *panicError
	return errors.As(err, &pe)
}

func (e *panicError) Error() string { return e.msg }

// retryAfter is the delay before retrying j: its backoff doubled per
// attempt made, capped at MaxBackoff, plus jitter of up to a quarter of it
// above (never below: the documented delay is the least a retry waits, and
// the cap still holds); zero when no attempt remains.
func (r *run) retryAfter(j *weir.Job) time.Duration {
	// the attempts that count: lease expiries within the job's budget
	// cost none (engine.JobSpec.MaxExpiries)
	counted := j.Attempt - j.Expiries
	if counted >= j.MaxAttempts {
		return 0
	}
	limit := r.cfg.Limits.MaxBackoff
	d := j.Backoff
	if d <= 0 {
		d = weir.DefaultBackoff
	}
	for i := 1; i < counted && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	d += rand.N(d/4 + 1)
	// whole milliseconds, rounded up, so that truncation never undercuts d
	d = (d + time.Millisecond - 1).Truncate(time.Millisecond)
	return min(max(d, time.Millisecond), limit)
}
