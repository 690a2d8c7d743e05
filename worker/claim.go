package worker

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/weirflow/weir/engine"
)

// claimParams returns a claim of up to n jobs, with the queues in this
// claim's order.
func (r *run) claimParams(n int, wait time.Duration) engine.ClaimParams {
	return engine.ClaimParams{Queues: r.order(), Max: n, Lease: r.cfg.Lease, Wait: wait, WorkerID: r.w.id}
}

// order returns the queues in the order one claim tries them; the caller
// must not change it.
func (r *run) order() []string {
	if r.fixed != nil {
		return r.fixed
	}
	out := make([]string, 0, len(r.queues))
	left := slices.Clone(r.queues)
	total := 0
	for _, q := range left {
		total += q.weight
	}
	for len(left) > 0 {
		x := rand.IntN(total)
		i := 0
		for ; x >= left[i].weight; i++ {
			x -= left[i].weight
		}
		out = append(out, left[i].name)
		total -= left[i].weight
		left = slices.Delete(left, i, i+1)
	}
	return out
}

// fetch claims jobs while slots are free, blocking in the store while there
// is nothing to claim, and starts a runner per claimed job.
func (r *run) fetch() {
	defer close(r.fetchDone)
	retry := newBackoff()
	for {
		select {
		case r.slots <- struct{}{}:
		case <-r.claimCtx.Done():
			return
		}
		n := 1
	more:
		for n < r.cfg.Limits.MaxBatch {
			select {
			case r.slots <- struct{}{}:
				n++
			default:
				break more
			}
		}
		claimed, err := r.store.Claim(r.claimCtx, r.claimParams(n, claimWait))
		if err != nil {
			claimed = nil
		}
		for range n - len(claimed) {
			<-r.slots
		}
		for i := range claimed {
			r.runners.Add(1)
			r.start(work{c: &claimed[i]})
		}
		if err != nil {
			if r.claimCtx.Err() != nil {
				return
			}
			r.log.Warn("weir: claim failed", "error", err)
			if !retry.sleep(r.claimCtx) {
				return
			}
			continue
		}
		retry.reset()
	}
}
