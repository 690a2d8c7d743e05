//go:build unix && faults

package faults

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
)

// TestPoisonJob runs a job whose handler SIGKILLs its own worker process
// on every attempt, next to ordinary jobs on the same workers. Its first
// death costs no attempt (the default expiry budget, DefaultMaxExpiries:
// a worker killed in a deploy fails nothing); each later one costs one
// (its lease expires); after MaxAttempts counted attempts it ends failed
// with reason lease_expired and no worker runs it again, while every other
// job completes with its result.
func TestPoisonJob(t *testing.T) {
	const attempts, others = 3, 40
	const runsWanted = attempts + weir.DefaultMaxExpiries
	rp := StartRedisT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const ns = "poison"
	rdb := newRedisClient(t, rp.Addr())
	store := newStore(t, rdb, ns, killConfig())
	cl := client.New(store)
	poison, err := client.Enqueue(ctx, cl, queuePoison, "boom", client.ID("poison"),
		client.MaxAttempts(attempts), client.Backoff(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var jobs []*client.Job[string]
	for i := range others {
		j, err := client.Enqueue(ctx, cl, queueA, "0", client.ID(fmt.Sprintf("ok-%02d", i)),
			client.MaxAttempts(20), client.Backoff(time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j)
	}

	// Keep one worker process running: start another whenever one dies,
	// until every job has ended.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, j := range append([]*client.Job[string]{poison}, jobs...) {
			_, _ = store.AwaitJob(ctx, j.ID())
		}
	}()
	deaths := 0
	opts := workerOpts{addr: rp.Addr(), ns: ns, lease: killLease, sweep: killSweep, conc: 4, poison: true, stderr: &childLog{}}
	defer opts.stderr.check(t)
loop:
	for {
		p, err := startWorker(t, opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.waitLine("READY", 30*time.Second); !ok {
			t.Fatal("worker process did not start")
		}
		exited := make(chan struct{})
		go func() { _ = p.exited(); close(exited) }() // a death is expected here: its status tells nothing more
		select {
		case <-exited:
			deaths++
			killInvariants(t, ctx, rdb, ns, fmt.Sprintf("after worker death %d", deaths))
			if deaths > runsWanted {
				t.Fatalf("%d worker deaths for a job of %d attempts and %d free expiries", deaths, attempts, weir.DefaultMaxExpiries)
			}
		case <-done:
			if err := p.stop(); err != nil {
				t.Errorf("worker: %v", err)
			}
			break loop
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
	}

	rep := killInvariants(t, ctx, rdb, ns, "at the end")
	pj, err := store.GetJob(ctx, poison.ID())
	if err != nil {
		t.Fatal(err)
	}
	if pj.State != weir.Failed || pj.Attempt != runsWanted || pj.Expiries != weir.DefaultMaxExpiries || pj.Error != weir.ReasonTextLeaseExpired {
		t.Errorf("poison job ended %s after %d attempts, %d expiries (%q), want failed after %d, %d (%q)",
			pj.State, pj.Attempt, pj.Expiries, pj.Error, runsWanted, weir.DefaultMaxExpiries, weir.ReasonTextLeaseExpired)
	}
	if _, err := poison.Wait(ctx); !errors.Is(err, weir.ErrFailed) {
		t.Errorf("poison Wait: %v, want a failed JobError", err)
	}
	runs, err := rdb.LRange(ctx, recKey(ns, "poison"), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != runsWanted || deaths != runsWanted {
		t.Errorf("poison ran %d times and killed %d workers, want %d each: %q", len(runs), deaths, runsWanted, runs)
	}
	for i, r := range runs {
		if !strings.HasPrefix(r, fmt.Sprintf("poison|%d|", i+1)) {
			t.Errorf("poison run %d recorded %q", i+1, r)
		}
	}
	collateral := 0
	for _, j := range jobs {
		res, err := j.Wait(ctx)
		if err != nil || res != j.ID() {
			t.Errorf("job %s: %q, %v; want its ID as result", j.ID(), res, err)
		}
		s, err := j.Status(ctx)
		if err == nil && s.Attempt > 1 {
			collateral++ // was running on a worker the poison job killed
		}
	}
	fmt.Printf("FAULT poison: state=%s attempts=%d worker_deaths=%d reason=%s others_completed=%d/%d others_retried_after_shared_worker_death=%d invariants=%s\n",
		pj.State, pj.Attempt, deaths, pj.Error, others-countFailed(t, jobs), others, collateral, rep)
}

func countFailed(t *testing.T, jobs []*client.Job[string]) int {
	n := 0
	for _, j := range jobs {
		s, err := j.Status(context.Background())
		if err != nil || s.State != weir.Completed {
			n++
		}
	}
	return n
}
