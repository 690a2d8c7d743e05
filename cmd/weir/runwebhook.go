package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	weirpkg "github.com/weirflow/weir"
	"io"
	"os"
	"slices"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/command"
	"github.com/weirflow/weir/worker"
	"github.com/weirflow/weir/workflowfile"
)

// runWebhook sets up weir run's delivery of the file's webhook, on w
// before it starts, and reports whether it will deliver it. On the
// embedded server nothing else can: w delivers from the webhook's queue,
// signing with WEIR_WEBHOOK_SECRET_<NAME> as weir worker does. On a shared
// Redis the workers there deliver it (weir run's worker would otherwise
// also take the deliveries of other workflows, whose secrets it may not
// hold). Checked first, before anything is submitted: the secret is in the
// environment, and the queue is not one of the file's tasks'.
func runWebhook(w *worker.Worker, lf *workflowfile.File, embedded bool) (bool, error) {
	h := lf.Plan.Webhook
	if h == nil || !embedded {
		return false, nil
	}
	q := cmp.Or(h.Queue, weirpkg.WebhookQueue)
	if slices.Contains(lf.Queues, q) {
		return false, command.Usage(&workflowfile.Error{File: lf.Name, Field: "webhook.queue",
			Problem: fmt.Sprintf("%q is a queue of the file's tasks too: weir run delivers the webhook itself, from a queue of its own (leave webhook.queue out for %s)", q, weirpkg.WebhookQueue)})
	}
	if h.Secret != "" && os.Getenv(SecretEnv(h.Secret)) == "" {
		return false, command.Usage(&workflowfile.Error{File: lf.Name, Field: "webhook.secret",
			Problem: fmt.Sprintf("weir run signs the webhook itself, with the secret in %s, which is not set", SecretEnv(h.Secret))})
	}
	if err := w.Webhooks(webhookConfig(q)); err != nil {
		return false, command.Fail(err)
	}
	return true, nil
}

// awaitDelivery waits for the delivery of the ended workflow's webhook h
// to end, printing to out the failed attempts it sees (it reads the
// delivery every pollInterval: an attempt retried sooner may pass unseen)
// and the end; a delivery that gave up is also a warning on stderr. It is an error only
// when ctx ends first (weir run was interrupted) or the store fails.
func awaitDelivery(ctx context.Context, s engine.Store, h *weirpkg.WebhookStatus, out, stderr io.Writer) error {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	reported := 0 // the last attempt whose failure was printed
	for {
		j, err := s.GetJob(ctx, h.Job)
		switch {
		case errors.Is(err, weirpkg.ErrNotFound) && ctx.Err() == nil:
			// not written yet: the workflow's end writes it
		case err != nil:
			if ctx.Err() != nil {
				return command.Fail(fmt.Errorf("interrupted: the webhook delivery %s to %s has not ended", h.Job, h.URL))
			}
			return command.Fail(fmt.Errorf("webhook delivery %s: %w", h.Job, err))
		case j.State == weirpkg.Completed:
			fmt.Fprintf(out, "webhook delivered to %s (attempt %d of %d)\n", h.URL, j.Attempt, j.MaxAttempts)
			return nil
		case j.State.Ended():
			fmt.Fprintf(out, "webhook not delivered to %s: %s after %d attempts: %s\n", h.URL, j.State, j.Attempt, oneLine(j.Error))
			fmt.Fprintf(stderr, "weir: warning: the webhook delivery %s to %s %s after %d attempts: %s\n",
				h.Job, h.URL, j.State, j.Attempt, oneLine(j.Error))
			return nil
		case j.State == weirpkg.Queued && j.Error != "" && j.Attempt > reported:
			// an attempt failed; the next waits for its backoff
			reported = j.Attempt
			fmt.Fprintf(out, "webhook to %s: attempt %d of %d failed: %s; retrying\n", h.URL, j.Attempt, j.MaxAttempts, oneLine(j.Error))
		}
		select {
		case <-ctx.Done():
			return command.Fail(fmt.Errorf("interrupted: the webhook delivery %s to %s has not ended", h.Job, h.URL))
		case <-t.C:
		}
	}
}
