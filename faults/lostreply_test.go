//go:build unix && faults

package faults

import (
	"context"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/worker"
)

// callLog classifies the outcome of every store call a test makes.
type callLog struct {
	mu                   sync.Mutex
	calls, ok, typed     int
	untyped, hung        int
	firstUntyped, sample error
}

// do runs f with a 20 s deadline until it succeeds or returns a final
// error (final says so); every attempt is counted. A deadline reached is a
// hang; an error that is not a sentinel or a net error is untyped.
func (l *callLog) do(f func(ctx context.Context) (final bool, err error)) error {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		final, err := f(ctx)
		hung := ctx.Err() != nil
		cancel()
		l.mu.Lock()
		l.calls++
		switch {
		case err == nil:
			l.ok++
		case hung:
			l.hung++
		case typedError(err) && !errors.Is(err, weir.ErrProtocol):
			l.typed++
			if l.sample == nil {
				l.sample = err
			}
		default:
			l.untyped++
			if l.firstUntyped == nil {
				l.firstUntyped = err
			}
		}
		l.mu.Unlock()
		if err == nil || final || hung {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (l *callLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprintf("calls=%d ok=%d typed_errors=%d untyped=%d hung=%d", l.calls, l.ok, l.typed, l.untyped, l.hung)
}

// TestLostReplies puts a TCP proxy between every client (submitter,
// workers, awaits) and Redis that drops replies after the server ran the
// command and resets connections at random. Nothing may be doubled: each
// job's handler effect happens once, each dependency edge promotes once,
// each workflow ends once, an enqueue repeated after a lost reply does not
// create a second job; and every call ends in success or a typed error,
// never a hang.
func TestLostReplies(t *testing.T) {
	proc := StartRedisT(t)
	proxy, err := StartProxy(proc.Addr(), ProxyOptions{DropReply: 0.02, ResetBefore: 0.005})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	const ns = "lost"
	// The workers use go-redis's own retries (it resends a command whose
	// reply was lost); the test's calls use none, so every lost reply
	// surfaces to the caller, which must see a typed error.
	rdb := newRedisClient(t, proxy.Addr())
	store := newStore(t, rdb, ns)
	callerRdb := redis.NewClient(&redis.Options{Addr: proxy.Addr(), MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: 3 * time.Second})
	t.Cleanup(func() { _ = callerRdb.Close() })
	caller := newStore(t, callerRdb, ns)
	wl := newWorkload(t, "l", scaled(100), 20, 5)
	obs := NewObservations()
	eff := &effects{}
	logs := &logCounter{}
	startWorkers(t, store, 2, worker.Config{Concurrency: 8, Lease: 2 * time.Second, SweepInterval: 200 * time.Millisecond,
		Logger: slogOf(logs)}, obs, eff, nil)

	var calls callLog
	var mu sync.Mutex
	submitCreated, submitRepeats, enqCreated, enqRepeats, cancelRepeats := 0, 0, 0, 0, 0

	// Workflows, submitted by 4 goroutines.
	var wg sync.WaitGroup
	ids := make(chan string)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range ids {
				first := true
				_ = calls.do(func(ctx context.Context) (bool, error) {
					r, err := caller.Submit(ctx, engine.SubmitParams{Plan: wl.plans[id]})
					if err == nil {
						mu.Lock()
						if r.Created {
							submitCreated++
						} else if !first {
							submitRepeats++ // an earlier attempt's reply was lost
						}
						mu.Unlock()
					}
					first = false
					return false, err
				})
			}
		}()
	}
	for _, id := range wl.ids {
		ids <- id
	}
	close(ids)

	// Plain jobs with given IDs, each enqueued until a reply comes back.
	nJobs := scaled(300)
	jobIDs := make([]string, nJobs)
	for i := range nJobs {
		jobIDs[i] = fmt.Sprintf("pj-%05d", i)
		payload, _ := Work.EncodePayload(i)
		first := true
		_ = calls.do(func(ctx context.Context) (bool, error) {
			r, err := caller.Enqueue(ctx, engine.EnqueueParams{Job: engine.JobSpec{ID: jobIDs[i], Queue: Work.Name(), Payload: payload, MaxAttempts: 5}})
			if err == nil {
				if r.Created {
					enqCreated++
				} else if !first {
					enqRepeats++
				}
			}
			first = false
			return false, err
		})
	}

	// Workflows on a queue nobody serves, cancelled until a reply comes
	// back: a repeat finds the workflow ended (ErrWorkflowEnded).
	nCancel := scaled(30)
	var cancelIDs []string
	for i := range nCancel {
		id := fmt.Sprintf("c-%04d", i)
		cancelIDs = append(cancelIDs, id)
		plan := engine.Plan{ID: id, Tasks: []engine.TaskSpec{{Name: "a", Queue: "idle"}, {Name: "b", Queue: "idle", After: []string{"a"}}}}
		if err := calls.do(func(ctx context.Context) (bool, error) {
			_, err := caller.Submit(ctx, engine.SubmitParams{Plan: plan})
			return false, err
		}); err != nil {
			t.Fatalf("submit %s: %v", id, err)
		}
		first := true
		err := calls.do(func(ctx context.Context) (bool, error) {
			r, err := caller.CancelWorkflow(ctx, engine.CancelWorkflowParams{ID: id})
			if err == nil && r.WorkflowState.Ended() {
				obs.WorkflowEnded(id)
			}
			if errors.Is(err, weir.ErrWorkflowEnded) && !first {
				mu.Lock()
				cancelRepeats++
				mu.Unlock()
				return true, nil
			}
			first = false
			return false, err
		})
		if err != nil {
			t.Fatalf("cancel %s: %v", id, err)
		}
	}
	wg.Wait()

	waitEnded(t, store, append(append([]string{}, wl.ids...), cancelIDs...), 120*time.Second)
	for _, id := range jobIDs {
		deadline := time.Now().Add(60 * time.Second)
		for {
			var j weir.Job
			err := calls.do(func(ctx context.Context) (bool, error) {
				var err error
				j, err = caller.GetJob(ctx, id)
				return errors.Is(err, weir.ErrNotFound), err
			})
			if err != nil {
				t.Fatalf("job %s: %v", id, err)
			}
			if j.State.Ended() {
				if j.State != weir.Completed {
					t.Errorf("job %s ended %s (%s)", id, j.State, j.Error)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s still %s", id, j.State)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	proxy.SetFaults(false)
	direct := newRedisClient(t, proc.Addr())
	rep := checkInvariants(t, direct, ns, "at the end")
	or := checkObserved(t, obs, wl.deps)
	jobs, doubled := eff.doubled()
	st := proxy.Stats()
	if doubled != 0 {
		t.Errorf("%d handler effects doubled", doubled)
	}
	if jobs != wl.tasks+nJobs {
		t.Errorf("%d jobs had effects, want %d", jobs, wl.tasks+nJobs)
	}
	// Created is false for a repeat whose first attempt's reply was lost;
	// never more creations than IDs.
	if submitCreated+submitRepeats > len(wl.ids) || enqCreated+enqRepeats > nJobs || submitCreated == 0 || enqCreated == 0 {
		t.Errorf("created %d+%d repeats workflows (want ≤ %d) and %d+%d repeats jobs (want ≤ %d)", submitCreated, submitRepeats, len(wl.ids), enqCreated, enqRepeats, nJobs)
	}
	if rep.TaskStates["completed"] != wl.tasks || rep.PlainJobs != nJobs {
		t.Errorf("end: %s; want %d tasks completed and %d plain jobs", rep, wl.tasks, nJobs)
	}
	calls.mu.Lock()
	if calls.untyped > 0 || calls.hung > 0 {
		t.Errorf("%d untyped errors (first %v), %d hung calls", calls.untyped, calls.firstUntyped, calls.hung)
	}
	sample := calls.sample
	calls.mu.Unlock()
	if st.RepliesDropped == 0 {
		t.Errorf("the proxy dropped no reply: the test tested nothing")
	}
	nlogs, _, _ := logs.count("")
	t.Logf("%s; %s; proxy %+v; client %s (e.g. %v); worker retries logged=%d", rep, or, st, calls.String(), sample, nlogs)
	t.Logf("FAULT lost-replies: replies_dropped=%d resets_before=%d conns=%d duplicates=%d dup_promotions=%d dup_wf_ends=%d submit_repeats_seen=%d enqueue_repeats_seen=%d cancel_repeats_seen=%d untyped_errors=%d hangs=%d",
		st.RepliesDropped, st.ResetsBefore, st.Conns, doubled, or.DupPromotions, or.DupWorkflowEnd, submitRepeats, enqRepeats, cancelRepeats, calls.untyped, calls.hung)
}
