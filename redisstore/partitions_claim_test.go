package redisstore

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
)

// scriptCounter is a go-redis hook counting the calls of one script,
// whichever path they take (FCALL, EVALSHA, EVAL), pipelined or not.
type scriptCounter struct {
	sc *script
	n  atomic.Int64
}

func (c *scriptCounter) count(cmd redis.Cmder) {
	if a := cmd.Args(); len(a) > 1 {
		if v := fmt.Sprint(a[1]); v == c.sc.fn || v == c.sc.text().sha || v == c.sc.text().src {
			c.n.Add(1)
		}
	}
}

func (c *scriptCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *scriptCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.count(cmd)
		return next(ctx, cmd)
	}
}
func (c *scriptCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			c.count(cmd)
		}
		return next(ctx, cmds)
	}
}

// TestPartitionsClaimVisitsWoken: a blocking claim over 8 partitions that
// found them all empty visits, after its wait, only the partition whose
// push woke it, or whose delayed job fell due: 8 claim calls for the first
// round and 1 after, where visiting every partition again would make 16
// (Max 2, one job: no round stops early).
func TestPartitionsClaimVisitsWoken(t *testing.T) {
	partServers(t, func(t *testing.T, rdb redis.UniversalClient) {
		const n = 8
		s, _ := partEnv(t, rdb, n)
		if err := s.Load(bg); err != nil { // no NOSCRIPT retry among the counted calls
			t.Fatal(err)
		}
		c := &scriptCounter{sc: scripts["claim"]}
		rdb.AddHook(c)
		claim := func(enqueue func()) {
			t.Helper()
			c.n.Store(0)
			done := make(chan []engine.Claimed, 1)
			go func() {
				got, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 2, Lease: time.Minute, Wait: time.Minute})
				if err != nil {
					t.Error(err)
				}
				done <- got
			}()
			enqueue()
			got := <-done
			if len(got) != 1 {
				t.Fatalf("claimed %d jobs, want 1", len(got))
			}
			if k := c.n.Load(); k > n+1 {
				t.Fatalf("%d claim calls, want at most %d (one round, then the woken partition)", k, n+1)
			}
		}
		// woken by a push into partition 5
		claim(func() {
			time.Sleep(100 * time.Millisecond)
			id := idIn("late", 5, n)
			if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: "q"}}); err != nil {
				t.Fatal(err)
			}
		})
		// a job of partition 3 delayed 300 ms, enqueued before the claim
		id := idIn("delayed", 3, n)
		if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: "q", Delay: 300 * time.Millisecond}}); err != nil {
			t.Fatal(err)
		}
		claim(func() {})
	})
}
