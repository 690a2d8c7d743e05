package conformance

import (
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// runWorkers holds a store's worker registry (engine.WorkerRegistry) to
// engine.WorkerTable: registrations, refreshes, the record of a worker
// whose time passed leaving the list, clean removal and the validation
// errors, comparing the list after every step.
func runWorkers(t suiteT, mk maker) {
	clk := newClock()
	cfg := engine.DefaultConfig()
	s := mk.store(t, cfg, clk.Now)
	t.Cleanup(func() { closeStore(s) })
	reg, ok := s.(engine.WorkerRegistry)
	if !ok {
		t.Skip("the store does not implement engine.WorkerRegistry")
	}
	ctx := t.Context()
	var ref engine.WorkerTable
	check := func(op string, want int) {
		t.Helper()
		got, err := reg.Workers(ctx)
		if err != nil {
			t.Fatalf("%s: Workers: %v", op, err)
		}
		exp := ref.List(clk.Now())
		if !reflect.DeepEqual(got, exp) {
			t.Fatalf("%s: Workers\n got %+v\nwant %+v", op, got, exp)
		}
		if len(got.Workers) != want || got.Total != want {
			t.Fatalf("%s: %d workers listed of %d, want %d", op, len(got.Workers), got.Total, want)
		}
	}
	beat := func(op string, p engine.BeatWorkerParams) {
		t.Helper()
		if err := reg.BeatWorker(ctx, p); err != nil {
			t.Fatalf("%s: BeatWorker: %v", op, err)
		}
		ref.Beat(clk.Now(), p)
	}
	info := func(id string, running ...string) weir.WorkerInfo {
		return weir.WorkerInfo{ID: id, Host: "host-" + id, PID: 4242, Version: "v1.2.3",
			Queues:      []weir.WorkerQueue{{Name: "email", Weight: 3}, {Name: "resize", Weight: 1}},
			Concurrency: 8, Started: clk.Now().Add(-time.Minute), Running: len(running) + 1, RunningJobs: running}
	}
	check("empty", 0)
	beat("beat a", engine.BeatWorkerParams{Info: info("a", "job-1", "wf/task"), TTL: 10 * time.Second})
	beat("beat b", engine.BeatWorkerParams{Info: info("b"), TTL: 30 * time.Second})
	check("a and b", 2)
	clk.Advance(9 * time.Second)
	beat("beat b again", engine.BeatWorkerParams{Info: info("b", "job-2"), TTL: 30 * time.Second})
	check("a at 9s of 10s", 2)
	clk.Advance(time.Second)
	check("a at its expiry", 1)
	beat("beat c", engine.BeatWorkerParams{Info: info("c"), TTL: time.Second})
	check("b and c", 2)
	if err := reg.RemoveWorker(ctx, "b"); err != nil {
		t.Fatalf("RemoveWorker b: %v", err)
	}
	ref.Remove("b")
	check("b removed", 1)
	if err := reg.RemoveWorker(ctx, "nobody"); err != nil {
		t.Fatalf("RemoveWorker of an unknown ID: %v, want nil", err)
	}
	// a worker that comes back after its time passed is registered anew
	clk.Advance(time.Hour)
	check("all past", 0)
	beat("beat a back", engine.BeatWorkerParams{Info: info("a"), TTL: time.Minute})
	check("a back", 1)
	// many dead records: each beat removes a bounded number, none shows
	for i := range 2*engine.WorkerSweep + 3 {
		beat("beat many", engine.BeatWorkerParams{Info: info(fmt.Sprintf("m%02d", i)), TTL: time.Millisecond})
	}
	clk.Advance(time.Millisecond)
	check("many past", 1)
	beat("beat a after many", engine.BeatWorkerParams{Info: info("a"), TTL: time.Minute})
	check("a after many", 1)

	for _, c := range []struct {
		name string
		p    engine.BeatWorkerParams
	}{
		{"bad id", engine.BeatWorkerParams{Info: weir.WorkerInfo{ID: "a b"}, TTL: time.Second}},
		{"empty id", engine.BeatWorkerParams{Info: weir.WorkerInfo{}, TTL: time.Second}},
		{"zero ttl", engine.BeatWorkerParams{Info: info("x")}},
		{"ttl over MaxLease", engine.BeatWorkerParams{Info: info("x"), TTL: cfg.Limits.MaxLease + time.Millisecond}},
		{"bad queue", engine.BeatWorkerParams{Info: weir.WorkerInfo{ID: "x", Queues: []weir.WorkerQueue{{Name: "a:b", Weight: 1}}}, TTL: time.Second}},
		{"too many jobs", engine.BeatWorkerParams{Info: weir.WorkerInfo{ID: "x", Running: engine.MaxWorkerJobs + 1, RunningJobs: make([]string, engine.MaxWorkerJobs+1)}, TTL: time.Second}},
	} {
		err := reg.BeatWorker(ctx, c.p)
		var ve *weir.ValidationError
		if !errors.Is(err, weir.ErrInvalid) || !errors.As(err, &ve) {
			t.Fatalf("BeatWorker with %s: %v, want a *weir.ValidationError (ErrInvalid)", c.name, err)
		}
	}
	check("after the errors", 1)
}
