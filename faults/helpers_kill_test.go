//go:build unix && faults

package faults

import (
	"bufio"
	"context"
	"fmt"
	"github.com/weirflow/weir"
	"hash/fnv"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/shell"
	"github.com/weirflow/weir/worker"
)

// The worker-process tests re-execute this test binary as a worker:
// TestFaultWorkerProcess is skipped unless WEIR_FAULT_WORKER=1, in which
// case it runs a worker.Worker configured by the WEIR_FAULT_* variables
// below until its stdin closes (or it is killed).
const (
	envWorker  = "WEIR_FAULT_WORKER"   // "1": run as a worker process
	envAddr    = "WEIR_FAULT_ADDR"     // host:port of the redis-server
	envNS      = "WEIR_FAULT_NS"       // weir namespace
	envLease   = "WEIR_FAULT_LEASE_MS" // worker lease
	envSweep   = "WEIR_FAULT_SWEEP_MS" // worker sweep interval
	envConc    = "WEIR_FAULT_CONC"     // worker concurrency
	envPause   = "WEIR_FAULT_PAUSE"    // kill point: start, mid or after (empty: none)
	envPauseAt = "WEIR_FAULT_PAUSE_AT" // pause at the n-th job reaching the point
	envPoison  = "WEIR_FAULT_POISON"   // "1": the poison queue's handler SIGKILLs its own process
	// "1": a fleet member (fleet_test.go): handlers take 20-200 ms, one
	// job in 25 takes 1.5 s on its first try and ignores its context, and
	// SIGTERM stops the worker gracefully
	envFleet = "WEIR_FAULT_FLEET"
	// "1": the worker runs the shell tasks of queue "sh" too
	// (commandkill_linux_test.go)
	envShell = "WEIR_FAULT_SHELL"
)

// Kill points of a worker process.
const (
	pointStart = "start" // claimed, before the handler runs
	pointMid   = "mid"   // inside the handler, after it recorded its start
	pointAfter = "after" // the handler returned, before the finish reaches Redis
)

// Queues of the worker processes: "a" and "b" run workflow tasks whose
// result is their own job ID; "poison" kills its process.
var (
	queueA      = client.NewQueue[string, string]("a")
	queueB      = client.NewQueue[string, string]("b")
	queuePoison = client.NewQueue[string, string]("poison")
)

// queueShell is the queue of shell tasks of a worker process with envShell.
const queueShell = "sh"

// killConfig is the store configuration shared by the test and its worker
// processes: default limits but a 20 ms backoff cap, so a task whose lease
// expired several times is retried quickly.
func killConfig() engine.Config {
	cfg := engine.DefaultConfig()
	cfg.Limits.MaxBackoff = 20 * time.Millisecond
	return cfg
}

// recKey names a record list of namespace ns, outside weir's key space.
func recKey(ns, name string) string { return "faultrec:{" + ns + "}:" + name }

// TestFaultWorkerProcess is the body of a worker process; run normally, it
// is skipped.
func TestFaultWorkerProcess(t *testing.T) {
	if os.Getenv(envWorker) != "1" {
		t.Skip("runs only as a re-executed worker process (" + envWorker + "=1)")
	}
	if err := runWorkerProcess(); err != nil {
		fmt.Fprintln(os.Stderr, "worker process:", err)
		os.Exit(3)
	}
}

func envInt(name string, def int) int {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil {
		return def
	}
	return n
}

