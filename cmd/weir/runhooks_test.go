package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/alicebob/miniredis/v2"

	"github.com/weirflow/weir/worker"
	"github.com/weirflow/weir/workflowfile"
)

// hookReceiver is a webhook receiver on loopback that answers status to
// every POST and keeps the bodies and signatures.
type hookReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	sigs   []string
}

func newHookReceiver(t *testing.T, status int) *hookReceiver {
	h := &hookReceiver{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.bodies = append(h.bodies, b)
		h.sigs = append(h.sigs, r.Header.Get(worker.HeaderSignature))
		h.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hookReceiver) received() ([][]byte, []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.bodies, h.sigs
}

// weir run on its embedded server delivers the file's webhook itself,
// signed with the secret from its environment, before it exits; the
// summary says so, and with --json the record stays alone on stdout.
func TestRunDeliversWebhook(t *testing.T) {
	t.Parallel()
	for _, asJSON := range []bool{false, true} {
		h := newHookReceiver(t, http.StatusNoContent)
		p := writeFile(t, "hook.yaml", "id: hooked\nwebhook:\n  url: "+h.URL+"/h\n  secret: billing\ntasks:\n  - name: a\n    run: echo hi\n")
		args := []string{"run", p}
		if asJSON {
			args = []string{"run", "--json", p}
		}
		r := weir(t, "", []string{"WEIR_WEBHOOK_SECRET_BILLING=s3cr3t"}, args...)
		r.WantCode(t, 0)
		if asJSON {
			decodeRecord(t, r)
		} else if !strings.Contains(r.Stdout, "webhook delivered to "+h.URL+"/h (attempt 1 of 5)") {
			t.Errorf("stdout:\n%s", r.Stdout)
		}
		bodies, sigs := h.received()
		if len(bodies) != 1 || !worker.VerifySignature([]byte("s3cr3t"), bodies[0], sigs[0]) {
			t.Fatalf("json %v: %d requests, signatures %q; want one, signed\n%s", asJSON, len(bodies), sigs, r.Stderr)
		}
		var rec workflowfile.Record
		if err := json.Unmarshal(bodies[0], &rec); err != nil || rec.ID != "hooked" || rec.State != "completed" {
			t.Errorf("body %s: %v", bodies[0], err)
		}
	}
}

// A delivery that gives up is a warning, naming the delivery and its last
// error; the exit status is the workflow's.
func TestRunWebhookNotDelivered(t *testing.T) {
	t.Parallel()
	h := newHookReceiver(t, http.StatusInternalServerError)
	p := writeFile(t, "hook.yaml", "id: unheard\nwebhook:\n  url: "+h.URL+"/h\n  attempts: 2\n  backoff: 10ms\ntasks:\n  - name: a\n    run: echo hi\n")
	r := weir(t, "", nil, "run", p)
	r.WantCode(t, 0)
	want := "weir: warning: the webhook delivery unheard@webhook to " + h.URL + "/h failed after 2 attempts: webhook POST " + h.URL + "/h: status 500"
	if !strings.Contains(r.Stderr, want) || !strings.Contains(r.Stdout, "webhook not delivered to "+h.URL+"/h: failed after 2 attempts") {
		t.Errorf("stderr %q\nstdout:\n%s\nwant the warning %q", r.Stderr, r.Stdout, want)
	}
	if bodies, _ := h.received(); len(bodies) != 2 {
		t.Errorf("%d requests, want 2", len(bodies))
	}
}

// weir run refuses, before it submits anything, a webhook it could not
// deliver: a secret not in its environment, a queue of the file's tasks.
func TestRunWebhookRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ doc, want string }{
		{"webhook: {url: http://127.0.0.1:1/h, secret: billing}\ntasks:\n  - {name: a, run: 'true'}\n",
			"field webhook.secret: weir run signs the webhook itself, with the secret in WEIR_WEBHOOK_SECRET_BILLING, which is not set"},
		{"webhook: {url: http://127.0.0.1:1/h, queue: work}\ntasks:\n  - {name: a, queue: work, run: 'true'}\n",
			`field webhook.queue: "work" is a queue of the file's tasks too`},
	} {
		r := weir(t, "", []string{"WEIR_WEBHOOK_SECRET_BILLING="}, "run", writeFile(t, "hook.yaml", c.doc))
		if r.Code != exitUsage || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("status %d, stderr %q; want %d and %q", r.Code, r.Stderr, exitUsage, c.want)
		}
	}
}

// weir run on a shared Redis leaves the delivery to the workers there, and
// says so: its worker would take other workflows' deliveries too.
func TestRunWebhookLeftToWorkers(t *testing.T) {
	t.Parallel()
	h := newHookReceiver(t, http.StatusNoContent)
	m := miniredis.RunT(t)
	p := writeFile(t, "hook.yaml", "id: shared\nwebhook:\n  url: "+h.URL+"/h\n  secret: billing\ntasks:\n  - name: a\n    run: echo hi\n")
	r := weir(t, "", []string{"WEIR_REDIS_URL=redis://" + m.Addr()}, "run", p)
	r.WantCode(t, 0)
	if !strings.Contains(r.Stdout, "webhook: the delivery shared@webhook is left to the workers of queue weir.webhooks") {
		t.Errorf("stdout:\n%s", r.Stdout)
	}
	if bodies, _ := h.received(); len(bodies) != 0 {
		t.Errorf("weir run on a shared Redis delivered the webhook: %d requests", len(bodies))
	}
}
