// Command quickstart runs a small workflow on weir's in-process store: a
// diamond of four tasks, where each task receives its dependencies' results
// and the join runs once both branches completed.
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// run submits the workflow, works it with two workers and prints each step
// and the final states.
func run(ctx context.Context, out io.Writer) error {
	store := memstore.New()
	plan := engine.Plan{ID: "photo-42", UndoOnCancel: true, Tasks: []engine.TaskSpec{
		{Name: "fetch", Queue: "default", Payload: []byte("photo-42.jpg")},
		{Name: "resize", Queue: "default", After: []string{"fetch"}},
		{Name: "thumbnail", Queue: "default", After: []string{"fetch"}},
		{Name: "publish", Queue: "default", After: []string{"resize", "thumbnail"}},
	}}
	if _, err := store.Submit(ctx, engine.SubmitParams{Plan: plan}); err != nil {
		return err
	}
	fmt.Fprintf(out, "submitted workflow %s with %d tasks\n", plan.ID, len(plan.Tasks))

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, 2)
	for w := 1; w <= 2; w++ {
		go func() { errs <- work(ctx, store, fmt.Sprintf("worker-%d", w), out) }()
	}
	final, err := store.AwaitWorkflow(ctx, plan.ID)
	cancel()
	for range 2 {
		if werr := <-errs; werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "workflow %s %s\n", final.ID, final.State)
	for _, t := range final.Tasks {
		fmt.Fprintf(out, "  %-10s %-10s %s\n", t.Name, t.State, t.Result)
	}
	return nil
}

// work claims jobs one at a time until ctx ends; finishing a job claims the
// next in the same call.
func work(ctx context.Context, store engine.Store, name string, out io.Writer) error {
	claim := engine.ClaimParams{Queues: []string{"default"}, Max: 1, Lease: 30 * time.Second, Wait: time.Second}
	jobs, err := store.Claim(ctx, claim)
	for {
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		if len(jobs) == 0 {
			jobs, err = store.Claim(ctx, claim)
			continue
		}
		outcomes := make([]engine.Outcome, len(jobs))
		for i, c := range jobs {
			outcomes[i] = engine.Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted, Result: handle(c)}
			fmt.Fprintf(out, "%s ran %s\n", name, c.Job.Task)
		}
		next := claim
		next.Wait = 0
		var res engine.FinishResult
		res, err = store.Finish(ctx, engine.FinishParams{Outcomes: outcomes, Claim: &next})
		jobs = res.Claimed
	}
}

// handle is the tasks' work: each result names the task and what it got.
func handle(c engine.Claimed) []byte {
	var got []string
	for _, d := range c.Deps {
		got = append(got, string(d.Result))
	}
	if len(got) == 0 {
		return []byte(c.Job.Task + "(" + string(c.Job.Payload) + ")")
	}
	return []byte(c.Job.Task + "(" + strings.Join(got, "+") + ")")
}
