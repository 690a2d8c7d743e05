package redisstore

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
)

// blpopCounter is a go-redis hook counting BLPOPs: each is one sleep of a
// blocking Claim between two runs of claim.lua.
type blpopCounter struct{ n atomic.Int64 }

func (c *blpopCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *blpopCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if strings.EqualFold(cmd.Name(), "blpop") {
			c.n.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (c *blpopCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// rateEnv is a store on the server's own clock (a blocking Claim sleeps in
// real time until the due time the store's clock gives), with its BLPOPs
// counted.
func rateEnv(t *testing.T) (*Store, *blpopCounter) {
	e := newEnv(t, engine.Config{})
	c := &blpopCounter{}
	e.rdb.AddHook(c)
	s, err := New(e.rdb, Options{Namespace: e.ns + "-rate"})
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

func enqueueN(t *testing.T, s *Store, q string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: q}}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestClaimSleepsUntilRateAllows: a blocking Claim the rate limit refuses
// sleeps until the next start is allowed (the next due time claim.lua
// returns) and then claims, with one sleep, where the limit's period is a
// small part of the wait: without that due time it would sleep the whole
// wait and return nothing.
func TestClaimSleepsUntilRateAllows(t *testing.T) {
	s, blpops := rateEnv(t)
	if err := s.RateLimitQueue(bg, engine.RateLimitQueueParams{Queue: "r", Limit: 1, Period: 100 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	enqueueN(t, s, "r", "a", "b")
	p := engine.ClaimParams{Queues: []string{"r"}, Max: 2, Lease: time.Minute}
	got, err := s.Claim(bg, p)
	if err != nil || len(got) != 1 || got[0].Job.ID != "a" {
		t.Fatalf("first claim: %v, %v; want a alone", got, err)
	}
	p.Wait = 20 * time.Second
	got, err = s.Claim(bg, p)
	if err != nil || len(got) != 1 || got[0].Job.ID != "b" {
		t.Fatalf("blocking claim: %v, %v; want b once the window moved on", got, err)
	}
	if n := blpops.n.Load(); n != 1 {
		t.Errorf("the blocking claim slept %d times; want 1 (until the next allowed start)", n)
	}
}

// TestRateRefusalClearsWakeups: the wake-up tokens of a backlog pushed
// while a claim is blocked do not wake it once per job while the rate
// limit refuses them: the first claim the limit refuses clears them and
// sleeps until the next allowed start.
func TestRateRefusalClearsWakeups(t *testing.T) {
	s, blpops := rateEnv(t)
	if err := s.RateLimitQueue(bg, engine.RateLimitQueueParams{Queue: "r", Limit: 1, Period: 300 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	enqueueN(t, s, "r", "a")
	p := engine.ClaimParams{Queues: []string{"r"}, Max: 1, Lease: time.Minute}
	if got, err := s.Claim(bg, p); err != nil || len(got) != 1 {
		t.Fatalf("first claim: %v, %v", got, err)
	}
	p.Wait = 20 * time.Second
	done := make(chan []engine.Claimed, 1)
	go func() {
		got, err := s.Claim(bg, p)
		if err != nil {
			t.Error(err)
		}
		done <- got
	}()
	// the claim blocks on the empty queue; a backlog arrives
	for blpops.n.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	var ids []string
	for i := range 30 {
		ids = append(ids, fmt.Sprintf("b%02d", i))
	}
	enqueueN(t, s, "r", ids...)
	got := <-done
	if len(got) != 1 || got[0].Job.ID != "b00" {
		t.Fatalf("blocking claim: %v; want b00", got)
	}
	// one sleep on the empty queue, one until the next start: a token
	// per job would make up to 31
	if n := blpops.n.Load(); n > 3 {
		t.Errorf("the blocking claim slept %d times for %d jobs pushed; the tokens were not cleared", n, len(ids))
	}
}
