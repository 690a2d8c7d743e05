package worker

import (
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// heartbeat extends the leases of every running job, one call per interval
// (split by the batch limit), and cancels the handlers of the jobs that
// were cancelled or whose lease was lost; then it writes the worker's
// registry record (registry.go), one more call per interval.
func (r *run) heartbeat() {
	defer r.loops.Done()
	t := time.NewTicker(r.cfg.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-r.loopCtx.Done():
			return
		case <-t.C:
		}
		r.beat()
		r.beatWorker(r.loopCtx)
	}
}

// watchStops answers the store's stop notices (engine.StopWatcher): a
// cancel of a job this worker runs makes it heartbeat that lease at once,
// so the handler's context ends now rather than at the next heartbeat; a
// (re)connection, after which notices may have been missed, makes it
// heartbeat every lease.
func (r *run) watchStops(sw engine.StopWatcher) {
	defer r.loops.Done()
	err := sw.WatchStops(r.loopCtx, func(ids []string) {
		if ids == nil {
			r.beat()
			return
		}
		r.mu.Lock()
		var refs []engine.LeaseRef
		for _, id := range ids {
			if a := r.active[id]; a != nil {
				refs = append(refs, engine.LeaseRef{JobID: id, Token: a.token})
			}
		}
		r.mu.Unlock()
		r.beatLeases(refs)
	})
	if err != nil && r.loopCtx.Err() == nil {
		r.log.Warn("weir: watching for cancels stopped; heartbeats still deliver them", "error", err)
	}
}

// beat heartbeats every running job's lease.
func (r *run) beat() {
	r.mu.Lock()
	refs := make([]engine.LeaseRef, 0, len(r.active))
	for id, a := range r.active {
		refs = append(refs, engine.LeaseRef{JobID: id, Token: a.token})
	}
	r.mu.Unlock()
	r.beatLeases(refs)
}

// beatLeases extends refs (in calls of at most the batch limit) and
// cancels the handlers of the jobs that were cancelled or whose lease was
// lost.
func (r *run) beatLeases(refs []engine.LeaseRef) {
	for len(refs) > 0 {
		n := min(len(refs), r.cfg.Limits.MaxBatch)
		chunk := refs[:n]
		refs = refs[n:]
		st, err := r.store.Heartbeat(r.loopCtx, engine.HeartbeatParams{Leases: chunk, Extend: r.cfg.Lease})
		if err != nil {
			if r.loopCtx.Err() == nil {
				r.log.Warn("weir: heartbeat failed", "leases", len(chunk), "error", err)
			}
			continue
		}
		r.mu.Lock()
		for i, s := range st {
			if i >= len(chunk) {
				break
			}
			a := r.active[chunk[i].JobID]
			if a == nil || a.token != chunk[i].Token {
				continue // finished meanwhile
			}
			switch {
			case s.Lost:
				a.cancel(weir.ErrLeaseLost)
			case s.Cancel:
				a.cancel(weir.ErrJobCancelled)
			}
		}
		r.mu.Unlock()
	}
}
