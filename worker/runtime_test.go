package worker_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/internal/testclock"
	"github.com/weirflow/weir/worker"
)

// spyStore wraps a store to watch and steer the worker's calls.
type spyStore struct {
	client.Store

	mu         sync.Mutex
	claimedBy  map[string]string // job ID -> "Claim" or "Finish"
	heartbeats []int             // leases per Heartbeat call
	hbSignal   chan int          // gets the lease count of each Heartbeat
	hbGate     chan struct{}     // when set, Heartbeat waits until it is closed
	claimEnded chan error        // gets the error of each Claim that failed
	claimIn    chan struct{}     // signalled when a Claim begins
	inflight   atomic.Int32      // Claims in progress
}

// waitClaimBlocked waits until a Claim is in progress.
func (s *spyStore) waitClaimBlocked(ctx context.Context) error {
	for s.inflight.Load() == 0 {
		select {
		case <-s.claimIn:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func newSpy(s client.Store) *spyStore {
	return &spyStore{Store: s, claimedBy: map[string]string{}, hbSignal: make(chan int, 1000), claimEnded: make(chan error, 100), claimIn: make(chan struct{}, 1)}
}

func (s *spyStore) Claim(ctx context.Context, p engine.ClaimParams) ([]engine.Claimed, error) {
	s.inflight.Add(1)
	select {
	case s.claimIn <- struct{}{}:
	default:
	}
	c, err := s.Store.Claim(ctx, p)
	s.inflight.Add(-1)
	if err != nil {
		s.claimEnded <- err
	}
	s.note("Claim", c)
	return c, err
}

func (s *spyStore) Finish(ctx context.Context, p engine.FinishParams) (engine.FinishResult, error) {
	r, err := s.Store.Finish(ctx, p)
	s.note("Finish", r.Claimed)
	return r, err
}

func (s *spyStore) note(how string, c []engine.Claimed) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range c {
		s.claimedBy[x.Job.ID] = how
	}
}

func (s *spyStore) Heartbeat(ctx context.Context, p engine.HeartbeatParams) ([]engine.LeaseStatus, error) {
	s.mu.Lock()
	gate := s.hbGate
	s.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	s.mu.Lock()
	s.heartbeats = append(s.heartbeats, len(p.Leases))
	s.mu.Unlock()
	select {
	case s.hbSignal <- len(p.Leases):
	default:
	}
	return s.Store.Heartbeat(ctx, p)
}

// In steady state a busy worker finishes a job and claims the next in one
// call: after the first claim, every job comes from a Finish.
func TestFinishClaimsTheNextJob(t *testing.T) {
	ctx := testCtx(t)
	spy := newSpy(memstore.New())
	c := client.New(spy)
	var jobs []*client.Job[string]
	for i := range 10 {
		jobs = append(jobs, mustEnqueue(t, c, echoQ, fmt.Sprint(i)))
	}
	cfg := fastConfig()
	cfg.Concurrency = 1
	w := worker.New(spy, cfg)
	worker.Handle(w, echoQ, func(ctx context.Context, j *worker.Job[string]) (string, error) { return j.Payload, nil })
	start(t, w)
	for _, j := range jobs {
		if _, err := j.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	spy.mu.Lock()
	defer spy.mu.Unlock()
	for i, j := range jobs {
		want := "Finish"
		if i == 0 {
			want = "Claim"
		}
		if got := spy.claimedBy[j.ID()]; got != want {
			t.Errorf("job %d was claimed by %s; want %s", i, got, want)
		}
	}
}

// One heartbeat call carries the leases of all the worker's running jobs.
func TestHeartbeatIsBatched(t *testing.T) {
	ctx := testCtx(t)
	spy := newSpy(memstore.New())
	c := client.New(spy)
	cfg := fastConfig()
	cfg.Concurrency = 5
	w := worker.New(spy, cfg)
	started := make(chan struct{}, 5)
	worker.Handle(w, blockQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		started <- struct{}{}
		<-ctx.Done()
		return "", ctx.Err()
	})
	start(t, w)
	for i := range 5 {
		mustEnqueue(t, c, blockQ, fmt.Sprint(i))
	}
	for range 5 {
		<-started
	}
	// Drain the calls made while jobs were starting; the next call begins
	// after all five are running.
	for {
		select {
		case <-spy.hbSignal:
			continue
		default:
		}
		break
	}
	select {
	case n := <-spy.hbSignal:
		if n < 5 {
			// A call that began before the drain finished: take the next.
			n = <-spy.hbSignal
		}
		if n != 5 {
			t.Fatalf("a heartbeat carried %d leases; want all 5 in one call", n)
		}
	case <-ctx.Done():
		t.Fatal("no heartbeat")
	}
}

// A worker that loses a job's lease cancels its handler (cause
// ErrLeaseLost) and stores nothing the handler returns afterwards.
func TestLeaseLossStopsTheHandler(t *testing.T) {
	ctx := testCtx(t)
	clock := testclock.New()
	mem := memstore.New(memstore.WithClock(clock.Now))
	spy := newSpy(mem)
	gate := make(chan struct{})
	spy.hbGate = gate
	c := client.New(mem)
	ev := newEvents()
	cfg := fastConfig()
	cfg.Lease = time.Minute
	cfg.SweepInterval = time.Hour
	cfg.Observer = ev.observe
	w := worker.New(spy, cfg)
	started, cause := handleUntilDone(w, func(context.Context) (string, error) {
		return "finished anyway", nil // must not be stored
	})
	start(t, w)
	// no expiry budget: the lost lease is the job's failed attempt
	job := mustEnqueue(t, c, blockQ, "x", client.MaxExpiries(weir.NoExpiries))
	<-started
	// The worker's heartbeats are held back while its lease runs out.
	clock.Advance(2 * time.Minute)
	res, err := mem.ExpireLeases(ctx, engine.ExpireParams{})
	if err != nil || len(res.Expired) != 1 || res.Expired[0].JobID != job.ID() {
		t.Fatalf("ExpireLeases = %+v, %v; want the job expired", res, err)
	}
	close(gate)
	if err := <-cause; !errors.Is(err, weir.ErrLeaseLost) {
		t.Fatalf("cause = %v; want ErrLeaseLost", err)
	}
	ev.waitFor(t, ctx, worker.EventLeaseLost, job.ID(), 1)
	_, err = job.Wait(ctx)
	var je *weir.JobError
	if !errors.As(err, &je) || je.State != weir.Failed || je.Message != weir.ReasonTextLeaseExpired {
		t.Fatalf("Wait = %v; want failed with %q", err, weir.ReasonTextLeaseExpired)
	}
	if n := ev.count(worker.EventSucceeded, job.ID()); n != 0 {
		t.Fatalf("%d succeeded events after a lost lease", n)
	}
}

// A job leased by a worker that died is retried by the live ones, counted
// as an attempt: nobody but the workers sweeps.
func TestCrashedWorkersJobIsRetried(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		c := client.New(b.open(t))
		job := mustEnqueue(t, c, echoQ, "x", client.MaxAttempts(2), client.Backoff(time.Millisecond))
		// The "crashed" worker claims with a 1ms lease and is never heard of
		// again.
		got, err := b.open(t).Claim(ctx, engine.ClaimParams{Queues: []string{"echo"}, Max: 1, Lease: time.Millisecond})
		if err != nil || len(got) != 1 {
			t.Fatalf("claim = %v, %v", got, err)
		}
		w := worker.New(b.open(t), fastConfig())
		worker.Handle(w, echoQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
			return fmt.Sprint("attempt ", j.Attempt), nil
		})
		start(t, w)
		if got, err := job.Wait(ctx); err != nil || got != "attempt 2" {
			t.Fatalf("Wait = %q, %v; want attempt 2", got, err)
		}
	})
}

