package memstore

import (
	"context"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"reflect"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/testclock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// watchSleeps returns a channel that receives one value each time a call of
// method is about to sleep. It must be called before the store is shared.
func watchSleeps(s *Store, method string) <-chan struct{} {
	ch := make(chan struct{}, 1000)
	s.waitHook = func(m string) {
		if m == method {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
	return ch
}

type claimResult struct {
	claimed []engine.Claimed
	err     error
}

// goClaim runs a Claim in a goroutine; its result arrives on the channel.
func goClaim(ctx context.Context, s *Store, p engine.ClaimParams) <-chan claimResult {
	out := make(chan claimResult, 1)
	go func() {
		c, err := s.Claim(ctx, p)
		out <- claimResult{c, err}
	}()
	return out
}

func blockingClaim(queues ...string) engine.ClaimParams {
	return engine.ClaimParams{Queues: queues, Max: 1, Lease: time.Minute, Wait: time.Hour}
}

func enqueue(t *testing.T, s *Store, spec engine.JobSpec) {
	t.Helper()
	if _, err := s.Enqueue(context.Background(), engine.EnqueueParams{Job: spec}); err != nil {
		t.Fatalf("enqueue %s: %v", spec.ID, err)
	}
}

func claimedIDs(c []engine.Claimed) []string {
	var ids []string
	for _, x := range c {
		ids = append(ids, x.Job.ID)
	}
	return ids
}

func TestBlockingClaimWakesOnEnqueue(t *testing.T) {
	s := New()
	sleeps := watchSleeps(s, "Claim")
	res := goClaim(context.Background(), s, blockingClaim("q"))
	<-sleeps // the claimer found nothing and sleeps
	enqueue(t, s, engine.JobSpec{ID: "a", Queue: "q"})
	r := <-res
	if r.err != nil || !reflect.DeepEqual(claimedIDs(r.claimed), []string{"a"}) {
		t.Fatalf("claim = %v, %v; want [a]", claimedIDs(r.claimed), r.err)
	}
	if c := r.claimed[0]; c.Job.State != weir.Running || c.Job.Attempt != 1 || c.Lease.Token == "" {
		t.Fatalf("claimed job = %+v, lease %+v", c.Job, c.Lease)
	}
}

func TestClaimReturnsEmptyAfterWait(t *testing.T) {
	s := New()
	enqueue(t, s, engine.JobSpec{ID: "other", Queue: "other"})
	p := blockingClaim("q")
	p.Wait = 5 * time.Millisecond
	c, err := s.Claim(context.Background(), p)
	if err != nil || len(c) != 0 {
		t.Fatalf("claim = %v, %v; want no jobs, no error", claimedIDs(c), err)
	}
	if j, _ := s.GetJob(context.Background(), "other"); j.State != weir.Queued {
		t.Fatalf("job of another queue is %s, want queued", j.State)
	}
}

func TestClaimReturnsContextError(t *testing.T) {
	t.Run("cancelled while blocked", func(t *testing.T) {
		s := New()
		sleeps := watchSleeps(s, "Claim")
		ctx, cancel := context.WithCancel(context.Background())
		res := goClaim(ctx, s, blockingClaim("q"))
		<-sleeps
		cancel()
		r := <-res
		if !errors.Is(r.err, context.Canceled) || len(r.claimed) != 0 {
			t.Fatalf("claim = %v, %v; want context.Canceled", claimedIDs(r.claimed), r.err)
		}
		// The cancelled claimer took nothing that comes later.
		enqueue(t, s, engine.JobSpec{ID: "a", Queue: "q"})
		if j, _ := s.GetJob(context.Background(), "a"); j.State != weir.Queued {
			t.Fatalf("job is %s after the claimer left, want queued", j.State)
		}
	})
	t.Run("deadline while blocked", func(t *testing.T) {
		s := New()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		defer cancel()
		_, err := s.Claim(ctx, blockingClaim("q"))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("claim err = %v, want context.DeadlineExceeded", err)
		}
	})
	t.Run("done before the call", func(t *testing.T) {
		s := New()
		enqueue(t, s, engine.JobSpec{ID: "a", Queue: "q"})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		c, err := s.Claim(ctx, blockingClaim("q"))
		if !errors.Is(err, context.Canceled) || len(c) != 0 {
			t.Fatalf("claim = %v, %v; want context.Canceled and nothing", claimedIDs(c), err)
		}
		if j, _ := s.GetJob(context.Background(), "a"); j.State != weir.Queued {
			t.Fatalf("job is %s, want queued", j.State)
		}
		if _, err := s.Enqueue(ctx, engine.EnqueueParams{Job: engine.JobSpec{ID: "b", Queue: "q"}}); !errors.Is(err, context.Canceled) {
			t.Fatalf("enqueue with a done ctx: err = %v", err)
		}
		if _, err := s.GetJob(context.Background(), "b"); !errors.Is(err, weir.ErrNotFound) {
			t.Fatalf("enqueue with a done ctx wrote the job: %v", err)
		}
	})
}

func TestInvalidClaimFailsAtOnce(t *testing.T) {
	s := New()
	_, err := s.Claim(context.Background(), engine.ClaimParams{Queues: []string{"q"}, Max: 0, Lease: time.Minute, Wait: time.Hour})
	if !errors.Is(err, weir.ErrInvalid) {
		t.Fatalf("claim with Max 0: err = %v, want ErrInvalid", err)
	}
}

func TestDelayedJobWakesClaimerWhenClockPassesRunAt(t *testing.T) {
	clk := testclock.New()
	s := New(WithClock(clk.Now))
	sleeps := watchSleeps(s, "Claim")
	enqueue(t, s, engine.JobSpec{ID: "later", Queue: "q", RunAt: clk.Now().Add(time.Hour)})
	res := goClaim(context.Background(), s, blockingClaim("q"))
	<-sleeps

	clk.Advance(30 * time.Minute)
	s.Wake()
	<-sleeps // looked again, found nothing due, sleeps again
	if j, _ := s.GetJob(context.Background(), "later"); j.State != weir.Queued {
		t.Fatalf("job is %s before its RunAt, want queued", j.State)
	}

	clk.Advance(30 * time.Minute)
	s.Wake()
	r := <-res
	if r.err != nil || !reflect.DeepEqual(claimedIDs(r.claimed), []string{"later"}) {
		t.Fatalf("claim = %v, %v; want [later]", claimedIDs(r.claimed), r.err)
	}
}

func TestDelayedJobWakesClaimerOnRealClock(t *testing.T) {
	// No Wake here: only the store's own timer can hand out the job. The
	// context is a guard against hanging, not a timing assertion.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := New()
	enqueue(t, s, engine.JobSpec{ID: "soon", Queue: "q", RunAt: time.Now().Add(20 * time.Millisecond)})
	c, err := s.Claim(ctx, blockingClaim("q"))
	if err != nil || !reflect.DeepEqual(claimedIDs(c), []string{"soon"}) {
		t.Fatalf("claim = %v, %v; want [soon]", claimedIDs(c), err)
	}
}

func TestExpiredLeaseRetryReachesWaitingClaimer(t *testing.T) {
	clk := testclock.New()
	s := New(WithClock(clk.Now))
	sleeps := watchSleeps(s, "Claim")
	ctx := context.Background()
	enqueue(t, s, engine.JobSpec{ID: "a", Queue: "q", MaxAttempts: 2, Backoff: 10 * time.Second, MaxExpiries: weir.NoExpiries})
	first, err := s.Claim(ctx, blockingClaim("q"))
	if err != nil || len(first) != 1 {
		t.Fatalf("first claim = %v, %v", claimedIDs(first), err)
	}
	res := goClaim(ctx, s, blockingClaim("q"))
	<-sleeps

	clk.Advance(time.Minute) // the lease deadline
	s.Wake()
	<-sleeps // expired the lease; the retry is delayed by the backoff
	j, _ := s.GetJob(ctx, "a")
	if j.State != weir.Queued || j.Attempt != 1 || j.Error != weir.ReasonTextLeaseExpired {
		t.Fatalf("after expiry job = %s attempt %d error %q; want queued, 1, lease_expired", j.State, j.Attempt, j.Error)
	}

	clk.Advance(10 * time.Second)
	s.Wake()
	r := <-res
	if r.err != nil || len(r.claimed) != 1 || r.claimed[0].Job.Attempt != 2 {
		t.Fatalf("retry claim = %+v, %v; want attempt 2", r.claimed, r.err)
	}
	fr, err := s.Finish(ctx, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: "a", Token: first[0].Lease.Token, Kind: engine.OutcomeCompleted}}})
	if err != nil || !errors.Is(fr.Settled[0].Err, weir.ErrLeaseLost) {
		t.Fatalf("finish with the expired token = %+v, %v; want ErrLeaseLost", fr, err)
	}
}

