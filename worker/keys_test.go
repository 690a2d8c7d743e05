package worker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/worker"
)

// TestConcurrencyKeyFairness: tenant A enqueues 200 jobs, then tenant B
// one. A worker of four slots claims B's job in its first claim batch:
// A's jobs wait, each in its handler, until B's has started, so at most
// the three other jobs of that batch start before it (without the
// rotation across keys B's job would be the 201st and the test would time
// out). A per-key limit of 2 holds meanwhile: never more than two of A's
// jobs run at once.
func TestConcurrencyKeyFairness(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		c := client.New(b.open(t))
		q := client.NewQueue[string, string]("tenants")
		if err := c.LimitKeys(ctx, q.Name(), 2); err != nil {
			t.Fatal(err)
		}
		var jobs []*client.Job[string]
		for i := range 200 {
			jobs = append(jobs, mustEnqueue(t, c, q, fmt.Sprint("A", i), client.ConcurrencyKey("A")))
		}
		jobs = append(jobs, mustEnqueue(t, c, q, "B", client.ConcurrencyKey("B")))
		var mu sync.Mutex
		aBefore, aRunning, aMost := 0, 0, 0
		bStarted := make(chan struct{})
		handler := func(ctx context.Context, j *worker.Job[string]) (string, error) {
			if j.Payload == "B" {
				close(bStarted)
				return j.Payload, nil
			}
			mu.Lock()
			select {
			case <-bStarted:
			default:
				aBefore++
			}
			aRunning++
			aMost = max(aMost, aRunning)
			mu.Unlock()
			select {
			case <-bStarted:
			case <-ctx.Done():
			}
			mu.Lock()
			aRunning--
			mu.Unlock()
			return j.Payload, nil
		}
		w := worker.New(b.open(t), fastConfig())
		worker.Handle(w, q, handler)
		start(t, w)
		for _, j := range jobs {
			if _, err := j.Wait(ctx); err != nil {
				t.Fatal(err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if aBefore > fastConfig().Concurrency-1 {
			t.Errorf("%d of A's jobs started before B's, want at most %d (one claim batch)", aBefore, fastConfig().Concurrency-1)
		}
		if aMost > 2 {
			t.Errorf("%d of A's jobs ran at once, the per-key limit is 2", aMost)
		}
	})
}
