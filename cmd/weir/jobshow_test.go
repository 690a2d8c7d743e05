package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/redisstore"
)

// weir status of a job ID prints its attempt history with each attempt's
// worker; weir jobs a job's worker; weir events an attempt's worker; weir
// queues the failed and cancelled counts.
func TestStatusShowsAttempts(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	env := []string{"WEIR_REDIS_URL=redis://" + m.Addr()}
	cli := func(args ...string) result {
		t.Helper()
		return weir(t, "", env, append(args, "--namespace", "att")...)
	}
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { rdb.Close() })
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: "att"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Enqueue(ctx, engine.EnqueueParams{Job: engine.JobSpec{ID: "mail-1", Queue: "mail", MaxAttempts: 3}}); err != nil {
		t.Fatal(err)
	}
	claim := func(worker string) engine.Claimed {
		t.Helper()
		cl, err := s.Claim(ctx, engine.ClaimParams{Queues: []string{"mail"}, Max: 1, Lease: time.Minute, WorkerID: worker})
		if err != nil || len(cl) != 1 {
			t.Fatalf("claim: %v %v", cl, err)
		}
		return cl[0]
	}
	c := claim("host-a.1")
	if _, err := s.Finish(ctx, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: "mail-1", Token: c.Lease.Token,
		Kind: engine.OutcomeReleased}}}); err != nil {
		t.Fatal(err)
	}
	c = claim("host-b.2")
	if _, err := s.Finish(ctx, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: "mail-1", Token: c.Lease.Token,
		Kind: engine.OutcomeFailed, Error: "smtp down", NonRetryable: true}}}); err != nil {
		t.Fatal(err)
	}

	r := cli("status", "mail-1")
	r.WantCode(t, 0)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) != 6 || !strings.HasPrefix(lines[0], "job mail-1 failed") || !strings.Contains(lines[1], "worker host-b.2") ||
		!strings.Contains(lines[3], "ATTEMPT") || !strings.Contains(lines[4], "host-a.1") || !strings.Contains(lines[4], "released") ||
		!strings.Contains(lines[5], "host-b.2") || !strings.Contains(lines[5], "failed") || !strings.Contains(lines[5], "smtp down") {
		t.Errorf("status of a job:\n%s", r.Stdout)
	}
	r = cli("status", "mail-1", "--json")
	r.WantCode(t, 0)
	if !strings.Contains(r.Stdout, `"attempt_history"`) || !strings.Contains(r.Stdout, `"outcome": "released"`) {
		t.Errorf("status --json of a job:\n%s", r.Stdout)
	}
	r = cli("jobs", "mail", "--state", "failed")
	r.WantCode(t, 0)
	if !strings.Contains(r.Stdout, "WORKER") || !strings.Contains(r.Stdout, "host-b.2") {
		t.Errorf("jobs:\n%s", r.Stdout)
	}
	r = cli("events")
	r.WantCode(t, 0)
	if !strings.Contains(r.Stdout, "started mail-1 attempt=1 worker=host-a.1") ||
		!strings.Contains(r.Stdout, "failed mail-1 attempt=1 reason=\"smtp down\" worker=host-b.2") {
		t.Errorf("events:\n%s", r.Stdout)
	}
	cli("status", "nope").WantCode(t, 1)

	// weir queues counts the queue's failed (dead letter) and cancelled jobs
	r = cli("queues")
	r.WantCode(t, 0)
	if !strings.Contains(r.Stdout, "FAILED") || !regexp.MustCompile(`(?m)^mail\s+false\s+0\s+0\s+0\s+1\s+0\s`).MatchString(r.Stdout) {
		t.Errorf("queues:\n%s", r.Stdout)
	}
}
