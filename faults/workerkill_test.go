//go:build unix && faults

package faults

import (
	"context"
	"fmt"
	"github.com/weirflow/weir"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
)

// Worker-kill settings: short leases and sweeps so that a killed worker's
// jobs come back quickly.
const (
	killLease      = 500 * time.Millisecond
	killSweep      = 100 * time.Millisecond
	killSlots      = 3 // worker processes being killed at once
	killInFlight   = 3 // workflows running at once while killing
	killPauseWait  = 2 * time.Second
	killMaxPauseAt = 6 // a worker pauses at its 1st..6th job reaching its point
)

// killStats gathers what the kill slots did.
type killStats struct {
	mu         sync.Mutex
	byPoint    map[string]int
	recoveries []time.Duration // kill -> lease expired by a sweep
	sweepLags  []time.Duration // lease deadline -> lease expired by a sweep
}

func (s *killStats) kill(point string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byPoint[point]++
}

func (s *killStats) recovered(d, lag time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recoveries = append(s.recoveries, d)
	s.sweepLags = append(s.sweepLags, lag)
}

// TestWorkerKill runs DAGs of 20–200 tasks on worker processes while
// SIGKILLing a random one, ≥ 200 times (× WEIR_FAULT_SCALE), at random
// points: after a claim before the handler starts, mid-handler, after the
// handler returned but before its finish reached Redis, and at random
// moments. Then it checks that every workflow completed with every task
// completed (no task lost), that no task was promoted twice and no task
// started before its dependencies completed, that no attempt was handed
// out twice, and measures how long a killed worker's job stayed leased.
func TestWorkerKill(t *testing.T) {
	target := 200 * FaultScale()
	rp := StartRedisT(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(FaultScale())*5*time.Minute)
	defer cancel()
	const ns = "wk"
	rdb := newRedisClient(t, rp.Addr())
	store := newStore(t, rdb, ns, killConfig())
	cl := client.New(store)
	opts := workerOpts{addr: rp.Addr(), ns: ns, lease: killLease, sweep: killSweep, conc: 4, stderr: &childLog{}}
	defer opts.stderr.check(t)

	var kills atomic.Int64
	stats := &killStats{byPoint: map[string]int{}}
	killing := make(chan struct{}) // closed when the target is reached

	// The producer keeps killInFlight workflows running while the slots
	// kill workers, so every kill lands on live work.
	type wfRun struct {
		id    string
		tasks int
		final weir.Workflow
		err   error
	}
	var (
		wfMu    sync.Mutex
		wfs     []*wfRun
		awaitWG sync.WaitGroup
	)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 8))
	var rngMu sync.Mutex
	randN := func(n int) int {
		rngMu.Lock()
		defer rngMu.Unlock()
		return rng.IntN(n)
	}
	submit := func(n int) (*wfRun, error) {
		wf := client.NewWorkflow(client.WorkflowID(fmt.Sprintf("wk-%03d", n)))
		size := 20 + randN(181)
		refs := make([]client.TaskRef, 0, size)
		for i := range size {
			var after []client.TaskRef
			if i > 0 {
				for range randN(4) {
					d := refs[randN(i)]
					if !slices.Contains(after, d) {
						after = append(after, d)
					}
				}
			}
			q := queueA
			if randN(2) == 1 {
				q = queueB
			}
			task := client.AddTask(wf, fmt.Sprintf("t%03d", i), q, strconv.Itoa(len(after)),
				client.MaxAttempts(1000), client.Backoff(time.Millisecond))
			if len(after) > 0 {
				task.After(after...)
			}
			refs = append(refs, task)
		}
		if err := cl.Submit(ctx, wf); err != nil {
			return nil, err
		}
		return &wfRun{id: wf.ID(), tasks: size}, nil
	}
	producerDone := make(chan struct{})
	go func() {
		defer close(producerDone)
		sem := make(chan struct{}, killInFlight)
		for n := 0; ; n++ {
			select {
			case sem <- struct{}{}:
			case <-killing:
				return
			case <-ctx.Done():
				return
			}
			r, err := submit(n)
			if err != nil {
				t.Errorf("submit: %v", err)
				return
			}
			wfMu.Lock()
			wfs = append(wfs, r)
			wfMu.Unlock()
			awaitWG.Add(1)
			go func() {
				defer awaitWG.Done()
				r.final, r.err = store.AwaitWorkflow(ctx, r.id)
				<-sem
			}()
		}
	}()

	// Each slot starts a worker process, kills it at its point, and starts
	// the next one, until the target is reached.
	var recoverWG sync.WaitGroup
	points := []string{pointStart, pointMid, pointAfter, "random"}
	var slotWG sync.WaitGroup
	var once sync.Once
	for range killSlots {
		slotWG.Add(1)
		go func() {
			defer slotWG.Done()
			for kills.Load() < int64(target) && ctx.Err() == nil {
				o := opts
				o.point = points[randN(len(points))]
				o.pauseAt = 1 + randN(killMaxPauseAt)
				if o.point == "random" {
					o.point = ""
				}
				p, err := startWorker(t, o)
				if err != nil {
					t.Errorf("start worker: %v", err)
					return
				}
				if _, ok := p.waitLine("READY", 30*time.Second); !ok {
					p.kill()
					t.Errorf("worker process did not start")
					return
				}
				if o.point == "" {
					time.Sleep(time.Duration(randN(300)) * time.Millisecond)
					p.kill()
					stats.kill("random")
				} else {
					line, ok := p.waitLine("PAUSED", killPauseWait)
					killedAt := time.Now()
					p.kill()
					if !ok {
						stats.kill("random") // never reached its point: killed where it was
					} else {
						stats.kill(o.point)
						f := strings.Fields(line) // PAUSED point job attempt
						attempt, _ := strconv.Atoi(f[3])
						recoverWG.Add(1)
						go func() {
							defer recoverWG.Done()
							if d, past, err := awaitRelease(ctx, store, f[2], attempt, killedAt); err != nil {
								t.Errorf("job %s after the kill: %v", f[2], err)
							} else {
								stats.recovered(d, past)
							}
						}()
					}
				}
				n := kills.Add(1)
				if n%20 == 0 {
					killInvariants(t, ctx, rdb, ns, fmt.Sprintf("after kill %d", n))
				}
				if n >= int64(target) {
					once.Do(func() { close(killing) })
				}
			}
		}()
	}
	slotWG.Wait()
	<-producerDone

	// Healthy workers finish what is left.
	for range 2 {
		o := opts
		o.conc = 8
		p, err := startWorker(t, o)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.waitLine("READY", 30*time.Second); !ok {
			t.Fatal("worker process did not start")
		}
		defer func() {
			if err := p.stop(); err != nil {
				t.Errorf("healthy worker: %v", err)
			}
		}()
	}
	awaitWG.Wait()
	recoverWG.Wait()

	// The store's invariants hold at the end (after every 20th kill too).
	rep := killInvariants(t, ctx, rdb, ns, "at the end")

	// Every workflow ended completed, every task completed: nothing lost.
	lost, tasks := 0, 0
	final := map[string]weir.Task{} // job ID -> final task
	for _, r := range wfs {
		tasks += r.tasks
		if r.err != nil {
			t.Errorf("workflow %s did not end: %v", r.id, r.err)
			lost += r.tasks
			continue
		}
		if r.final.State != weir.WorkflowCompleted {
			t.Errorf("workflow %s ended %s", r.id, r.final.State)
		}
		for _, tk := range r.final.Tasks {
			final[weir.TaskJobID(r.id, tk.Name)] = tk
			if tk.State != weir.Completed {
				lost++
				t.Errorf("task %s/%s ended %s (%s)", r.id, tk.Name, tk.State, tk.Error)
			}
		}
	}

	// Promotions: each dependent task pushed at most once.
	promoted, err := rdb.LRange(ctx, recKey(ns, "promoted"), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(promoted) == 0 {
		t.Error("no promotion was recorded: the check below would be empty")
	}
	pushes := map[string]int{}
	for _, id := range promoted {
		pushes[id]++
	}
	doubled := 0
	for id, n := range pushes {
		if n > 1 {
			doubled++
			t.Errorf("task %s promoted %d times", id, n)
		}
		if tk, ok := final[id]; ok && len(tk.After) == 0 {
			t.Errorf("root task %s promoted", id)
		}
	}

	// Starts: every start saw all its dependencies completed; no attempt
	// of a job started twice; no start after the completing attempt.
	starts, err := rdb.LRange(ctx, recKey(ns, "starts"), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	early := 0
	for _, s := range starts {
		f := strings.Split(s, "|") // job|attempt|pid|depsOK
		if len(f) != 4 {
			t.Fatalf("bad start record %q", s)
		}
		key := f[0] + "|" + f[1]
		if seen[key] {
			t.Errorf("attempt %s of %s started twice", f[1], f[0])
		}
		seen[key] = true
		if f[3] != "true" {
			early++
			t.Errorf("%s attempt %s started before its dependencies completed", f[0], f[1])
		}
		if tk, ok := final[f[0]]; ok {
			if a, _ := strconv.Atoi(f[1]); a > tk.Attempt {
				t.Errorf("%s attempt %d started after the task ended at attempt %d", f[0], a, tk.Attempt)
			}
		}
	}
	for id := range final {
		if !slices.ContainsFunc(starts, func(s string) bool { return strings.HasPrefix(s, id+"|") }) {
			t.Errorf("task %s completed without a recorded start", id)
		}
	}

	// Nothing is left in any queue.
	qs, err := store.Queues(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if q.Ready+q.Delayed+q.Running != 0 {
			t.Errorf("queue %s not empty: %+v", q.Name, q)
		}
	}

	stats.mu.Lock()
	defer stats.mu.Unlock()
	var maxRec, sum time.Duration
	for _, d := range stats.recoveries {
		maxRec = max(maxRec, d)
		sum += d
	}
	bound := killLease + killSweep*6/5 // lease, then the next sweep (±20% jitter)
	over := 0
	for _, d := range stats.recoveries {
		if d > bound {
			over++
		}
	}
	var mean time.Duration
	if len(stats.recoveries) > 0 {
		mean = sum / time.Duration(len(stats.recoveries))
	}
	var p50Rec time.Duration
	if recs := slices.Sorted(slices.Values(stats.recoveries)); len(recs) > 0 {
		p50Rec = recs[len(recs)/2]
	}
	var maxLag, p50Lag, p90Lag time.Duration
	if lags := slices.Sorted(slices.Values(stats.sweepLags)); len(lags) > 0 {
		maxLag, p50Lag, p90Lag = lags[len(lags)-1], lags[len(lags)/2], lags[len(lags)*9/10]
	}
	fmt.Printf("FAULT worker-kill: kills=%d (start=%d mid=%d after=%d random=%d) lost=%d doubled=%d promotions_seen=%d early_starts=%d workflows=%d tasks=%d attempts=%d max_recovery=%v p50_recovery=%v mean_recovery=%v bound=%v (lease %v + sweep %v) over_bound=%d of %d past_deadline_p50=%v p90=%v max=%v invariants=%s\n",
		kills.Load(), stats.byPoint[pointStart], stats.byPoint[pointMid], stats.byPoint[pointAfter], stats.byPoint["random"],
		lost, doubled, len(promoted), early, len(wfs), tasks, len(starts), maxRec.Round(time.Millisecond), p50Rec.Round(time.Millisecond), mean.Round(time.Millisecond),
		bound, killLease, killSweep, over, len(stats.recoveries), p50Lag.Round(time.Millisecond), p90Lag.Round(time.Millisecond), maxLag.Round(time.Millisecond), rep)
	if kills.Load() < int64(target) {
		t.Errorf("%d kills, want at least %d", kills.Load(), target)
	}
}

// killInvariants runs the invariant checker on namespace ns and reports
// every violation as an error of t.
func killInvariants(t *testing.T, ctx context.Context, rdb redis.UniversalClient, ns, when string) *InvariantReport {
	t.Helper()
	rep, err := CheckStore(ctx, rdb, ns)
	if err != nil {
		t.Errorf("invariant check %s: %v", when, err)
		return &InvariantReport{}
	}
	for _, v := range rep.Violations {
		t.Errorf("invariant %s: %s", when, v)
	}
	return rep
}

// awaitRelease waits until job id is no longer running its attempt (a
// sweep expired the lease the killed worker held) and returns how long
// after killedAt that was seen, and how long after the lease's deadline
// (as it stood after the kill: nobody extends it any more).
func awaitRelease(ctx context.Context, s engine.Store, id string, attempt int, killedAt time.Time) (total, pastDeadline time.Duration, err error) {
	var deadline time.Time
	for {
		j, err := s.GetJob(ctx, id)
		if err != nil {
			return 0, 0, err
		}
		if j.State != weir.Running || j.Attempt != attempt {
			now := time.Now()
			if deadline.IsZero() {
				deadline = now
			}
			return now.Sub(killedAt), now.Sub(deadline), nil
		}
		if deadline.IsZero() && j.Lease != nil {
			deadline = j.Lease.Deadline
		}
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}
