//go:build unix && faults

package faults

import (
	"context"
	"github.com/weirflow/weir"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/worker"
)

// TestCancelReach cancels running jobs and workflows one after another,
// each from the moment its handler started, with heartbeats an hour apart,
// while every pub/sub connection of the server is killed every 5–25 ms
// (CLIENT KILL TYPE pubsub): each handler's context must end through the
// stop notice (engine.StopWatcher), or, when the notice was published
// while the worker's subscription was down, through the heartbeat of every
// lease that follows each resubscription. Reported: the time from the
// cancel call's return to the handler's context being done, p50, p99 and
// max (target p99 ≤ 250 ms: reported, not asserted — a shared machine).
func TestCancelReach(t *testing.T) {
	proc := StartRedisT(t)
	rdb := newRedisClient(t, proc.Addr())
	admin := newRedisClient(t, proc.Addr())
	store := newStore(t, rdb, "reach")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()

	q := client.NewQueue[int, int]("reach")
	var mu sync.Mutex
	started := map[string]chan struct{}{}
	stopped := map[string]time.Time{}
	startedCh := func(id string) chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		ch := started[id]
		if ch == nil {
			ch = make(chan struct{})
			started[id] = ch
		}
		return ch
	}
	w := worker.New(store, worker.Config{Concurrency: 8, Lease: 2 * time.Hour, HeartbeatInterval: time.Hour, SweepInterval: 50 * time.Millisecond})
	worker.Handle(w, q, func(hctx context.Context, j *worker.Job[int]) (int, error) {
		close(startedCh(j.ID))
		<-hctx.Done()
		mu.Lock()
		stopped[j.ID] = time.Now()
		mu.Unlock()
		return 0, hctx.Err()
	})
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = w.Stop(sctx)
	}()

	var kills, connsKilled atomic.Int64
	killDone := make(chan struct{})
	go func() {
		defer close(killDone)
		for ctx.Err() == nil {
			time.Sleep(time.Duration(5+rand.IntN(20)) * time.Millisecond)
			if n, err := admin.ClientKillByFilter(ctx, "TYPE", "pubsub").Result(); err == nil {
				kills.Add(1)
				connsKilled.Add(n)
			}
		}
	}()

	c := client.New(store)
	n := scaled(200)
	var lat []time.Duration
	for i := range n {
		var id string
		var cancelIt func() error
		if i%2 == 0 {
			j, err := client.Enqueue(ctx, c, q, i)
			if err != nil {
				t.Fatal(err)
			}
			id = j.ID()
			cancelIt = func() error {
				_, err := store.CancelJob(ctx, engine.CancelJobParams{ID: id})
				return err
			}
		} else {
			wf := client.NewWorkflow()
			client.AddTask(wf, "only", q, i)
			if err := c.Submit(ctx, wf); err != nil {
				t.Fatal(err)
			}
			id = weir.TaskJobID(wf.ID(), "only")
			cancelIt = func() error {
				_, err := store.CancelWorkflow(ctx, engine.CancelWorkflowParams{ID: wf.ID()})
				return err
			}
		}
		select {
		case <-startedCh(id):
		case <-time.After(30 * time.Second):
			t.Fatalf("cancel %d: the handler of %s did not start within 30 s", i, id)
		}
		// a random moment, so that cancels fall while the subscription is
		// up, down, or coming back
		time.Sleep(time.Duration(rand.IntN(10_000)) * time.Microsecond)
		if err := cancelIt(); err != nil {
			t.Fatalf("cancel %d (%s): %v", i, id, err)
		}
		back := time.Now()
		deadline := back.Add(30 * time.Second)
		for {
			mu.Lock()
			at, ok := stopped[id]
			mu.Unlock()
			if ok {
				lat = append(lat, max(0, at.Sub(back)))
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("cancel %d: the handler of %s was still running 30 s after the cancel (heartbeats are an hour apart: the notice and the resubscription's heartbeat both missed it)", i, id)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	stop()
	<-killDone
	slices.Sort(lat)
	pct := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	t.Logf("FAULT cancel-reach: cancels=%d (jobs %d, workflows %d) pubsub_kills=%d connections_killed=%d stop_after_cancel p50=%v p99=%v max=%v (target p99 ≤ 250ms; heartbeat interval 1h)",
		len(lat), (n+1)/2, n/2, kills.Load(), connsKilled.Load(), pct(0.5).Round(10*time.Microsecond), pct(0.99).Round(10*time.Microsecond), lat[len(lat)-1].Round(10*time.Microsecond))
	if kills.Load() == 0 {
		t.Error("no pub/sub connection was killed: the test did not test the resubscription")
	}
}
