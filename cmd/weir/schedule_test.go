package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/rest"
)

// weir schedule put|ls|delete|pause|resume against a miniredis (and add
// and rm, their aliases), and a worker process that fires a schedule's
// tick: the tick's workflow completes.
func TestScheduleCommands(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	env := []string{"WEIR_REDIS_URL=redis://" + m.Addr()}
	ns := []string{"--namespace", "clisched"}
	cli := func(args ...string) result {
		t.Helper()
		return weir(t, "", env, append(args, ns...)...)
	}

	r := cli("schedule", "put", "report", "--cron", "0 30 2 * * *", "--tz", "Europe/Paris", "--queue", "reports", "--payload", `{"k":1}`, "--overlap", "skip")
	r.WantCode(t, 0)
	if !strings.HasPrefix(r.Stdout, "schedule report added: next tick ") {
		t.Errorf("add: %q", r.Stdout)
	}
	flow := writeFile(t, "tick.yaml", "tasks:\n  - name: hello\n    run: echo tick\n")
	cli("schedule", "add", "tick", "--every", "1s", "--workflow", flow).WantCode(t, 0)

	r = cli("schedule", "ls")
	r.WantCode(t, 0)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "report") || !strings.Contains(lines[1], "0 30 2 * * * (Europe/Paris)") ||
		!strings.Contains(lines[1], "queue reports") || !strings.HasPrefix(lines[2], "tick") || !strings.Contains(lines[2], "every 1s") {
		t.Errorf("ls:\n%s", r.Stdout)
	}
	cli("schedule", "pause", "report").WantCode(t, 0)
	r = cli("schedule", "ls", "--json")
	r.WantCode(t, 0)
	var recs []rest.ScheduleRecord
	if err := json.Unmarshal([]byte(r.Stdout), &recs); err != nil || len(recs) != 2 || !recs[0].Paused || recs[0].Overlap != "skip" || fmt.Sprint(recs[0].Job.Payload) != "map[k:1]" {
		t.Errorf("ls --json: %v\n%s", err, r.Stdout)
	}
	cli("schedule", "resume", "report").WantCode(t, 0)
	if r := cli("schedule", "delete", "report"); r.Code != 0 || r.Stdout != "schedule report deleted\n" {
		t.Errorf("delete: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	r = cli("schedule", "rm", "report")
	if r.Code != 1 || !strings.Contains(r.Stderr, "schedule report: not found") {
		t.Errorf("rm (delete's alias) of a deleted schedule: %d %q", r.Code, r.Stderr)
	}
	for _, bad := range [][]string{
		{"schedule", "add", "x", "--cron", "* * * * *", "--every", "1m", "--queue", "q"},
		{"schedule", "add", "x", "--every", "1m"},
		{"schedule", "add", "x", "--every", "1m", "--queue", "q", "--workflow", flow},
		{"schedule", "add", "x", "--cron", "* * * * *", "--tz", "Mars/Olympus", "--queue", "q"},
		{"schedule", "add", "x", "--every", "1m", "--queue", "q", "--payload", "{"},
		{"schedule", "add", "x", "--every", "1m", "--queue", "q", "--missed", "all"},
		{"schedule", "add", "x", "--cron", "* * * * *", "--tz", "Local", "--queue", "q"},
		{"schedule", "add", "x", "--cron", "@every 1ms", "--queue", "q"},
	} {
		if r := cli(bad...); r.Code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", bad, r.Code, exitUsage, r.Stderr)
		}
	}
	// --every 0s is named as such (the spec's zero interval is none: it
	// was "invalid cron: give a cron expression or an interval")
	if r := cli("schedule", "add", "x", "--every", "0s", "--queue", "q"); r.Code != exitUsage || !strings.Contains(r.Stderr, "--every 0s is no interval") {
		t.Errorf("--every 0s: exit %d, %q", r.Code, r.Stderr)
	}
	// a schedule's workflow file gives no id: each tick's workflow has the
	// tick's (the id was ignored)
	withID := writeFile(t, "withid.yaml", "id: nightly\ntasks:\n  - name: hello\n    run: echo tick\n")
	if r := cli("schedule", "add", "x", "--every", "1m", "--workflow", withID); r.Code != exitUsage ||
		!strings.Contains(r.Stderr, "field id: a schedule's workflow takes no id") {
		t.Errorf("a workflow file with an id: exit %d, %q", r.Code, r.Stderr)
	}

	// a worker process fires the schedule; the tick's workflow completes
	w := exec.Command(binary(t), append([]string{"worker", "--concurrency", "2"}, ns...)...)
	w.Dir = repoRoot(t)
	w.Env = append(os.Environ(), env...)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		w.Process.Kill()
		w.Wait()
	})
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { rdb.Close() })
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: "clisched"})
	if err != nil {
		t.Fatal(err)
	}
	id := firstFire(t, s, "tick")
	if !strings.HasPrefix(id, "tick.") {
		t.Fatalf("fired %q", id)
	}
	r = cli("wait", id)
	r.WantCode(t, 0)
	if !strings.Contains(r.Stdout, "workflow "+id+" completed") {
		t.Errorf("wait:\n%s", r.Stdout)
	}
}

// firstFire waits (at most a minute) until schedule name of s has fired,
// and returns the ID its first tick started.
func firstFire(t *testing.T, s *redisstore.Store, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for {
		sc, err := s.GetSchedule(ctx, name)
		if err != nil {
			t.Fatalf("waiting for the first fire of %s: %v", name, err)
		}
		if sc.LastID != "" {
			return sc.LastID
		}
		time.Sleep(20 * time.Millisecond) // waiting for the worker, not timing it
	}
}
