//go:build unix && faults

package faults

import (
	"bufio"
	"context"
	"fmt"
	"github.com/weirflow/weir"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/worker"
)

// Settings of the concurrency-limit fault test.
const (
	limitN        = 3                      // the queue's limit
	limitJobs     = 300                    // jobs enqueued
	limitProcs    = 3                      // worker processes alive at once
	limitConc     = 8                      // each one's concurrency, well above limitN
	limitKills    = 5                      // worker processes SIGKILLed
	limitRestarts = 2                      // redis-server restarts (SIGKILL, reload from the AOF)
	limitLease    = 2 * time.Second        // worker lease: longer than a restart's downtime
	limitSweep    = 100 * time.Millisecond // worker sweep interval
	envLimit      = "WEIR_FAULT_LIMIT"     // "1": run as a limit worker process
)

// limitQueue is the limited queue: the payload is the job's index, the
// result its double.
var limitQueue = client.NewQueue[int, int]("limited")

// TestQueueLimitKills checks that a queue's concurrency limit holds while
// worker processes are SIGKILLed mid-handler and redis-server is killed and
// restarted from its AOF (appendfsync always): limitJobs short jobs (10–50
// ms) run on a queue limited to limitN by limitProcs worker processes of
// concurrency limitConc each, replaced as they are killed. A batch of jobs
// is enqueued before each fault, so every fault hits a busy queue; each
// kill picks a process that is running a handler.
//
// What is measured. Each handler prints, on its process's stdout (a pipe
// the test reads to EOF, so nothing printed is lost to a kill or a Redis
// restart), a start line and, just before it returns, an end line, each
// with the wall-clock time in ns: one clock, that of the machine, shared by
// every process. A handler of a killed process has a start and no end: it
// stopped running when its process died, which the test bounds from above
// by the moment it reaped the process. So every handler run is an
// interval, and the test computes the largest number of intervals open at
// one instant.
//
// Why that must be at most limitN. The store enforces the limit on leases:
// a claim takes at most limitN minus the queue's leased jobs (P
// q:<queue>:a), and a slot is free again only when its lease ends
// (spec/states.md, LimitQueue). A handler runs inside its lease: it starts
// after the claim that created the lease returned, and it ends (returns,
// or dies with its process) before its finish, or the lease's expiry,
// frees the slot. So at any instant the handlers running are a subset of
// the leases held, at most limitN. A killed handler's lease outlives it:
// nobody extends the lease after the kill, and the store keeps counting
// it until it expires. The test reads that lease's deadline right after
// the kill and checks a second, stronger count in which a killed run
// lasts until its lease's deadline — what the store must count — which
// must not exceed limitN either; a store that freed a dead worker's slot
// early, or forgot a lease across a restart, fails it. (The run reaped at
// its process's death ends before that deadline: a lease read after the
// kill that had already ended is reported.)
//
// The one way a handler outlives its lease is a lease lost under a live
// worker (the store expired it while the worker's heartbeats could not
// reach Redis for a whole lease); the lease is much longer than a Redis
// restart takes, so that does not happen here, and the test fails, saying
// so, when a worker reports a lost lease.
//
// It also samples the store's own count (ZCARD of the queue's leased set)
// every 2 ms, which must never exceed limitN either; checks that limitN
// handlers did run at once (so the measure could have seen a breach); and
// that every job completed with its result, no attempt started twice, a
// run that did not complete its job belonged to a killed process, the
// store's invariants (CheckStore) held after each restart and at the end,
// and the queue ended empty with its limit kept.
func TestQueueLimitKills(t *testing.T) { runLimitKills(t, false) }

// TestKeyLimitKills is TestQueueLimitKills for the per-key limit
// (spec/states.md, Concurrency keys): the queue has no limit of its own
// but a per-key limit of limitN, its jobs carry one of limitKeys keys
// (job i the key "k<i mod limitKeys>"), and each count (handlers running,
// slots with the leases of killed handlers, the store's own per-key lease
// count q:<queue>:kc, sampled) is taken per key and must never exceed
// limitN; some key must reach it. The workers' slots (limitProcs ×
// limitConc) are well above limitKeys × limitN, so the keys' limits, not
// the workers, bound what runs.
func TestKeyLimitKills(t *testing.T) { runLimitKills(t, true) }

// limitKeys is the number of concurrency keys of TestKeyLimitKills.
const limitKeys = 3