func TestDelayedJobRuns(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		c := client.New(b.open(t))
		// a job delayed by an hour waits, whenever its status is read
		far := mustEnqueue(t, c, echoQ, "far", client.Delay(time.Hour))
		if s, err := far.Status(ctx); err != nil || s.State != weir.Queued || s.RunAt.IsZero() {
			t.Fatalf("status = %+v, %v; want queued with a RunAt", s, err)
		}
		job := mustEnqueue(t, c, echoQ, "later", client.Delay(30*time.Millisecond))
		w := worker.New(b.open(t), fastConfig())
		worker.Handle(w, echoQ, func(ctx context.Context, j *worker.Job[string]) (string, error) { return j.Payload, nil })
		start(t, w)
		if got, err := job.Wait(ctx); err != nil || got != "later" {
			t.Fatalf("Wait = %q, %v", got, err)
		}
	})
}

// Stop lets running jobs finish within its deadline, claims nothing new,
// and leaves the rest queued, unattempted.
func TestGracefulStopFinishesRunningJobs(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		spy := newSpy(b.open(t))
		c := client.New(b.open(t))
		cfg := fastConfig()
		cfg.Concurrency = 3
		w := worker.New(spy, cfg)
		release := make(chan struct{})
		started := make(chan string, 10)
		var mu sync.Mutex
		runs := map[string]int{}
		h := func(ctx context.Context, j *worker.Job[string]) (string, error) {
			mu.Lock()
			runs[j.Payload]++
			mu.Unlock()
			started <- j.Payload
			<-release
			return j.Payload, nil
		}
		worker.Handle(w, blockQ, h)
		if err := w.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		var jobs []*client.Job[string]
		for i := range 2 {
			jobs = append(jobs, mustEnqueue(t, c, blockQ, fmt.Sprint(i)))
		}
		<-started
		<-started
		// The third slot's claim blocks: the queue is empty.
		if err := spy.waitClaimBlocked(ctx); err != nil {
			t.Fatal(err)
		}
		stopped := make(chan error)
		go func() { stopped <- w.Stop(ctx) }()
		// Once that claim was cancelled, the worker is stopping.
		if err := <-spy.claimEnded; !errors.Is(err, context.Canceled) {
			t.Fatalf("claim ended with %v; want context.Canceled", err)
		}
		for i := 2; i < 5; i++ {
			jobs = append(jobs, mustEnqueue(t, c, blockQ, fmt.Sprint(i)))
		}
		// The running jobs finish during the grace period, and claim nothing.
		close(release)
		if err := <-stopped; err != nil {
			t.Fatal(err)
		}
		for i, j := range jobs {
			s, err := j.Status(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if i < 2 && (s.State != weir.Completed || s.Attempt != 1) || i >= 2 && (s.State != weir.Queued || s.Attempt != 0) {
				t.Errorf("job %d: %s after %d attempts", i, s.State, s.Attempt)
			}
		}
		// Another worker runs the rest; nothing ran twice.
		w2 := worker.New(b.open(t), cfg)
		worker.Handle(w2, blockQ, h)
		start(t, w2)
		for _, j := range jobs {
			if _, err := j.Wait(ctx); err != nil {
				t.Fatal(err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if len(runs) != 5 {
			t.Errorf("%d distinct jobs ran; want 5", len(runs))
		}
		for p, n := range runs {
			if n != 1 {
				t.Errorf("job %s ran %d times", p, n)
			}
		}
	})
}

// When Stop's deadline passes, running jobs are cancelled with cause
// ErrShutdown and handed back without counting the attempt, unless they
// complete anyway; another worker then runs each exactly once.
func TestStopDeadlineReleasesJobs(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		c := client.New(b.open(t))
		ev := newEvents()
		cfg := fastConfig()
		cfg.Concurrency = 3
		cfg.Observer = ev.observe
		w1 := worker.New(b.open(t), cfg)
		started := make(chan struct{}, 3)
		causes := make(chan error, 3)
		worker.Handle(w1, blockQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
			started <- struct{}{}
			<-ctx.Done()
			causes <- context.Cause(ctx)
			if j.Payload == "stubborn" {
				return "completed anyway", nil
			}
			return "", ctx.Err()
		})
		if err := w1.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		jobs := map[string]*client.Job[string]{}
		for _, p := range []string{"a", "b", "stubborn"} {
			jobs[p] = mustEnqueue(t, c, blockQ, p, client.MaxAttempts(1))
		}
		for range 3 {
			<-started
		}
		done, cancel := context.WithCancel(ctx)
		cancel() // no grace at all
		if err := w1.Stop(done); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if err := <-causes; !errors.Is(err, weir.ErrShutdown) {
				t.Fatalf("cause = %v; want ErrShutdown", err)
			}
		}
		if n := ev.count(worker.EventReleased, ""); n != 2 {
			t.Fatalf("%d released events; want 2", n)
		}
		for p, j := range jobs {
			s, err := j.Status(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if p == "stubborn" {
				if s.State != weir.Completed {
					t.Fatalf("stubborn job is %s; want completed", s.State)
				}
				continue
			}
			if s.State != weir.Queued || s.Attempt != 0 {
				t.Fatalf("released job %s is %s after %d attempts; want queued, 0 attempts", p, s.State, s.Attempt)
			}
		}
		var mu sync.Mutex
		runs := map[string]int{}
		w2 := worker.New(b.open(t), cfg)
		worker.Handle(w2, blockQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
			mu.Lock()
			runs[j.Payload]++
			mu.Unlock()
			return "second " + j.Payload, nil
		})
		start(t, w2)
		for _, p := range []string{"a", "b"} {
			// MaxAttempts 1: had the release counted, the job could not run.
			if got, err := jobs[p].Wait(ctx); err != nil || got != "second "+p {
				t.Fatalf("job %s: %q, %v", p, got, err)
			}
		}
		if got, _ := jobs["stubborn"].Wait(ctx); got != "completed anyway" {
			t.Fatalf("stubborn = %q", got)
		}
		mu.Lock()
		defer mu.Unlock()
		if fmt.Sprint(runs) != "map[a:1 b:1]" {
			t.Fatalf("second worker ran %v; want a and b once each", runs)
		}
	})
}

