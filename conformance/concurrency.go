package conformance

import (
	"context"
	"github.com/weirflow/weir"
	"strconv"
	"sync"
	"time"

	"github.com/weirflow/weir/engine"
)

// runConcurrency checks atomicity where the model cannot: the model is
// sequential, so these cases check the outcome every interleaving must
// have.
func runConcurrency(t suiteT, mk maker) {
	t.Run("JoinPromotedOnce", func(t suiteT) {
		t.Parallel()
		const parents = 8
		for round := range 5 {
			clk := newClock()
			s := mk.store(t, engine.DefaultConfig(), clk.Now)
			ctx := context.Background()
			p := engine.Plan{ID: "w" + strconv.Itoa(round)}
			var names []string
			for i := range parents {
				n := "p" + strconv.Itoa(i)
				names = append(names, n)
				p.Tasks = append(p.Tasks, engine.TaskSpec{Name: n, Queue: "q"})
			}
			p.Tasks = append(p.Tasks, engine.TaskSpec{Name: "join", Queue: "j", After: names})
			if _, err := s.Submit(ctx, engine.SubmitParams{Plan: p}); err != nil {
				t.Fatal(err)
			}
			cs, err := s.Claim(ctx, engine.ClaimParams{Queues: []string{"q"}, Max: parents, Lease: time.Minute})
			if err != nil || len(cs) != parents {
				t.Fatalf("claimed %d parents (%v), want %d", len(cs), err, parents)
			}
			pushes := make([]int, parents)
			ended := make([]bool, parents)
			var wg sync.WaitGroup
			errs := make([]error, parents)
			for i, c := range cs {
				wg.Go(func() {
					r, err := s.Finish(ctx, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted}}})
					if err != nil {
						errs[i] = err
						return
					}
					for _, st := range r.Settled {
						if st.Err != nil {
							errs[i] = st.Err
						}
						ended[i] = ended[i] || st.WorkflowEnded
						for _, ps := range st.Pushed {
							if ps.JobID == weir.TaskJobID(p.ID, "join") {
								pushes[i]++
							}
						}
					}
				})
			}
			wg.Wait()
			total := 0
			for i := range parents {
				if errs[i] != nil {
					t.Fatalf("finish of parent %d: %v", i, errs[i])
				}
				total += pushes[i]
				if ended[i] {
					t.Fatalf("parent %d ended the workflow before its join ran", i)
				}
			}
			if total != 1 {
				t.Fatalf("round %d: the join was pushed %d times, want once", round, total)
			}
			cj, err := s.Claim(ctx, engine.ClaimParams{Queues: []string{"j"}, Max: 3, Lease: time.Minute})
			if err != nil || len(cj) != 1 || cj[0].Job.ID != weir.TaskJobID(p.ID, "join") {
				t.Fatalf("claim of the join: %d jobs (%v), want the join once", len(cj), err)
			}
			if len(cj[0].Deps) != parents {
				t.Fatalf("the join got %d dependency outcomes, want %d", len(cj[0].Deps), parents)
			}
			qs, err := s.Queues(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range qs {
				if q.Ready != 0 || q.Delayed != 0 {
					t.Fatalf("queue %s still holds jobs: %+v", q.Name, q)
				}
			}
			closeStore(s)
		}
	})

	t.Run("ScheduleFireOneWinner", func(t suiteT) {
		t.Parallel()
		runScheduleRace(t, mk)
	})
	t.Run("ClaimRaceOneWinner", func(t suiteT) {
		t.Parallel()
		const racers = 4
		for round := range 10 {
			clk := newClock()
			s := mk.store(t, engine.DefaultConfig(), clk.Now)
			ctx := context.Background()
			id := "j" + strconv.Itoa(round)
			if _, err := s.Enqueue(ctx, engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: "q"}}); err != nil {
				t.Fatal(err)
			}
			got := make([][]engine.Claimed, racers)
			errs := make([]error, racers)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range racers {
				wg.Go(func() {
					<-start
					got[i], errs[i] = s.Claim(ctx, engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute})
				})
			}
			close(start)
			wg.Wait()
			winners := 0
			for i := range racers {
				if errs[i] != nil {
					t.Fatalf("claim %d: %v", i, errs[i])
				}
				winners += len(got[i])
			}
			if winners != 1 {
				t.Fatalf("round %d: %d claims got the one job, want exactly 1", round, winners)
			}
			j, err := s.GetJob(ctx, id)
			if err != nil || j.State != weir.Running || j.Attempt != 1 {
				t.Fatalf("job after the race: %+v (%v), want running, attempt 1", j, err)
			}
			closeStore(s)
		}
	})
}