func TestLeaseExpiryInsideClaimWakesAwaiters(t *testing.T) {
	// A claim whose sweep expires a lease changed the state, whether or not
	// it then took a job; it must wake an AwaitJob on the expired job
	// without any Wake call.
	for _, takes := range []bool{false, true} {
		t.Run(fmt.Sprintf("claim takes a job %v", takes), func(t *testing.T) {
			clk := testclock.New()
			s := New(WithClock(clk.Now))
			sleeps := watchSleeps(s, "AwaitJob")
			ctx := context.Background()
			enqueue(t, s, engine.JobSpec{ID: "a", Queue: "q", MaxExpiries: weir.NoExpiries})
			if c, err := s.Claim(ctx, blockingClaim("q")); err != nil || len(c) != 1 {
				t.Fatalf("claim = %v, %v", claimedIDs(c), err)
			}
			type jobResult struct {
				job weir.Job
				err error
			}
			res := make(chan jobResult, 1)
			go func() {
				j, err := s.AwaitJob(ctx, "a")
				res <- jobResult{j, err}
			}()
			<-sleeps
			var want []string
			if takes {
				enqueue(t, s, engine.JobSpec{ID: "b", Queue: "q"})
				<-sleeps // woken by the enqueue, "a" still runs
				want = []string{"b"}
			}
			clk.Advance(time.Minute)
			p := blockingClaim("q")
			p.Wait = 0
			if c, err := s.Claim(ctx, p); err != nil || !reflect.DeepEqual(claimedIDs(c), want) {
				t.Fatalf("sweeping claim = %v, %v; want %v", claimedIDs(c), err, want)
			}
			r := <-res
			if r.err != nil || r.job.State != weir.Failed || r.job.Error != weir.ReasonTextLeaseExpired {
				t.Fatalf("await = %s %q, %v; want failed lease_expired", r.job.State, r.job.Error, r.err)
			}
		})
	}
}