// Run stops gracefully when its context ends.
func TestRunStopsWithItsContext(t *testing.T) {
	ctx := testCtx(t)
	b := memBackend()
	c := client.New(b.open(t))
	w := worker.New(b.open(t), fastConfig())
	worker.Handle(w, echoQ, func(ctx context.Context, j *worker.Job[string]) (string, error) { return j.Payload, nil })
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error)
	go func() { ran <- w.Run(runCtx) }()
	if got, err := mustEnqueue(t, c, echoQ, "x").Wait(ctx); err != nil || got != "x" {
		t.Fatalf("Wait = %q, %v", got, err)
	}
	stop()
	if err := <-ran; err != nil {
		t.Fatalf("Run = %v", err)
	}
}

// A paused queue is skipped by every worker's claims until it is resumed.
func TestPauseStopsClaimsAcrossWorkers(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		c := client.New(b.open(t))
		pq := client.NewQueue[int, int]("pq")
		marker := client.NewQueue[int, int]("marker")
		if err := c.PauseQueue(ctx, pq.Name()); err != nil {
			t.Fatal(err)
		}
		var jobs []*client.Job[int]
		for i := range 5 {
			jobs = append(jobs, mustEnqueue(t, c, pq, i))
		}
		var mu sync.Mutex
		pqRuns := 0
		arrived := make(chan struct{}, 2)
		both := make(chan struct{})
		var once sync.Once
		cfg := fastConfig()
		cfg.Concurrency = 1
		cfg.StrictPriority = true
		cfg.Queues = map[string]int{"pq": 2, "marker": 1} // pq is tried first
		for range 2 {
			w := worker.New(b.open(t), cfg)
			worker.Handle(w, pq, func(ctx context.Context, j *worker.Job[int]) (int, error) {
				mu.Lock()
				pqRuns++
				mu.Unlock()
				return j.Payload, nil
			})
			worker.Handle(w, marker, func(ctx context.Context, j *worker.Job[int]) (int, error) {
				arrived <- struct{}{}
				<-both
				return 0, nil
			})
			start(t, w)
		}
		m1, m2 := mustEnqueue(t, c, marker, 1), mustEnqueue(t, c, marker, 2)
		// Both markers run at once, so each worker (concurrency 1) holds
		// one: each worker's claim tried pq first and found it paused.
		<-arrived
		<-arrived
		once.Do(func() { close(both) })
		for _, m := range []*client.Job[int]{m1, m2} {
			if _, err := m.Wait(ctx); err != nil {
				t.Fatal(err)
			}
		}
		mu.Lock()
		n := pqRuns
		mu.Unlock()
		if n != 0 {
			t.Fatalf("%d jobs of the paused queue ran", n)
		}
		qs, err := c.Queues(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			if q.Name == "pq" && (!q.Paused || q.Ready != 5) {
				t.Fatalf("pq = %+v; want paused with 5 ready", q)
			}
		}
		if err := c.ResumeQueue(ctx, pq.Name()); err != nil {
			t.Fatal(err)
		}
		for i, j := range jobs {
			if got, err := j.Wait(ctx); err != nil || got != i {
				t.Fatalf("job %d: %v, %v", i, got, err)
			}
		}
	})
}

