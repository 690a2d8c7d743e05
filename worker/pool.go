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
//
// Its frame holds stackReserve bytes that nothing uses: the garbage
// collector halves a goroutine's stack when less than a quarter of it is
// in use, which an idle runner's (a few hundred bytes deep) always was,
// so that the next finish call (go-redis, some 10 KB deep) grew it again,
// copying it, after every collection. With the reserve an idle runner
// uses a quarter of the 16 KB that a finish call needs, and keeps them.
func (r *run) runner(w work) {
	defer r.pool.Done()
	var reserve [stackReserve]byte
	holdStack(&reserve)
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

// stackReserve is the stack an idle runner holds (runner).
const stackReserve = 4 << 10

// holdStack keeps the reserve of runner's frame.
//
//go:noinline
func holdStack(*[stackReserve]byte) {}
