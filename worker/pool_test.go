package worker_test

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/worker"
)

// goroutineID is the ID of the calling goroutine (from its stack's first
// line, "goroutine 12 [running]:").
func goroutineID(t *testing.T) uint64 {
	var buf [64]byte
	line := buf[:runtime.Stack(buf[:], false)]
	line, _, _ = bytes.Cut(bytes.TrimPrefix(line, []byte("goroutine ")), []byte(" "))
	id, err := strconv.ParseUint(string(line), 10, 64)
	if err != nil {
		t.Errorf("goroutine ID of %q: %v", buf[:], err)
	}
	return id
}

// TestRunnersAreReused: a worker runs its jobs on goroutines it keeps
// while it runs (one per slot busy at once, plus the one that stores
// outcomes meanwhile), not on a new goroutine per job. (That they end
// with the worker's Stop, TestMain's goleak check holds.)
func TestRunnersAreReused(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		const jobs, conc = 200, 4
		c := client.New(b.open(t))
		for i := range jobs {
			mustEnqueue(t, c, echoQ, strconv.Itoa(i))
		}
		var mu sync.Mutex
		seen := map[uint64]bool{}
		done := make(chan struct{})
		n := 0
		w := worker.New(b.open(t), worker.Config{Concurrency: conc})
		worker.Handle(w, echoQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
			id := goroutineID(t)
			mu.Lock()
			defer mu.Unlock()
			seen[id] = true
			if n++; n == jobs {
				close(done)
			}
			return j.Payload, nil
		})
		if err := w.Start(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case <-done:
		case <-ctx.Done():
			t.Fatal("the jobs did not run")
		}
		if err := w.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		// a goroutine per slot, and a few more for a moment (a runner
		// storing outcomes while another takes a job); far fewer than
		// the jobs
		if len(seen) > 2*conc+2 {
			t.Errorf("%d jobs ran on %d goroutines, want at most %d", jobs, len(seen), 2*conc+2)
		}
	})
}
