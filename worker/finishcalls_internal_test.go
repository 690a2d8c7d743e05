package worker

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
)

// finishGate is a store whose first Finish call waits until release is
// closed; it counts the Finish calls and the most that ran at once.
type finishGate struct {
	engine.Store
	first   chan struct{} // closed when the first Finish call begins
	release chan struct{}

	mu                   sync.Mutex
	calls, running, most int
}

func (g *finishGate) Finish(ctx context.Context, p engine.FinishParams) (engine.FinishResult, error) {
	g.mu.Lock()
	g.calls++
	n := g.calls
	g.running++
	g.most = max(g.most, g.running)
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.running--
		g.mu.Unlock()
	}()
	if n == 1 {
		close(g.first)
		<-g.release
	}
	return g.Store.Finish(ctx, p)
}

// TestFinishCallsBoundsTheCallsInFlight: a worker keeps at most
// Config.FinishCalls finish calls running; an outcome that comes while
// they all run waits for the next call. Two jobs at concurrency 2: a's
// outcome goes out in a call that the store holds, b's comes meanwhile.
func TestFinishCallsBoundsTheCallsInFlight(t *testing.T) {
	for _, calls := range []int{1, 2} {
		g := &finishGate{Store: memstore.New(), first: make(chan struct{}), release: make(chan struct{})}
		q := client.NewQueue[string, string]("q")
		ctx := context.Background()
		for _, id := range []string{"a", "b"} {
			if _, err := client.Enqueue(ctx, client.New(g), q, id, client.ID(id)); err != nil {
				t.Fatal(err)
			}
		}
		var done sync.WaitGroup
		done.Add(2)
		bStarted := make(chan struct{})
		w := New(g, Config{Concurrency: 2, FinishCalls: calls, Observer: func(e Event) {
			if e.Kind == EventSucceeded {
				done.Done()
			}
		}})
		Handle(w, q, func(_ context.Context, j *Job[string]) (string, error) {
			if j.Payload == "a" {
				<-bStarted // both run at once: a's outcome is stored first
			} else {
				close(bStarted)
				<-g.first // b ends while a's call is held
			}
			return j.Payload, nil
		})
		if err := w.Start(ctx); err != nil {
			t.Fatal(err)
		}
		w.mu.Lock()
		r := w.cur
		w.mu.Unlock()
		// until b's outcome either waits for the next call or went out in
		// a call of its own (a waiting outcome is queued and taken under
		// the same lock, so it is seen queued only when no call takes it)
		for {
			g.mu.Lock()
			n := g.calls
			g.mu.Unlock()
			r.fmu.Lock()
			queued := len(r.pending)
			r.fmu.Unlock()
			if n >= 2 || queued > 0 {
				break
			}
			runtime.Gosched()
		}
		close(g.release)
		done.Wait()
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := w.Stop(stopCtx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		g.mu.Lock()
		most := g.most
		g.mu.Unlock()
		if most != calls {
			t.Errorf("FinishCalls %d: %d finish calls ran at once, want %d", calls, most, calls)
		}
	}
}
