package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/internal/testclock"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

type Args struct {
	Name  string `json:"name"`
	Count int    `msgpack:"n"`
	Skip  string `msgpack:"-"`
}

var (
	argsQ = client.NewQueue[Args, string]("args")
	strQ  = client.NewQueue[string, string]("str")
)

func TestNewQueuePanicsOnBadName(t *testing.T) {
	for _, name := range []string{"", "a b", "a{b}", strings.Repeat("x", 65)} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewQueue(%q) did not panic", name)
				}
			}()
			client.NewQueue[int, int](name)
		}()
	}
	if q := client.NewQueue[int, int]("ok.name-1_x"); q.Name() != "ok.name-1_x" {
		t.Fatalf("Name = %q", q.Name())
	}
}

// Payloads are msgpack, with msgpack tags first, then json tags.
func TestPayloadEncoding(t *testing.T) {
	b, err := argsQ.EncodePayload(Args{Name: "x", Count: 3, Skip: "no"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := client.Decode[map[string]any](b)
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 2 || m["name"] != "x" || m["n"] == nil {
		t.Fatalf("encoded as %v; want keys name and n", m)
	}
	back, err := argsQ.DecodePayload(b)
	if err != nil || back != (Args{Name: "x", Count: 3}) {
		t.Fatalf("round trip = %+v, %v", back, err)
	}
	if _, err := argsQ.DecodePayload([]byte{0xc1}); err == nil {
		t.Fatal("decoding garbage succeeded")
	}
}

// Every job option reaches the stored job.
func TestEnqueueOptions(t *testing.T) {
	ctx := testCtx(t)
	c := client.New(memstore.New())
	at := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	j, err := client.Enqueue(ctx, c, argsQ, Args{Name: "x"},
		client.ID("job-1"), client.Priority(-7), client.RunAt(at), client.MaxAttempts(4),
		client.Backoff(250*time.Millisecond), client.Timeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if j.ID() != "job-1" {
		t.Fatalf("ID = %q", j.ID())
	}
	s, err := j.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.Queue != "args" || s.Priority != -7 || !s.RunAt.Equal(at) || s.MaxAttempts != 4 ||
		s.Backoff != 250*time.Millisecond || s.Timeout != 2*time.Second || s.State != weir.Queued {
		t.Fatalf("stored job = %+v", s)
	}
	p, err := argsQ.DecodePayload(s.Payload)
	if err != nil || p.Name != "x" {
		t.Fatalf("payload = %+v, %v", p, err)
	}
	// Random IDs are valid and distinct.
	a, _ := client.Enqueue(ctx, c, strQ, "a")
	b, _ := client.Enqueue(ctx, c, strQ, "b")
	if a == nil || b == nil || a.ID() == b.ID() || !engine.ValidID(a.ID()) {
		t.Fatalf("random IDs %v, %v", a, b)
	}
	if _, err := client.Enqueue(ctx, c, strQ, "x", client.ID("bad/id")); !errors.Is(err, weir.ErrInvalid) {
		t.Fatalf("enqueue with a bad ID = %v; want ErrInvalid", err)
	}
	if _, err := client.Enqueue(ctx, c, strQ, "x", client.Delay(time.Minute), client.ID("delayed")); err != nil {
		t.Fatal(err)
	}
	if s, _ := client.OpenJob(c, strQ, "delayed").Status(ctx); s.RunAt.IsZero() {
		t.Fatalf("delayed job has no RunAt: %+v", s)
	}
}

// TestDelayUsesStoreClock: Delay counts from the store's now, not from this
// process's clock, which here is years away from the store's.
func TestDelayUsesStoreClock(t *testing.T) {
	ctx := testCtx(t)
	clock := testclock.New()
	c := client.New(memstore.New(memstore.WithClock(clock.Now)))
	if _, err := client.Enqueue(ctx, c, strQ, "x", client.ID("d"), client.Delay(90*time.Second+time.Microsecond)); err != nil {
		t.Fatal(err)
	}
	s, err := client.OpenJob(c, strQ, "d").Status(ctx)
	if want := testclock.Epoch.Add(90*time.Second + time.Millisecond); err != nil || !s.RunAt.Equal(want) {
		t.Fatalf("RunAt = %v, %v; want %v (the store's now + the delay, rounded up)", s.RunAt, err, want)
	}
	// RunAt after Delay replaces it, and the other way round.
	if _, err := client.Enqueue(ctx, c, strQ, "x", client.ID("r"), client.Delay(time.Hour), client.RunAt(testclock.Epoch.Add(time.Second))); err != nil {
		t.Fatal(err)
	}
	if s, _ := client.OpenJob(c, strQ, "r").Status(ctx); !s.RunAt.Equal(testclock.Epoch.Add(time.Second)) {
		t.Fatalf("RunAt then Delay: RunAt = %v", s.RunAt)
	}
	if _, err := client.Enqueue(ctx, c, strQ, "x", client.Delay(-time.Second)); !errors.Is(err, weir.ErrInvalid) {
		t.Fatalf("negative Delay = %v; want ErrInvalid", err)
	}
}

func TestCancelJobStates(t *testing.T) {
	ctx := testCtx(t)
	store := memstore.New()
	c := client.New(store)
	j, err := client.Enqueue(ctx, c, strQ, "x")
	if err != nil {
		t.Fatal(err)
	}
	if st, err := j.Cancel(ctx); err != nil || st != weir.Cancelled {
		t.Fatalf("Cancel of a queued job = %v, %v; want cancelled", st, err)
	}
	_, err = j.Wait(ctx)
	var je *weir.JobError
	if !errors.As(err, &je) || !errors.Is(err, weir.ErrCancelled) || errors.Is(err, weir.ErrFailed) || je.JobID != j.ID() {
		t.Fatalf("Wait = %v; want a cancelled JobError", err)
	}
	if _, err := j.Cancel(ctx); !errors.Is(err, weir.ErrJobEnded) {
		t.Fatalf("second Cancel = %v; want ErrJobEnded", err)
	}
	if _, err := client.OpenJob(c, strQ, "missing").Cancel(ctx); !errors.Is(err, weir.ErrNotFound) {
		t.Fatalf("Cancel of an unknown job = %v; want ErrNotFound", err)
	}
	// A running job is told to stop: the handle and the client say so alike.
	run, err := client.Enqueue(ctx, c, strQ, "running")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Claim(ctx, engine.ClaimParams{Queues: []string{strQ.Name()}, Max: 1, Lease: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if st, err := run.Cancel(ctx); err != nil || st != weir.Running {
		t.Fatalf("Job.Cancel of a running job = %v, %v; want running (told to stop)", st, err)
	}
	if st, err := c.CancelJob(ctx, run.ID()); err != nil || st != weir.Running {
		t.Fatalf("Client.CancelJob of a running job = %v, %v; want running (told to stop)", st, err)
	}
}

func TestPauseResumeQueue(t *testing.T) {
	ctx := testCtx(t)
	c := client.New(memstore.New())
	if err := c.PauseQueue(ctx, "str"); err != nil {
		t.Fatal(err)
	}
	qs, err := c.Queues(ctx)
	if err != nil || len(qs) != 1 || !qs[0].Paused {
		t.Fatalf("Queues = %+v, %v; want str paused", qs, err)
	}
	if err := c.ResumeQueue(ctx, "str"); err != nil {
		t.Fatal(err)
	}
	if qs, _ := c.Queues(ctx); qs[0].Paused {
		t.Fatal("still paused after ResumeQueue")
	}
}
