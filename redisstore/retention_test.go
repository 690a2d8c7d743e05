package redisstore

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// endJob enqueues job id on queue q, claims it and finishes it with kind.
func endJob(t *testing.T, s *Store, id string, kind engine.OutcomeKind) {
	t.Helper()
	if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: "q"}}); err != nil {
		t.Fatal(err)
	}
	c := claimOne(t, s, "q")
	if c.Job.ID != id {
		t.Fatalf("claimed %s, want %s", c.Job.ID, id)
	}
	if _, err := s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: id, Token: c.Lease.Token, Kind: kind}}}); err != nil {
		t.Fatal(err)
	}
}

// bucketOf returns the minute of the retention bucket of ended job id.
func bucketOf(t *testing.T, s *Store, id string) int64 {
	t.Helper()
	j, err := s.GetJob(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	return j.ExpiresAt.UnixMilli() / 60000
}

// TestRetentionBucketLeavesANewRecord: a bucket entry whose record was
// deleted, removed by retention, or run again since, does not remove
// the record that holds the ID when the bucket falls due.
func TestRetentionBucketLeavesANewRecord(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.Retention = time.Minute
	e := newEnv(t, cfg)
	s := e.store
	// a: deleted, then enqueued again
	endJob(t, s, "a", engine.OutcomeCompleted)
	m := bucketOf(t, s, "a")
	if err := s.DeleteJob(bg, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "a", Queue: "q2"}}); err != nil {
		t.Fatal(err)
	}
	// b: its retention passed, then enqueued again (before its bucket is due)
	endJob(t, s, "b", engine.OutcomeCompleted)
	// c: failed, then retried
	endJob(t, s, "c", engine.OutcomeFailed)
	if _, err := s.RetryJob(bg, engine.RetryJobParams{ID: "c"}); err != nil {
		t.Fatal(err)
	}
	e.advance(time.Minute)
	if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "b", Queue: "q2"}}); err != nil {
		t.Fatal(err)
	}
	// every bucket written so far falls due; a write sweeps them
	e.clk.Set(time.UnixMilli((m + 3) * 60000))
	if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "x", Queue: "q3"}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		j, err := s.GetJob(bg, id)
		if err != nil || j.State != weir.Queued {
			t.Fatalf("job %s after its old bucket fell due: %v %v", id, j.State, err)
		}
	}
	if n, _ := e.rdb.ZCard(bg, s.keys.buckets()).Result(); n != 0 {
		t.Fatalf("%d buckets left", n)
	}
}

// TestRetentionBucketSweepBounded: a write call removes at most 20 due
// records plus two for each record it ends, an expire call up to 500; a
// bucket stays indexed until it is empty.
func TestRetentionBucketSweepBounded(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.Retention = time.Minute
	e := newEnv(t, cfg)
	s := e.store
	const n = 100
	var ps []engine.EnqueueParams
	for i := range n {
		ps = append(ps, engine.EnqueueParams{Job: engine.JobSpec{ID: "j" + strconv.Itoa(i), Queue: "q"}})
	}
	if _, err := s.EnqueueBatch(bg, ps); err != nil {
		t.Fatal(err)
	}
	cs, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: n, Lease: time.Minute})
	if err != nil || len(cs) != n {
		t.Fatalf("claimed %d: %v", len(cs), err)
	}
	var outs []engine.Outcome
	for _, c := range cs {
		outs = append(outs, engine.Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted})
	}
	if _, err := s.Finish(bg, engine.FinishParams{Outcomes: outs}); err != nil {
		t.Fatal(err)
	}
	m := bucketOf(t, s, "j0")
	if l, _ := e.rdb.LLen(bg, s.keys.bucket(m)).Result(); l != n {
		t.Fatalf("bucket holds %d", l)
	}
	left := func() int64 {
		t.Helper()
		var keys []string
		for i := range n {
			keys = append(keys, s.keys.job("j"+strconv.Itoa(i)))
		}
		k, err := e.rdb.Exists(bg, keys...).Result()
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	e.clk.Set(time.UnixMilli((m + 1) * 60000))
	// ends nothing: 20
	if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "y", Queue: "q2"}}); err != nil {
		t.Fatal(err)
	}
	if k := left(); k != n-20 {
		t.Fatalf("%d records left after a call that ends none, want %d", k, n-20)
	}
	if _, err := e.rdb.ZScore(bg, s.keys.buckets(), strconv.FormatInt(m, 10)).Result(); err != nil {
		t.Fatalf("the bucket left the index before it was empty: %v", err)
	}
	c := claimOne(t, s, "q2") // 20 more
	// ends one: 22
	if _, err := s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: "y", Token: c.Lease.Token, Kind: engine.OutcomeCompleted}}}); err != nil {
		t.Fatal(err)
	}
	if k := left(); k != n-20-20-22 {
		t.Fatalf("%d records left after a claim and a finish of one, want %d", k, n-20-20-22)
	}
	if _, err := s.ExpireLeases(bg, engine.ExpireParams{Max: 100}); err != nil {
		t.Fatal(err)
	}
	if k := left(); k != 0 {
		t.Fatalf("%d records left after an expire call", k)
	}
	if n, _ := e.rdb.Exists(bg, s.keys.bucket(m)).Result(); n != 0 {
		t.Fatal("the bucket is still there")
	}
	if _, err := e.rdb.ZScore(bg, s.keys.buckets(), strconv.FormatInt(m, 10)).Result(); err == nil {
		t.Fatal("the empty bucket is still in the index")
	}
	// y's bucket is not due yet: the seq hash's gc says when
	g, _ := e.rdb.HGet(bg, s.keys.seq, "gc").Result()
	if want := strconv.FormatInt((bucketOf(t, s, "y")+1)*60000, 10); g != want {
		t.Fatalf("gc %q, want %s", g, want)
	}
}