func TestIdleClaimWakesNobody(t *testing.T) {
	s := New()
	ctx := context.Background()
	s.mu.Lock()
	ch := s.waitChLocked("test")
	s.mu.Unlock()
	p := blockingClaim("q")
	p.Wait = 0
	if c, err := s.Claim(ctx, p); err != nil || len(c) != 0 {
		t.Fatalf("claim = %v, %v", claimedIDs(c), err)
	}
	select {
	case <-ch:
		t.Fatal("an empty claim that changed nothing woke the waiters")
	default:
	}
	enqueue(t, s, engine.JobSpec{ID: "a", Queue: "q"})
	select {
	case <-ch:
	default:
		t.Fatal("an enqueue did not wake the waiters")
	}
}

func TestResumeQueueWakesClaimer(t *testing.T) {
	s := New()
	sleeps := watchSleeps(s, "Claim")
	ctx := context.Background()
	if err := s.PauseQueue(ctx, "q"); err != nil {
		t.Fatal(err)
	}
	enqueue(t, s, engine.JobSpec{ID: "a", Queue: "q"})
	res := goClaim(ctx, s, blockingClaim("q"))
	<-sleeps
	if err := s.ResumeQueue(ctx, "q"); err != nil {
		t.Fatal(err)
	}
	if r := <-res; r.err != nil || !reflect.DeepEqual(claimedIDs(r.claimed), []string{"a"}) {
		t.Fatalf("claim = %v, %v; want [a]", claimedIDs(r.claimed), r.err)
	}
}

