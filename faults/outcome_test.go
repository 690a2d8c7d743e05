//go:build unix && faults

package faults

import (
	"context"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/worker"
)

// TestOutcomeDelivery awaits 10,000 outcomes (plain jobs through
// client.Job.Wait, workflow tasks through Store.AwaitJob, workflows
// through client.Workflow.Wait) while every pub/sub connection is killed
// 100 times (CLIENT KILL TYPE pubsub): every outcome is learned, with the
// right result, well before the waiters' one-minute refresh could have
// rescued a lost message. A wait that returns ErrUnavailable is called
// again, as that error's contract allows (and counted).
func TestOutcomeDelivery(t *testing.T) { runOutcome(t, true, outcomeJobs(), scaled(100)) }

// outcomeJobs is the number of plain jobs awaited: 9,000 (with 1,100
// workflow outcomes, 10,100 in all), a tenth under the race detector,
// which slows every subscription tenfold.
func outcomeJobs() int {
	if raceEnabled {
		return scaled(900)
	}
	return scaled(9000)
}

// TestOutcomeDeliveryNoRetry is TestOutcomeDelivery without calling a
// wait again: one Wait call must learn its outcome whatever happens to the
// pub/sub connection.
func TestOutcomeDeliveryNoRetry(t *testing.T) {
	runOutcome(t, false, outcomeJobs(), scaled(100))
}