// TestRetentionOldExpiryEntries: a plain job's entry in P expiry, as this
// protocol wrote it before retention buckets (with the test clock; and a
// namespace that weir migrate converted from protocol 2), is still swept
// on time, with its record.
func TestRetentionOldExpiryEntries(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.Retention = time.Minute
	e := newEnv(t, cfg)
	s := e.store
	endJob(t, s, "o", engine.OutcomeCompleted)
	m := bucketOf(t, s, "o")
	j, _ := s.GetJob(bg, "o")
	at := j.ExpiresAt.UnixMilli()
	// as written before: no bucket, an expiry entry j:<id> at its removal
	// time, the seq hash's gc at it
	e.rdb.Del(bg, s.keys.bucket(m))
	e.rdb.ZRem(bg, s.keys.buckets(), strconv.FormatInt(m, 10))
	e.rdb.ZAdd(bg, s.keys.expiry, redis.Z{Score: float64(at), Member: "j:o"})
	e.rdb.HSet(bg, s.keys.seq, "gc", strconv.FormatInt(at, 10))
	e.clk.Set(time.UnixMilli(at))
	if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "x", Queue: "q2"}}); err != nil {
		t.Fatal(err)
	}
	if n, _ := e.rdb.Exists(bg, s.keys.job("o")).Result(); n != 0 {
		t.Fatal("the job of an old expiry entry is still there")
	}
	if n, _ := e.rdb.ZCard(bg, s.keys.expiry).Result(); n != 0 {
		t.Fatalf("%d expiry entries left", n)
	}
	if g, _ := e.rdb.HGet(bg, s.keys.seq, "gc").Result(); g != "none" {
		t.Fatalf("gc %q", g)
	}
}

// TestAwaitSeesPlainJobUntilGrace: an await, which reads past retention,
// sees an ended plain job until its end plus the larger of retention and
// 60 s (the longest its end keeps it for a waiter), and not after, whether
// or not its key is still stored.
func TestAwaitSeesPlainJobUntilGrace(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.Retention = time.Second
	e := newEnv(t, cfg)
	s := e.store
	endJob(t, s, "a", engine.OutcomeCompleted)
	e.advance(30 * time.Second)
	if _, err := s.GetJob(bg, "a"); !errors.Is(err, weir.ErrNotFound) {
		t.Fatalf("read past retention: %v", err)
	}
	if j, err := s.AwaitJob(bg, "a"); err != nil || j.State != weir.Completed {
		t.Fatalf("await within 60 s of the end: %v %v", j.State, err)
	}
	e.advance(30 * time.Second)
	if n, _ := e.rdb.Exists(bg, s.keys.job("a")).Result(); n != 1 {
		t.Fatal("the key was removed without a write")
	}
	if _, err := s.AwaitJob(bg, "a"); !errors.Is(err, weir.ErrNotFound) {
		t.Fatalf("await 60 s after the end: %v", err)
	}
}
