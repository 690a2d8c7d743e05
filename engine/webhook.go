package engine

import (
	"encoding/json"
	"net/url"
	"time"

	"github.com/weirflow/weir"
)

// Webhooks (spec/states.md, Webhooks): a plan's Webhook makes the call that
// ends the workflow also write a plain job, its delivery, under
// WebhookJobID(id) on the webhook's queue (a job already under that ID is
// left as it is). A worker delivers it; the store knows nothing more.

// MaxWebhookURL bounds a webhook's URL, in bytes.
const MaxWebhookURL = 2048

// WebhookPayload is a delivery job's payload: what its worker needs.
type WebhookPayload struct {
	Workflow string `json:"workflow"`
	URL      string `json:"url"`
	Secret   string `json:"secret,omitempty"`
}

// WebhookJob is the spec of workflow p's delivery job (p.Webhook set).
func WebhookJob(p Plan) JobSpec {
	h := p.Webhook
	b, _ := json.Marshal(WebhookPayload{Workflow: p.ID, URL: h.URL, Secret: h.Secret})
	return JobSpec{
		ID: weir.WebhookJobID(p.ID), Queue: webhookQueue(h), Payload: b,
		MaxAttempts: webhookAttempts(h), Backoff: backoffOrDefault(h.Backoff),
	}
}

func webhookQueue(h *weir.Webhook) string {
	if h.Queue == "" {
		return weir.WebhookQueue
	}
	return h.Queue
}

func webhookAttempts(h *weir.Webhook) int {
	if h.MaxAttempts == 0 {
		return weir.DefaultWebhookAttempts
	}
	return h.MaxAttempts
}

// webhookStatus is the record's view of plan p's webhook in run run, or
// nil.
func webhookStatus(p *Plan, run int) *weir.WebhookStatus {
	if p.Webhook == nil {
		return nil
	}
	return &weir.WebhookStatus{URL: p.Webhook.URL, Secret: p.Webhook.Secret, Queue: webhookQueue(p.Webhook), Job: weir.WebhookRunJobID(p.ID, run)}
}

// validateWebhook checks plan p's webhook, if any.
func validateWebhook(p Plan, l weir.Limits) error {
	h := p.Webhook
	if h == nil {
		return nil
	}
	u, err := url.Parse(h.URL)
	switch {
	case len(h.URL) > MaxWebhookURL:
		return tooLarge("", "webhook.url", "%d bytes, the limit is %d", len(h.URL), MaxWebhookURL)
	case err != nil:
		return invalid("", "webhook.url", "%q is not a URL: %v", h.URL, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return invalid("", "webhook.url", "%q is not an absolute http or https URL", h.URL)
	case u.Host == "":
		return invalid("", "webhook.url", "%q has no host", h.URL)
	case u.User != nil:
		return invalid("", "webhook.url", "%q carries credentials: name a secret instead", h.URL)
	}
	if h.Secret != "" && !ValidName(h.Secret) {
		return invalid("", "webhook.secret", "secret name %q must "+NameRule, h.Secret)
	}
	if h.Queue != "" && !ValidName(h.Queue) {
		return invalid("", "webhook.queue", "queue name %q must "+NameRule, h.Queue)
	}
	if h.MaxAttempts < 0 || h.MaxAttempts > l.MaxAttempts {
		return invalid("", "webhook.max_attempts", "%d is outside [0, %d] (0 means %d)", h.MaxAttempts, l.MaxAttempts, weir.DefaultWebhookAttempts)
	}
	if h.Backoff < 0 || h.Backoff > l.MaxBackoff || h.Backoff%time.Millisecond != 0 {
		return invalid("", "webhook.backoff", "%v must be whole milliseconds in [0, %v]", h.Backoff, l.MaxBackoff)
	}
	if n := len(WebhookJob(p).Payload); n > l.MaxPayload {
		return tooLarge("", "webhook.url", "the delivery's payload is %d bytes, the limit is %d", n, l.MaxPayload)
	}
	return nil
}

// deliver writes workflow w's delivery job, if its plan has a webhook:
// the one of its run (WebhookRunJobID).
func (m *Model) deliver(w *workflow, now int64) {
	if w.c.plan.Webhook == nil {
		return
	}
	s := WebhookJob(w.c.plan)
	s.ID = weir.WebhookRunJobID(w.id, w.run)
	m.enqueue(now, s, JobHash(s))
}
