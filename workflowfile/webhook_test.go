package workflowfile

import (
	"errors"
	"github.com/weirflow/weir"
	"os"
	"strings"
	"testing"
	"time"
)

// webhook: its fields become the plan's Webhook; a bad URL, secret name,
// attempts or backoff, and an unknown field, name the field by its path
// in the file (attempts, not the engine's max_attempts).
func TestWebhookField(t *testing.T) {
	f, err := Parse("f.yaml", []byte("webhook: {url: 'https://h.example/x', secret: billing, queue: hq, attempts: 3, backoff: 2s}\ntasks: [{name: a, run: x}]"), Options{})
	want := weir.Webhook{URL: "https://h.example/x", Secret: "billing", Queue: "hq", MaxAttempts: 3, Backoff: 2 * time.Second}
	if err != nil || f.Plan.Webhook == nil || *f.Plan.Webhook != want {
		t.Fatalf("webhook: %+v, %v", f, err)
	}
	f, err = Parse("f.json", []byte(`{"webhook": {"url": "http://127.0.0.1:9/h"}, "tasks": [{"name": "a", "run": "x"}]}`), Options{})
	if err != nil || f.Plan.Webhook == nil || f.Plan.Webhook.URL != "http://127.0.0.1:9/h" || f.Plan.Webhook.Secret != "" {
		t.Fatalf("webhook in JSON: %+v, %v", f, err)
	}
	for doc, field := range map[string]string{
		"webhook: {url: 'ftp://x/y'}\ntasks: [{name: a, run: x}]":                 "webhook.url",
		"webhook: {secret: s}\ntasks: [{name: a, run: x}]":                        "webhook.url",
		"webhook: {url: 'http://x/', secret: 'a b'}\ntasks: [{name: a, run: x}]":  "webhook.secret",
		"webhook: {url: 'http://x/', backoff: soon}\ntasks: [{name: a, run: x}]":  "webhook.backoff",
		"webhook: {url: 'http://x/', attempts: -1}\ntasks: [{name: a, run: x}]":   "webhook.attempts",
		"webhook: {url: 'http://x/', attempts: 1001}\ntasks: [{name: a, run: x}]": "webhook.attempts",
		"webhook: {url: 'http://x/', colour: blue}\ntasks: [{name: a, run: x}]":   "webhook.colour",
		"webhook: 'http://x/'\ntasks: [{name: a, run: x}]":                        "webhook",
	} {
		_, err := Parse("f.yaml", []byte(doc), Options{})
		var fe *Error
		if !errors.As(err, &fe) || fe.Path != field || !strings.Contains(fe.Error(), "field "+field+":") {
			t.Errorf("%q: %v, want an error naming %s", doc, err, field)
		}
	}
	b, err := os.ReadFile("../examples/webhook.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if f, err := Parse("webhook.yaml", b, Options{}); err != nil || f.Plan.Webhook == nil || f.Plan.Webhook.Secret != "billing" {
		t.Fatalf("examples/webhook.yaml: %+v, %v", f, err)
	}
}
