package redisstore

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/testclock"
)

// TestChainStepEndWritesTheSame holds the chain step's own end
// (fast_chain.lua's FF.chain_end: the queue state's, the seq hash's and
// the events' writes and a wake-up token, written without finalize) to the
// general code: the same replies and keyspace with the fast paths on and
// off (writesTheSame), for chains alone in their queues stepped by claims
// with and without a worker ID, after a claim that found the queue
// empty, with the events' default cap, a cap of
// length and age, and events off, of 12 tasks (numbers that carry a
// digit), with another job ready in the queue; and, on the test clock, the branch
// through finalize: a sweep of expired records due in the step, and a
// clock stepped back (the seq hash's offset changed before the step).
func TestChainStepEndWritesTheSame(t *testing.T) { writesTheSame(t, chainEndCases) }

func chainEndCases(t *testing.T, s *Store, clk *testclock.Clock) []string {
	t.Helper()
	var log []string
	note := func(text string) { log = append(log, maskTimes(hexNonce.ReplaceAllString(text, "<nonce>"))) }
	// run submits a chain of n tasks alone in queue q, claims its first
	// task and steps it n-2 times with finish + claim, leaving its last
	// task running (its state bytes, lease and claim record in the
	// keyspace), with shrink each lease shorter than the last; before,
	// after the first step, runs between
	run := func(q, worker string, n int, shrink bool, between func()) {
		t.Helper()
		p := engine.Plan{ID: "w" + q}
		for i := range n {
			ts := engine.TaskSpec{Name: "t" + strconv.Itoa(i), Queue: q, Payload: []byte(q + strconv.Itoa(i))}
			if i > 0 {
				ts.After = []string{"t" + strconv.Itoa(i-1)}
			}
			p.Tasks = append(p.Tasks, ts)
		}
		if _, err := s.Submit(bg, engine.SubmitParams{Plan: p}); err != nil {
			t.Fatal(err)
		}
		cp := engine.ClaimParams{Queues: []string{q}, Max: 1, Lease: time.Minute, WorkerID: worker}
		cs, err := s.Claim(bg, cp)
		if err != nil || len(cs) != 1 {
			t.Fatalf("claim %s: %v %v", q, cs, err)
		}
		note("claim " + claimedText(cs) + claimedMore(cs))
		for i := 0; i < n-2; i++ {
			if i == 1 && between != nil {
				between()
			}
			c := cs[0]
			if shrink {
				// each lease ends before the last: the due hint lowered
				cp.Lease -= 5 * time.Second
			}
			r, err := s.Finish(bg, engine.FinishParams{
				Outcomes: []engine.Outcome{{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted, Result: []byte(c.Job.ID)}},
				Claim:    &cp,
			})
			if err != nil || len(r.Claimed) != 1 {
				t.Fatalf("finish %s: %+v %v", c.Job.ID, r, err)
			}
			text := ""
			for _, st := range r.Settled {
				text += fmt.Sprintf("%s %v %s %v %s; ", st.JobID, st.Err, st.State, st.Pushed, st.WorkflowState)
			}
			note("finish " + text + claimedText(r.Claimed) + claimedMore(r.Claimed))
			cs = r.Claimed
		}
	}
	events := func(c EventsConfig) func() {
		return func() {
			if err := s.SetEvents(bg, c); err != nil {
				t.Fatal(err)
			}
		}
	}
	// a claim that finds the queue empty (its wake-up list cleared, the
	// state's k 0) before the second step
	run("qa", "", 4, true, func() {
		if cs, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"qa"}, Max: 1, Lease: time.Minute}); err != nil || len(cs) != 0 {
			t.Fatalf("claim of the empty queue: %v %v", cs, err)
		}
	})
	run("qb", "wk-1", 4, true, nil)
	run("qc", "wk-1", 4, false, events(EventsConfig{MaxLen: 50, MaxAge: time.Hour}))
	run("qd", "", 4, false, events(EventsConfig{Off: true}))
	run("qe", "wk-2", 4, false, events(EventsConfig{}))
	// a chain of 12: indices, counts and counters that carry (9 to 10,
	// 10 to 9: FF.dinc and FF.ddec on their tonumber branch)
	run("qh", "wk-1", 12, false, nil)
	// another job ready in the queue before the second step: the step
	// leaves on the queue's list (CALL.le) for the general code
	run("qi", "", 4, false, func() {
		if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "pi", Queue: "qi"}}); err != nil {
			t.Fatal(err)
		}
	})
	if clk == nil {
		return log
	}
	// a plain job ended, then its removal due at the chain's second step
	if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "gone", Queue: "qp"}}); err != nil {
		t.Fatal(err)
	}
	c := claimOne(t, s, "qp")
	if _, err := s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted}}}); err != nil {
		t.Fatal(err)
	}
	run("qf", "wk-1", 4, false, func() { clk.Advance(engine.DefaultRetention + 2*time.Minute) })
	// the test clock stepped back before the chain's second step
	run("qg", "", 4, false, func() { clk.Advance(-time.Hour) })
	return log
}
