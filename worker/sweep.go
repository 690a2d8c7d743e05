package worker

import (
	"math/rand/v2"
	"strings"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// sweep expires overdue leases and readies due delayed jobs, in every
// queue, once per SweepInterval (jittered), in bounded calls.
func (r *run) sweep() {
	defer r.loops.Done()
	const callsPerSweep = 10
	// Each call expires and readies at most 100 jobs, and never more than
	// the store takes in one call.
	perCall := min(100, r.cfg.Limits.MaxBatch)
	for {
		d := r.cfg.SweepInterval
		d = d*4/5 + rand.N(d*2/5+1)
		t := time.NewTimer(d)
		select {
		case <-r.loopCtx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		for range callsPerSweep {
			res, err := r.store.ExpireLeases(r.loopCtx, engine.ExpireParams{Max: perCall})
			if err != nil {
				if r.loopCtx.Err() == nil {
					r.log.Warn("weir: lease sweep failed", "error", err)
				}
				break
			}
			for _, s := range res.Expired {
				if strings.HasSuffix(s.JobID, engine.DeadlineSuffix) {
					// a workflow's deadline cancelled it: no job of its own,
					// only the undos it pushed and the workflow's end
					r.consequences(s, "")
					continue
				}
				wf, task, _ := cutTaskJobID(s.JobID)
				r.observe(Event{Kind: stateEvent(s), JobID: s.JobID, Workflow: wf, Task: task, Err: weir.ReasonTextLeaseExpired, RunAt: s.RunAt})
				r.consequences(s, "")
			}
			if len(res.Expired) < perCall && len(res.Due) < perCall {
				break
			}
		}
	}
}
