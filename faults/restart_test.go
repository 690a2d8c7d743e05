//go:build unix && faults

package faults

import (
	"context"
	"errors"
	"github.com/weirflow/weir"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/worker"
)

// TestRedisRestartEverysec kills Redis (SIGKILL) and restarts it from its
// AOF (appendfsync everysec) 10 times during a 10,000-task run: the
// invariants hold after every restart, workers and clients recover by
// themselves (empty script cache included), every workflow ends, and any
// acknowledged transition that was lost was acknowledged less than 2 s
// before a kill.
func TestRedisRestartEverysec(t *testing.T) {
	runRestart(t, "everysec", scaled(10), scaled(500), 2*time.Second, false)
}

// TestRedisRestartAlways is the same with appendfsync always: nothing
// acknowledged is lost (no rerun, no doubled promotion, no lost submit).
func TestRedisRestartAlways(t *testing.T) {
	runRestart(t, "always", scaled(10), scaled(300), 0, false)
}

// TestRedisCrashRollback simulates what appendfsync everysec may lose in
// a machine crash: before each of 10 kills it copies the AOF as it is on
// disk, lets the run go on for up to 800 ms, kills Redis and restarts it
// from the copy, so the acknowledged transitions of the last moments are
// really lost. The invariants hold after each restart, every lost
// transition was acknowledged within the window before the kill, and the
// engine recovers them (lost leases expire, lost submits are repeated):
// every workflow ends with every task completed, at least once.
func TestRedisCrashRollback(t *testing.T) {
	runRestart(t, "everysec", scaled(10), scaled(300), 2*time.Second, true)
}

