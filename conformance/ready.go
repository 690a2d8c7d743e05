package conformance

import (
	"time"

	"github.com/weirflow/weir/engine"
)

// runReadyAt checks the ready-at a claim hands back (Claimed.ReadyAt,
// from which a worker measures queue wait): the time of the push that
// made the job ready (an enqueue, a promotion), or, for a job pushed
// delayed (a run-at, a retry's backoff), its due time, however late a
// sweep or a claim found it due; and, for a promoted task only, the end
// of the dependency whose end promoted it (Claimed.PromotedAfter).
func runReadyAt(t suiteT, mk maker) {
	d := newPair(t, mk, engine.DefaultConfig())
	q := "q"
	claimOne := func(id string, ready time.Time, promotedAfter ...time.Time) engine.Claimed {
		t.Helper()
		got := d.claim(engine.ClaimParams{Queues: []string{q}, Max: 1, Lease: time.Minute})
		if len(got) != 1 || got[0].Job.ID != id {
			d.fatalf("claim: got %d jobs (%v), want %s", len(got), got, id)
		}
		if !got[0].ReadyAt.Equal(ready) {
			d.fatalf("claim of %s: ready at %v, want %v", id, got[0].ReadyAt, ready)
		}
		var pa time.Time
		if len(promotedAfter) > 0 {
			pa = promotedAfter[0]
		}
		if !got[0].PromotedAfter.Equal(pa) {
			d.fatalf("claim of %s: promoted after %v, want %v", id, got[0].PromotedAfter, pa)
		}
		return got[0]
	}
	t0 := d.clock()
	d.submit("submit", nil, engine.Plan{ID: "rw", Tasks: []engine.TaskSpec{
		{Name: "a", Queue: q, MaxAttempts: 2, Backoff: 3 * time.Second},
		{Name: "b", Queue: q, After: []string{"a"}},
	}})
	d.clk.Advance(2 * time.Second)
	// with partitions, in the workflow's: the claims below expect FIFO order
	lateID := d.colocated("late", "rw")
	d.enqueue("enqueue delayed", nil, engine.JobSpec{ID: lateID, Queue: q, Delay: time.Second})
	d.clk.Advance(10 * time.Second)

	// a root task: ready at its submit
	a := claimOne("rw/a", t0)
	fail := d.clock()
	d.finishOne(engine.Outcome{JobID: a.Job.ID, Token: a.Lease.Token, Kind: engine.OutcomeFailed, Error: "x"})
	// a delayed job: ready at its due time, not when the claim swept it
	late := claimOne(lateID, t0.Add(3*time.Second))
	d.finishOne(engine.Outcome{JobID: late.Job.ID, Token: late.Lease.Token, Kind: engine.OutcomeCompleted})
	d.clk.Advance(time.Minute)
	// a retry: ready when its backoff ended
	a = claimOne("rw/a", fail.Add(3*time.Second))
	d.clk.Advance(time.Second)
	done := d.clock()
	d.finishOne(engine.Outcome{JobID: a.Job.ID, Token: a.Lease.Token, Kind: engine.OutcomeCompleted})
	d.clk.Advance(5 * time.Second)
	// a promoted dependent: ready when its dependency ended, in the same
	// step (a promotion latency of 0)
	claimOne("rw/b", done, done)
}
