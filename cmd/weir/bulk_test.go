package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/redisstore"
)

// weir queue retry-jobs, cancel-jobs and delete-jobs act on a page of a
// queue's list (going on with --cursor) or on the jobs named.
func TestQueueBulkJobs(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	env := []string{"WEIR_REDIS_URL=redis://" + m.Addr()}
	cli := func(args ...string) result {
		t.Helper()
		return weir(t, "", env, append(args, "--namespace", "bulk")...)
	}
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { rdb.Close() })
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: "bulk"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, id := range []string{"j1", "j2", "j3"} {
		if _, err := s.Enqueue(ctx, engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: "q"}}); err != nil {
			t.Fatal(err)
		}
		cs, err := s.Claim(ctx, engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute})
		if err != nil || len(cs) != 1 {
			t.Fatal(cs, err)
		}
		if _, err := s.Finish(ctx, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: id, Token: cs[0].Lease.Token, Kind: engine.OutcomeFailed, Error: "boom", NonRetryable: true}}}); err != nil {
			t.Fatal(err)
		}
	}
	r := cli("queue", "retry-jobs", "q", "--limit", "2")
	r.WantCode(t, 0)
	_, cursor, ok := strings.Cut(r.Stdout, "more: --cursor ")
	if !strings.Contains(r.Stdout, "queue q: 2 job(s) retried, 0 skipped") || !ok {
		t.Fatalf("retry-jobs --limit 2:\n%s", r.Stdout)
	}
	r = cli("queue", "retry-jobs", "q", "--cursor", strings.TrimSpace(cursor), "--json")
	r.WantCode(t, 0)
	if !strings.Contains(r.Stdout, `"done": [`+"\n"+`    "j1"`) || !strings.Contains(r.Stdout, `"more": false`) {
		t.Errorf("retry-jobs --cursor --json:\n%s", r.Stdout)
	}
	r = cli("queue", "cancel-jobs", "q", "--id", "j1", "--id", "nope")
	r.WantCode(t, 0)
	if !strings.Contains(r.Stdout, "queue q: 1 job(s) cancelled, 1 skipped") || !strings.Contains(r.Stdout, "skipped nope: no such job (NOTFOUND)") {
		t.Errorf("cancel-jobs --id:\n%s", r.Stdout)
	}
	r = cli("queue", "delete-jobs", "q", "--state", "cancelled")
	r.WantCode(t, 0)
	if !strings.Contains(r.Stdout, "queue q: 1 job(s) deleted") {
		t.Errorf("delete-jobs:\n%s", r.Stdout)
	}
	r = cli("queue", "retry-jobs", "q", "--state", "ready")
	r.WantCode(t, 2)
	if !strings.Contains(r.Stderr, `"ready": retry takes the jobs of failed or cancelled`) {
		t.Errorf("retry-jobs --state ready: %s", r.Stderr)
	}
	cli("queue", "cancel-jobs", "q", "--id", "j2", "--state", "ready").WantCode(t, 2)
	cli("queue", "delete-jobs", "q", "--limit", "1001").WantCode(t, 2)
}
