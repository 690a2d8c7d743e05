package bench

import (
	"context"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/worker"
)

// empty is the payload and result of the bench's no-op jobs.
type empty struct{}

// noopQueue is a queue of no-op jobs.
func noopQueue(name string) client.Queue[empty, empty] { return client.NewQueue[empty, empty](name) }

func noop(context.Context, *worker.Job[empty]) (empty, error) { return empty{}, nil }

// discardLogger drops the worker's log lines (retried store errors);
// failures show up as stalls.
var discardLogger = slog.New(slog.DiscardHandler)

// stallTimeout is how long a run may go without progress before it fails.
const stallTimeout = 60 * time.Second

// errStalled: a run made no progress for stallTimeout.
var errStalled = errors.New("bench: no progress")

// progress counts events of one kind up to a target and remembers when the
// latest came.
type progress struct {
	kind    worker.EventKind
	target  int64
	done    atomic.Int64
	last    atomic.Int64 // unix ns of the latest counted event
	bad     atomic.Int64 // workflow_ended events of workflows that did not complete
	reached chan struct{}
	once    sync.Once
}

func newProgress(kind worker.EventKind, target int) *progress {
	return &progress{kind: kind, target: int64(target), reached: make(chan struct{})}
}

// observe is the worker's Observer.
func (p *progress) observe(e worker.Event) {
	if e.Kind != p.kind {
		return
	}
	if e.Kind == worker.EventWorkflowEnded && e.WorkflowState != weir.WorkflowCompleted {
		p.bad.Add(1)
	}
	now := time.Now().UnixNano()
	for {
		l := p.last.Load()
		if now <= l || p.last.CompareAndSwap(l, now) {
			break
		}
	}
	if p.done.Add(1) >= p.target {
		p.once.Do(func() { close(p.reached) })
	}
}

// wait blocks until the target is reached, ctx is done or nothing counted
// for stallTimeout.
func (p *progress) wait(ctx context.Context) error {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	seen, since := int64(-1), time.Now()
	for {
		select {
		case <-p.reached:
			if n := p.bad.Load(); n > 0 {
				return fmt.Errorf("bench: %d workflows did not complete", n)
			}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case now := <-t.C:
			if n := p.done.Load(); n != seen {
				seen, since = n, now
			} else if now.Sub(since) > stallTimeout {
				return fmt.Errorf("%w: %d of %d %s events after %s", errStalled, n, p.target, p.kind, stallTimeout)
			}
		}
	}
}

// lastTime is when the latest counted event came.
func (p *progress) lastTime() time.Time { return time.Unix(0, p.last.Load()) }

// runUntil starts w, waits until p reaches its target (or fails to move),
// calls reached (when not nil) once it has, while w still runs, then stops
// w, giving its handlers up to 15 s to return even when ctx is done.
func (p *progress) runUntil(ctx context.Context, w *worker.Worker, reached func() error) error {
	if err := w.Start(ctx); err != nil {
		return err
	}
	werr := p.wait(ctx)
	if werr == nil && reached != nil {
		werr = reached()
	}
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	_ = w.Stop(stopCtx)
	return werr
}
