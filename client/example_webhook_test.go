package client_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/worker"
)

var invoiceQ = client.NewQueue[string, string]("invoice")

// A workflow that reports its end: when it ends, its final record is
// POSTed to the URL, signed with the secret named "billing". The worker
// holds the secret's bytes; the receiver checks the signature. A 500 is
// retried with backoff.
func ExampleWebhook() {
	ctx := context.Background()
	secret := []byte("s3cr3t")
	calls := 0
	done := make(chan string, 1)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if calls++; calls == 1 {
			w.WriteHeader(http.StatusInternalServerError) // the first attempt fails
			return
		}
		done <- fmt.Sprintf("attempt %s, signed: %v", r.Header.Get(worker.HeaderAttempt),
			worker.VerifySignature(secret, body, r.Header.Get(worker.HeaderSignature)))
	}))
	defer receiver.Close()

	store := memstore.New()
	w := worker.New(store, worker.Config{Concurrency: 1, SweepInterval: 20 * time.Millisecond})
	worker.Handle(w, invoiceQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		return "invoiced " + j.Payload, nil
	})
	_ = w.Webhooks(worker.WebhookConfig{Secrets: map[string][]byte{"billing": secret}})
	_ = w.Start(ctx)
	defer w.Stop(ctx)

	wf := client.NewWorkflow(client.WorkflowID("order-7"),
		client.Webhook(receiver.URL+"/hooks", "billing"), client.WebhookRetries(3, 10*time.Millisecond))
	client.AddTask(wf, "invoice", invoiceQ, "order-7")
	if err := client.New(store).Submit(ctx, wf); err != nil {
		panic(err)
	}
	fmt.Println(<-done)
	fmt.Println("delivery job:", weir.WebhookJobID("order-7"))
	// Output:
	// attempt 2, signed: true
	// delivery job: order-7@webhook
}
