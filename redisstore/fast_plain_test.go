package redisstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/testclock"
)

// TestFastPlainKeepsWhatItReuses holds what the plain job's fast paths
// keep from one job for the next to the general code's replies and
// writes: the claim's tokens, whose counter is formatted once every ten
// leases (a claim of 12 and one of 14 cross 10 and 20), the finish's
// spec checks and queue, kept while the next job has the same spec, and
// its completed list and lease-set removals, kept while the next job has
// the same queue (a finish of jobs of two queues and three specs in turn,
// one with a concurrency key), and the enqueue's priority read without
// tonumber (a job of priority 1 among those of 0).
func TestFastPlainKeepsWhatItReuses(t *testing.T) { writesTheSame(t, fastPlainCases) }

// fastPlainCases runs TestFastPlainKeepsWhatItReuses's sequence on s and
// returns every reply as text, nonces and times masked.
func fastPlainCases(t *testing.T, s *Store, _ *testclock.Clock) []string {
	t.Helper()
	var log []string
	var ps []engine.EnqueueParams
	for k := range 24 {
		j := engine.JobSpec{ID: fmt.Sprintf("a-%d", k), Queue: "a", MaxAttempts: 1 + k%2}
		if k == 5 {
			j.Priority = 1
		}
		ps = append(ps, engine.EnqueueParams{Job: j})
	}
	for k := range 2 {
		ps = append(ps, engine.EnqueueParams{Job: engine.JobSpec{ID: fmt.Sprintf("b-%d", k), Queue: "b"}})
	}
	for _, p := range ps {
		// a's and b's batches apart: the fast enqueue takes one queue's
		if p.Job.ID == "a-0" || p.Job.ID == "b-0" {
			var batch []engine.EnqueueParams
			for _, q := range ps {
				if q.Job.Queue == p.Job.Queue {
					batch = append(batch, q)
				}
			}
			r, err := s.EnqueueBatch(bg, batch)
			if err != nil {
				t.Fatal(err)
			}
			log = append(log, fmt.Sprint(r))
		}
	}
	if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "k-0", Queue: "b", Key: "x"}}); err != nil {
		t.Fatal(err)
	}
	var all []engine.Claimed
	for _, max := range []int{12, 15} {
		cs, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"a", "b"}, Max: max, Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		log = append(log, maskTimes(hexNonce.ReplaceAllString(claimedText(cs), "<nonce>")))
		all = append(all, cs...)
	}
	if len(all) != 27 {
		t.Fatalf("claimed %d jobs, want 27", len(all))
	}
	// in turn from the front and the back: a's and b's jobs, the keyed
	// one among them
	var outs []engine.Outcome
	for i := range all {
		c := all[i/2]
		if i%2 == 1 {
			c = all[len(all)-1-i/2]
		}
		outs = append(outs, engine.Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted})
	}
	r, err := s.Finish(bg, engine.FinishParams{Outcomes: outs})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range r.Settled {
		log = append(log, fmt.Sprintf("%s %v %s", st.JobID, st.Err, st.State))
	}
	if len(r.Settled) != len(all) {
		t.Fatalf("settled %d outcomes, want %d", len(r.Settled), len(all))
	}
	return log
}
