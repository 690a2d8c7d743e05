package worker

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
)

// executeRun is a run of a worker with one handler of Handle on queue "q"
// and the given middleware, that execute can be called on directly.
func executeRun(t *testing.T, mw []Middleware, fn func(context.Context, *Job[string]) (string, error)) *run {
	t.Helper()
	w := New(memstore.New(), Config{Middleware: mw, Logger: slog.New(slog.DiscardHandler)})
	Handle(w, client.NewQueue[string, string]("q"), fn)
	handlers := map[string]handlerEntry{}
	for q, h := range w.handlers {
		for i := len(mw) - 1; i >= 0; i-- {
			h = mw[i](h)
		}
		e := handlerEntry{h: h}
		if len(mw) == 0 {
			e.typed = w.typed[q]
		}
		handlers[q] = e
	}
	return &run{w: w, cfg: &w.cfg, store: w.store, log: w.log, handlers: handlers,
		active: map[string]*active{}, jobCtx: context.Background()}
}

// claimedOf is a claimed job of queue "q" with payload p (msgpack).
func claimedOf(t *testing.T, p string) *engine.Claimed {
	t.Helper()
	b, err := client.NewQueue[string, string]("q").EncodePayload(p)
	if err != nil {
		t.Fatal(err)
	}
	c := &engine.Claimed{Job: weir.Job{ID: "j1", Queue: "q", Payload: b, Attempt: 1, MaxAttempts: 3, State: weir.Running},
		Lease: weir.Lease{Token: "t1", Deadline: time.Now().Add(time.Minute)}}
	c.Job.Lease = &c.Lease
	return c
}

// TestTypedAttemptSavesTheJobCopy: in a run without middleware a job of a
// handler of Handle runs with one allocation fewer than with a middleware
// (its Job is the attempt's JobInfo, not a copy of it), and both complete
// the job with the handler's result; with a middleware, the handler's Job
// is its own copy: what the handler changes in it, the middleware's
// JobInfo does not show.
func TestTypedAttemptSavesTheJobCopy(t *testing.T) {
	handler := func(_ context.Context, j *Job[string]) (string, error) {
		j.ID = "changed by the handler"
		return j.Payload + "!", nil
	}
	var seen string
	mw := func(next Handler) Handler {
		return func(ctx context.Context, j *JobInfo) error {
			err := next(ctx, j)
			seen = j.ID
			return err
		}
	}
	direct, wrapped := executeRun(t, nil, handler), executeRun(t, []Middleware{mw}, handler)
	want, err := client.NewQueue[string, string]("q").EncodeResult("x!")
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*run{"no middleware": direct, "middleware": wrapped} {
		o, _, ok := r.execute(claimedOf(t, "x"))
		if !ok || o.Kind != engine.OutcomeCompleted || string(o.Result) != string(want) || o.JobID != "j1" {
			t.Fatalf("%s: outcome %+v (ok %v); want completed j1 with %q", name, o, ok, want)
		}
	}
	if seen != "j1" {
		t.Errorf("the middleware saw ID %q after the handler ran; want j1 (the handler's Job is a copy)", seen)
	}
	if raceEnabled {
		// the race detector's instrumentation allocates on both paths
		// alike (10 and 10), so the count says nothing there
		return
	}
	allocs := func(r *run) float64 {
		c := claimedOf(t, "x")
		return testing.AllocsPerRun(200, func() {
			if o, _, _ := r.execute(c); o.Kind != engine.OutcomeCompleted {
				t.Fatal(o)
			}
		})
	}
	if d, m := allocs(direct), allocs(wrapped); d > m-1 {
		t.Errorf("execute allocates %v times without middleware, %v with one; want at least one fewer", d, m)
	}
}

// TestTypedAttemptPayloadError: a payload the queue's type cannot decode
// fails the job at once (NonRetryable), with or without middleware.
func TestTypedAttemptPayloadError(t *testing.T) {
	for name, mw := range map[string][]Middleware{"no middleware": nil, "middleware": {func(h Handler) Handler { return h }}} {
		r := executeRun(t, mw, func(context.Context, *Job[string]) (string, error) { return "", nil })
		c := claimedOf(t, "x")
		c.Job.Payload = []byte{0xc1} // never used by msgpack
		o, _, ok := r.execute(c)
		if !ok || o.Kind != engine.OutcomeFailed || !o.NonRetryable || o.Error == "" {
			t.Errorf("%s: outcome %+v; want failed, not retryable", name, o)
		}
	}
}
