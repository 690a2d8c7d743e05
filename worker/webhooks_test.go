package worker_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/worker"
)

// hookServer is a receiver on loopback that answers with the statuses
// given, in turn (the last one after), and records what it got.
type hookServer struct {
	*httptest.Server
	mu       sync.Mutex
	statuses []int
	bodies   [][]byte
	headers  []http.Header
}

func newHookServer(t *testing.T, statuses ...int) *hookServer {
	h := &hookServer{statuses: statuses}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		n := len(h.bodies)
		h.bodies = append(h.bodies, b)
		h.headers = append(h.headers, r.Header.Clone())
		st := h.statuses[min(n, len(h.statuses)-1)]
		h.mu.Unlock()
		if r.Method != http.MethodPost {
			st = http.StatusMethodNotAllowed
		}
		w.WriteHeader(st)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hookServer) got() ([][]byte, []http.Header) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([][]byte(nil), h.bodies...), append([]http.Header(nil), h.headers...)
}

var hookTaskQ = client.NewQueue[int, int]("hooked")

// waitJob polls job id until it is in state st.
func waitJob(t *testing.T, ctx context.Context, s client.Store, id string, st weir.State) weir.Job {
	t.Helper()
	for {
		j, err := s.GetJob(ctx, id)
		if err == nil && j.State == st {
			return j
		}
		select {
		case <-ctx.Done():
			t.Fatalf("job %s: not %s (last: %+v, %v)", id, st, j, err)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func hookWorker(t *testing.T, s client.Store, secrets map[string][]byte) {
	w := worker.New(s, fastConfig())
	worker.Handle(w, hookTaskQ, func(ctx context.Context, j *worker.Job[int]) (int, error) { return j.Payload * 2, nil })
	if err := w.Webhooks(worker.WebhookConfig{Secrets: secrets, Timeout: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	start(t, w)
}

// A delivery answered 500 is retried with its backoff; the third attempt,
// answered 204, completes it. Every attempt is signed; the body is the
// final record.
func TestWebhookRetriedThenDelivered(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		srv := newHookServer(t, 500, 500, 204)
		s := b.open(t)
		secret := []byte("s3cr3t")
		hookWorker(t, s, map[string][]byte{"billing": secret})
		wf := client.NewWorkflow(client.WorkflowID("hooked-1"), client.Webhook(srv.URL+"/done", "billing"),
			client.WebhookRetries(4, 10*time.Millisecond))
		client.AddTask(wf, "a", hookTaskQ, 21)
		if err := client.New(s).Submit(ctx, wf); err != nil {
			t.Fatal(err)
		}
		j := waitJob(t, ctx, s, weir.WebhookJobID("hooked-1"), weir.Completed)
		if j.Attempt != 3 || j.Queue != weir.WebhookQueue || j.MaxAttempts != 4 {
			t.Fatalf("delivery job = attempt %d queue %s max %d, want 3 on %s of 4", j.Attempt, j.Queue, j.MaxAttempts, weir.WebhookQueue)
		}
		bodies, headers := srv.got()
		if len(bodies) != 3 {
			t.Fatalf("the receiver got %d requests, want 3", len(bodies))
		}
		for i, h := range headers {
			if !worker.VerifySignature(secret, bodies[i], h.Get(worker.HeaderSignature)) {
				t.Errorf("request %d: signature %q does not verify", i+1, h.Get(worker.HeaderSignature))
			}
			if worker.VerifySignature([]byte("other"), bodies[i], h.Get(worker.HeaderSignature)) {
				t.Errorf("request %d: verifies under another secret", i+1)
			}
			if h.Get(worker.HeaderAttempt) != string(rune('1'+i)) || h.Get(worker.HeaderDelivery) != "hooked-1@webhook" ||
				h.Get(worker.HeaderWorkflow) != "hooked-1" || h.Get("Content-Type") != "application/json" {
				t.Errorf("request %d: headers %v", i+1, h)
			}
		}
		var rec weir.Workflow
		if err := json.Unmarshal(bodies[2], &rec); err != nil {
			t.Fatal(err)
		}
		if rec.ID != "hooked-1" || rec.State != weir.WorkflowCompleted || len(rec.Tasks) != 1 || string(rec.Tasks[0].Result) == "" {
			t.Fatalf("body = %+v, want the completed record", rec)
		}
		if rec.Webhook == nil || rec.Webhook.URL != srv.URL+"/done" || rec.Webhook.Secret != "billing" || rec.Webhook.Job != "hooked-1@webhook" {
			t.Fatalf("record's webhook = %+v", rec.Webhook)
		}
	})
}

// A receiver that keeps failing: the delivery gives up after its attempts,
// failed with the last error (status and URL), and is listed among its
// queue's failed jobs; an unsigned delivery has no signature header.
func TestWebhookGivesUp(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		srv := newHookServer(t, 503)
		s := b.open(t)
		hookWorker(t, s, nil)
		wf := client.NewWorkflow(client.WorkflowID("hooked-2"), client.Webhook(srv.URL, ""),
			client.WebhookRetries(2, 10*time.Millisecond), client.WebhookQueue("hooks-b"))
		client.AddTask(wf, "a", hookTaskQ, 1)
		// this worker delivers from weir.webhooks only: another one takes hooks-b
		w := worker.New(s, fastConfig())
		if err := w.Webhooks(worker.WebhookConfig{Queues: []string{"hooks-b"}}); err != nil {
			t.Fatal(err)
		}
		start(t, w)
		if err := client.New(s).Submit(ctx, wf); err != nil {
			t.Fatal(err)
		}
		j := waitJob(t, ctx, s, "hooked-2@webhook", weir.Failed)
		if j.Attempt != 2 || !strings.Contains(j.Error, "status 503") || !strings.Contains(j.Error, srv.URL) {
			t.Fatalf("delivery = attempt %d error %q, want 2 attempts and the status and URL", j.Attempt, j.Error)
		}
		_, headers := srv.got()
		if len(headers) != 2 || headers[0].Get(worker.HeaderSignature) != "" {
			t.Fatalf("requests %d, signature %q; want 2 unsigned", len(headers), headers[0].Get(worker.HeaderSignature))
		}
		page, err := s.ListJobs(ctx, weir.ListJobsParams{Queue: "hooks-b", State: weir.ListFailed})
		if err != nil || len(page.Jobs) != 1 || page.Jobs[0].ID != "hooked-2@webhook" {
			t.Fatalf("failed jobs of hooks-b = %+v, %v", page, err)
		}
	})
}

// A delivery naming a secret the worker does not hold fails at once, not
// retried, and sends nothing.
func TestWebhookUnknownSecret(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		srv := newHookServer(t, 200)
		s := b.open(t)
		hookWorker(t, s, map[string][]byte{"billing": []byte("x")})
		wf := client.NewWorkflow(client.WorkflowID("hooked-3"), client.Webhook(srv.URL, "payroll"), client.WebhookRetries(3, 0))
		client.AddTask(wf, "a", hookTaskQ, 1)
		if err := client.New(s).Submit(ctx, wf); err != nil {
			t.Fatal(err)
		}
		j := waitJob(t, ctx, s, "hooked-3@webhook", weir.Failed)
		if j.Attempt != 1 || !strings.Contains(j.Error, `no secret "payroll"`) {
			t.Fatalf("delivery = attempt %d error %q", j.Attempt, j.Error)
		}
		if bodies, _ := srv.got(); len(bodies) != 0 {
			t.Fatalf("the receiver got %d requests", len(bodies))
		}
	})
}