// limitKey is the concurrency key of TestKeyLimitKills's job id
// ("key-<index>"): "k<index mod limitKeys>".
func limitKey(id string) string {
	i, _ := strconv.Atoi(strings.TrimPrefix(id, "key-"))
	return "k" + strconv.Itoa(i%limitKeys)
}

// runLimitKills is TestQueueLimitKills, or with keyed TestKeyLimitKills.
func runLimitKills(t *testing.T, keyed bool) {
	rp := StartRedisT(t, "--appendonly", "yes", "--appendfsync", "always")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns, prefix := "lim", "lim-"
	if keyed {
		ns, prefix = "keylim", "key-"
	}
	rdb := newRedisClient(t, rp.Addr())
	store := newStore(t, rdb, ns, killConfig())
	cl := client.New(store)
	limit := cl.LimitQueue
	if keyed {
		limit = cl.LimitKeys
	}
	if err := limit(ctx, limitQueue.Name(), limitN); err != nil {
		t.Fatal(err)
	}
	var jobs []*client.Job[int]
	enqueue := func(n int) {
		for range n {
			i := len(jobs)
			id := fmt.Sprintf("%s%03d", prefix, i)
			opts := []client.JobOption{client.ID(id), client.MaxAttempts(100), client.Backoff(time.Millisecond)}
			if keyed {
				opts = append(opts, client.ConcurrencyKey(limitKey(id)))
			}
			j, err := client.Enqueue(ctx, cl, limitQueue, i, opts...)
			if err != nil {
				t.Fatal(err)
			}
			jobs = append(jobs, j)
		}
	}
	faults, first, perFault := faultOrder(limitKills, limitRestarts, limitJobs)
	enqueue(first)

	log := &limitLog{}
	stderr := &childLog{}
	defer stderr.check(t)
	fleet := startLimitFleet(t, limitProcOpts{addr: rp.Addr(), ns: ns, stderr: stderr}, log, limitProcs)

	// The store's own count, sampled until the end: the queue's leased
	// set, or its largest per-key lease count.
	qprefix := "weir:{" + ns + ":0}:q:" + limitQueue.Name() + ":"
	stopSampling := sampleMax(ctx, func(ctx context.Context) (int64, bool) {
		if !keyed {
			// below the lease set's sentinel (spec/keys.md, q:<queue>:a,
			// scored 2^53 - 1), which is no lease
			n, err := rdb.ZCount(ctx, qprefix+"a", "-inf", "(9007199254740991").Result()
			return n, err == nil
		}
		vs, err := rdb.HMGet(ctx, qprefix+"kc", "k0", "k1", "k2").Result()
		var most int64
		for _, v := range vs {
			if s, ok := v.(string); ok {
				n, _ := strconv.ParseInt(s, 10, 64)
				most = max(most, n)
			}
		}
		return most, err == nil
	})

	// Faults, in a random order at random intervals: each worker kill
	// waits until its victim runs a handler, so that it lands mid-run.
	kills, restarts, midRun := 0, 0, 0
	for _, f := range faults {
		time.Sleep(time.Duration(100+rand.IntN(300)) * time.Millisecond)
		enqueue(perFault)
		time.Sleep(time.Duration(rand.IntN(50)) * time.Millisecond)
		switch f {
		case "kill":
			victim := fleet.killBusy(10 * time.Millisecond)
			// Its open runs hold their slots until their leases end: read
			// the deadlines, which nobody extends any more.
			open := log.open(victim.pid)
			if len(open) > 0 {
				midRun++
			}
			for _, key := range open {
				id, attempt := key.job, key.attempt
				for try := 0; ; try++ {
					j, err := store.GetJob(ctx, id)
					if err == nil {
						if j.State == weir.Running && j.Attempt == attempt && j.Lease != nil {
							log.leaseEnds(key, j.Lease.Deadline.UnixNano())
						} else {
							t.Errorf("job %s, killed mid-run at attempt %d, is %s at attempt %d right after the kill: its lease ended before its worker died", id, attempt, j.State, j.Attempt)
						}
						break
					}
					if try == 100 {
						t.Fatalf("GetJob %s: %v", id, err)
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
			kills++
		case "restart":
			restarts++
			restartAndCheck(t, rp, rdb, ns, restarts)
		}
	}

	// Every job completes with its result.
	waitDoubled(ctx, t, jobs, func() string { return fmt.Sprintf("%d handler runs ended", log.ended()) })
	sampled, samples := stopSampling()
	procs := fleet.stop()
	rep := checkInvariants(t, rdb, ns, "at the end")
	if rep.PlainJobs != limitJobs || rep.Running != 0 {
		t.Errorf("at the end: %s; want %d plain jobs, none running", rep, limitJobs)
	}
	qs, err := cl.Queues(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		kept := q.Concurrency
		if keyed {
			kept = q.KeyConcurrency
		}
		if q.Name == limitQueue.Name() && (q.Ready+q.Delayed+q.Running != 0 || kept != limitN) {
			t.Errorf("queue at the end: %+v; want empty, its limit %d", q, limitN)
		}
	}

	// Each attempt started once; each job's completing attempt started and
	// ended in the log.
	runs := log.runs(procs)
	byAttempt := map[string]limitRun{}
	for _, r := range runs {
		key := r.job + "|" + strconv.Itoa(r.attempt)
		if o, dup := byAttempt[key]; dup {
			t.Errorf("attempt %d of %s started twice (pids %d and %d)", r.attempt, r.job, o.pid, r.pid)
		}
		byAttempt[key] = r
	}
	final := map[string]int{}
	for _, j := range jobs {
		st, err := j.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		final[j.ID()] = st.Attempt
		r, ok := byAttempt[j.ID()+"|"+strconv.Itoa(st.Attempt)]
		if !ok || r.killed {
			t.Errorf("job %s completed at attempt %d, which has no ended handler run in the log (%+v)", j.ID(), st.Attempt, r)
		}
	}
	// A run that did not complete its job ran in a killed process: killed
	// mid-run, or after its end but before its finish reached Redis.
	killedPids := map[int]bool{}
	for _, p := range procs {
		if p.wasKilled() {
			killedPids[p.pid] = true
		}
	}
	reruns := 0
	for _, r := range runs {
		if r.attempt == final[r.job] {
			continue
		}
		reruns++
		if !killedPids[r.pid] {
			t.Errorf("attempt %d of %s (pid %d) did not complete the job, which completed at attempt %d, yet its process was not killed", r.attempt, r.job, r.pid, final[r.job])
		}
	}
	if lost := log.lost(); len(lost) > 0 {
		t.Errorf("workers lost %d leases under live handlers (%v): the store freed their slots while they ran, so the handler count below does not bound the leases (lease %v too short for the Redis downtime?)", len(lost), lost, limitLease)
	}

	// At no instant did more than limitN handlers run (of one key, with
	// keys), and not even when a killed handler counts until its lease's
	// deadline (the store's view).
	groups := map[string][]limitRun{"": runs}
	if keyed {
		groups = map[string][]limitRun{}
		for _, r := range runs {
			groups[limitKey(r.job)] = append(groups[limitKey(r.job)], r)
		}
	}
	most, slots := 0, 0
	for key, rs := range groups {
		m, at, open := maxOverlap(rs, false)
		if m > limitN {
			t.Errorf("%d handlers ran at once (at %s) %s, over the limit of %d: %v", m, time.Unix(0, at).Format(time.StampMicro), "key "+key, limitN, open)
		}
		s, at, open := maxOverlap(rs, true)
		if s > limitN {
			t.Errorf("%d slots were taken at once (at %s) %s, counting a killed handler's until its lease's deadline, over the limit of %d: %v", s, time.Unix(0, at).Format(time.StampMicro), "key "+key, limitN, open)
		}
		most, slots = max(most, m), max(slots, s)
	}
	if most < limitN {
		t.Errorf("at most %d handlers ran at once: the limit %d was never reached, so the run could not show it holds", most, limitN)
	}
	for _, r := range runs {
		if r.killed && r.leaseEnd == 0 {
			t.Errorf("run %s#%d of killed pid %d has no lease deadline", r.job, r.attempt, r.pid)
		}
	}
	if sampled > limitN {
		t.Errorf("the store counted %d leases at once (sampled: the queue's leased set, or a key's count), over the limit of %d", sampled, limitN)
	}
	if midRun == 0 {
		t.Errorf("no kill caught a handler running: the kills tested nothing")
	}
	name := "queue-limit"
	if keyed {
		// the keys ran side by side: more than one key's limit at once
		all, _, _ := maxOverlap(runs, false)
		if all <= limitN {
			t.Errorf("at most %d handlers of all keys ran at once: the keys never ran side by side", all)
		}
		name = fmt.Sprintf("key-limit keys=%d max_running_all_keys=%d", limitKeys, all)
	}
	t.Logf("FAULT %s: limit=%d jobs=%d handler_runs=%d runs_undone_by_kills=%d killed_mid_run=%d kills=%d redis_restarts=%d max_running=%d max_slots_with_dead_leases=%d max_leased_sampled=%d (%d samples) %s",
		name, limitN, limitJobs, len(runs), reruns, midRun, kills, restarts, most, slots, sampled, samples, rep)
}

// maxOverlap returns the most runs open at one instant, that instant and
// the runs then open; with leases, a killed run lasts until its lease's
// deadline. At equal times an end counts before a start (a start that
// causally follows an end is strictly later anyway).
func maxOverlap(runs []limitRun, leases bool) (most int, at int64, open []string) {
	type ev struct {
		t     int64
		delta int
		i     int
	}
	evs := make([]ev, 0, 2*len(runs))
	for i, r := range runs {
		end := r.end
		if leases && r.killed {
			end = max(end, r.leaseEnd)
		}
		evs = append(evs, ev{r.start, 1, i}, ev{end, -1, i})
	}
	slices.SortFunc(evs, func(a, b ev) int {
		if a.t != b.t {
			return int(a.t - b.t)
		}
		return a.delta - b.delta
	})
	cur := map[int]bool{}
	for _, e := range evs {
		if e.delta > 0 {
			cur[e.i] = true
		} else {
			delete(cur, e.i)
		}
		if len(cur) > most {
			most, at, open = len(cur), e.t, nil
			for i := range cur {
				r := runs[i]
				open = append(open, fmt.Sprintf("%s#%d pid=%d %s..%s killed=%v", r.job, r.attempt, r.pid,
					time.Unix(0, r.start).Format(time.StampMicro), time.Unix(0, r.end).Format(time.StampMicro), r.killed))
			}
		}
	}
	return most, at, open
}

// limitRun is one handler run: from its start to its end, or, when its
// process was killed first, to the moment the process was reaped.
type limitRun struct {
	job        string
	attempt    int
	pid        int
	start, end int64 // Unix ns
	killed     bool
	leaseEnd   int64 // a killed run's lease deadline, read after the kill (Unix ns)
}

// runKey names a handler run in the log.
type runKey struct {
	job     string
	attempt int
	pid     int
}

// limitLog gathers the lines of every limit worker process.
type limitLog struct {
	mu     sync.Mutex
	starts map[runKey]limitRun // end 0 while open
	ends   int
	lostL  []string
}

// leaseEnds notes the lease deadline of run key, killed mid-run.
func (l *limitLog) leaseEnds(key runKey, deadline int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.starts[key]
	r.leaseEnd = deadline
	l.starts[key] = r
}

func (l *limitLog) line(pid int, s string) {
	f := strings.Fields(s)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.starts == nil {
		l.starts = map[runKey]limitRun{}
	}
	switch {
	case len(f) == 4 && (f[0] == "S" || f[0] == "E"):
		attempt, _ := strconv.Atoi(f[2])
		ts, _ := strconv.ParseInt(f[3], 10, 64)
		key := runKey{f[1], attempt, pid}
		if f[0] == "S" {
			l.starts[key] = limitRun{job: f[1], attempt: attempt, pid: pid, start: ts}
		} else if r, ok := l.starts[key]; ok {
			r.end = ts
			l.starts[key] = r
			l.ends++
		}
	case len(f) == 3 && f[0] == "L":
		l.lostL = append(l.lostL, f[1]+"#"+f[2])
	}
}

// open returns the handler runs of process pid that started and have not
// ended.
func (l *limitLog) open(pid int) []runKey {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []runKey
	for k, r := range l.starts {
		if r.pid == pid && r.end == 0 {
			out = append(out, k)
		}
	}
	return out
}

// ended returns how many handler runs ended.
func (l *limitLog) ended() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ends
}

func (l *limitLog) lost() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lostL)
}