// worker claims from queues and finishes each job: completed with the task
// name (or job ID) as result, or failed for the payload "fail". It stops when
// ctx is done.
func worker(ctx context.Context, t *testing.T, s *Store, queues ...string) {
	for {
		c, err := s.Claim(ctx, engine.ClaimParams{Queues: queues, Max: 3, Lease: time.Minute, Wait: time.Hour})
		if err != nil {
			if ctx.Err() == nil {
				t.Errorf("worker claim: %v", err)
			}
			return
		}
		var leases []engine.LeaseRef
		for _, x := range c {
			leases = append(leases, engine.LeaseRef{JobID: x.Job.ID, Token: x.Lease.Token})
		}
		hb, err := s.Heartbeat(ctx, engine.HeartbeatParams{Leases: leases, Extend: time.Minute})
		if err != nil {
			if ctx.Err() == nil {
				t.Errorf("worker heartbeat: %v", err)
			}
			return
		}
		var outs []engine.Outcome
		for i, x := range c {
			o := engine.Outcome{JobID: x.Job.ID, Token: x.Lease.Token, Kind: engine.OutcomeCompleted, Result: []byte(x.Job.ID)}
			switch {
			case hb[i].Cancel:
				o = engine.Outcome{JobID: x.Job.ID, Token: x.Lease.Token, Kind: engine.OutcomeCancelled, Error: "told to stop"}
			case string(x.Job.Payload) == "fail":
				o = engine.Outcome{JobID: x.Job.ID, Token: x.Lease.Token, Kind: engine.OutcomeFailed, Error: "boom", NonRetryable: true}
			}
			outs = append(outs, o)
		}
		fr, err := s.Finish(ctx, engine.FinishParams{Outcomes: outs})
		if err != nil {
			if ctx.Err() == nil {
				t.Errorf("worker finish: %v", err)
			}
			return
		}
		for _, st := range fr.Settled {
			if st.Err != nil {
				t.Errorf("worker finish %s: %v", st.JobID, st.Err)
			}
		}
	}
}

// startWorkers runs n workers until the returned stop is called; stop
// waits for them.
func startWorkers(t *testing.T, s *Store, n int, queues ...string) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { worker(ctx, t, s, queues...) })
	}
	return func() { cancel(); wg.Wait() }
}

func diamond(id string) engine.Plan {
	return engine.Plan{ID: id, Tasks: []engine.TaskSpec{
		{Name: "a", Queue: "qa"},
		{Name: "b", Queue: "qb", After: []string{"a"}},
		{Name: "c", Queue: "qa", After: []string{"a"}},
		{Name: "d", Queue: "qb", After: []string{"b", "c"}},
	}}
}

func TestAwaitWorkflowReturnsFinalState(t *testing.T) {
	s := New()
	sleeps := watchSleeps(s, "AwaitWorkflow")
	ctx := context.Background()
	if _, err := s.Submit(ctx, engine.SubmitParams{Plan: diamond("wf")}); err != nil {
		t.Fatal(err)
	}
	type wfResult struct {
		wf  weir.Workflow
		err error
	}
	res := make(chan wfResult, 1)
	go func() {
		w, err := s.AwaitWorkflow(ctx, "wf")
		res <- wfResult{w, err}
	}()
	<-sleeps // the awaiter saw the workflow running
	stop := startWorkers(t, s, 3, "qa", "qb")
	defer stop()
	r := <-res
	if r.err != nil || r.wf.State != weir.WorkflowCompleted {
		t.Fatalf("await = %s, %v; want completed", r.wf.State, r.err)
	}
	for _, task := range r.wf.Tasks {
		if task.State != weir.Completed || string(task.Result) != weir.TaskJobID("wf", task.Name) {
			t.Errorf("task %s = %s result %q", task.Name, task.State, task.Result)
		}
	}
	// An ended workflow is returned at once.
	if w, err := s.AwaitWorkflow(ctx, "wf"); err != nil || w.State != weir.WorkflowCompleted {
		t.Fatalf("second await = %s, %v", w.State, err)
	}
}

func TestAwaitUnknownIsNotFound(t *testing.T) {
	s := New()
	ctx := context.Background()
	if _, err := s.AwaitWorkflow(ctx, "nope"); !errors.Is(err, weir.ErrNotFound) {
		t.Fatalf("AwaitWorkflow unknown: err = %v, want ErrNotFound", err)
	}
	if _, err := s.AwaitJob(ctx, "nope"); !errors.Is(err, weir.ErrNotFound) {
		t.Fatalf("AwaitJob unknown: err = %v, want ErrNotFound", err)
	}
}

func TestAwaitReturnsContextError(t *testing.T) {
	s := New()
	ctx := context.Background()
	enqueue(t, s, engine.JobSpec{ID: "a", Queue: "q"})
	if _, err := s.Submit(ctx, engine.SubmitParams{Plan: diamond("wf")}); err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{"AwaitJob", "AwaitWorkflow"} {
		t.Run(method, func(t *testing.T) {
			sleeps := watchSleeps(s, method)
			cctx, cancel := context.WithCancel(ctx)
			errc := make(chan error, 1)
			go func() {
				var err error
				if method == "AwaitJob" {
					_, err = s.AwaitJob(cctx, "a")
				} else {
					_, err = s.AwaitWorkflow(cctx, "wf")
				}
				errc <- err
			}()
			<-sleeps
			cancel()
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
		})
	}
}

