//go:build unix && faults

package faults

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/worker"
)

// TestInvariantsHealthy runs a workload on a healthy Redis, checks the
// invariants while it runs and at the end (no false alarm), then corrupts
// the store in several ways and checks that each one is caught.
func TestInvariantsHealthy(t *testing.T) {
	proc := StartRedisT(t)
	rdb := newRedisClient(t, proc.Addr())
	const ns = "inv"
	store := newStore(t, rdb, ns)
	wl := newWorkload(t, "h", scaled(50), 20, 3)
	obs := NewObservations()
	eff := &effects{}
	startWorkers(t, store, 2, worker.Config{Concurrency: 8, Lease: 5 * time.Second, SweepInterval: 200 * time.Millisecond}, obs, eff, nil)
	ctx := context.Background()
	checks := 0
	for i, id := range wl.ids {
		if _, err := store.Submit(ctx, engine.SubmitParams{Plan: wl.plans[id]}); err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			checkInvariants(t, rdb, ns, "mid-run")
			checks++
		}
	}
	waitEnded(t, store, wl.ids, 60*time.Second)
	rep := checkInvariants(t, rdb, ns, "at the end")
	or := checkObserved(t, obs, wl.deps)
	jobs, extra := eff.doubled()
	t.Logf("checks=%d %s; %s; effects jobs=%d doubled=%d", checks+1, rep, or, jobs, extra)
	if rep.Workflows != len(wl.ids) || rep.Ended != len(wl.ids) || rep.TaskStates["completed"] != wl.tasks {
		t.Fatalf("report %s, want %d workflows ended and %d tasks completed", rep, len(wl.ids), wl.tasks)
	}
	if or.Started != wl.tasks || or.Reruns != 0 || extra != 0 {
		t.Fatalf("observed %s, doubled effects %d; want %d tasks started once", or, extra, wl.tasks)
	}

	// Corruptions the checker must catch.
	P := "weir:{" + ns + ":0}:"
	id := wl.ids[0]
	// an ended plain job, whose retention bucket entry goes below
	if _, err := store.Enqueue(ctx, engine.EnqueueParams{Job: engine.JobSpec{ID: "plain1", Queue: "plainq"}}); err != nil {
		t.Fatal(err)
	}
	pc, err := store.Claim(ctx, engine.ClaimParams{Queues: []string{"plainq"}, Max: 1, Lease: time.Minute})
	if err != nil || len(pc) != 1 {
		t.Fatalf("claim of the plain job: %v %v", pc, err)
	}
	if _, err := store.Finish(ctx, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: "plain1", Token: pc[0].Lease.Token, Kind: engine.OutcomeCompleted}}}); err != nil {
		t.Fatal(err)
	}
	if r, err := CheckStore(ctx, rdb, ns); err != nil || len(r.Violations) != 0 {
		t.Fatalf("with an ended plain job: %v %v", r.Violations, err)
	}
	for _, c := range []struct {
		name, want string
		do         func() error
	}{
		{"state byte", "state byte", func() error { return rdb.SetRange(ctx, P+"w:"+id+":s", 0, "?").Err() }},
		{"rem counter", "rem=", func() error { return rdb.HSet(ctx, P+"w:"+id, "rem", "3").Err() }},
		{"TTL", "no TTL", func() error { return rdb.Persist(ctx, P+"w:"+id).Err() }},
		{"state index", "state indexes", func() error {
			return rdb.ZAdd(ctx, P+"wf:running", redisZ(mustMember(t, rdb, P, id))).Err()
		}},
		{"stray lease", "active set", func() error { return rdb.ZAdd(ctx, P+"q:work:a", redisZ("nobody/t0")).Err() }},
		{"retention bucket", "without a retention bucket entry", func() error {
			ks, err := rdb.Keys(ctx, P+"xb:*").Result()
			if err != nil || len(ks) != 1 {
				return fmt.Errorf("buckets %v: %v", ks, err)
			}
			return rdb.Del(ctx, ks[0]).Err()
		}},
	} {
		if err := c.do(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		r, err := CheckStore(ctx, rdb, ns)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, v := range r.Violations {
			found = found || strings.Contains(v, c.want)
		}
		if !found {
			t.Errorf("corruption %q not caught (want %q): %v", c.name, c.want, r.Violations)
		}
	}
}
