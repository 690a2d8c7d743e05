package conformance

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// runAttempts holds a store's attempt history and worker IDs (spec/states.md,
// Attempt history; spec/events.md) to what they must be, and to the model:
// failed, failed, completed; a lease expiry; a history longer than
// weir.MaxAttemptHistory keeping its last attempts; the worker on each
// attempt, on the job and on the events of its attempts.
func runAttempts(t suiteT, mk maker) {
	clk := newClock()
	cfg := engine.DefaultConfig()
	s := mk.store(t, cfg, clk.Now)
	t.Cleanup(func() { closeStore(s) })
	m := mk.model(cfg)
	ctx := context.Background()
	t0 := clk.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	set := func(ms int) { clk.Set(at(ms)) }
	enqueue := func(id string, attempts int) {
		t.Helper()
		p := engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: "att", MaxAttempts: attempts, Backoff: time.Millisecond}}
		if _, err := s.Enqueue(ctx, p); err != nil {
			t.Fatalf("enqueue %s: %v", id, err)
		}
		if _, err := m.Enqueue(clk.Now(), p); err != nil {
			t.Fatalf("model: enqueue %s: %v", id, err)
		}
	}
	claim := func(worker string, lease time.Duration) engine.Claimed {
		t.Helper()
		p := engine.ClaimParams{Queues: []string{"att"}, Max: 1, Lease: lease, WorkerID: worker}
		got, err := s.Claim(ctx, p)
		if err != nil || len(got) != 1 {
			t.Fatalf("claim by %s: %d jobs, %v", worker, len(got), err)
		}
		if _, err := m.Claim(clk.Now(), p); err != nil {
			t.Fatalf("model: claim: %v", err)
		}
		return got[0]
	}
	finish := func(c engine.Claimed, kind engine.OutcomeKind, e string) {
		t.Helper()
		p := engine.FinishParams{Outcomes: []engine.Outcome{{JobID: c.Job.ID, Token: c.Lease.Token, Kind: kind, Error: e, RetryAfter: time.Millisecond}}}
		r, err := s.Finish(ctx, p)
		if err != nil || r.Settled[0].Err != nil {
			t.Fatalf("finish %s: %v %v", c.Job.ID, err, r.Settled)
		}
		// the model's token is its own: the same lease, by its claim
		mj, _ := m.GetJob(clk.Now(), c.Job.ID)
		p.Outcomes[0].Token = mj.Lease.Token
		if _, err := m.Finish(clk.Now(), p); err != nil {
			t.Fatalf("model: finish: %v", err)
		}
	}
	check := func(id string, want []weir.AttemptRecord) {
		t.Helper()
		got, err := s.GetJob(ctx, id)
		if err != nil {
			t.Fatalf("get %s: %v", id, err)
		}
		if !reflect.DeepEqual(got.Attempts, want) {
			t.Fatalf("job %s: attempts\n got %+v\nwant %+v", id, got.Attempts, want)
		}
		if w := want[len(want)-1].Worker; got.Worker != w {
			t.Fatalf("job %s: worker %q, want %q", id, got.Worker, w)
		}
		mj, err := m.GetJob(clk.Now(), id)
		if err != nil || !reflect.DeepEqual(mj.Attempts, got.Attempts) || mj.Worker != got.Worker {
			t.Fatalf("job %s: the model has attempts %+v, worker %q (%v)", id, mj.Attempts, mj.Worker, err)
		}
	}

	// failed, failed, completed, by three workers
	set(0)
	enqueue("a", 5)
	c := claim("w1", time.Minute)
	check("a", []weir.AttemptRecord{{Attempt: 1, Worker: "w1", Started: at(0)}})
	set(10)
	finish(c, engine.OutcomeFailed, "boom 1")
	set(20)
	c = claim("w2", time.Minute)
	set(35)
	finish(c, engine.OutcomeFailed, "boom\n2")
	set(50)
	c = claim("w3.host-1", time.Minute)
	set(80)
	finish(c, engine.OutcomeCompleted, "")
	full := []weir.AttemptRecord{
		{Attempt: 1, Worker: "w1", Started: at(0), Ended: at(10), Outcome: weir.AttemptFailed, Error: "boom 1"},
		{Attempt: 2, Worker: "w2", Started: at(20), Ended: at(35), Outcome: weir.AttemptFailed, Error: "boom\n2"},
		{Attempt: 3, Worker: "w3.host-1", Started: at(50), Ended: at(80), Outcome: weir.AttemptCompleted},
	}
	check("a", full)
	if d := full[1].Duration(); d != 15*time.Millisecond {
		t.Fatalf("duration %v, want 15ms", d)
	}

	// a lease expiry (within the expiry budget), then a completion by a
	// claim that names no worker
	set(100)
	enqueue("b", 3)
	claim("w1", 50*time.Millisecond)
	set(200)
	if _, err := s.ExpireLeases(ctx, engine.ExpireParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.ExpireLeases(clk.Now(), engine.ExpireParams{}); err != nil {
		t.Fatal(err)
	}
	set(210)
	c = claim("", time.Minute)
	set(230)
	finish(c, engine.OutcomeCompleted, "")
	check("b", []weir.AttemptRecord{
		{Attempt: 1, Worker: "w1", Started: at(100), Ended: at(200), Outcome: weir.AttemptExpired, Error: weir.ReasonTextLeaseExpired},
		{Attempt: 2, Started: at(210), Ended: at(230), Outcome: weir.AttemptCompleted},
	})

	// MaxAttemptHistory + 3 failed attempts keep the last MaxAttemptHistory
	n := weir.MaxAttemptHistory + 3
	set(1000)
	enqueue("c", n)
	var want []weir.AttemptRecord
	for i := 1; i <= n; i++ {
		start := 1000 + 10*i
		set(start)
		c = claim("w"+strconv.Itoa(i), time.Minute)
		set(start + 5)
		finish(c, engine.OutcomeFailed, fmt.Sprintf("e%d", i))
		want = append(want, weir.AttemptRecord{Attempt: i, Worker: "w" + strconv.Itoa(i), Started: at(start), Ended: at(start + 5),
			Outcome: weir.AttemptFailed, Error: fmt.Sprintf("e%d", i)})
	}
	check("c", want[3:])

	// the events of "a" name the worker of their attempt
	er, ok := s.(engine.EventReader)
	if !ok {
		return
	}
	page, err := er.Events(ctx, engine.EventsParams{Limit: engine.MaxEventsLimit})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range page.Events {
		if e.Job == "a" {
			got = append(got, string(e.Type)+" "+strconv.Itoa(e.Attempt)+" "+e.Worker)
		}
	}
	wantEv := []string{"queued 0 ", "started 1 w1", "retried 1 w1", "started 2 w2", "retried 2 w2", "started 3 w3.host-1", "completed 3 w3.host-1"}
	if !reflect.DeepEqual(got, wantEv) {
		t.Fatalf("events of a: %q, want %q", got, wantEv)
	}
}
