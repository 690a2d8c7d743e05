package client

import (
	"github.com/weirflow/weir"
	"strconv"
	"time"
)

// Webhook makes the workflow's end POST its final record to url (an
// absolute http or https URL), signed with the secret named secret ("":
// unsigned) that the delivering worker holds (worker.WebhookConfig.Secrets;
// the secret's bytes never reach the store). The script that ends the
// workflow enqueues the delivery, a plain job "<id>@webhook" on queue
// weir.WebhookQueue, retried up to weir.DefaultWebhookAttempts times;
// WebhookRetries and WebhookQueue change that. See spec/states.md,
// Webhooks.
func Webhook(url, secret string) WorkflowOption {
	return WorkflowOption{"Webhook(" + strconv.Quote(url) + ", " + strconv.Quote(secret) + ")", func(w *Workflow) {
		h := webhookOf(w)
		h.URL, h.Secret = url, secret
	}}
}

// WebhookRetries sets the delivery's attempts (0: the default) and base
// backoff (0: weir.DefaultBackoff).
func WebhookRetries(attempts int, backoff time.Duration) WorkflowOption {
	return WorkflowOption{"WebhookRetries(" + strconv.Itoa(attempts) + ", " + backoff.String() + ")", func(w *Workflow) {
		h := webhookOf(w)
		h.MaxAttempts, h.Backoff = attempts, backoff
	}}
}

// WebhookQueue puts the delivery on queue q instead of weir.WebhookQueue.
func WebhookQueue(q string) WorkflowOption {
	return WorkflowOption{"WebhookQueue(" + strconv.Quote(q) + ")", func(w *Workflow) {
		webhookOf(w).Queue = q
	}}
}

func webhookOf(w *Workflow) *weir.Webhook {
	if w.webhook == nil {
		w.webhook = &weir.Webhook{}
	}
	return w.webhook
}

func cloneWebhook(h *weir.Webhook) *weir.Webhook {
	if h == nil {
		return nil
	}
	c := *h
	return &c
}