// runWorkerProcess runs the worker until stdin closes. It prints "READY"
// once started and "PAUSED <point> <job> <attempt>" when it reached its
// kill point, then blocks that job forever so the parent kills it there.
func runWorkerProcess() error {
	ctx := context.Background()
	ns := os.Getenv(envNS)
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv(envAddr)})
	defer rdb.Close()
	store, err := redisstore.New(rdb, redisstore.Options{Namespace: ns, Config: killConfig()})
	if err != nil {
		return err
	}
	var out sync.Mutex
	say := func(format string, args ...any) {
		out.Lock()
		defer out.Unlock()
		fmt.Fprintf(os.Stdout, format+"\n", args...)
	}
	point := os.Getenv(envPause)
	pauseAt := envInt(envPauseAt, 1)
	var reachedMu sync.Mutex
	reached := 0
	// pause blocks forever when this is the pauseAt-th job to reach point.
	pause := func(at string, j *worker.JobInfo) {
		if at != point {
			return
		}
		reachedMu.Lock()
		reached++
		n := reached
		reachedMu.Unlock()
		if n == pauseAt {
			say("PAUSED %s %s %d", at, j.ID, j.Attempt)
			select {}
		}
	}
	record := func(name, v string) {
		// A record lost to a kill only undercounts; it never doubles.
		_ = rdb.RPush(ctx, recKey(ns, name), v).Err()
	}
	pid := os.Getpid()
	fleet := os.Getenv(envFleet) == "1"
	w := worker.New(store, worker.Config{
		Concurrency:   envInt(envConc, 4),
		Lease:         time.Duration(envInt(envLease, 500)) * time.Millisecond,
		SweepInterval: time.Duration(envInt(envSweep, 100)) * time.Millisecond,
		Limits:        killConfig().Limits,
		Logger:        quietLogger(),
		Middleware: []worker.Middleware{func(next worker.Handler) worker.Handler {
			return func(ctx context.Context, j *worker.JobInfo) error {
				pause(pointStart, j)
				err := next(ctx, j)
				if err == nil {
					pause(pointAfter, j)
					record("returned", j.ID)
				}
				return err
			}
		}},
		Observer: func(e worker.Event) {
			if e.Kind == worker.EventPromoted {
				record("promoted", e.JobID)
			}
		},
	})
	task := func(ctx context.Context, j *worker.Job[string]) (string, error) {
		// The payload is the number of dependencies; every one must have
		// completed, with its own job ID as its result.
		ok := strconv.Itoa(len(j.Deps)) == j.Payload
		for _, d := range j.Deps {
			r, err := worker.DepResult[string](j, d.Task)
			if err != nil || r != weir.TaskJobID(j.Workflow, d.Task) {
				ok = false
			}
		}
		record("starts", fmt.Sprintf("%s|%d|%d|%t", j.ID, j.Attempt, pid, ok))
		pause(pointMid, &j.JobInfo)
		if fleet {
			h := fnv.New32a()
			h.Write([]byte(j.ID))
			n := h.Sum32()
			if n%25 == 0 && j.Expiries == 0 {
				// a handler that does not stop when asked: its process
				// is killed during a restart, and its lease expires
				time.Sleep(1500 * time.Millisecond)
				return j.ID, nil
			}
			select {
			case <-time.After(time.Duration(20+n%181) * time.Millisecond):
			case <-ctx.Done():
				return "", context.Cause(ctx)
			}
			return j.ID, nil
		}
		if d := time.Duration(len(j.ID)%7) * time.Millisecond; d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return "", context.Cause(ctx)
			}
		}
		return j.ID, nil
	}
	worker.Handle(w, queueA, task)
	worker.Handle(w, queueB, task)
	if os.Getenv(envShell) == "1" {
		shell.Register(w, []string{queueShell}, killConfig().Limits.MaxResult)
	}
	if os.Getenv(envPoison) == "1" {
		worker.Handle(w, queuePoison, func(ctx context.Context, j *worker.Job[string]) (string, error) {
			record("poison", fmt.Sprintf("%s|%d|%d", j.ID, j.Attempt, pid))
			p, _ := os.FindProcess(pid)
			_ = p.Kill() // SIGKILL on unix: the worker dies with the job leased
			select {}
		})
	}
	if err := w.Start(ctx); err != nil {
		return err
	}
	say("READY %d", pid)
	// until the parent closes stdin (or dies), or sends SIGTERM
	ended := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		ended <- struct{}{}
	}()
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go func() {
		<-term
		ended <- struct{}{}
	}()
	<-ended
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return w.Stop(stopCtx)
}

