//go:build unix && faults

package faults

import (
	"context"
	"fmt"
	"github.com/weirflow/weir"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/worker"
)

// bigPlan returns a plan of n tasks on queue q where task i runs after the
// (up to) window tasks before it: with n = MaxTasks and window 10 it has
// about MaxEdges edges.
func bigPlan(id, q string, n, window int) engine.Plan {
	p := engine.Plan{ID: id}
	for i := range n {
		ts := engine.TaskSpec{Name: taskName(i), Queue: q}
		for d := max(0, i-window); d < i; d++ {
			ts.After = append(ts.After, taskName(d))
		}
		p.Tasks = append(p.Tasks, ts)
	}
	return p
}

// fanPlan returns root → n-2 middle tasks → join: the root's finish
// promotes n-2 tasks in one step, the last middle one promotes the join.
func fanPlan(id, q string, n int) engine.Plan {
	p := engine.Plan{ID: id, Tasks: []engine.TaskSpec{{Name: "root", Queue: q}}}
	var mids []string
	for i := range n - 2 {
		name := taskName(i)
		mids = append(mids, name)
		p.Tasks = append(p.Tasks, engine.TaskSpec{Name: name, Queue: q, After: []string{"root"}})
	}
	p.Tasks = append(p.Tasks, engine.TaskSpec{Name: "join", Queue: q, After: mids})
	return p
}

// busyRig is a redis-server with busy-reply-threshold 1000 ms and every
// command in SLOWLOG, a store on it, and a client that pings all along: a
// script over the threshold would make it see BUSY.
type busyRig struct {
	t      *testing.T
	rdb    *redis.Client
	admin  *redis.Client
	store  engine.Store
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	busy    int
	pings   int
	maxPing time.Duration
}

func newBusyRig(t *testing.T, ns string) *busyRig {
	proc := StartRedisT(t, "--busy-reply-threshold", "1000", "--slowlog-log-slower-than", "0", "--slowlog-max-len", "1000000")
	r := &busyRig{t: t, rdb: newRedisClient(t, proc.Addr()), admin: newRedisClient(t, proc.Addr()), done: make(chan struct{})}
	r.store = newStore(t, r.rdb, ns)
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	t.Cleanup(r.stop)
	go func() {
		defer close(r.done)
		for ctx.Err() == nil {
			start := time.Now()
			err := r.admin.Ping(ctx).Err()
			d := time.Since(start)
			r.mu.Lock()
			r.pings++
			r.maxPing = max(r.maxPing, d)
			if err != nil && strings.HasPrefix(err.Error(), "BUSY") {
				r.busy++
			}
			r.mu.Unlock()
			time.Sleep(time.Millisecond)
		}
	}()
	return r
}

// stop ends the pinger; it may be called more than once.
func (r *busyRig) stop() {
	r.cancel()
	<-r.done
}

// slowScripts stops the pinger, reads SLOWLOG and returns the scripts
// (FCALL, FCALL_RO, EVAL, EVALSHA) run so far, slowest first, and
// the slowest other command.
func (r *busyRig) slowScripts() (scripts []redis.SlowLog, other redis.SlowLog) {
	r.stop()
	entries, err := r.admin.SlowLogGet(context.Background(), -1).Result()
	if err != nil {
		r.t.Fatal(err)
	}
	for _, e := range entries {
		if len(e.Args) == 0 {
			continue
		}
		switch strings.ToUpper(e.Args[0]) {
		case "EVAL", "EVALSHA", "FCALL", "FCALL_RO":
			scripts = append(scripts, e)
		case "SLOWLOG", "CONFIG":
		default:
			if e.Duration > other.Duration {
				other = e
			}
		}
	}
	sort.Slice(scripts, func(i, j int) bool { return scripts[i].Duration > scripts[j].Duration })
	return scripts, other
}

// report logs the slowest scripts and fails the test for BUSY replies and
// for scripts of 50 ms or more; it returns the slowest script's duration.
func (r *busyRig) report(name string, extra string) time.Duration {
	t := r.t
	scripts, other := r.slowScripts()
	if len(scripts) == 0 {
		t.Fatal("SLOWLOG recorded no script")
	}
	over := 0
	for _, e := range scripts {
		if e.Duration >= 50*time.Millisecond {
			over++
		}
	}
	for _, e := range scripts[:min(5, len(scripts))] {
		t.Logf("slowest scripts: %v %s", e.Duration, describe(e))
	}
	if r.busy > 0 {
		t.Errorf("%d pings got BUSY (slowest ping %v)", r.busy, r.maxPing)
	}
	if over > 0 {
		t.Errorf("%d of %d scripts took 50 ms or more; the slowest %v: %s", over, len(scripts), scripts[0].Duration, describe(scripts[0]))
	}
	t.Logf("FAULT %s: %s scripts=%d busy=%d pings=%d max_ping=%v max_script=%v (%s) over_50ms=%d slowest_other=%v %s",
		name, extra, len(scripts), r.busy, r.pings, r.maxPing, scripts[0].Duration, scriptName(scripts[0]), over, other.Duration, strings.Join(other.Args[:min(2, len(other.Args))], " "))
	return scripts[0].Duration
}

