//go:build unix && faults

package faults

import (
	"context"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/worker"
)

// usedMemory reads used_memory from INFO memory.
func usedMemory(t testing.TB, rdb *redis.Client) int64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no used_memory in INFO")
	return 0
}

// TestOOM fills a server (maxmemory, noeviction) while workflows run:
// submits and enqueues are refused with ErrStoreFull and leave nothing
// behind (no workflow, no key without a TTL); running tasks still finish
// (and promote their dependents) and cancels still succeed while the
// server is full; once memory is given back, every workflow ends and the
// invariants hold.
func TestOOM(t *testing.T) { runOOM(t, "oom", 20*time.Second, 300*time.Millisecond) }

// TestOOMHeartbeat keeps handlers running for 2.5 leases on a full server:
// their heartbeats must keep their leases, so that no running job fails
// with lease_expired because Redis is full.
func TestOOMHeartbeat(t *testing.T) {
	runOOM(t, "oom-heartbeat", time.Second, 2500*time.Millisecond)
}

// runOOM runs the OOM scenario with the workers' lease, holding the
// running handlers for hold while the server is full; everything that
// should work on a full server is asserted.
func runOOM(t *testing.T, name string, lease, hold time.Duration) {
	proc := StartRedisT(t, "--maxmemory-policy", "noeviction")
	rdb := newRedisClient(t, proc.Addr())
	admin := newRedisClient(t, proc.Addr())
	const ns = "oom"
	store := newStore(t, rdb, ns)
	ctx := context.Background()

	// Running work: the handlers hold their jobs until gate closes.
	gate := make(chan struct{})
	var started sync.WaitGroup
	nRun := 16
	started.Add(nRun)
	var once sync.Map
	obs := NewObservations()
	logs := &logCounter{}
	w := worker.New(store, worker.Config{Concurrency: nRun, Lease: lease, SweepInterval: 200 * time.Millisecond,
		Logger: slogOf(logs), Middleware: []worker.Middleware{obs.Middleware}, Observer: obs.Observer(nil)})
	worker.Handle(w, Work, func(ctx context.Context, j *worker.Job[int]) (int, error) {
		if _, dup := once.LoadOrStore(j.ID, true); !dup && j.Task == "t0" {
			started.Done()
			<-gate
		}
		return j.Payload, nil
	})
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = w.Stop(sctx)
	})
	running := newWorkload(t, "run", nRun, 3, 1)
	idle := make([]string, 10)
	for _, id := range running.ids {
		if _, err := store.Submit(ctx, engine.SubmitParams{Plan: running.plans[id]}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range idle {
		idle[i] = fmt.Sprintf("idle-%02d", i)
		plan := engine.Plan{ID: idle[i], Tasks: []engine.TaskSpec{{Name: "a", Queue: "idle"}, {Name: "b", Queue: "idle", After: []string{"a"}}}}
		if _, err := store.Submit(ctx, engine.SubmitParams{Plan: plan}); err != nil {
			t.Fatal(err)
		}
	}
	started.Wait() // every root task is running

	// Fill: a limit a little above what is used, then submits until full.
	base := usedMemory(t, admin)
	limit := base + 2<<20
	if err := admin.ConfigSet(ctx, "maxmemory", strconv.FormatInt(limit, 10)).Err(); err != nil {
		t.Fatal(err)
	}
	filler := newWorkload(t, "fill", 400, 50, 1)
	big := newWorkload(t, "bigfill", 5, 600, 1)
	accepted, refused, refusedBig := 0, 0, 0
	var refusedIDs []string
	submitAll := func(wl *workload, big bool) {
		for _, id := range wl.ids {
			plan := wl.plans[id]
			for i := range plan.Tasks {
				plan.Tasks[i].Queue = "idle" // filler never runs
			}
			_, err := store.Submit(ctx, engine.SubmitParams{Plan: plan})
			switch {
			case err == nil:
				accepted++
			case errors.Is(err, weir.ErrStoreFull):
				refused++
				if big {
					refusedBig++
				}
				refusedIDs = append(refusedIDs, id)
			default:
				t.Fatalf("submit %s on a full server: %v (want nil or ErrStoreFull)", id, err)
			}
		}
	}
	submitAll(filler, false)
	submitAll(big, true)
	if refused == 0 {
		t.Fatalf("no submit refused: %d accepted under maxmemory %d (used %d)", accepted, limit, usedMemory(t, admin))
	}
	// An enqueue is refused the same way. Memory can fall back under the
	// limit between two calls (a refused submit removes what it staged, the
	// running tasks finish, the expiry sweep removes records), so the test
	// enqueues jobs of 4 KiB until one is refused: each that goes through
	// fills the server further (2,000 of them are twice its maxmemory). One
	// refusal is required.
	var enqErr error
	for try := range 2000 {
		_, enqErr = store.Enqueue(ctx, engine.EnqueueParams{Job: engine.JobSpec{
			ID: fmt.Sprintf("full-job-%d", try), Queue: "idle", Payload: make([]byte, 4096)}})
		if enqErr != nil {
			if try > 0 {
				t.Logf("enqueue refused at try %d (memory had fallen under the limit)", try)
			}
			break
		}
	}
	if !errors.Is(enqErr, weir.ErrStoreFull) {
		t.Errorf("enqueue on a full server: %v (want ErrStoreFull)", enqErr)
	}
	// Nothing partial: a refused workflow does not exist.
	for _, id := range refusedIDs {
		if _, err := store.GetWorkflow(ctx, id); !errors.Is(err, weir.ErrNotFound) {
			t.Errorf("refused workflow %s: GetWorkflow %v (want ErrNotFound)", id, err)
		}
	}
	checkInvariants(t, rdb, ns, "when full")
	staged, stagedNoTTL := stageKeys(t, admin, ns)
	if stagedNoTTL > 0 {
		t.Errorf("%d staging keys without a TTL on a full server", stagedNoTTL)
	}

	// While full: finish the running work (release the handlers) and
	// cancel the idle workflows.
	fullUsed := usedMemory(t, admin)
	// The handlers run on for hold while the server is full: their
	// heartbeats must keep their leases.
	time.Sleep(hold)
	close(gate)
	cancelOK, cancelFull := 0, 0
	var cancelErr error
	for _, id := range idle {
		_, err := store.CancelWorkflow(ctx, engine.CancelWorkflowParams{ID: id})
		switch {
		case err == nil:
			cancelOK++
			obs.WorkflowEnded(id)
		case errors.Is(err, weir.ErrStoreFull):
			cancelFull++
			cancelErr = err
		default:
			t.Fatalf("cancel %s on a full server: %v", id, err)
		}
	}
	// An operator can still pause and resume a queue (e.g. to stop the
	// work that fills the server).
	pausedFull := func() bool {
		qs, err := store.Queues(ctx)
		if err != nil {
			t.Fatalf("queues on a full server: %v", err)
		}
		for _, q := range qs {
			if q.Name == "idle" {
				return q.Paused
			}
		}
		t.Fatal("queue idle not listed")
		return false
	}
	pauseErr := store.PauseQueue(ctx, "idle")
	pausedWhenFull := pauseErr == nil && pausedFull()
	resumeErr := store.ResumeQueue(ctx, "idle")
	if pauseErr != nil || resumeErr != nil || !pausedWhenFull || pausedFull() {
		t.Errorf("on a full server: pause %v (paused %v), resume %v (paused after it %v)", pauseErr, pausedWhenFull, resumeErr, pausedFull())
	}
	time.Sleep(2 * time.Second) // the workers finish (or retry their finishes)
	succeededFull := 0
	for _, ts := range obs.Times("succeeded") {
		succeededFull += len(ts)
	}
	_, finishFull, finishEx := logs.count("store is full")
	_, hbFull, hbEx := logs.count("heartbeat failed")
	lost := 0
	for _, ts := range obs.Times("started") {
		lost += len(ts) - 1
	}
	t.Logf("full: used %d → %d bytes, maxmemory %d; submits accepted=%d refused=%d (staged plans refused=%d); enqueue: %v; staging keys=%d",
		base, fullUsed, limit, accepted, refused, refusedBig, enqErr, staged)
	t.Logf("full: cancels ok=%d refused=%d (%v); tasks that succeeded=%d (%d running roots), worker store-full errors logged=%d (e.g. %q); heartbeat failures logged=%d (e.g. %q); handler reruns=%d",
		cancelOK, cancelFull, cancelErr, succeededFull, nRun, finishFull, finishEx, hbFull, hbEx, lost)
	if cancelFull > 0 || succeededFull < nRun || hbFull > 0 || lost > 0 {
		t.Errorf("on a full server: %d of %d cancels refused, %d of %d running roots did not finish, %d heartbeats failed, %d handlers ran again",
			cancelFull, len(idle), max(0, nRun-succeededFull), nRun, hbFull, lost)
	}

	// Give memory back: everything ends.
	if err := admin.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
		t.Fatal(err)
	}
	for _, id := range idle {
		if _, err := store.CancelWorkflow(ctx, engine.CancelWorkflowParams{ID: id}); err != nil && !errors.Is(err, weir.ErrWorkflowEnded) {
			t.Errorf("cancel %s after memory came back: %v", id, err)
		}
	}
	waitEnded(t, store, append(append([]string{}, running.ids...), idle...), 60*time.Second)
	rep := checkInvariants(t, rdb, ns, "after memory came back")
	or := checkObserved(t, obs, running.deps)
	if rep.TaskStates["failed"] > 0 {
		t.Errorf("%d tasks failed", rep.TaskStates["failed"])
	}
	t.Logf("%s; %s", rep, or)
	t.Logf("FAULT %s: submits_refused=%d (ErrStoreFull) accepted=%d partial=0 cancels_ok_when_full=%d cancels_refused=%d tasks_ok_when_full=%d (roots %d) heartbeat_failures=%d reruns=%d pause_resume_when_full=%v all_ended_after_memory_back=true",
		name, refused, accepted, cancelOK, cancelFull, succeededFull, nRun, hbFull, lost, pauseErr == nil && resumeErr == nil && pausedWhenFull)
}

// stageKeys counts the staging keys of namespace ns and those without a
// TTL (a staged plan that was never renamed into place must expire).
func stageKeys(t testing.TB, rdb *redis.Client, ns string) (n, noTTL int) {
	t.Helper()
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, "weir:{"+ns+":0}:stage:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		ttl, err := rdb.PTTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl < 0 {
			noTTL++
		}
	}
	return len(keys), noTTL
}