// workerProc is a running worker process seen from the test.
type workerProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string // stdout lines; closed at EOF

	mu    sync.Mutex
	ended bool
}

// workerOpts configures a worker process.
type workerOpts struct {
	addr, ns     string
	lease, sweep time.Duration
	conc         int
	point        string
	pauseAt      int
	poison       bool
	fleet        bool      // a fleet member (envFleet)
	shell        bool      // runs shell tasks too (envShell)
	env          []string  // more environment variables
	stderr       *childLog // the processes' stderr, checked at the end
}

// childLog collects worker processes' stderr (goroutine-safe), so a test
// can fail on a data race or panic reported by a child.
type childLog struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *childLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// check fails t when a worker process reported a data race, a panic or a
// worker error on its stderr.
func (l *childLog) check(t testing.TB) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.buf.String()
	for _, bad := range []string{"DATA RACE", "panic:", "worker process:", "fatal error:"} {
		if i := strings.Index(s, bad); i >= 0 {
			t.Errorf("a worker process reported %q:\n%s", bad, s[max(0, i-200):min(len(s), i+2000)])
			return
		}
	}
}

// startWorker re-executes the test binary as a worker process and waits
// for its READY line. The test's cleanup kills it if it still runs.
func startWorker(t testing.TB, o workerOpts) (*workerProc, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestFaultWorkerProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		envWorker+"=1", envAddr+"="+o.addr, envNS+"="+o.ns,
		envLease+"="+strconv.Itoa(int(o.lease.Milliseconds())),
		envSweep+"="+strconv.Itoa(int(o.sweep.Milliseconds())),
		envConc+"="+strconv.Itoa(o.conc),
		envPause+"="+o.point, envPauseAt+"="+strconv.Itoa(o.pauseAt),
	)
	if o.poison {
		cmd.Env = append(cmd.Env, envPoison+"=1")
	}
	if o.fleet {
		cmd.Env = append(cmd.Env, envFleet+"=1")
	}
	if o.shell {
		cmd.Env = append(cmd.Env, envShell+"=1")
	}
	cmd.Env = append(cmd.Env, o.env...)
	if o.stderr != nil {
		cmd.Stderr = o.stderr
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &workerProc{cmd: cmd, stdin: stdin, lines: make(chan string, 16)}
	t.Cleanup(func() { p.kill() })
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	return p, nil
}

// waitLine returns the next stdout line with prefix, or false when the
// process ended or timeout passed first.
func (p *workerProc) waitLine(prefix string, timeout time.Duration) (string, bool) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				return "", false
			}
			if strings.HasPrefix(l, prefix) {
				return l, true
			}
		case <-timer.C:
			return "", false
		}
	}
}

// kill sends SIGKILL and reaps the process; it returns when the process
// is gone. Killing a dead process is a no-op.
func (p *workerProc) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return
	}
	p.ended = true
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
}

// stop closes stdin so the worker stops gracefully, and waits for it.
func (p *workerProc) stop() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return nil
	}
	p.ended = true
	_ = p.stdin.Close()
	return p.cmd.Wait()
}

// terminate sends SIGTERM, as a deploy does, and SIGKILL when the process
// has not exited after grace; it reports whether SIGKILL was needed.
func (p *workerProc) terminate(grace time.Duration) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return false
	}
	p.ended = true
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		_ = p.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
		return false
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-done
		return true
	}
}

// exited waits for the process to end by itself (a poison job killed it)
// and reaps it.
func (p *workerProc) exited() error {
	for range p.lines {
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return nil
	}
	p.ended = true
	return p.cmd.Wait()
}

// quietLogger drops the worker's log lines: store errors while the test
// kills processes are expected.
func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
