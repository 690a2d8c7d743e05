//go:build unix && faults

package faults

import (
	"context"
	"github.com/weirflow/weir"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/worker"
)

// TestResentClaim: go-redis sends a call again when its connection broke
// after the request left (here a proxy drops replies after Redis ran the
// call, and the client retries up to 10 times). A claim so sent twice must
// not lease other jobs the second time, leaving the first call's leases to
// expire with their jobs never run: with MaxAttempts 1 and short leases,
// every job completes, and none runs twice.
func TestResentClaim(t *testing.T) {
	proc := StartRedisT(t)
	proxy, err := StartProxy(proc.Addr(), ProxyOptions{DropReply: 0.12, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	via := redis.NewClient(&redis.Options{Addr: proxy.Addr(), MaxRetries: 10, MinRetryBackoff: time.Millisecond,
		MaxRetryBackoff: 5 * time.Millisecond, DialTimeout: time.Second, ReadTimeout: 3 * time.Second, PoolSize: 32})
	t.Cleanup(func() { _ = via.Close() })
	admin := newRedisClient(t, proc.Addr())
	const ns = "resent"
	direct := newStore(t, admin, ns)
	store := newStore(t, via, ns)

	n := scaled(400)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = "j" + strconv.Itoa(i)
		if _, err := direct.Enqueue(context.Background(), engine.EnqueueParams{Job: engine.JobSpec{ID: ids[i], Queue: "resent", MaxAttempts: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	runs := map[string]int{}
	w := worker.New(store, worker.Config{Concurrency: 8, Lease: 400 * time.Millisecond, HeartbeatInterval: 100 * time.Millisecond,
		SweepInterval: 100 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	q := client.NewQueue[struct{}, struct{}]("resent")
	worker.Handle(w, q, func(ctx context.Context, j *worker.Job[struct{}]) (struct{}, error) {
		mu.Lock()
		runs[j.ID]++
		mu.Unlock()
		return struct{}{}, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()

	deadline := time.Now().Add(60 * time.Second)
	counts := map[weir.State]int{}
	for time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		clear(counts)
		for _, id := range ids {
			j, err := direct.GetJob(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			counts[j.State]++
		}
		if counts[weir.Completed]+counts[weir.Failed]+counts[weir.Cancelled] == n {
			break
		}
	}
	proxy.SetFaults(false)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("worker: %v", err)
	}
	twice := 0
	mu.Lock()
	for _, c := range runs {
		if c > 1 {
			twice++
		}
	}
	mu.Unlock()
	st := proxy.Stats()
	t.Logf("FAULT resent-claim: jobs=%d completed=%d failed=%d other=%d ran_twice=%d replies_dropped=%d conns=%d",
		n, counts[weir.Completed], counts[weir.Failed], n-counts[weir.Completed]-counts[weir.Failed], twice, st.RepliesDropped, st.Conns)
	if counts[weir.Completed] != n || twice > 0 {
		t.Errorf("%d of %d jobs completed (%d failed), %d ran twice", counts[weir.Completed], n, counts[weir.Failed], twice)
	}
	if st.RepliesDropped < 10 {
		t.Errorf("only %d replies dropped: the test tested little", st.RepliesDropped)
	}
	checkInvariants(t, admin, ns, "at the end")
}
