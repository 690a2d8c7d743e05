package memstore_test

import (
	"context"
	"fmt"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
)

// A two-task workflow run by hand: submit, claim, finish, claim the
// promoted task, finish, await the end.
func Example() {
	ctx := context.Background()
	s := memstore.New()

	_, err := s.Submit(ctx, engine.SubmitParams{Plan: engine.Plan{
		ID: "order-1",
		Tasks: []engine.TaskSpec{
			{Name: "charge", Queue: "payments"},
			{Name: "ship", Queue: "shipping", After: []string{"charge"}},
		},
	}})
	if err != nil {
		panic(err)
	}

	claim := engine.ClaimParams{Queues: []string{"payments", "shipping"}, Max: 1, Lease: time.Minute, Wait: time.Second}
	for range 2 {
		c, err := s.Claim(ctx, claim)
		if err != nil {
			panic(err)
		}
		job := c[0]
		fmt.Printf("claimed %s, after %d dependencies\n", job.Job.ID, len(job.Deps))
		res, err := s.Finish(ctx, engine.FinishParams{Outcomes: []engine.Outcome{{
			JobID: job.Job.ID, Token: job.Lease.Token, Kind: engine.OutcomeCompleted, Result: []byte("ok"),
		}}})
		if err != nil {
			panic(err)
		}
		fmt.Printf("finished %s: pushed %v\n", job.Job.ID, res.Settled[0].Pushed)
	}

	w, err := s.AwaitWorkflow(ctx, "order-1")
	if err != nil {
		panic(err)
	}
	fmt.Println("workflow", w.State)
	for _, t := range w.Tasks {
		fmt.Printf("  %s %s %s\n", t.Name, t.State, t.Result)
	}
	// Output:
	// claimed order-1/charge, after 0 dependencies
	// finished order-1/charge: pushed [{order-1/ship shipping}]
	// claimed order-1/ship, after 1 dependencies
	// finished order-1/ship: pushed []
	// workflow completed
	//   charge completed ok
	//   ship completed ok
}

// A namespace of 4 partitions (spec/partitions.md): each job lands in the
// partition of its ID, and claim call c starts at partition c mod 4, so
// priority orders the jobs of one partition only, and no partition waits
// behind another's urgent work.
func Example_partitions() {
	ctx := context.Background()
	cfg := engine.DefaultConfig()
	cfg.Partitions = 4
	s := memstore.New(memstore.WithConfig(cfg))

	// a, e: partition 0; b: 1; c: 2; d: 3
	for _, j := range []engine.JobSpec{
		{ID: "a", Queue: "q", Priority: 9}, {ID: "e", Queue: "q", Priority: 9},
		{ID: "b", Queue: "q"}, {ID: "c", Queue: "q"}, {ID: "d", Queue: "q", Priority: -9},
	} {
		fmt.Printf("%s in partition %d\n", j.ID, engine.Partition(j.ID, cfg.Partitions))
		if _, err := s.Enqueue(ctx, engine.EnqueueParams{Job: j}); err != nil {
			panic(err)
		}
	}
	for c := range 4 {
		got, err := s.Claim(ctx, engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute})
		if err != nil {
			panic(err)
		}
		fmt.Printf("claim %d: %s\n", c, got[0].Job.ID)
	}
	// Output:
	// a in partition 0
	// e in partition 0
	// b in partition 1
	// c in partition 2
	// d in partition 3
	// claim 0: a
	// claim 1: b
	// claim 2: c
	// claim 3: d
}
