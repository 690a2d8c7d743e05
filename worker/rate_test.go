package worker_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/worker"
)

// claimCounter is a store that counts the claims a worker asks it for:
// Claim calls and finishes that carry a claim.
type claimCounter struct {
	engine.Store
	n atomic.Int64
}

func (s *claimCounter) Claim(ctx context.Context, p engine.ClaimParams) ([]engine.Claimed, error) {
	s.n.Add(1)
	return s.Store.Claim(ctx, p)
}

func (s *claimCounter) Finish(ctx context.Context, p engine.FinishParams) (engine.FinishResult, error) {
	if p.Claim != nil {
		s.n.Add(1)
	}
	return s.Store.Finish(ctx, p)
}

// TestQueueRateLimit: a worker runs every job of a rate-limited queue, and
// while the limit holds jobs back it does not poll: its blocking claims
// sleep in the store until the next start is allowed, so the store sees
// about one claim per job plus one per window (a count, not a time). A
// worker that asked again as soon as a claim came back empty would make
// hundreds in the windows it waits through.
func TestQueueRateLimit(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		c := client.New(b.open(t))
		q := client.NewQueue[string, string]("rated")
		const limit, jobs = 2, 8
		if err := c.RateLimitQueue(ctx, q.Name(), limit, 150*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		var all []*client.Job[string]
		for i := range jobs {
			all = append(all, mustEnqueue(t, c, q, fmt.Sprint(i)))
		}
		s := &claimCounter{Store: b.open(t)}
		w := worker.New(s, fastConfig())
		worker.Handle(w, q, func(ctx context.Context, j *worker.Job[string]) (string, error) { return j.Payload, nil })
		start(t, w)
		for _, j := range all {
			if _, err := j.Wait(ctx); err != nil {
				t.Fatal(err)
			}
		}
		// each job's finish carries a claim (jobs), each window opens with
		// one blocking claim (jobs/limit), and a few come back empty
		if n := s.n.Load(); n > 3*jobs || n < jobs/limit {
			t.Errorf("the worker made %d claims for %d jobs at %d a window; want between %d and %d", n, jobs, limit, jobs/limit, 3*jobs)
		}
	})
}
