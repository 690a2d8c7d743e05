package redisstore

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// leaseSentinel is the lease set's sentinel member (spec/keys.md,
// q:<queue>:a), scored leaseSentinelScore.
var leaseSentinel = strings.Repeat("~", 65)

const leaseSentinelScore = 9007199254740991

// TestLeaseSetSentinel: a claim of several jobs writes the lease set's
// sentinel with its leases (so that the set is a skiplist on a real server),
// a claim of one does not, and every reader of the set skips it: the
// running counts and lists, a queue's contents, a concurrency limit's
// count, and the sweep, which finds nothing due and keeps no hint from it.
func TestLeaseSetSentinel(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	s := e.store
	pre := "weir:{" + e.ns + ":0}:"
	enqueueN(t, s, "q", "a", "b", "c", "d")
	enqueueN(t, s, "one", "x")
	claim := func(q string, max int) []engine.Claimed {
		t.Helper()
		c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{q}, Max: max, Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	got := claim("q", 3)
	held := got
	if len(got) != 3 {
		t.Fatalf("claimed %d, want 3", len(got))
	}
	if sc, err := e.rdb.ZScore(bg, pre+"q:q:a", leaseSentinel).Result(); err != nil || sc != leaseSentinelScore {
		t.Fatalf("sentinel after a claim of 3: score %v, %v; want %d", sc, err, leaseSentinelScore)
	}
	if e.mini == nil {
		if enc, err := e.rdb.ObjectEncoding(bg, pre+"q:q:a").Result(); err != nil || enc != "skiplist" {
			t.Fatalf("lease set's encoding %q, %v; want skiplist", enc, err)
		}
	}
	if len(claim("one", 1)) != 1 {
		t.Fatal("claim of one: nothing")
	}
	if n, err := e.rdb.ZCard(bg, pre+"q:one:a").Result(); err != nil || n != 1 {
		t.Fatalf("lease set after a claim of one: %d members, %v; want 1 (no sentinel)", n, err)
	}

	running := func(want ...string) {
		t.Helper()
		qs, err := s.Queues(bg)
		if err != nil {
			t.Fatal(err)
		}
		for _, qi := range qs {
			if qi.Name == "q" && qi.Running != len(want) {
				t.Fatalf("Queues: running %d, want %d", qi.Running, len(want))
			}
		}
		page, err := s.ListJobs(bg, weir.ListJobsParams{Queue: "q", State: weir.ListRunning})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, j := range page.Jobs {
			ids = append(ids, j.ID)
		}
		if !slices.Equal(ids, want) {
			t.Fatalf("ListJobs running: %v, want %v", ids, want)
		}
		c, err := s.QueueContents(bg, "q")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c.Running, want) {
			t.Fatalf("QueueContents running: %v, want %v", c.Running, want)
		}
	}
	running("a", "b", "c")

	// a concurrency limit of 4 counts 3 leases, not the sentinel: one more
	if err := s.LimitQueue(bg, engine.LimitQueueParams{Queue: "q", Concurrency: 4}); err != nil {
		t.Fatal(err)
	}
	got = claim("q", 5)
	if len(got) != 1 || got[0].Job.ID != "d" {
		t.Fatalf("claim under a limit of 4 with 3 running: %d jobs, want d alone", len(got))
	}
	held = append(held, got...)
	if err := s.LimitQueue(bg, engine.LimitQueueParams{Queue: "q", Concurrency: 0}); err != nil {
		t.Fatal(err)
	}
	running("a", "b", "c", "d")

	// every lease ends: the sentinel alone is left, read by nobody
	var outs []engine.Outcome
	for _, c := range held {
		outs = append(outs, engine.Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted})
	}
	if _, err := s.Finish(bg, engine.FinishParams{Outcomes: outs}); err != nil {
		t.Fatal(err)
	}
	if n, err := e.rdb.ZCard(bg, pre+"q:q:a").Result(); err != nil || n != 1 {
		t.Fatalf("lease set after the finishes: %d members, %v; want the sentinel alone", n, err)
	}
	running()
	// past every lease: the sweep reads the leases below the sentinel,
	// finds none, and keeps "none" as the due hint (not the sentinel's
	// score)
	e.advance(2 * time.Minute)
	if got := claim("q", 5); len(got) != 0 {
		t.Fatalf("claim of an empty queue: %d jobs", len(got))
	}
	if h, err := e.rdb.HGet(bg, pre+"q:q:s", "n").Result(); err != nil || h != "none" {
		t.Fatalf("due hint %q, %v after a sweep of the sentinel alone, want none", h, err)
	}
	enqueueN(t, s, "q", "e")
	if got := claim("q", 5); len(got) != 1 || got[0].Job.ID != "e" {
		t.Fatalf("claim after the sweep: %d jobs, want e alone", len(got))
	}
	running("e")
}
