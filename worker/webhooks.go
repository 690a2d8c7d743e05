package worker

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// WebhookConfig configures the delivery of workflow webhooks
// (spec/states.md, Webhooks).
type WebhookConfig struct {
	// Queues are the webhook queues this worker delivers from; empty
	// means weir.WebhookQueue.
	Queues []string
	// Secrets holds the signing keys by the names plans give
	// (Webhook.Secret). A delivery naming a secret not here fails, not
	// retried: its receiver would reject it anyway.
	Secrets map[string][]byte
	// Lookup, when set, finds the secrets Secrets does not hold (`weir
	// worker` reads WEIR_WEBHOOK_SECRET_<NAME> from its environment).
	Lookup func(name string) ([]byte, bool)
	// Client sends the requests; nil means a client of its own.
	Client *http.Client
	// Timeout bounds one attempt; 0 means 10 s.
	Timeout time.Duration
	// Body encodes the final record; nil means encoding/json of
	// weir.Workflow. `weir worker` sends the REST API's workflow record
	// (spec/workflow-file.md, "The workflow record").
	Body func(weir.Workflow) ([]byte, error)
}

// Delivery headers.
const (
	HeaderSignature = "Weir-Signature" // "sha256=" + hex HMAC-SHA256 of the body
	HeaderDelivery  = "Weir-Delivery"  // the delivery's job ID
	HeaderAttempt   = "Weir-Attempt"   // the attempt, 1 for the first
	HeaderWorkflow  = "Weir-Workflow"  // the workflow's ID
)

// Sign is the Weir-Signature value of body under secret.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// VerifySignature reports whether header is body's Weir-Signature under
// secret (a constant-time comparison), for receivers.
func VerifySignature(secret, body []byte, header string) bool {
	return hmac.Equal([]byte(Sign(secret, body)), []byte(header))
}

// Webhooks registers the delivery of workflow webhooks on cfg's queues:
// each delivery job reads its workflow's record and POSTs it to the
// webhook's URL; a 2xx answer completes it, anything else fails the
// attempt (retried per the webhook's MaxAttempts and Backoff).
func (w *Worker) Webhooks(cfg WebhookConfig) error {
	qs := cfg.Queues
	if len(qs) == 0 {
		qs = []string{weir.WebhookQueue}
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Body == nil {
		cfg.Body = func(wf weir.Workflow) ([]byte, error) { return json.Marshal(wf) }
	}
	d := &deliverer{cfg: cfg, store: w.store}
	for _, q := range qs {
		if err := w.register(q, d.deliver, nil); err != nil {
			return err
		}
	}
	return nil
}

type deliverer struct {
	cfg   WebhookConfig
	store engine.Store
}

func (d *deliverer) deliver(ctx context.Context, j *JobInfo) error {
	var p engine.WebhookPayload
	if err := json.Unmarshal(j.RawPayload, &p); err != nil || p.Workflow == "" || p.URL == "" {
		return NonRetryable(fmt.Errorf("webhook delivery %s: not a delivery's payload", j.ID))
	}
	var secret []byte
	if p.Secret != "" {
		s, ok := d.cfg.Secrets[p.Secret]
		if !ok && d.cfg.Lookup != nil {
			s, ok = d.cfg.Lookup(p.Secret)
		}
		if !ok {
			return NonRetryable(fmt.Errorf("webhook delivery %s: this worker holds no secret %q", j.ID, p.Secret))
		}
		secret = s
	}
	wf, err := d.store.GetWorkflow(ctx, p.Workflow)
	if errors.Is(err, weir.ErrNotFound) {
		return NonRetryable(fmt.Errorf("webhook delivery %s: %w", j.ID, err))
	}
	if err != nil {
		return fmt.Errorf("webhook delivery %s: reading the workflow: %w", j.ID, err)
	}
	body, err := d.cfg.Body(wf)
	if err != nil {
		return NonRetryable(fmt.Errorf("webhook delivery %s: encoding the record: %w", j.ID, err))
	}
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL, bytes.NewReader(body))
	if err != nil {
		return NonRetryable(fmt.Errorf("webhook delivery %s: %w", j.ID, err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderDelivery, j.ID)
	req.Header.Set(HeaderAttempt, strconv.Itoa(j.Attempt))
	req.Header.Set(HeaderWorkflow, p.Workflow)
	if secret != nil {
		req.Header.Set(HeaderSignature, Sign(secret, body))
	}
	resp, err := d.cfg.Client.Do(req)
	if err != nil {
		return fmt.Errorf("webhook POST %s: %w", p.URL, err)
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("webhook POST %s: status %d", p.URL, resp.StatusCode)
	}
	return nil
}