func runRestart(t *testing.T, policy string, restarts, workflows int, window time.Duration, rollback bool) {
	if raceEnabled {
		t.Logf("race detector on: %d workflows instead of %d", workflows/3, workflows)
		workflows /= 3
	}
	proc := StartRedisT(t, "--appendonly", "yes", "--appendfsync", policy)
	rdb := newRedisClient(t, proc.Addr())
	const ns = "restart"
	store := newStore(t, rdb, ns)
	wl := newWorkload(t, "r", workflows, 20, 5)
	obs := NewObservations()
	logs := &logCounter{}
	var mu sync.Mutex
	succeeded := map[string]bool{}
	var lastSuccess time.Time
	startWorkers(t, store, 2, worker.Config{
		Concurrency: 16, Lease: 3 * time.Second, SweepInterval: 250 * time.Millisecond,
		Logger: slog.New(logs),
	}, obs, nil, func(e worker.Event) {
		if e.Kind == worker.EventSucceeded {
			mu.Lock()
			succeeded[e.JobID] = true
			lastSuccess = time.Now()
			mu.Unlock()
		}
	})
	progress := func() (int, time.Time) {
		mu.Lock()
		defer mu.Unlock()
		return len(succeeded), lastSuccess
	}

	// The submitter keeps about 60 workflows in flight, so submits go on
	// during the whole run; it retries a failed submit (safe to repeat).
	submitAck := map[string]time.Time{}
	var submitErrs, untypedErrs int
	var firstUntyped error
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	submit := func(id string) {
		for ctx.Err() == nil {
			_, err := store.Submit(ctx, engine.SubmitParams{Plan: wl.plans[id]})
			if err == nil {
				mu.Lock()
				submitAck[id] = time.Now()
				mu.Unlock()
				return
			}
			mu.Lock()
			submitErrs++
			if !typedError(err) || errors.Is(err, weir.ErrProtocol) {
				untypedErrs++
				if firstUntyped == nil {
					firstUntyped = err
				}
			}
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
		}
	}
	// Workflows come in restarts+1 batches: batch r may be submitted once
	// r-1 restarts happened, and restart r comes when half of batch r-1 is
	// done, so every kill (and, with rollback, the window between the AOF
	// copy and the kill) hits a run in full flow even on a fast machine.
	perBatch := max(1, len(wl.ids)/(restarts+1))
	var restartsDone atomicInt
	subDone := make(chan struct{})
	go func() {
		defer close(subDone)
		for i, id := range wl.ids {
			for ctx.Err() == nil {
				n, _ := progress()
				done := int(restartsDone.Load())
				if i*20-n < 60*20 && (done >= restarts || i < (done+2)*perBatch) {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			submit(id)
		}
	}()

	var kills []time.Time
	seenAOFLog, seenRepairs := 0, 0
	var recover []time.Duration
	lostSubmits := 0
	for r := 1; r <= restarts; r++ {
		target := ((r-1)*perBatch + perBatch/2) * 20
		deadline := time.Now().Add(90 * time.Second)
		for n, _ := progress(); n < target; n, _ = progress() {
			if time.Now().After(deadline) {
				t.Fatalf("restart %d: %d of %d tasks succeeded, waited for %d", r, n, wl.tasks, target)
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(time.Duration(rand.IntN(50)) * time.Millisecond)
		var aofCopy string
		if rollback {
			var err error
			if aofCopy, err = proc.CopyAOF(); err != nil {
				t.Fatal(err)
			}
			// only whole pages of it reached the disk: Start repairs
			// the torn tail (RepairAOFTail)
			if _, err := TearAOF(aofCopy, 4096); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Duration(200+rand.IntN(600)) * time.Millisecond)
		}
		killAt := time.Now()
		if err := proc.Kill(); err != nil {
			t.Fatal(err)
		}
		// what the server acknowledged until it was gone may be lost:
		// the kill counts from its exit (under load, a reply read just
		// before the exit reaches its observer after killAt)
		kills = append(kills, time.Now())
		if rollback {
			if err := proc.RestoreAOF(aofCopy); err != nil {
				t.Fatal(err)
			}
		}
		if err := proc.Start(); err != nil {
			t.Fatalf("restart %d: %v", r, err)
		}
		up := time.Now()
		restartsDone.Store(int64(r))
		// what the start did with a torn AOF tail: cut by Start
		// (RepairAOFTail), or left to redis-server, whose log says
		// so; a partial transition replayed fails the test here, with
		// the cause, before the invariants report its footprint
		for _, c := range proc.AOFRepairs()[seenRepairs:] {
			t.Logf("restart %d: torn AOF tail repaired: %s", r, c)
			seenRepairs++
		}
		aofLog := proc.LogLines(aofLoadWarnings...)
		for _, l := range aofLog[seenAOFLog:] {
			t.Logf("restart %d: redis-server: %s", r, l)
			if strings.Contains(l, "can not be nested") {
				t.Errorf("restart %d: redis-server replayed a part of a torn transaction (docs/reliability.md): %s", r, l)
			}
		}
		seenAOFLog = len(aofLog)
		checkInvariants(t, rdb, ns, "after restart "+itoa(r))
		// Acknowledged submits that the restart lost are submitted again
		// (and counted, with their age at the kill).
		acked := ackedBefore(&mu, submitAck, killAt)
		for id, at := range acked {
			_, err := store.GetWorkflow(ctx, id)
			if errors.Is(err, weir.ErrNotFound) {
				lostSubmits++
				if age := killAt.Sub(at); age > window {
					t.Errorf("restart %d lost the submit of %s acknowledged %v before the kill (allowed %v)", r, id, age, window)
				}
				submit(id)
			} else if err != nil {
				t.Fatalf("restart %d: GetWorkflow %s: %v", r, id, err)
			}
		}
		// Recovery: the first success after the restart.
		for {
			n, last := progress()
			if last.After(up) {
				recover = append(recover, last.Sub(up))
				break
			}
			if n == wl.tasks {
				break // nothing left to run: no recovery to measure
			}
			if time.Since(up) > 30*time.Second {
				qs, qerr := store.Queues(ctx)
				n, _ := progress()
				logs.mu.Lock()
				tail := logs.msgs[max(0, len(logs.msgs)-10):]
				logs.mu.Unlock()
				t.Fatalf("restart %d: no task succeeded within 30s of the restart (succeeded %d/%d; queues %+v %v; last logs %q)", r, n, wl.tasks, qs, qerr, tail)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	<-subDone
	waitEnded(t, store, wl.ids, 90*time.Second)
	rep := checkInvariants(t, rdb, ns, "at the end")
	if rep.Ended != len(wl.ids) || rep.TaskStates["completed"] != wl.tasks {
		t.Errorf("end: %s; want %d workflows and %d tasks completed", rep, len(wl.ids), wl.tasks)
	}

	// Lost acknowledged transitions: a job whose handler started again after
	// its first attempt had started (and usually succeeded and promoted its
	// dependents) was taken back by a restart. Each must be explained by a
	// kill that came after the job's last observation and before its rerun,
	// within the window.
	lost, worstAge, or := checkLosses(t, obs, wl.deps, kills, window, false)
	nlogs, noscript, ex := logs.count("NOSCRIPT")
	_, protocol, exp := logs.count("protocol")
	if noscript > 0 || protocol > 0 {
		t.Errorf("workers met %d NOSCRIPT and %d protocol errors (e.g. %q %q)", noscript, protocol, ex, exp)
	}
	if untypedErrs > 0 {
		t.Errorf("submit surfaced %d errors that are not typed or are ErrProtocol, first: %v", untypedErrs, firstUntyped)
	}
	if window == 0 && (lost > 0 || lostSubmits > 0 || or.DupPromotions > 0 || or.DupWorkflowEnd > 0) {
		t.Errorf("appendfsync %s lost %d transitions and %d submits (%s)", policy, lost, lostSubmits, or)
	}
	var maxRecover time.Duration
	for _, d := range recover {
		maxRecover = max(maxRecover, d)
	}
	acked := len(wl.ids) + lostSubmits // acknowledged submits
	for _, ts := range obs.Times("succeeded") {
		acked += len(ts) // acknowledged finishes
	}
	t.Logf("%s; %s; submit errors retried=%d; worker log lines=%d; recovery after restart max=%v", rep, or, submitErrs, nlogs, maxRecover)
	name := "redis-restart-" + policy
	if rollback {
		name = "redis-crash-rollback"
		if lost+lostSubmits == 0 {
			t.Errorf("the rollbacks lost nothing: the test tested nothing")
		}
	}
	t.Logf("FAULT %s: restarts=%d tasks=%d acked=%d lost=%d lost_submits=%d dup_promotions=%d dup_wf_ends=%d worst_lost_age=%v (allowed window %v) recovered_within=%v aof_tails_repaired=%d",
		name, len(kills), wl.tasks, acked, lost, lostSubmits, or.DupPromotions, or.DupWorkflowEnd, worstAge, window, maxRecover, len(proc.AOFRepairs()))
}

// aofLoadWarnings are the parts of redis-server's log lines that say how
// it loaded an AOF with a torn tail, or one left malformed by such a load.
var aofLoadWarnings = []string{"short read", "Truncating the AOF", "Revert incomplete MULTI", "AOF-loading-client"}

// TestTornAOFTransition: a kill during the AOF write of a script's block
// (or a machine crash) leaves the file ending inside the block. The
// restarted server does not apply it, and its client sends the script
// again; a later restart must not apply the torn block's first writes on
// top of that. redis-server 7.0 does (it cuts such a tail after the
// block's last whole command, and the next load runs it with the next
// block: "MULTI calls can not be nested"); RedisProc.Start cuts the tail
// before the block's MULTI, as a fixed loader does (RepairAOFTail).
func TestTornAOFTransition(t *testing.T) {
	proc := StartRedisT(t, "--appendonly", "yes", "--appendfsync", "always")
	rdb := newRedisClient(t, proc.Addr())
	ctx := context.Background()
	// a transition of two writes, as weir's: a counter first, a state
	// string last (finalize)
	const script = `redis.call('INCRBY', KEYS[1], -1) redis.call('SETRANGE', KEYS[2], 0, 'c') return 1`
	run := func() {
		t.Helper()
		if err := rdb.Eval(ctx, script, []string{"rem", "s"}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	restart := func() {
		t.Helper()
		if err := proc.Start(); err != nil {
			t.Fatal(err)
		}
		for try := 0; rdb.Ping(ctx).Err() != nil; try++ {
			if try > 100 {
				t.Fatal("no PING after the restart")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	get := func(k string) string {
		t.Helper()
		v, err := rdb.Get(ctx, k).Result()
		if err != nil {
			t.Fatalf("GET %s: %v", k, err)
		}
		return v
	}
	if err := rdb.Set(ctx, "rem", 10, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, "s", "q", 0).Err(); err != nil {
		t.Fatal(err)
	}
	run()
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	// tear the block inside its SETRANGE, as a kill during write(2) does
	dir := filepath.Join(proc.Dir, aofDir)
	ms, _ := filepath.Glob(filepath.Join(dir, "*.manifest"))
	if len(ms) != 1 {
		t.Fatalf("manifests %v", ms)
	}
	last, err := lastAOFFile(ms[0])
	if err != nil || last == "" {
		t.Fatalf("last INCR file: %q %v", last, err)
	}
	path := filepath.Join(dir, last)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	at := strings.LastIndex(string(b), "SETRANGE")
	if at < 0 || !strings.Contains(string(b[:at]), "MULTI") {
		t.Fatalf("the AOF holds no block ending in SETRANGE: %q", b)
	}
	if err := os.Truncate(path, int64(at+4)); err != nil {
		t.Fatal(err)
	}
	restart()
	if rem, s := get("rem"), get("s"); rem != "10" || s != "q" {
		t.Fatalf("after the torn write: rem=%s s=%s, want 10 q", rem, s)
	}
	run() // the client's resend
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	restart()
	if rem, s := get("rem"), get("s"); rem != "9" || s != "c" {
		t.Errorf("after the next restart: rem=%s s=%s, want 9 c (the torn block applied in part: %q)", rem, s,
			proc.LogLines(aofLoadWarnings...))
	}
	if cuts := proc.AOFRepairs(); len(cuts) != 1 {
		t.Errorf("AOF repairs %q, want one", cuts)
	}
}