func TestAwaitJobSeesCancel(t *testing.T) {
	type jobResult struct {
		job weir.Job
		err error
	}
	awaitJob := func(s *Store, id string) <-chan jobResult {
		res := make(chan jobResult, 1)
		go func() {
			j, err := s.AwaitJob(context.Background(), id)
			res <- jobResult{j, err}
		}()
		return res
	}
	ctx := context.Background()

	t.Run("queued", func(t *testing.T) {
		s := New()
		sleeps := watchSleeps(s, "AwaitJob")
		enqueue(t, s, engine.JobSpec{ID: "a", Queue: "q"})
		res := awaitJob(s, "a")
		<-sleeps
		if _, err := s.CancelJob(ctx, engine.CancelJobParams{ID: "a"}); err != nil {
			t.Fatal(err)
		}
		r := <-res
		if r.err != nil || r.job.State != weir.Cancelled || r.job.Error != weir.ReasonTextJobCancelled {
			t.Fatalf("await = %s %q, %v; want cancelled", r.job.State, r.job.Error, r.err)
		}
	})

	t.Run("running", func(t *testing.T) {
		s := New()
		sleeps := watchSleeps(s, "AwaitJob")
		enqueue(t, s, engine.JobSpec{ID: "a", Queue: "q"})
		c, err := s.Claim(ctx, blockingClaim("q"))
		if err != nil || len(c) != 1 {
			t.Fatalf("claim = %v, %v", claimedIDs(c), err)
		}
		res := awaitJob(s, "a")
		<-sleeps
		cr, err := s.CancelJob(ctx, engine.CancelJobParams{ID: "a"})
		if err != nil || !reflect.DeepEqual(cr.Stopping, []string{"a"}) {
			t.Fatalf("cancel = %+v, %v; want a stopping", cr, err)
		}
		<-sleeps // woken by the cancel, the job still runs: sleeps again
		if _, err := s.Finish(ctx, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: "a", Token: c[0].Lease.Token, Kind: engine.OutcomeCancelled, Error: "stopped"}}}); err != nil {
			t.Fatal(err)
		}
		r := <-res
		if r.err != nil || r.job.State != weir.Cancelled || r.job.Error != "stopped" {
			t.Fatalf("await = %s %q, %v; want cancelled \"stopped\"", r.job.State, r.job.Error, r.err)
		}
	})
}

func TestConcurrentFinishesOfJoinParentsPromoteOnce(t *testing.T) {
	const parents = 16
	ctx := context.Background()
	for round := range 20 {
		s := New()
		id := fmt.Sprintf("wf%d", round)
		plan := engine.Plan{ID: id}
		var after []string
		for i := range parents {
			name := fmt.Sprintf("p%d", i)
			plan.Tasks = append(plan.Tasks, engine.TaskSpec{Name: name, Queue: "p"})
			after = append(after, name)
		}
		plan.Tasks = append(plan.Tasks, engine.TaskSpec{Name: "join", Queue: "j", After: after})
		if _, err := s.Submit(ctx, engine.SubmitParams{Plan: plan}); err != nil {
			t.Fatal(err)
		}
		c, err := s.Claim(ctx, engine.ClaimParams{Queues: []string{"p"}, Max: parents, Lease: time.Minute})
		if err != nil || len(c) != parents {
			t.Fatalf("claimed %d parents, %v", len(c), err)
		}

		start := make(chan struct{})
		settled := make([][2]engine.Settled, parents) // first finish, repeat
		var wg sync.WaitGroup
		for i, x := range c {
			wg.Go(func() {
				<-start
				p := engine.FinishParams{Outcomes: []engine.Outcome{{JobID: x.Job.ID, Token: x.Lease.Token, Kind: engine.OutcomeCompleted}}}
				for k := range 2 { // the repeat stands for a retry after a lost reply
					fr, err := s.Finish(ctx, p)
					if err != nil {
						t.Errorf("finish %s: %v", x.Job.ID, err)
						return
					}
					settled[i][k] = fr.Settled[0]
				}
			})
		}
		close(start)
		wg.Wait()

		join := weir.TaskJobID(id, "join")
		promotions, ended := 0, 0
		for i, st := range settled {
			if st[0].Err != nil {
				t.Fatalf("finish %s: %v", st[0].JobID, st[0].Err)
			}
			if !reflect.DeepEqual(st[0], st[1]) {
				t.Errorf("repeat of %s returned %+v, first %+v", c[i].Job.ID, st[1], st[0])
			}
			for _, p := range st[0].Pushed {
				if p.JobID != join {
					t.Errorf("finish of %s pushed %s", st[0].JobID, p.JobID)
				}
				promotions++
			}
			if st[0].WorkflowEnded {
				ended++
			}
		}
		if promotions != 1 || ended != 0 {
			t.Fatalf("round %d: %d promotions and %d workflow ends, want 1 and 0", round, promotions, ended)
		}
		jc, err := s.Claim(ctx, engine.ClaimParams{Queues: []string{"j"}, Max: 2, Lease: time.Minute})
		if err != nil || !reflect.DeepEqual(claimedIDs(jc), []string{join}) {
			t.Fatalf("join claim = %v, %v; want the join once", claimedIDs(jc), err)
		}
		if got := len(jc[0].Deps); got != parents {
			t.Fatalf("join got %d dependency outcomes, want %d", got, parents)
		}
	}
}

