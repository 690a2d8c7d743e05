package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	weirpkg "github.com/weirflow/weir"
	"io"
	"os"
	"strings"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/worker"
	"github.com/weirflow/weir/workflowfile"
)

// webhookConfig is `weir worker`'s delivery of webhooks from queue q: the
// body is the workflow record (spec/workflow-file.md), the secret named
// n is the environment's WEIR_WEBHOOK_SECRET_<N> (SecretEnv).
func webhookConfig(q string) worker.WebhookConfig {
	return worker.WebhookConfig{
		Queues: []string{q},
		Lookup: func(name string) ([]byte, bool) {
			v, ok := os.LookupEnv(SecretEnv(name))
			return []byte(v), ok && v != ""
		},
		Body: func(w weirpkg.Workflow) ([]byte, error) { return json.Marshal(workflowfile.NewRecord(w)) },
	}
}

// SecretEnv is the environment variable holding webhook secret name:
// WEIR_WEBHOOK_SECRET_ and the name upper-cased, '.' and '-' as '_'.
func SecretEnv(name string) string {
	return "WEIR_WEBHOOK_SECRET_" + strings.NewReplacer(".", "_", "-", "_").Replace(strings.ToUpper(name))
}

// printWebhook prints workflow w's webhook and its delivery's state, for
// weir status.
func printWebhook(ctx context.Context, out io.Writer, s engine.Store, w weirpkg.Workflow) {
	h := w.Webhook
	if h == nil {
		return
	}
	secret := "unsigned"
	if h.Secret != "" {
		secret = "secret " + h.Secret
	}
	fmt.Fprintf(out, "  webhook %s (%s, queue %s)\n", h.URL, secret, h.Queue)
	j, err := s.GetJob(ctx, h.Job)
	switch {
	case errors.Is(err, weirpkg.ErrNotFound) && !w.State.Ended():
		fmt.Fprintf(out, "  delivery %s: when the workflow ends\n", h.Job)
	case err != nil:
		fmt.Fprintf(out, "  delivery %s: %v\n", h.Job, err)
	default:
		line := fmt.Sprintf("  delivery %s: %s, attempt %d of %d", h.Job, j.State, j.Attempt, j.MaxAttempts)
		if j.Error != "" {
			line += ", last error: " + oneLine(j.Error)
		}
		fmt.Fprintln(out, line)
	}
}
