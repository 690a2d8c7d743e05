package worker_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/internal/testclock"
	"github.com/weirflow/weir/worker"
)

// A worker registers itself when it starts, with what it serves, and
// removes its record when it stops.
func TestWorkerRegistersAndDeregisters(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		c := client.New(b.open(t))
		w := worker.New(b.open(t), worker.Config{Concurrency: 3, Lease: 20 * time.Second, Queues: map[string]int{blockQ.Name(): 2}})
		blockUntilStopped(w)
		if err := w.Start(ctx); err != nil {
			t.Fatal(err)
		}
		ws, err := c.Workers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ws) != 1 {
			t.Fatalf("Workers after Start: %+v, want one", ws)
		}
		host, _ := os.Hostname()
		got := ws[0]
		want := weir.WorkerQueue{Name: blockQ.Name(), Weight: 2}
		if got.ID != w.ID() || got.Host != host || got.PID != os.Getpid() || got.Concurrency != 3 ||
			len(got.Queues) != 1 || got.Queues[0] != want || got.Running != 0 || got.Version == "" ||
			got.Started.IsZero() || got.Expires.Sub(got.LastHeartbeat) != 20*time.Second {
			t.Fatalf("the worker's record: %+v; want ID %s, host %s, pid %d, concurrency 3, queue %v, nothing running, a TTL of its lease (20s)", got, w.ID(), host, os.Getpid(), want)
		}
		if err := w.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if ws, err := c.Workers(ctx); err != nil || len(ws) != 0 {
			t.Fatalf("Workers after Stop: %+v, %v; want none", ws, err)
		}
	})
}

// registrySpy is a memstore that reports every registry write and can drop a
// worker's removal, as a process killed before its stop never sends it.
type registrySpy struct {
	*memstore.Store
	beats      chan engine.BeatWorkerParams
	dropRemove bool
}

func (s *registrySpy) BeatWorker(ctx context.Context, p engine.BeatWorkerParams) error {
	err := s.Store.BeatWorker(ctx, p)
	select {
	case s.beats <- p:
	default: // the test reads no more
	}
	return err
}

func (s *registrySpy) RemoveWorker(ctx context.Context, id string) error {
	if s.dropRemove {
		return nil
	}
	return s.Store.RemoveWorker(ctx, id)
}

// The heartbeat keeps the record current (the jobs running now), and the
// record of a worker that stops sending it (a process gone without its
// stop) leaves the list when its lease from the last heartbeat has passed.
func TestWorkerRecordFollowsHeartbeatsAndExpires(t *testing.T) {
	ctx := testCtx(t)
	clk := testclock.New()
	s := &registrySpy{Store: memstore.New(memstore.WithClock(clk.Now)), beats: make(chan engine.BeatWorkerParams, 1000)}
	c := client.New(s)
	w := worker.New(s, worker.Config{Concurrency: 2, Lease: 30 * time.Second, HeartbeatInterval: time.Millisecond, ID: "w-1"})
	started, _ := blockUntilStopped(w)
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	job := mustEnqueue(t, c, blockQ, "x")
	<-started
	for seen := false; !seen; {
		select {
		case p := <-s.beats:
			seen = p.Info.Running == 1 && slices.Equal(p.Info.RunningJobs, []string{job.ID()})
		case <-ctx.Done():
			t.Fatalf("no heartbeat wrote the record with %s running", job.ID())
		}
	}
	ws, err := c.Workers(ctx)
	if err != nil || len(ws) != 1 || ws[0].ID != "w-1" || ws[0].Running != 1 || !slices.Equal(ws[0].RunningJobs, []string{job.ID()}) {
		t.Fatalf("Workers while %s runs: %+v, %v", job.ID(), ws, err)
	}

	// the process dies: no more beats, and no removal
	s.dropRemove = true
	stopNow(t, w)
	ws, err = c.Workers(ctx)
	if err != nil || len(ws) != 1 {
		t.Fatalf("Workers right after the worker died: %+v, %v; want it listed until its lease passes", ws, err)
	}
	clk.Advance(30*time.Second - time.Millisecond)
	if ws, _ := c.Workers(ctx); len(ws) != 1 {
		t.Fatalf("Workers 1ms before the lease passes: %+v, want it listed", ws)
	}
	clk.Advance(time.Millisecond)
	if ws, _ := c.Workers(ctx); len(ws) != 0 {
		t.Fatalf("Workers once the lease from the last heartbeat passed: %+v, want none", ws)
	}
}

// A bad Config.ID fails Start, naming the field.
func TestWorkerBadID(t *testing.T) {
	w := worker.New(memstore.New(), worker.Config{ID: "a b"})
	blockUntilStopped(w)
	err := w.Start(context.Background())
	if err == nil || !errors.Is(err, weir.ErrInvalid) || !strings.Contains(err.Error(), "Config.ID") {
		t.Fatalf("Start with Config.ID %q: %v, want ErrInvalid naming Config.ID", "a b", err)
	}
}