func TestRacingClaimersOneWinner(t *testing.T) {
	const claimers = 8
	ctx := context.Background()

	t.Run("non-blocking", func(t *testing.T) {
		for round := range 50 {
			s := New()
			enqueue(t, s, engine.JobSpec{ID: fmt.Sprintf("j%d", round), Queue: "q"})
			start := make(chan struct{})
			got := make([]int, claimers)
			var wg sync.WaitGroup
			for i := range claimers {
				wg.Go(func() {
					<-start
					p := blockingClaim("q")
					p.Wait = 0
					c, err := s.Claim(ctx, p)
					if err != nil {
						t.Errorf("claim: %v", err)
					}
					got[i] = len(c)
				})
			}
			close(start)
			wg.Wait()
			total := 0
			for _, n := range got {
				total += n
			}
			if total != 1 {
				t.Fatalf("round %d: %d jobs claimed in all, want 1", round, total)
			}
		}
	})

	t.Run("blocked", func(t *testing.T) {
		s := New()
		sleeps := watchSleeps(s, "Claim")
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		results := make(chan claimResult, claimers)
		for range claimers {
			go func() {
				c, err := s.Claim(cctx, blockingClaim("q"))
				results <- claimResult{c, err}
			}()
		}
		for range claimers {
			<-sleeps
		}
		enqueue(t, s, engine.JobSpec{ID: "only", Queue: "q"})
		// Nothing but a claimed job or ctx can end a claimer, so the first
		// to return is the winner.
		first := <-results
		if first.err != nil || !reflect.DeepEqual(claimedIDs(first.claimed), []string{"only"}) {
			t.Fatalf("first claimer returned %v, %v; want [only]", claimedIDs(first.claimed), first.err)
		}
		cancel()
		for range claimers - 1 {
			if r := <-results; !errors.Is(r.err, context.Canceled) || len(r.claimed) != 0 {
				t.Errorf("another claimer returned %v, %v; want context.Canceled", claimedIDs(r.claimed), r.err)
			}
		}
	})
}