// TestQueueConcurrencyLimit: two workers of four slots each never run
// more than a queue's limit of jobs at once, and run them all. The first
// two jobs wait for each other, so the limit must let two run.
func TestQueueConcurrencyLimit(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		c := client.New(b.open(t))
		q := client.NewQueue[string, string]("limited")
		if err := c.LimitQueue(ctx, q.Name(), 2); err != nil {
			t.Fatal(err)
		}
		var jobs []*client.Job[string]
		for i := range 12 {
			jobs = append(jobs, mustEnqueue(t, c, q, fmt.Sprint(i)))
		}
		var mu sync.Mutex
		running, most, started := 0, 0, 0
		both := make(chan struct{})
		handler := func(ctx context.Context, j *worker.Job[string]) (string, error) {
			mu.Lock()
			running++
			started++
			most = max(most, running)
			if started == 2 {
				close(both)
			}
			first := started <= 2
			mu.Unlock()
			if first {
				select {
				case <-both:
				case <-ctx.Done():
				}
			}
			mu.Lock()
			running--
			mu.Unlock()
			return j.Payload, nil
		}
		for range 2 {
			w := worker.New(b.open(t), fastConfig())
			worker.Handle(w, q, handler)
			start(t, w)
		}
		for _, j := range jobs {
			if _, err := j.Wait(ctx); err != nil {
				t.Fatal(err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if most != 2 {
			t.Errorf("at most %d jobs ran at once; the limit is 2", most)
		}
		qs, err := c.Queues(ctx)
		if err != nil || !slices.ContainsFunc(qs, func(i weir.QueueInfo) bool { return i.Name == "limited" && i.Concurrency == 2 }) {
			t.Errorf("Queues = %+v, %v; want limited with concurrency 2", qs, err)
		}
	})
}
