package weir

import (
	"strconv"
	"strings"
	"time"
)

// Webhook asks for a delivery when a workflow ends (spec/states.md,
// Webhooks): the script that ends the workflow enqueues a plain job,
// its delivery, under WebhookJobID on Queue; a worker with
// worker.Webhooks claims it, reads the final record and POSTs it to URL,
// signed with the secret named Secret. The delivery is retried as any
// plain job (MaxAttempts, Backoff), and failed deliveries are listed as
// failed jobs of Queue.
type Webhook struct {
	// URL is an absolute http or https URL.
	URL string
	// Secret names the key the delivering worker signs with (its bytes
	// never reach the store); empty: the delivery is not signed.
	Secret string
	// Queue is the delivery's queue; empty means WebhookQueue.
	Queue string
	// MaxAttempts counts every attempt; 0 means DefaultWebhookAttempts.
	MaxAttempts int
	// Backoff is the base retry delay; 0 means DefaultBackoff.
	Backoff time.Duration
}

// WebhookQueue is the default queue of webhook deliveries.
const WebhookQueue = "weir.webhooks"

// DefaultWebhookAttempts is a delivery's attempts when Webhook.MaxAttempts
// is 0.
const DefaultWebhookAttempts = 5

// WebhookSuffix ends a delivery's job ID. A workflow, task or job ID holds
// no '@' but in a schedule tick's "<name>@<digits>" (engine.ValidID), which
// no "@webhook" ends, so a delivery never collides with another job.
const WebhookSuffix = "@webhook"

// WebhookJobID is the job ID of workflow id's webhook delivery (of its
// first run).
func WebhookJobID(workflow string) string { return workflow + WebhookSuffix }

// WebhookRunJobID is the job ID of the delivery of run run of workflow id
// (RerunWorkflow): WebhookJobID for run 1, "<id>@webhook.<run>" after, so
// that the end of a re-run writes a delivery of its own.
func WebhookRunJobID(workflow string, run int) string {
	if run <= 1 {
		return WebhookJobID(workflow)
	}
	return workflow + WebhookSuffix + "." + strconv.Itoa(run)
}

// WebhookOf returns the workflow of delivery job ID id (of any run), or
// false when id is no delivery's.
func WebhookOf(id string) (string, bool) {
	i := strings.LastIndex(id, WebhookSuffix)
	if i < 0 {
		return "", false
	}
	wf, rest := id[:i], id[i+len(WebhookSuffix):]
	if rest == "" {
		return wf, true
	}
	n, err := strconv.Atoi(strings.TrimPrefix(rest, "."))
	if rest[0] != '.' || err != nil || n < 2 || strconv.Itoa(n) != rest[1:] {
		return "", false
	}
	return wf, true
}

// WebhookStatus is a workflow's webhook as its record shows it.
type WebhookStatus struct {
	URL    string
	Secret string
	Queue  string
	// Job is the delivery's job ID (WebhookRunJobID of the workflow's
	// run: each run's end writes its own): read it with GetJob for
	// its state, attempts and last error once the workflow ended.
	Job string
}