// runs returns every handler run; one left open ends when its process was
// reaped (a process that ended otherwise leaves none open: it stops
// gracefully, waiting for its handlers).
func (l *limitLog) runs(procs []*limitProc) []limitRun {
	reaped := map[int]int64{}
	for _, p := range procs {
		reaped[p.pid] = p.reapedAt()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]limitRun, 0, len(l.starts))
	for _, r := range l.starts {
		if r.end == 0 {
			r.end, r.killed = reaped[r.pid], true
		}
		out = append(out, r)
	}
	return out
}

// limitProcOpts configures a limit worker process.
type limitProcOpts struct {
	addr, ns string
	stderr   *childLog
	// test and env name the process's body and the variable that enables
	// it (default: TestFaultLimitWorkerProcess, envLimit)
	test, env string
}

// limitProc is a running limit worker process seen from the test. Its
// stdout is an os.Pipe the test reads to EOF, so that reaping the process
// never discards a line it wrote before it died.
type limitProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	pid   int
	read  chan struct{} // closed when every stdout line was read

	mu     sync.Mutex
	ended  bool
	killed bool
	reaped int64 // Unix ns, after the process was gone
}

// startLimitWorker re-executes the test binary as a limit worker process,
// feeds its stdout lines to log and waits for its READY line. The test's
// cleanup kills it if it still runs.
func startLimitWorker(t testing.TB, o limitProcOpts, log *limitLog) (*limitProc, error) {
	test, env := o.test, o.env
	if test == "" {
		test, env = "TestFaultLimitWorkerProcess", envLimit
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"=1", envAddr+"="+o.addr, envNS+"="+o.ns)
	cmd.Stderr = o.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	w.Close() // the child holds the write end now
	p := &limitProc{cmd: cmd, stdin: stdin, pid: cmd.Process.Pid, read: make(chan struct{})}
	t.Cleanup(func() { p.kill() })
	ready := make(chan struct{})
	go func() {
		defer close(p.read)
		defer r.Close()
		sc := bufio.NewScanner(r)
		seen := false
		for sc.Scan() {
			if !seen && strings.HasPrefix(sc.Text(), "READY") {
				seen = true
				close(ready)
				continue
			}
			log.line(p.pid, sc.Text())
		}
	}()
	select {
	case <-ready:
		return p, nil
	case <-p.read:
		p.kill()
		return nil, fmt.Errorf("worker process %d ended before it was ready", p.pid)
	case <-time.After(30 * time.Second):
		p.kill()
		return nil, fmt.Errorf("worker process %d not ready after 30s", p.pid)
	}
}