func runOutcome(t *testing.T, retry bool, nJobs, nWF int) {
	proc := StartRedisT(t)
	rdb := newRedisClient(t, proc.Addr())
	admin := newRedisClient(t, proc.Addr())
	const ns = "outcome"
	store := newStore(t, rdb, ns)
	cl := client.New(store)
	perWF := 10
	if raceEnabled {
		nWF /= 10
		t.Logf("race detector on: %d jobs and %d workflows instead of %d and %d", nJobs, nWF, nJobs*10, nWF*10)
	}
	kills := 100
	obs := NewObservations()
	logs := &logCounter{}
	w := worker.New(store, worker.Config{Concurrency: 32, Lease: 10 * time.Second, Logger: slogOf(logs),
		Middleware: []worker.Middleware{obs.Middleware}, Observer: obs.Observer(nil)})
	worker.Handle(w, Work, func(ctx context.Context, j *worker.Job[int]) (int, error) {
		time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
		return 2 * j.Payload, nil
	})
	runWorker(t, w)

	// Waiters must learn each outcome within this; a message lost without
	// the re-read after a reconnect would wait for the 1-minute refresh.
	const waitLimit = 40 * time.Second
	var learned, wrong, failed, retried atomic.Int64
	var firstErr atomic.Value
	note := func(err error) {
		failed.Add(1)
		firstErr.CompareAndSwap(nil, err)
	}
	// again reports whether a wait that returned err is called again.
	again := func(ctx context.Context, err error) bool {
		if retry && errors.Is(err, weir.ErrUnavailable) && ctx.Err() == nil {
			retried.Add(1)
			return true
		}
		return false
	}
	type item struct {
		kind string
		i    int
	}
	work := make(chan item)
	var wg sync.WaitGroup
	for range 150 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range work {
				ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
				switch it.kind {
				case "job":
					j, err := client.Enqueue(ctx, cl, Work, it.i, client.ID(fmt.Sprintf("job-%05d", it.i)))
					if err != nil {
						note(err)
						break
					}
					r, err := j.Wait(ctx)
					for err != nil && again(ctx, err) {
						r, err = j.Wait(ctx)
					}
					if err != nil {
						note(err)
					} else if r != 2*it.i {
						wrong.Add(1)
					} else {
						learned.Add(1)
					}
				case "task":
					wf, task := fmt.Sprintf("wf-%04d", it.i/perWF), taskName(it.i%perWF)
					s, err := store.AwaitJob(ctx, weir.TaskJobID(wf, task))
					for err != nil && (errorsIsNotFound(err) || again(ctx, err)) && ctx.Err() == nil {
						if errorsIsNotFound(err) {
							time.Sleep(5 * time.Millisecond) // not submitted yet
						}
						s, err = store.AwaitJob(ctx, weir.TaskJobID(wf, task))
					}
					if err != nil {
						note(err)
					} else if v, derr := Work.DecodeResult(s.Result); derr != nil || s.State != weir.Completed || v != 2*(it.i%perWF) {
						wrong.Add(1)
					} else {
						learned.Add(1)
					}
				case "workflow":
					wf := client.NewWorkflow(client.WorkflowID(fmt.Sprintf("wf-%04d", it.i)))
					var tasks []*client.Task[int]
					for k := range perWF {
						tk := client.AddTask(wf, taskName(k), Work, k)
						if k > 0 {
							tk.After(tasks[(k-1)/2])
						}
						tasks = append(tasks, tk)
					}
					if err := cl.Submit(ctx, wf); err != nil {
						note(err)
						break
					}
					s, err := wf.Wait(ctx)
					for err != nil && again(ctx, err) {
						s, err = wf.Wait(ctx)
					}
					if err != nil {
						note(err)
					} else if s.State != weir.WorkflowCompleted {
						wrong.Add(1)
					} else {
						learned.Add(1)
					}
				}
				cancel()
			}
		}()
	}

	// The killer: 100 kills of every pub/sub connection, spread over the run.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var killed, connsKilled atomic.Int64
	killDone := make(chan struct{})
	total := nJobs + nWF*perWF + nWF
	go func() {
		defer close(killDone)
		for killed.Load() < int64(kills) && ctx.Err() == nil {
			// Pace the kills by progress so they cover the whole run; the
			// feeder holds back the last tenth of the waits until every
			// kill happened, so the kills cannot outlast the run.
			if learned.Load()+failed.Load()+wrong.Load() < killed.Load()*int64(total)*8/10/int64(kills) {
				time.Sleep(2 * time.Millisecond)
				continue
			}
			n, err := admin.ClientKillByFilter(ctx, "TYPE", "pubsub").Result()
			if err == nil {
				killed.Add(1)
				connsKilled.Add(n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	sent := 0
	send := func(it item) {
		if sent == total*9/10 {
			select {
			case <-killDone:
			case <-time.After(2 * time.Minute):
				t.Errorf("the kills did not end within 2 minutes")
			}
		}
		sent++
		work <- it
	}
	start := time.Now()
	// Interleave: workflows (and their task waiters) among the jobs.
	for i := range nJobs {
		if i%(nJobs/nWF) == 0 && i/(nJobs/nWF) < nWF {
			k := i / (nJobs / nWF)
			for x := range perWF {
				send(item{"task", k*perWF + x})
			}
			send(item{"workflow", k})
		}
		send(item{"job", i})
	}
	close(work)
	wg.Wait()
	took := time.Since(start)
	stop()
	<-killDone
	if killed.Load() < int64(kills) {
		t.Errorf("only %d pub/sub kills happened", killed.Load())
	}
	if learned.Load() != int64(total) {
		t.Errorf("learned %d of %d outcomes (%d wrong, %d errors, first %v)", learned.Load(), total, wrong.Load(), failed.Load(), firstErr.Load())
	}
	rep := checkInvariants(t, rdb, ns, "at the end")
	t.Logf("%s; run took %v", rep, took.Round(time.Millisecond))
	name := "outcome-delivery"
	if !retry {
		name += "-noretry"
	}
	t.Logf("FAULT %s: awaited=%d learned=%d (%.1f%%) wrong=%d errors=%d waits_called_again_after_ErrUnavailable=%d pubsub_kills=%d connections_killed=%d",
		name, total, learned.Load(), 100*float64(learned.Load())/float64(total), wrong.Load(), failed.Load(), retried.Load(), killed.Load(), connsKilled.Load())
}