// describe names a slowlog entry of a weir script: the script, then its
// first ARGV after the three common ones.
func describe(e redis.SlowLog) string {
	// FCALL|EVAL(SHA) function|script numkeys prefix now retention maxbackoff args...
	args := e.Args
	if len(args) > 7 {
		args = args[7:min(len(args), 12)]
	} else {
		args = nil
	}
	return scriptName(e) + " " + strings.Join(args, " ")
}

// phaseMax runs f between SLOWLOG RESET and SLOWLOG GET and returns the
// longest command f ran (a transition, FCALL or EVAL(SHA), or a plain
// command such as the HGETALL that reads a large workflow) and its name.
func (r *busyRig) phaseMax(f func()) (time.Duration, string) {
	ctx := context.Background()
	if err := r.admin.SlowLogReset(ctx).Err(); err != nil {
		r.t.Fatal(err)
	}
	f()
	entries, err := r.admin.SlowLogGet(ctx, -1).Result()
	if err != nil {
		r.t.Fatal(err)
	}
	var d time.Duration
	name := ""
	for _, e := range entries {
		if len(e.Args) == 0 || e.Duration <= d {
			continue
		}
		switch cmd := strings.ToUpper(e.Args[0]); {
		case slices.Contains([]string{"EVAL", "EVALSHA", "FCALL", "FCALL_RO"}, cmd):
			d, name = e.Duration, describe(e)
		case !slices.Contains([]string{"SLOWLOG", "CONFIG", "PING"}, cmd):
			d, name = e.Duration, strings.Join(e.Args[:min(2, len(e.Args))], " ")
		}
	}
	return d, name
}

// TestBusyBudget submits, reads and cancels the largest workflow the
// limits allow (MaxTasks tasks, about MaxEdges edges), with
// busy-reply-threshold 1000 ms: a client pinging all along never gets BUSY,
// and SLOWLOG shows every command under 50 ms (a large workflow is read
// with a MULTI of HGETALL and GET after a short script: both count). The
// machine is shared, so each step runs 3 times (on 3 workflows) and the
// budget applies to the fastest of the 3; the slowest is reported too.
func TestBusyBudget(t *testing.T) {
	r := newBusyRig(t, "busy")
	ctx := context.Background()
	lim := weir.DefaultLimits()
	const budget = 50 * time.Millisecond
	best := map[string]time.Duration{}
	worst := map[string]time.Duration{}
	names := map[string]string{}
	note := func(step string, d time.Duration, name string) {
		if b, ok := best[step]; !ok || d < b {
			best[step] = d
		}
		if d > worst[step] {
			worst[step], names[step] = d, name
		}
	}
	edges := 0
	var submitTook, cancelTook time.Duration
	for k := range 3 {
		id := fmt.Sprintf("big%d", k)
		big := bigPlan(id, "idle", lim.MaxTasks, 10)
		if k == 0 {
			for _, ts := range big.Tasks {
				edges += len(ts.After)
			}
			if err := engine.ValidatePlan(big, lim); err != nil {
				t.Fatalf("the largest plan is refused: %v", err)
			}
		}
		d, name := r.phaseMax(func() {
			t0 := time.Now()
			if _, err := r.store.Submit(ctx, engine.SubmitParams{Plan: big}); err != nil {
				t.Fatalf("submit: %v", err)
			}
			submitTook = max(submitTook, time.Since(t0))
			// Submitting it again is the lost-reply repeat: no effect.
			if res, err := r.store.Submit(ctx, engine.SubmitParams{Plan: big}); err != nil || res.Created {
				t.Fatalf("repeat submit: %+v %v", res, err)
			}
		})
		note("submit", d, name)
		d, name = r.phaseMax(func() {
			if w, err := r.store.GetWorkflow(ctx, id); err != nil || len(w.Tasks) != lim.MaxTasks {
				t.Fatalf("GetWorkflow: %d tasks, %v", len(w.Tasks), err)
			}
		})
		note("get", d, name)
		d, name = r.phaseMax(func() {
			t0 := time.Now()
			cr, err := r.store.CancelWorkflow(ctx, engine.CancelWorkflowParams{ID: id})
			cancelTook = max(cancelTook, time.Since(t0))
			if err != nil {
				t.Fatalf("cancel: %v", err)
			}
			if len(cr.Cancelled) != lim.MaxTasks || cr.WorkflowState != weir.WorkflowCancelled {
				t.Errorf("cancel: %d cancelled, state %s", len(cr.Cancelled), cr.WorkflowState)
			}
		})
		note("cancel", d, name)
	}
	r.stop()
	var maxScript time.Duration
	for _, step := range []string{"submit", "get", "cancel"} {
		t.Logf("step %s: fastest of 3 %v, slowest %v (%s)", step, best[step], worst[step], names[step])
		if best[step] >= budget {
			t.Errorf("step %s: its longest script took %v even in the fastest of 3 runs (budget %v)", step, best[step], budget)
		}
		maxScript = max(maxScript, worst[step])
	}
	if r.busy > 0 {
		t.Errorf("%d pings got BUSY (slowest ping %v)", r.busy, r.maxPing)
	}
	checkInvariants(t, r.rdb, "busy", "at the end")
	t.Logf("FAULT busy-budget: tasks=%d edges=%d busy=%d pings=%d max_ping=%v max_script=%v best_of_3: submit=%v get=%v cancel=%v (budget %v) client_side: submit=%v cancel=%v",
		lim.MaxTasks, edges, r.busy, r.pings, r.maxPing, maxScript, best["submit"], best["get"], best["cancel"], budget, submitTook.Round(time.Millisecond), cancelTook.Round(time.Millisecond))
}