func TestConcurrentUse(t *testing.T) {
	const workflows, jobs = 40, 40
	s := New()
	ctx := context.Background()
	stop := startWorkers(t, s, 4, "qa", "qb")
	defer stop()

	cancelErr := make([]error, workflows)
	var wg sync.WaitGroup
	for i := range workflows {
		wg.Go(func() {
			plan := diamond(fmt.Sprintf("wf%d", i))
			if i%3 == 0 {
				plan.Tasks[3].Payload = []byte("fail") // a failed leaf: the workflow fails
			}
			if _, err := s.Submit(ctx, engine.SubmitParams{Plan: plan}); err != nil {
				t.Errorf("submit: %v", err)
				return
			}
			if i%5 == 0 {
				_, cancelErr[i] = s.CancelWorkflow(ctx, engine.CancelWorkflowParams{ID: plan.ID})
			}
		})
	}
	for i := range jobs {
		wg.Go(func() {
			enqueue(t, s, engine.JobSpec{ID: fmt.Sprintf("job%d", i), Queue: "qa", Priority: i % 3})
		})
	}
	wg.Go(func() { // a reader alongside
		for range 50 {
			if _, err := s.ListWorkflows(ctx, weir.ListParams{Limit: 10}); err != nil {
				t.Errorf("list: %v", err)
			}
			if _, err := s.Queues(ctx); err != nil {
				t.Errorf("queues: %v", err)
			}
		}
	})
	wg.Wait()

	for i := range workflows {
		id := fmt.Sprintf("wf%d", i)
		w, err := s.AwaitWorkflow(ctx, id)
		if err != nil {
			t.Fatalf("await %s: %v", id, err)
		}
		want := weir.WorkflowCompleted
		if i%3 == 0 {
			want = weir.WorkflowFailed
		}
		switch {
		case i%5 == 0 && cancelErr[i] == nil:
			want = weir.WorkflowCancelled
		case i%5 == 0 && !errors.Is(cancelErr[i], weir.ErrWorkflowEnded):
			t.Errorf("cancel %s: %v", id, cancelErr[i])
		}
		if w.State != want {
			t.Errorf("%s ended %s, want %s", id, w.State, want)
		}
		for _, task := range w.Tasks {
			if !task.State.Ended() {
				t.Errorf("%s: task %s is %s after the workflow ended", id, task.Name, task.State)
			}
		}
	}
	for i := range jobs {
		id := fmt.Sprintf("job%d", i)
		if j, err := s.AwaitJob(ctx, id); err != nil || j.State != weir.Completed {
			t.Errorf("await %s = %s, %v; want completed", id, j.State, err)
		}
	}
}

func TestInputsAreCopied(t *testing.T) {
	s := New()
	ctx := context.Background()
	plan := engine.Plan{ID: "wf", Tasks: []engine.TaskSpec{{Name: "a", Queue: "q", Payload: []byte("plan")}}}
	if _, err := s.Submit(ctx, engine.SubmitParams{Plan: plan}); err != nil {
		t.Fatal(err)
	}
	payload := []byte("job")
	enqueue(t, s, engine.JobSpec{ID: "j", Queue: "q", Payload: payload})
	plan.Tasks[0].Payload[0] = 'X'
	plan.Tasks[0].Name = "renamed"
	payload[0] = 'X'
	c, err := s.Claim(ctx, engine.ClaimParams{Queues: []string{"q"}, Max: 2, Lease: time.Minute})
	if err != nil || len(c) != 2 {
		t.Fatalf("claim = %v, %v", claimedIDs(c), err)
	}
	if string(c[0].Job.Payload) != "plan" || c[0].Job.Task != "a" || string(c[1].Job.Payload) != "job" {
		t.Fatalf("stored inputs changed with the caller's: %q task %q, %q", c[0].Job.Payload, c[0].Job.Task, c[1].Job.Payload)
	}
	// The same plan as first submitted is still an idempotent success.
	plan.Tasks[0].Payload[0], plan.Tasks[0].Name = 'p', "a"
	if r, err := s.Submit(ctx, engine.SubmitParams{Plan: plan}); err != nil || r.Created {
		t.Fatalf("resubmit = %+v, %v; want no effect", r, err)
	}
}

func TestOptions(t *testing.T) {
	if got := New().Config(); !reflect.DeepEqual(got, engine.DefaultConfig()) {
		t.Fatalf("default config = %+v", got)
	}
	cfg := engine.Config{Retention: time.Minute}
	got := New(WithConfig(cfg)).Config()
	if got.Retention != time.Minute || got.Limits != weir.DefaultLimits() {
		t.Fatalf("config = %+v; want retention 1m and default limits", got)
	}

	// Retention is measured on the store's clock.
	clk := testclock.New()
	s := New(WithClock(clk.Now), WithConfig(cfg))
	ctx := context.Background()
	enqueue(t, s, engine.JobSpec{ID: "a", Queue: "q"})
	if _, err := s.CancelJob(ctx, engine.CancelJobParams{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	j, err := s.GetJob(ctx, "a")
	if err != nil || !j.ExpiresAt.Equal(clk.Now().Add(time.Minute)) {
		t.Fatalf("job = %+v, %v; want it expiring a minute after the clock's now", j, err)
	}
	clk.Advance(time.Minute)
	if _, err := s.GetJob(ctx, "a"); !errors.Is(err, weir.ErrNotFound) {
		t.Fatalf("after retention: err = %v, want ErrNotFound", err)
	}
}
