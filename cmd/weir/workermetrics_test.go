package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/weirflow/weir/internal/clitest"
)

// weir worker --metrics serves GET /metrics: its workers' attempts, the
// namespace's queues (failed jobs included) and workflows by state, and
// the process's; nothing else, and no other method. It prints the address
// as WEIR_METRICS_URL on stdout.
func TestWorkerMetricsServed(t *testing.T) {
	m := miniredis.RunT(t)
	ns := "wmetrics"
	redisURL := "redis://" + m.Addr()
	file := writeFile(t, "wf.yaml", "id: met\ntasks:\n  - name: ok\n    run: 'true'\n  - name: bad\n    run: 'exit 3'\n")
	weir(t, "", []string{"WEIR_REDIS_URL=" + redisURL}, "submit", file, "--namespace", ns).WantCode(t, 0)

	p := startInProcess(t, "worker", "--redis", redisURL, "--namespace", ns, "--metrics", "127.0.0.1:0")
	url := p.printed(t, "WEIR_METRICS_URL")
	if !strings.HasSuffix(url, "/metrics") {
		t.Fatalf("WEIR_METRICS_URL=%s; want an address ending in /metrics", url)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := testStore(t, m.Addr(), ns).AwaitWorkflow(ctx, "met"); err != nil {
		t.Fatal(err)
	}
	// the worker counts an attempt once its finish returned, which may be
	// after the await: read until both are counted (a hang guard, not a
	// timing check)
	var body string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var code int
		code, body = clitest.Get(t, http.MethodGet, url, "")
		if code != http.StatusOK {
			t.Fatalf("GET %s = %d\n%s", url, code, body)
		}
		if strings.Contains(body, `weir_worker_attempts_total{outcome="failed",queue="default"} 1`) &&
			strings.Contains(body, `weir_worker_attempts_total{outcome="succeeded",queue="default"} 1`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker's attempts never showed:\n%s", body)
		}
	}
	for _, want := range []string{
		`weir_queue_ended_jobs{queue="default",state="failed"} 1`,
		`weir_queue_jobs{queue="default",state="ready"} 0`,
		`weir_workflows{state="failed"} 1`,
		`weir_worker_workflows_ended_total{state="failed"} 1`,
		"go_goroutines ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("GET /metrics lacks %q", want)
		}
	}
	if code, _ := clitest.Get(t, http.MethodPost, url, ""); code != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics = %d; want 405", code)
	}
	if code, _ := clitest.Get(t, http.MethodGet, strings.TrimSuffix(url, "metrics")+"v1/workflows", ""); code != http.StatusNotFound {
		t.Errorf("GET /v1/workflows = %d; want 404 (the worker serves metrics only)", code)
	}
	if code := p.stop(t); code != 0 {
		t.Fatalf("worker exited %d\n%s", code, p.stderr.String())
	}
}

// WEIR_METRICS_ADDR does what --metrics does, a flag beats it, and an
// address that is not host:port is a usage error naming where it came
// from. Without either, nothing is served.
func TestWorkerMetricsEnv(t *testing.T) {
	m := miniredis.RunT(t)
	redisURL := "redis://" + m.Addr()
	t.Setenv(metricsEnv, "127.0.0.1:0")
	p := startInProcess(t, "worker", "--redis", redisURL, "--namespace", "wmenv")
	url := p.printed(t, "WEIR_METRICS_URL")
	if code, body := clitest.Get(t, http.MethodGet, url, ""); code != http.StatusOK || !strings.Contains(body, "weir_queue_jobs") && !strings.Contains(body, "go_goroutines") {
		t.Fatalf("GET %s = %d\n%s", url, code, body)
	}
	p.stop(t)

	t.Setenv(metricsEnv, "nope")
	r := weir(t, "", []string{"WEIR_REDIS_URL=" + redisURL}, "worker", "--namespace", "wmenv")
	r.WantCode(t, 2)
	if !strings.Contains(r.Stderr, `WEIR_METRICS_ADDR "nope"`) {
		t.Errorf("stderr %q; want it to name WEIR_METRICS_ADDR and its value", r.Stderr)
	}
	r = weir(t, "", []string{"WEIR_REDIS_URL=" + redisURL}, "worker", "--namespace", "wmenv", "--metrics", "nope:x:y")
	r.WantCode(t, 2)
	if !strings.Contains(r.Stderr, `--metrics "nope:x:y"`) {
		t.Errorf("stderr %q; want it to name --metrics and its value", r.Stderr)
	}

	t.Setenv(metricsEnv, "")
	p = startInProcess(t, "worker", "--redis", redisURL, "--namespace", "wmenv")
	for !strings.Contains(p.stderr.String(), "weir worker: queues") {
		select {
		case <-p.done:
			t.Fatalf("worker ended\n%s", p.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	p.stop(t)
	if strings.Contains(p.stdout.String(), "WEIR_METRICS_URL") {
		t.Errorf("without --metrics or %s the worker printed %q", metricsEnv, p.stdout.String())
	}
}
