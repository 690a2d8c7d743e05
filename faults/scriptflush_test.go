//go:build unix && faults

package faults

import (
	"context"
	"github.com/weirflow/weir"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/worker"
)

// TestScriptFlush empties Redis's function libraries and script cache
// (FUNCTION FLUSH and SCRIPT FLUSH, in turn) every few milliseconds while
// workflows are submitted (small ones, and large ones whose plan is staged
// by a pipeline before the submit), run by workers and awaited (awaits
// register through pipelines), on the functions path and on the scripts
// path: no error reaches any caller, and no worker logs a store error.
func TestScriptFlush(t *testing.T) {
	for _, path := range []redisstore.CallPath{redisstore.PathFunctions, redisstore.PathScripts} {
		t.Run(path.String(), func(t *testing.T) { scriptFlush(t, path) })
	}
}

func scriptFlush(t *testing.T, path redisstore.CallPath) {
	proc := StartRedisT(t)
	rdb := newRedisClient(t, proc.Addr())
	admin := newRedisClient(t, proc.Addr())
	const ns = "flush"
	store, err := redisstore.New(rdb, redisstore.Options{Namespace: ns, Path: path})
	if err != nil {
		t.Fatal(err)
	}
	small := newWorkload(t, "s", scaled(100), 20, 1)
	big := newWorkload(t, "b", scaled(3), 600, 1)
	obs := NewObservations()
	logs := &logCounter{}
	startWorkers(t, store, 2, worker.Config{Concurrency: 8, Lease: 10 * time.Second, SweepInterval: 100 * time.Millisecond,
		Logger: slogOf(logs)}, obs, nil, nil)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var flushes atomic.Int64
	flushDone := make(chan struct{})
	go func() {
		defer close(flushDone)
		for i := 0; ctx.Err() == nil; i++ {
			err := admin.ScriptFlush(ctx).Err()
			if i%2 == 1 {
				err = admin.FunctionFlush(ctx).Err()
			}
			if err == nil {
				flushes.Add(1)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()

	var mu sync.Mutex
	var errs []error
	fail := func(what string, err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
		t.Errorf("%s: %v", what, err)
	}
	var wg sync.WaitGroup
	// Awaiters: one per tenth workflow, started before its submit.
	awaited := 0
	for i, id := range small.ids {
		if i%10 != 0 {
			continue
		}
		awaited++
		wg.Add(1)
		go func() {
			defer wg.Done()
			actx, acancel := context.WithTimeout(ctx, 60*time.Second)
			defer acancel()
			w, err := store.AwaitWorkflow(actx, id)
			for err != nil && errorsIsNotFound(err) && actx.Err() == nil {
				time.Sleep(10 * time.Millisecond) // not submitted yet
				w, err = store.AwaitWorkflow(actx, id)
			}
			if err != nil {
				fail("await "+id, err)
			} else if w.State != weir.WorkflowCompleted {
				fail("await "+id, errState(w.State))
			}
		}()
	}
	for _, wl := range []*workload{big, small} {
		for _, id := range wl.ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := store.Submit(ctx, engine.SubmitParams{Plan: wl.plans[id]}); err != nil {
					fail("submit "+id, err)
				}
			}()
		}
	}
	wg.Wait()
	all := append(append([]string{}, small.ids...), big.ids...)
	waitEnded(t, store, all, 120*time.Second)
	cancel()
	<-flushDone
	rep := checkInvariants(t, rdb, ns, "at the end")
	deps := map[string][]string{}
	for _, wl := range []*workload{big, small} {
		for k, v := range wl.deps {
			deps[k] = v
		}
	}
	or := checkObserved(t, obs, deps)
	nlogs, noscript, ex := logs.count("NOSCRIPT")
	if nlogs > 0 {
		t.Errorf("workers logged %d store errors (%d NOSCRIPT), e.g. %q", nlogs, noscript, ex)
	}
	if rep.TaskStates["completed"] != small.tasks+big.tasks {
		t.Errorf("end: %s; want %d tasks completed", rep, small.tasks+big.tasks)
	}
	if flushes.Load() < 10 {
		t.Errorf("only %d flushes happened", flushes.Load())
	}
	t.Logf("%s; %s", rep, or)
	t.Logf("FAULT script-flush path=%s: flushes=%d workflows=%d (large staged=%d) tasks=%d awaits=%d errors_surfaced=%d worker_errors_logged=%d",
		path, flushes.Load(), len(all), len(big.ids), small.tasks+big.tasks, awaited, len(errs), nlogs)
}
