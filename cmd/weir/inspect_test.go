package main

import (
	"context"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/redisstore"
)

// The inspector's commands on a shared Redis: jobs of a queue by state,
// cancel-job (with its workflow's cascade), purge.
func TestInspectCommands(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	env := []string{"WEIR_REDIS_URL=redis://" + m.Addr()}
	ns := []string{"--namespace", "inspect"}
	cli := func(args ...string) result {
		t.Helper()
		return weir(t, "", env, append(args, ns...)...)
	}
	cli("pause", "default").WantCode(t, 0)
	var ids []string
	for range 2 {
		r := cli("submit", "examples/pipeline.yaml")
		r.WantCode(t, 0)
		ids = append(ids, strings.TrimSpace(r.Stdout))
	}

	// both roots wait in the queue, in claim order, one a page
	r := cli("jobs", "default", "--state", "ready", "--limit", "1")
	r.WantCode(t, 0)
	if !strings.Contains(r.Stdout, ids[0]+"/fetch") || strings.Contains(r.Stdout, ids[1]) {
		t.Errorf("first page:\n%s", r.Stdout)
	}
	_, cursor, ok := strings.Cut(r.Stdout, "more: --cursor ")
	if !ok {
		t.Fatalf("no cursor:\n%s", r.Stdout)
	}
	r = cli("jobs", "default", "--state", "ready", "--cursor", strings.TrimSpace(cursor))
	r.WantCode(t, 0)
	if !strings.Contains(r.Stdout, ids[1]+"/fetch") || strings.Contains(r.Stdout, "more:") {
		t.Errorf("second page:\n%s", r.Stdout)
	}

	// cancelling a root cancels its dependents: all in the cancelled list
	r = cli("cancel-job", ids[0]+"/fetch")
	r.WantCode(t, 0)
	if !strings.Contains(r.Stdout, "job "+ids[0]+"/fetch cancelled") || !strings.Contains(r.Stdout, "job "+ids[0]+"/report cancelled") {
		t.Errorf("cancel-job:\n%s", r.Stdout)
	}
	cli("cancel-job", ids[0]+"/fetch").WantCode(t, 1)
	cli("cancel-job", "nope").WantCode(t, 1)
	r = cli("jobs", "default", "--state", "cancelled")
	r.WantCode(t, 0)
	if n := strings.Count(r.Stdout, ids[0]+"/"); n != 5 || !strings.Contains(r.Stdout, "dependency fetch cancelled") {
		t.Errorf("cancelled list (%d of the workflow's jobs):\n%s", n, r.Stdout)
	}

	// purge cancels the other root
	r = cli("purge", "default")
	r.WantCode(t, 0)
	if !strings.Contains(r.Stdout, "1 job(s) cancelled") {
		t.Errorf("purge: %s", r.Stdout)
	}
	r = cli("jobs", "default", "--state", "ready")
	r.WantCode(t, 0)
	if strings.Contains(r.Stdout, "/fetch") {
		t.Errorf("ready after purge:\n%s", r.Stdout)
	}
	cli("jobs", "default", "--state", "dead").WantCode(t, 2)
	cli("purge", "bad:name").WantCode(t, 2)

	// retry-job: a task is refused; a plain job that failed runs again
	r = cli("retry-job", ids[0]+"/fetch")
	r.WantCode(t, 1)
	if !strings.Contains(r.Stderr, "cannot be retried (cancelled)") {
		t.Errorf("retry-job of a task: %s", r.Stderr)
	}
	cli("retry-job", "plain", "--at", "soon").WantCode(t, 2)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { rdb.Close() })
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: "inspect"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Enqueue(ctx, engine.EnqueueParams{Job: engine.JobSpec{ID: "plain", Queue: "mail"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CancelJob(ctx, engine.CancelJobParams{ID: "plain"}); err != nil {
		t.Fatal(err)
	}
	r = cli("retry-job", "plain", "--at", "1h")
	r.WantCode(t, 0)
	if !strings.HasPrefix(r.Stdout, "job plain queued until ") {
		t.Errorf("retry-job: %s", r.Stdout)
	}
	r = cli("jobs", "mail", "--state", "delayed")
	r.WantCode(t, 0)
	if !strings.Contains(r.Stdout, "plain") {
		t.Errorf("delayed after retry-job:\n%s", r.Stdout)
	}
	cli("retry-job", "plain").WantCode(t, 1)

	// delete-job and delete-workflow: only what ended
	r = cli("delete-job", "plain")
	r.WantCode(t, 1)
	if !strings.Contains(r.Stderr, "has not ended") {
		t.Errorf("delete-job of a queued job: %s", r.Stderr)
	}
	r = cli("submit", "examples/pipeline.yaml")
	r.WantCode(t, 0)
	cli("delete-workflow", strings.TrimSpace(r.Stdout)).WantCode(t, 1)
	// rerun: the workflow whose root cancel-job ended (it completed, its
	// tasks cancelled) runs them again; a running one is refused
	r = cli("rerun", ids[0])
	r.WantCode(t, 0)
	if strings.TrimSpace(r.Stdout) != "workflow "+ids[0]+" running (run 2): 5 task(s) run again" {
		t.Errorf("rerun: %s", r.Stdout)
	}
	r = cli("status", ids[0])
	r.WantCode(t, 0)
	if !strings.Contains(r.Stdout, "workflow "+ids[0]+" running (run 2)") {
		t.Errorf("status after rerun:\n%s", r.Stdout)
	}
	r = cli("rerun", ids[0])
	r.WantCode(t, 1)
	if !strings.Contains(r.Stderr, "cannot be re-run (running)") {
		t.Errorf("rerun of a running workflow: %s", r.Stderr)
	}
	cli("rerun", "nope").WantCode(t, 1)
	cli("cancel", ids[0]).WantCode(t, 0)
	r = cli("delete-workflow", ids[0])
	r.WantCode(t, 0)
	if strings.TrimSpace(r.Stdout) != "workflow "+ids[0]+" deleted" {
		t.Errorf("delete-workflow: %s", r.Stdout)
	}
	cli("status", ids[0]).WantCode(t, 1)
	cli("delete-job", ids[1]+"/fetch").WantCode(t, 2)
}
