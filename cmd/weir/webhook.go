package main

import (
	"encoding/json"
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
		Body: func(w engine.Workflow) ([]byte, error) { return json.Marshal(workflowfile.NewRecord(w)) },
	}
}

// SecretEnv is the environment variable holding webhook secret name:
// WEIR_WEBHOOK_SECRET_ and the name upper-cased, '.' and '-' as '_'.
func SecretEnv(name string) string {
	return "WEIR_WEBHOOK_SECRET_" + strings.NewReplacer(".", "_", "-", "_").Replace(strings.ToUpper(name))
}
