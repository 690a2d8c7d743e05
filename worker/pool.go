package worker

import "github.com/weirflow/weir/engine"

// work is what a runner goroutine is handed: a claimed job to run (c), or,
// with c nil, the queued outcomes to store (flush), after which it runs
// the job that call claims for it, if any.
type work struct {
	c *engine.Claimed
}

// start hands w to an idle runner goroutine of the run, or to a new one
// when none is idle. Runner goroutines are kept until the run stops, so
// that a job runs on a goroutine whose stack has already grown to what a
// job needs (a new goroutine grows its stack again, copying it, for every
// job) and is not created and ended for every job.
func (r *run) start(w work) {
	select {
	case r.handoff <- w:
	default:
		r.pool.Add(1)
		go r.runner(w)
	}
}

// runner does w, then waits idle for more work until the run ends (after
// every job's outcome is stored: stopNow).
func (r *run) runner(w work) {
	defer r.pool.Done()
	for {
		c := w.c
		if c == nil {
			r.fmu.Lock()
			c, _ = r.flush()
		}
		if c != nil {
			r.runJobs(c)
		}
		select {
		case w = <-r.handoff:
		case <-r.poolDone:
			return
		}
	}
}
