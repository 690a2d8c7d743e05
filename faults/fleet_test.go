//go:build unix && faults

package faults

import (
	"context"
	"fmt"
	"github.com/weirflow/weir"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir/client"
)

// TestFleetRestart: a deploy restarts a fleet of four worker processes one
// by one (SIGTERM, then SIGKILL when a process has not exited after 1 s)
// while 200 workflows run with the default retry policy (one attempt, one
// lease expiry). A process stops claiming at SIGTERM and lets its running
// handlers finish; one job in 25 has a handler that ignores its context
// and runs 1.5 s, so some processes are killed with it running, and its
// lease expires: the expiry budget queues it again without costing its
// attempt. No workflow fails; every task ran with its dependencies'
// results.
func TestFleetRestart(t *testing.T) {
	workflows := scaled(200)
	rp := StartRedisT(t)
	const ns = "fleet"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rdb := newRedisClient(t, rp.Addr())
	store := newStore(t, rdb, ns, killConfig())
	cl := client.New(store)
	opts := workerOpts{addr: rp.Addr(), ns: ns, lease: time.Second, sweep: 100 * time.Millisecond, conc: 8,
		fleet: true, stderr: &childLog{}}
	defer opts.stderr.check(t)

	start := func() *workerProc {
		p, err := startWorker(t, opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.waitLine("READY", 30*time.Second); !ok {
			t.Fatal("a worker process did not start")
		}
		return p
	}
	fleet := make([]*workerProc, 4)
	for i := range fleet {
		fleet[i] = start()
	}

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11))
	ids := make([]string, workflows)
	tasks := 0
	for n := range ids {
		wf := client.NewWorkflow(client.WorkflowID(fmt.Sprintf("fleet-%03d", n)))
		size := 5 + rng.IntN(11)
		refs := make([]client.TaskRef, 0, size)
		for i := range size {
			var after []client.TaskRef
			for k := range min(i, rng.IntN(3)) {
				after = append(after, refs[i-1-k])
			}
			q := queueA
			if rng.IntN(2) == 1 {
				q = queueB
			}
			// the default retry policy: one attempt, one lease expiry
			task := client.AddTask(wf, fmt.Sprintf("t%02d", i), q, strconv.Itoa(len(after)))
			if len(after) > 0 {
				task.After(after...)
			}
			refs = append(refs, task)
		}
		if err := cl.Submit(ctx, wf); err != nil {
			t.Fatal(err)
		}
		ids[n] = wf.ID()
		tasks += size
	}
	finals := make([]weir.Workflow, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			finals[i], _ = store.AwaitWorkflow(ctx, id)
		}()
	}
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()

	// The deploy: each process in turn, then again, until every workflow
	// ended (at least one full round).
	restarts, killed := 0, 0
	var stopTimes []time.Duration
	for ; ; restarts++ {
		done := false
		select {
		case <-allDone:
			done = true
		default:
		}
		if done && restarts >= len(fleet) {
			break
		}
		i := restarts % len(fleet)
		t0 := time.Now()
		if fleet[i].terminate(time.Second) {
			killed++
		}
		stopTimes = append(stopTimes, time.Since(t0))
		fleet[i] = start()
		time.Sleep(300 * time.Millisecond)
	}
	select {
	case <-allDone:
	case <-ctx.Done():
		t.Fatal("the workflows did not end within 5 minutes")
	}
	for _, p := range fleet {
		if err := p.stop(); err != nil {
			t.Errorf("worker process: %v", err)
		}
	}

	failed := 0
	for i, w := range finals {
		if w.State != weir.WorkflowCompleted {
			failed++
			if failed <= 5 {
				t.Errorf("workflow %s ended %s (%+v)", ids[i], w.State, w.Tasks)
			}
		}
	}
	// every start saw its dependencies' results; count the reruns
	starts, err := rdb.LRange(ctx, recKey(ns, "starts"), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]int{}
	for _, s := range starts {
		f := strings.Split(s, "|")
		runs[f[0]]++
		if f[3] != "true" {
			t.Errorf("a task started without its dependencies' results: %s", s)
		}
	}
	reruns := 0
	for _, n := range runs {
		reruns += n - 1
	}
	if killed == 0 {
		t.Errorf("no process needed SIGKILL in %d restarts: the lease expiry budget was not exercised", restarts)
	}
	rep := killInvariants(t, ctx, rdb, ns, "at the end")
	var slowest time.Duration
	for _, d := range stopTimes {
		slowest = max(slowest, d)
	}
	t.Logf("%s", rep)
	t.Logf("FAULT fleet-restart: workflows=%d tasks=%d failed=%d restarts=%d sigkills=%d reruns=%d slowest_stop=%v",
		len(ids), tasks, failed, restarts, killed, reruns, slowest)
}
