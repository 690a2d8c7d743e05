package client_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/worker"
)

var (
	sendQ   = client.NewQueue[string, string]("send")
	reportQ = client.NewQueue[string, string]("report")
)

// A batch of e-mails with its callbacks: Then reports success, Catch the
// first failure, Finally runs last whatever happened. The callbacks are
// tasks on a queue, run by any worker; each reads the batch's counts.
func ExampleBatch() {
	ctx := context.Background()
	store := memstore.New()
	w := worker.New(store, worker.Config{Concurrency: 1})
	worker.Handle(w, sendQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		if j.Payload == "bob@bad" {
			return "", worker.NonRetryable(errors.New("mailbox unknown"))
		}
		return "sent to " + j.Payload, nil
	})
	worker.Handle(w, reportQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		g := j.Group()
		line := fmt.Sprintf("%s: %d of %d sent", j.Payload, g.Completed, g.Total)
		if g.FirstFailure != nil {
			line += fmt.Sprintf(", first failure %s (%s)", g.FirstFailure.Task, g.FirstFailure.Error)
		}
		fmt.Println(line)
		return line, nil
	})
	_ = w.Start(ctx)
	defer w.Stop(ctx)

	wf := client.NewWorkflow()
	b := client.Batch(wf, "emails",
		client.NewStep("ana", sendQ, "ana@ok"),
		client.NewStep("bob", sendQ, "bob@bad"),
		client.NewStep("eve", sendQ, "eve@ok"))
	client.Then(b, reportQ, "then")
	client.Catch(b, reportQ, "catch")
	client.Finally(b, reportQ, "finally")
	if err := client.New(store).Submit(ctx, wf); err != nil {
		panic(err)
	}
	s, _ := wf.Wait(ctx)
	fmt.Println(s.State)
	// Output:
	// catch: 2 of 3 sent, first failure bob (mailbox unknown)
	// finally: 2 of 3 sent, first failure bob (mailbox unknown)
	// failed
}

// A chain stops at its first failure; with every step completed, Then
// runs and Catch ends "no_failure" without running.
func ExampleChain() {
	ctx := context.Background()
	store := memstore.New()
	w := worker.New(store, worker.Config{Concurrency: 1})
	worker.Handle(w, sendQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		return "sent to " + j.Payload, nil
	})
	worker.Handle(w, reportQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		fmt.Printf("%s: %d of %d\n", j.Payload, j.Group().Completed, j.Group().Total)
		return "", nil
	})
	_ = w.Start(ctx)
	defer w.Stop(ctx)

	wf := client.NewWorkflow()
	ch := client.Chain(wf, "welcome",
		client.NewStep("greet", sendQ, "ana@ok"),
		client.NewStep("follow-up", sendQ, "ana@ok"))
	client.Then(ch, reportQ, "then")
	client.Catch(ch, reportQ, "catch")
	if err := client.New(store).Submit(ctx, wf); err != nil {
		panic(err)
	}
	s, _ := wf.Wait(ctx)
	fmt.Println(s.State)
	for _, t := range s.Tasks {
		fmt.Println(strings.TrimSpace(fmt.Sprintln(t.Name, t.State, t.Error)))
	}
	// Output:
	// then: 2 of 2
	// completed
	// greet completed
	// follow-up completed
	// welcome.then completed
	// welcome.catch cancelled no_failure
}
