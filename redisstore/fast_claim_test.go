package redisstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/testclock"
)

// TestFastClaimReadsWhatAnAttemptLeft holds the claim's fast path
// (fast_claim.lua), which reads a job's end, error and expiries only when
// its record has an attempt, to the general code's replies and writes
// for jobs that earlier attempts left fields to: a failed job retried
// (RetryJob deletes its attempt, error and end, and keeps its
// checkpoint), a released one (its attempt and checkpoint kept) and one
// whose lease expired (its error and expiry count), each claimed again.
func TestFastClaimReadsWhatAnAttemptLeft(t *testing.T) { writesTheSame(t, fastClaimCases) }

// fastClaimCases runs TestFastClaimReadsWhatAnAttemptLeft's sequence on s
// (clk: its test clock, nil for the server's) and returns every reply as
// text, nonces and times masked.
func fastClaimCases(t *testing.T, s *Store, clk *testclock.Clock) []string {
	t.Helper()
	var log []string
	claim := func(max int, lease time.Duration) []engine.Claimed {
		t.Helper()
		cs, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"c"}, Max: max, Lease: lease})
		if err != nil {
			t.Fatal(err)
		}
		text := ""
		for _, c := range cs {
			text += fmt.Sprintf("%s ck %q tp %q x%d; ", claimedText([]engine.Claimed{c}), c.Checkpoint, c.TraceParent, c.Job.Expiries)
		}
		log = append(log, maskTimes(hexNonce.ReplaceAllString(text, "<nonce>")))
		return cs
	}
	finish := func(outs ...engine.Outcome) {
		t.Helper()
		r, err := s.Finish(bg, engine.FinishParams{Outcomes: outs})
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range r.Settled {
			log = append(log, fmt.Sprintf("%s %v %s", st.JobID, st.Err, st.State))
		}
	}
	var ps []engine.EnqueueParams
	for k, max := range []int{1, 3} {
		ps = append(ps, engine.EnqueueParams{Job: engine.JobSpec{ID: fmt.Sprintf("c-%d", k), Queue: "c", MaxAttempts: max,
			Payload: []byte("p")}})
	}
	if _, err := s.EnqueueBatch(bg, ps); err != nil {
		t.Fatal(err)
	}
	cs := claim(2, time.Minute)
	if len(cs) != 2 {
		t.Fatalf("claimed %d jobs, want 2", len(cs))
	}
	for _, c := range cs {
		if err := s.Progress(bg, engine.ProgressParams{JobID: c.Job.ID, Token: c.Lease.Token, Checkpoint: []byte("ck " + c.Job.ID)}); err != nil {
			t.Fatal(err)
		}
	}
	// c-0 fails for good and is retried: queued again without an attempt,
	// with its checkpoint; c-1 is released: queued with both
	finish(engine.Outcome{JobID: cs[0].Job.ID, Token: cs[0].Lease.Token, Kind: engine.OutcomeFailed, Error: "boom"},
		engine.Outcome{JobID: cs[1].Job.ID, Token: cs[1].Lease.Token, Kind: engine.OutcomeReleased})
	if _, err := s.RetryJob(bg, engine.RetryJobParams{ID: "c-0"}); err != nil {
		t.Fatal(err)
	}
	cs = claim(2, time.Minute)
	if len(cs) != 2 {
		t.Fatalf("claimed %d jobs again, want 2", len(cs))
	}
	for _, c := range cs {
		if want := "ck " + c.Job.ID; string(c.Checkpoint) != want {
			t.Errorf("%s claimed with checkpoint %q, want %q", c.Job.ID, c.Checkpoint, want)
		}
	}
	if clk != nil {
		// c-1's lease expires (the periodic sweep's call): claimed again,
		// in a call of its own, with the expiry's error and count
		finish(engine.Outcome{JobID: cs[0].Job.ID, Token: cs[0].Lease.Token, Kind: engine.OutcomeCompleted})
		clk.Advance(2 * time.Minute)
		if _, err := s.ExpireLeases(bg, engine.ExpireParams{}); err != nil {
			t.Fatal(err)
		}
		cs = claim(2, time.Minute)
		if len(cs) != 1 || cs[0].Job.Expiries != 1 || cs[0].Job.Error == "" {
			t.Fatalf("claimed after a lease expiry: %s, want the job whose lease expired, with 1 expiry and its error", claimedText(cs))
		}
	}
	var outs []engine.Outcome
	for _, c := range cs {
		outs = append(outs, engine.Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted})
	}
	finish(outs...)
	return log
}