// TestBusyBudgetFanOut runs the widest fan-out and fan-in the limits allow
// (a root, MaxTasks-2 tasks after it, a join after all of them) to its end,
// then reads it back with GetWorkflow and ListWorkflows: every script must
// stay under 50 ms and nobody may see BUSY. The root's finish promotes its
// dependents over bounded calls, the join's claim leaves its 9,998
// dependency outcomes to paged reads, and the workflow is read in pages
// (spec/scripts.md, Cascades in bounded steps).
func TestBusyBudgetFanOut(t *testing.T) {
	r := newBusyRig(t, "fan")
	ctx := context.Background()
	lim := weir.DefaultLimits()
	fan := fanPlan("fan", Work.Name(), lim.MaxTasks)
	for i := range fan.Tasks {
		fan.Tasks[i].Payload, _ = Work.EncodePayload(i)
	}
	obs := NewObservations()
	logs := &logCounter{}
	ended := make(chan struct{})
	var once sync.Once
	startWorkers(t, r.store, 2, worker.Config{Concurrency: 16, Lease: 30 * time.Second, Logger: slogOf(logs)}, obs, nil, func(e worker.Event) {
		if e.Kind == worker.EventWorkflowEnded && e.Workflow == "fan" {
			once.Do(func() { close(ended) })
		}
	})
	if _, err := r.store.Submit(ctx, engine.SubmitParams{Plan: fan}); err != nil {
		t.Fatalf("submit: %v", err)
	}
	select {
	case <-ended:
	case <-time.After(120 * time.Second):
		t.Fatal("the fan-out did not end within 120s")
	}
	if w, err := r.store.GetWorkflow(ctx, "fan"); err != nil || w.State != weir.WorkflowCompleted {
		t.Fatalf("GetWorkflow: %s %v", w.State, err)
	}
	if _, err := r.store.ListWorkflows(ctx, weir.ListParams{Limit: 10}); err != nil {
		t.Fatalf("ListWorkflows: %v", err)
	}
	nlogs, _, ex := logs.count("")
	if nlogs > 0 {
		t.Errorf("workers logged %d store errors, e.g. %q", nlogs, ex)
	}
	r.report("busy-budget-fanout", fmt.Sprintf("tasks=%d", lim.MaxTasks))
	checkInvariants(t, r.rdb, "fan", "at the end")
}

// scriptName returns the weir transition a slowlog entry ran: the name
// after the library's in an FCALL ("weir3_<hash>_<name>"), the
// "-- weir3_<name>:" line of an EVAL, or the sha of an EVALSHA.
func scriptName(e redis.SlowLog) string {
	if len(e.Args) < 2 {
		return ""
	}
	a := e.Args[1]
	switch {
	case strings.HasPrefix(strings.ToUpper(e.Args[0]), "FCALL"):
		if f := strings.SplitN(a, "_", 3); len(f) == 3 {
			return f[2]
		}
	case strings.HasPrefix(a, "-- "):
		if i := strings.IndexAny(a, ":\n"); i > 0 {
			return a[3:i]
		}
	}
	return a[:min(len(a), 12)]
}
