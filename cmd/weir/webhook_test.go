package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/weirflow/weir/worker"
	"github.com/weirflow/weir/workflowfile"
)

// weir worker delivers a workflow file's webhook to a receiver on
// loopback, signed with the secret from its environment; weir status shows
// the webhook and its delivery.
func TestWorkerDeliversWebhook(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bodies [][]byte
	var sigs []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, b)
		sigs = append(sigs, r.Header.Get(worker.HeaderSignature))
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	m := miniredis.RunT(t)
	env := []string{"WEIR_REDIS_URL=redis://" + m.Addr()}
	ns := []string{"--namespace", "hooktest"}
	cli := func(args ...string) result {
		t.Helper()
		return weir(t, "", env, append(args, ns...)...)
	}
	file := t.TempDir() + "/hook.yaml"
	doc := "id: hooked\nwebhook:\n  url: " + srv.URL + "/h\n  secret: billing.main\n  backoff: 10ms\ntasks:\n  - name: a\n    run: echo hi\n"
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	cli("submit", file).WantCode(t, 0)
	r := cli("status", "hooked")
	r.WantCode(t, 0)
	if !strings.Contains(r.Stdout, "webhook "+srv.URL+"/h (secret billing.main, queue weir.webhooks)") ||
		!strings.Contains(r.Stdout, "delivery hooked@webhook: when the workflow ends") {
		t.Fatalf("status before the end:\n%s", r.Stdout)
	}
	w := exec.Command(binary(t), append([]string{"worker", "--concurrency", "2"}, ns...)...)
	w.Dir = repoRoot(t)
	w.Env = append(append(os.Environ(), env...), "WEIR_WEBHOOK_SECRET_BILLING_MAIN=s3cr3t")
	var wout bytes.Buffer
	w.Stdout, w.Stderr = &wout, &wout
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { w.Process.Kill(); w.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r = cli("status", "hooked")
		if strings.Contains(r.Stdout, "delivery hooked@webhook: completed, attempt 1 of 5") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no delivery; status:\n%s\nworker:\n%s", r.Stdout, wout.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 1 || !worker.VerifySignature([]byte("s3cr3t"), bodies[0], sigs[0]) {
		t.Fatalf("%d requests, signature %q", len(bodies), sigs)
	}
	var rec workflowfile.Record
	if err := json.Unmarshal(bodies[0], &rec); err != nil || rec.ID != "hooked" || rec.State != "completed" ||
		rec.Webhook == nil || rec.Webhook.Job != "hooked@webhook" {
		t.Fatalf("body %s: %v", bodies[0], err)
	}
}
