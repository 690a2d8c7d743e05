package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/weirflow/weir/workflowfile"
)

// The commands that drive a shared Redis, against a miniredis of the test:
// submit, status, queues, ls, pause/resume, a worker process, wait, cancel.
func TestSharedRedisCommands(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	env := []string{"WEIR_REDIS_URL=redis://" + m.Addr()}
	ns := []string{"--namespace", "clitest"}
	cli := func(args ...string) result {
		t.Helper()
		return weir(t, "", env, append(args, ns...)...)
	}

	// A concurrency limit, listed by weir queues.
	if r := cli("queue", "limit", "lim", "3"); r.Code != 0 || strings.TrimSpace(r.Stdout) != "queue lim: at most 3 running" {
		t.Errorf("queue limit: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	if r := cli("queues"); r.Code != 0 || !regexp.MustCompile(`(?m)^lim\s+false\s+0\s+0\s+0\s+0\s+0\s+3\s+-\s+-$`).MatchString(r.Stdout) {
		t.Errorf("queues after a limit: %d %q", r.Code, r.Stdout)
	}
	// A rate limit, listed beside it; 0 removes it.
	if r := cli("queue", "rate", "lim", "10/1s"); r.Code != 0 || strings.TrimSpace(r.Stdout) != "queue lim: at most 10 starts per 1s" {
		t.Errorf("queue rate: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	if r := cli("queues"); r.Code != 0 || !regexp.MustCompile(`(?m)^lim\s+false\s+0\s+0\s+0\s+0\s+0\s+3\s+10/1s\s+-$`).MatchString(r.Stdout) {
		t.Errorf("queues after a rate limit: %d %q", r.Code, r.Stdout)
	}
	for bad, field := range map[string]string{"x/1s": "limit", "10": "period", "10/x": "period", "10/0s": "period", "20000/1s": "limit"} {
		if r := cli("queue", "rate", "lim", bad); r.Code != 2 || !strings.Contains(r.Stderr, field) {
			t.Errorf("rate %s: %d %q", bad, r.Code, r.Stderr)
		}
	}
	if r := cli("queue", "rate", "lim", "0"); r.Code != 0 || strings.TrimSpace(r.Stdout) != "queue lim: no rate limit" {
		t.Errorf("queue rate 0: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	if r := cli("queues"); r.Code != 0 || !regexp.MustCompile(`(?m)^lim\s+false\s+0\s+0\s+0\s+0\s+0\s+3\s+-\s+-$`).MatchString(r.Stdout) {
		t.Errorf("queues after the rate limit's removal: %d %q", r.Code, r.Stdout)
	}
	// A per-key limit, listed by weir queues; a job document's key.
	if r := cli("queue", "key-limit", "lim", "2"); r.Code != 0 || strings.TrimSpace(r.Stdout) != "queue lim: at most 2 running per key" {
		t.Errorf("queue key-limit: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	if r := cli("queues"); r.Code != 0 || !regexp.MustCompile(`(?m)^lim\s+false\s+0\s+0\s+0\s+0\s+0\s+3\s+-\s+2$`).MatchString(r.Stdout) {
		t.Errorf("queues after a key limit: %d %q", r.Code, r.Stdout)
	}
	for _, bad := range []string{"x", "2000000"} {
		if r := cli("queue", "key-limit", "lim", bad); r.Code != 2 || !strings.Contains(r.Stderr, "concurrency") {
			t.Errorf("key-limit %s: %d %q", bad, r.Code, r.Stderr)
		}
	}
	for _, bad := range []string{"x", "2000000"} {
		if r := cli("queue", "limit", "lim", bad); r.Code != 2 || !strings.Contains(r.Stderr, "concurrency") {
			t.Errorf("limit %s: %d %q", bad, r.Code, r.Stderr)
		}
	}

	// Submit with workers paused: the workflow waits in its queue.
	cli("pause", "default").WantCode(t, 0)
	r := cli("submit", "examples/pipeline.yaml")
	r.WantCode(t, 0)
	id := strings.TrimSpace(r.Stdout)
	if id == "" || strings.Contains(id, "\n") {
		t.Fatalf("submit printed %q", r.Stdout)
	}
	r = cli("status", id, "--json")
	r.WantCode(t, 0)
	rec := decodeRecord(t, r)
	if rec.ID != id || rec.State != "running" || recordTask(t, rec, "fetch").State != "queued" || recordTask(t, rec, "report").State != "waiting" {
		t.Errorf("status of a new workflow: %+v", rec)
	}
	r = cli("queues")
	r.WantCode(t, 0)
	if !strings.Contains(r.Stdout, "default") || !strings.Contains(strings.Fields(strings.Split(r.Stdout, "\n")[1])[1], "true") {
		t.Errorf("queues:\n%s", r.Stdout)
	}
	r = cli("ls", "--json")
	r.WantCode(t, 0)
	var recs []workflowfile.Record
	if err := json.Unmarshal([]byte(r.Stdout), &recs); err != nil || len(recs) != 1 || recs[0].ID != id {
		t.Errorf("ls --json: %v\n%s", err, r.Stdout)
	}
	r = cli("ls", "--state", "completed", "--json")
	r.WantCode(t, 0)
	if strings.TrimSpace(r.Stdout) != "[]" {
		t.Errorf("ls --state completed: %s", r.Stdout)
	}

	// A worker in another process, with the saga's log path in its
	// environment.
	logPath := filepath.Join(t.TempDir(), "saga.log")
	w := exec.Command(binary(t), append([]string{"worker", "--queues", "default,default", "--concurrency", "4"}, ns...)...)
	w.Dir = repoRoot(t)
	w.Env = append(append(os.Environ(), env...), "SAGA_LOG="+logPath)
	var wout bytes.Buffer
	w.Stdout, w.Stderr = &wout, &wout
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			w.Process.Kill()
			w.Wait()
		}
	})
	cli("resume", "default").WantCode(t, 0)

	r = cli("wait", id, "--json")
	r.WantCode(t, 0)
	rec = decodeRecord(t, r)
	if rec.State != "completed" || recordTask(t, rec, "words").Result != "24\n" {
		t.Errorf("waited record: %+v", rec)
	}
	r = cli("status", id)
	r.WantCode(t, 0)
	if !strings.Contains(r.Stdout, "workflow "+id+" completed") {
		t.Errorf("status:\n%s", r.Stdout)
	}

	// Tasks a shell task adds (WEIR_ADD_TASKS) run on the worker process
	// too; the report waits for them.
	r = cli("submit", "examples/dynamic.yaml")
	r.WantCode(t, 0)
	dyn := strings.TrimSpace(r.Stdout)
	r = cli("wait", dyn, "--json")
	r.WantCode(t, 0)
	rec = decodeRecord(t, r)
	if rec.State != "completed" || len(rec.Tasks) != 6 || recordTask(t, rec, "report").Result != "4 parts: ALPHA BETA GAMMA DELTA\n" {
		t.Errorf("dynamic record: %+v", rec)
	}

	// A saga run by the worker process: wait exits 1.
	r = cli("submit", "examples/saga.yaml")
	r.WantCode(t, 0)
	saga := strings.TrimSpace(r.Stdout)
	r = cli("wait", saga)
	r.WantCode(t, 1)
	if !strings.Contains(r.Stdout, "workflow "+saga+" compensated") {
		t.Errorf("wait on the saga:\n%s", r.Stdout)
	}
	if log, _ := os.ReadFile(logPath); string(log) != "book flight\nbook hotel\nbook car\npay\ncancel car CA-3\ncancel hotel HO-2\ncancel flight FL-1\n" {
		t.Errorf("saga.log:\n%s", log)
	}

	// Cancel a workflow that has not started.
	cli("pause", "default").WantCode(t, 0)
	r = cli("submit", "examples/failfast.yaml")
	r.WantCode(t, 0)
	ff := strings.TrimSpace(r.Stdout)
	r = cli("cancel", ff, "--no-undo")
	r.WantCode(t, 0)
	if strings.TrimSpace(r.Stdout) != "workflow "+ff+" cancelled" {
		t.Errorf("cancel: %q", r.Stdout)
	}
	r = cli("cancel", ff)
	if r.Code != 1 || !strings.Contains(r.Stderr, "has already ended") {
		t.Errorf("second cancel: %d %q", r.Code, r.Stderr)
	}
	r = cli("wait", ff, "--json")
	r.WantCode(t, 1)
	if rec := decodeRecord(t, r); rec.State != "cancelled" || !rec.CancelRequested {
		t.Errorf("cancelled record %+v", rec)
	}
	r = cli("ls", "--state", "cancelled")
	r.WantCode(t, 0)
	if !strings.Contains(r.Stdout, ff) || strings.Contains(r.Stdout, id) {
		t.Errorf("ls --state cancelled:\n%s", r.Stdout)
	}
	cli("resume", "default").WantCode(t, 0)

	// Submitting the same file with its fixed ID twice is fine; another
	// plan under that ID is not.
	p1 := writeFile(t, "a.yaml", "id: fixed\ntasks:\n  - name: a\n    run: echo a\n")
	p2 := writeFile(t, "a.yaml", "id: fixed\ntasks:\n  - name: a\n    run: echo b\n")
	cli("submit", p1).WantCode(t, 0)
	cli("submit", p1).WantCode(t, 0)
	r = cli("submit", p2)
	if r.Code != 1 || !strings.Contains(r.Stderr, `field id: a workflow "fixed" exists with a different plan`) {
		t.Errorf("submit of another plan: %d %q", r.Code, r.Stderr)
	}
	cli("wait", "fixed").WantCode(t, 0)

	r = cli("status", "nope")
	if r.Code != 1 || !strings.Contains(r.Stderr, "workflow or job nope: not found") {
		t.Errorf("status of a missing workflow: %d %q", r.Code, r.Stderr)
	}

	// SIGTERM drains the worker: it exits 0.
	if err := w.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := w.Wait()
	stopped = true
	if err != nil || !strings.Contains(wout.String(), "weir worker: stopped") {
		t.Errorf("worker after SIGTERM: %v\n%s", err, wout.String())
	}
}

// weir run against a Redis URL runs the workflow there, in the namespace
// given, and leaves its record for the other commands.
func TestRunAgainstRedis(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	url := "redis://" + m.Addr()
	r := weir(t, "", nil, "run", "--redis", url, "--namespace", "other", "--json", "examples/pipeline.yaml")
	r.WantCode(t, 0)
	id := decodeRecord(t, r).ID
	r = weir(t, "", []string{"WEIR_REDIS_URL=" + url}, "status", "--namespace", "other", id, "--json")
	r.WantCode(t, 0)
	if rec := decodeRecord(t, r); rec.State != "completed" {
		t.Errorf("status after run: %+v", rec)
	}
	r = weir(t, "", []string{"WEIR_REDIS_URL=" + url}, "status", id)
	if r.Code != 1 {
		t.Errorf("status in the default namespace: %d %q", r.Code, r.Stderr)
	}
}