// kill sends SIGKILL and reaps the process, noting when it was gone.
func (p *limitProc) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return
	}
	p.ended, p.killed = true, true
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	p.reaped = time.Now().UnixNano()
}

// stop closes stdin so the worker stops gracefully, and waits for it.
func (p *limitProc) stop() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return nil
	}
	p.ended = true
	_ = p.stdin.Close()
	err := p.cmd.Wait()
	p.reaped = time.Now().UnixNano()
	return err
}

// wasKilled reports whether kill ended the process (the test's cleanup
// has not run yet when the test asks).
func (p *limitProc) wasKilled() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.killed
}

func (p *limitProc) reapedAt() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reaped
}

// TestFaultLimitWorkerProcess is the body of a limit worker process; run
// normally, it is skipped.
func TestFaultLimitWorkerProcess(t *testing.T) {
	if os.Getenv(envLimit) != "1" {
		t.Skip("runs only as a re-executed worker process (" + envLimit + "=1)")
	}
	if err := runLimitWorker(); err != nil {
		fmt.Fprintln(os.Stderr, "worker process:", err)
		os.Exit(3)
	}
}

// runLimitWorker runs a worker of limitQueue until stdin closes. It prints
// "READY", then for each handler run "S <job> <attempt> <ns>" as it starts
// and "E <job> <attempt> <ns>" just before it returns, and "L <job>
// <attempt>" when it lost a lease; each line is one write to the pipe, so
// a kill never tears one.
func runLimitWorker() error {
	return runFleetWorker(limitWorker)
}

// limitWorker is runLimitWorker's worker.
func limitWorker(store *redisstore.Store, say func(string, ...any)) *worker.Worker {
	w := worker.New(store, worker.Config{
		Concurrency:   limitConc,
		Lease:         limitLease,
		SweepInterval: limitSweep,
		Limits:        killConfig().Limits,
		Logger:        quietLogger(),
		Observer: func(e worker.Event) {
			if e.Kind == worker.EventLeaseLost {
				say("L %s %d", e.JobID, e.Attempt)
			}
		},
	})
	worker.Handle(w, limitQueue, func(ctx context.Context, j *worker.Job[int]) (int, error) {
		say("S %s %d %d", j.ID, j.Attempt, time.Now().UnixNano())
		defer func() { say("E %s %d %d", j.ID, j.Attempt, time.Now().UnixNano()) }()
		select {
		case <-time.After(time.Duration(10+j.Payload%41) * time.Millisecond):
		case <-ctx.Done():
			return 0, context.Cause(ctx)
		}
		return 2 * j.Payload, nil
	})
	return w
}
