package redisstore

import (
	"context"
	"errors"
	"github.com/weirflow/weir"
	"reflect"
	"testing"
	"time"

	"github.com/weirflow/weir/conformance"
	"github.com/weirflow/weir/engine"
)

// enqueueBatchCases is a batch with every kind of answer: new jobs, a
// repeat of a job with the same spec, one with another spec (a conflict),
// a job with a bad queue name (refused in Go), a delayed job and a job of
// the batch repeated within it.
func enqueueBatchCases(now time.Time) []engine.EnqueueParams {
	job := func(id, q string, payload string) engine.EnqueueParams {
		j := engine.JobSpec{ID: id, Queue: q, MaxAttempts: 3}
		if payload != "" {
			j.Payload = []byte(payload)
		}
		return engine.EnqueueParams{Job: j}
	}
	delayed := job("d1", "q", "later")
	delayed.Job.RunAt = now.Add(time.Minute)
	return []engine.EnqueueParams{
		job("a", "q", "x"),
		job("b", "q", ""),
		job("a", "q", "x"),
		job("a", "q", "other"),
		job("c", "bad queue", "x"),
		delayed,
		job("e", "q2", "y"),
		job("b", "q", ""),
	}
}

// TestEnqueueBatchIsEnqueue: a batch answers every job as Enqueue does
// (compared with Enqueue calls on a second namespace with the same clock),
// leaves the same jobs behind, and takes one round trip.
func TestEnqueueBatchIsEnqueue(t *testing.T) {
	ctx := context.Background()
	a, b := newEnv(t, engine.Config{}), newEnv(t, engine.Config{})
	trips := &tripCounter{}
	a.rdb.AddHook(trips)
	if err := a.store.Load(ctx); err != nil {
		t.Fatal(err)
	}
	ps := enqueueBatchCases(a.clock())
	before := trips.n
	got, err := a.store.EnqueueBatch(ctx, ps)
	if err != nil {
		t.Fatal(err)
	}
	if n := trips.n - before; n != 1 {
		t.Errorf("EnqueueBatch of %d jobs made %d round trips, want 1", len(ps), n)
	}
	if len(got) != len(ps) {
		t.Fatalf("%d results for %d jobs", len(got), len(ps))
	}
	for i, p := range ps {
		want, wantErr := b.store.Enqueue(ctx, p)
		if got[i].EnqueueResult != want || conformance.Sentinel(got[i].Err) != conformance.Sentinel(wantErr) {
			t.Errorf("job %d (%s): batch gave %+v, %v; Enqueue gave %+v, %v", i, p.Job.ID, got[i].EnqueueResult, got[i].Err, want, wantErr)
		}
		var ve *weir.ValidationError
		if errors.As(wantErr, &ve) != errors.As(got[i].Err, &ve) {
			t.Errorf("job %d: batch error %v, Enqueue error %v: not both validation errors", i, got[i].Err, wantErr)
		}
	}
	for _, id := range []string{"a", "b", "d1", "e"} {
		ja, errA := a.store.GetJob(ctx, id)
		jb, errB := b.store.GetJob(ctx, id)
		if errA != nil || errB != nil {
			t.Fatalf("GetJob(%s): %v, %v", id, errA, errB)
		}
		if !reflect.DeepEqual(ja, jb) {
			t.Errorf("job %s after the batch:\n%+v\nafter Enqueue:\n%+v", id, ja, jb)
		}
	}
	if _, err := a.store.GetJob(ctx, "c"); !errors.Is(err, weir.ErrNotFound) {
		t.Errorf("GetJob(c) of a refused job: %v, want ErrNotFound", err)
	}
}

// TestEnqueueBatchAfterScriptFlush: with the script gone from the
// server's cache, a batch still enqueues every job (EVAL after NOSCRIPT).
func TestEnqueueBatchAfterScriptFlush(t *testing.T) {
	ctx := context.Background()
	e := newOwnEnv(t, engine.Config{}) // its own server: server-wide state
	if err := e.rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	ps := []engine.EnqueueParams{{Job: engine.JobSpec{ID: "x", Queue: "q"}}, {Job: engine.JobSpec{ID: "y", Queue: "q"}}}
	got, err := e.store.EnqueueBatch(ctx, ps)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range got {
		if r.Err != nil || !r.Created || r.State != weir.Queued {
			t.Errorf("job %d after a flush: %+v, %v", i, r.EnqueueResult, r.Err)
		}
	}
	qs, err := e.store.Queues(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 1 || qs[0].Ready != 2 {
		t.Errorf("queues after the batch: %+v, want q with 2 ready", qs)
	}
}

// TestEnqueueBatchCancelled: a done context sends nothing.
func TestEnqueueBatchCancelled(t *testing.T) {
	e := newEnv(t, engine.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.store.EnqueueBatch(ctx, []engine.EnqueueParams{{Job: engine.JobSpec{ID: "x", Queue: "q"}}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("EnqueueBatch with a cancelled context: %v", err)
	}
	if _, err := e.store.GetJob(context.Background(), "x"); !errors.Is(err, weir.ErrNotFound) {
		t.Errorf("GetJob after a cancelled batch: %v, want ErrNotFound", err)
	}
}
