package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/worker"
)

// enqueue enqueues n no-op jobs into q from the Producers in parallel and
// fills res's enqueue figures; opts, when set, gives the options of the
// i-th job.
func (r *runner) enqueue(ctx context.Context, q client.Queue[empty, empty], n int, opts func(i int) []client.JobOption, res *Result) error {
	cpu := r.startCPU()
	a, err := r.snap(ctx, false)
	if err != nil {
		return err
	}
	err = r.produce(ctx, n, func(i int) error {
		var o []client.JobOption
		if opts != nil {
			o = opts(i)
		}
		_, err := client.Enqueue(ctx, r.client, q, empty{}, o...)
		return err
	})
	end := time.Now()
	res.ProducerCPUUsPerJob = cpu.usPer(n)
	if err != nil {
		return err
	}
	b, err := r.snap(ctx, false)
	if err != nil {
		return err
	}
	res.EnqueuePerS = float64(n) / end.Sub(a.at).Seconds()
	res.EnqueueCommandsPerJob, res.EnqueueRoundTripsPerJob = perJob(a, b, n)
	return nil
}

// finishCalls is worker.Config.FinishCalls for a worker of this process:
// 1 on the embedded server (as weir run and weir dev give theirs there:
// fewer, larger calls cost miniredis less), else the worker's default.
func (r *runner) finishCalls() int {
	if r.srv.embedded != nil {
		return 1
	}
	return 0
}

// plain enqueues Jobs no-op jobs, then runs them with one worker of this
// process at concurrency conc.
func (r *runner) plain(ctx context.Context, conc int) (Result, error) {
	res := Result{Name: ScenarioPlain, Concurrency: conc, Processes: 1, Jobs: r.opts.Jobs}
	err := r.runPlain(ctx, noopQueue("plain-c"+strconv.Itoa(conc)), conc, nil, &res)
	return res, err
}

// runPlain enqueues res.Jobs no-op jobs into q (with opts, as enqueue),
// then runs them with one worker of this process at concurrency conc, and
// fills res's figures.
func (r *runner) runPlain(ctx context.Context, q client.Queue[empty, empty], conc int, opts func(i int) []client.JobOption, res *Result) error {
	n := res.Jobs
	m0, err := r.snap(ctx, true)
	if err != nil {
		return err
	}
	if err := r.enqueue(ctx, q, n, opts, res); err != nil {
		return err
	}
	p := newProgress(worker.EventSucceeded, n)
	w := worker.New(r.store, worker.Config{Concurrency: conc, Observer: p.observe,
		Logger: discardLogger, ShutdownTimeout: 10 * time.Second, FinishCalls: r.finishCalls()})
	worker.Handle(w, q, noop)
	cpu := r.startCPU()
	a, err := r.snap(ctx, false)
	if err != nil {
		return err
	}
	var ran snapshot
	if err := p.runUntil(ctx, w, func() (err error) {
		res.WorkerCPUUsPerJob = cpu.usPer(n)
		ran, err = r.snap(ctx, false)
		return err
	}); err != nil {
		return err
	}
	b, err := r.snap(ctx, true)
	if err != nil {
		return err
	}
	res.Seconds = p.lastTime().Sub(a.at).Seconds()
	res.JobsPerS = float64(n) / res.Seconds
	res.CommandsPerJob, res.RoundTripsPerJob = perJob(a, b, n)
	res.MemoryPerJobBytes = memPer(m0, b, n)
	res.ServerUsPerJob = r.scriptUsPer(a, b, n)
	res.ServerCPUUsPerJob = serverCPUPer(a, ran, n)
	return nil
}

// proc is one worker process of a multi-process run.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr bytes.Buffer
	ready  chan error
	exited chan struct{}
	done   atomic.Int64
	final  childMsg // set before exited closes
}

// startProc starts one worker process and reads its lines.
func (r *runner) startProc(cfg WorkerConfig, notify chan<- struct{}) (*proc, error) {
	pr := &proc{cmd: r.opts.WorkerCommand(cfg.Args()), ready: make(chan error, 1), exited: make(chan struct{})}
	pr.cmd.Stderr = &pr.stderr
	if pr.cmd.Env == nil {
		pr.cmd.Env = os.Environ()
	}
	pr.cmd.Env = append(pr.cmd.Env, "WEIR_REDIS_URL="+r.srv.url, "WEIR_REDIS_CLUSTER="+r.srv.cluster)
	stdin, err := pr.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := pr.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	pr.stdin = stdin
	if err := pr.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start worker process: %w", err)
	}
	go func() {
		defer close(pr.exited)
		sc := bufio.NewScanner(stdout)
		readySent := false
		for sc.Scan() {
			var m childMsg
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				continue // not one of ours
			}
			switch {
			case m.Ready && !readySent:
				readySent = true
				pr.ready <- nil
			case m.Final:
				pr.final = m
			}
			pr.done.Store(m.Done)
			select {
			case notify <- struct{}{}:
			default:
			}
		}
		if !readySent {
			pr.ready <- errors.New("worker process ended before it was ready")
		}
	}()
	return pr, nil
}

// fail ends a worker process that went wrong and describes it.
func (pr *proc) fail(err error) error {
	_ = pr.cmd.Process.Kill()
	<-pr.exited
	_ = pr.cmd.Wait()
	msg := pr.final.Err
	if msg == "" {
		msg = lastLine(pr.stderr.String())
	}
	if msg != "" {
		return fmt.Errorf("%w: %s", err, msg)
	}
	return err
}

// lastLine is the last non-blank line of s.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// plainProcesses enqueues Jobs no-op jobs, then runs them with procs
// worker processes at concurrency conc each.
func (r *runner) plainProcesses(ctx context.Context, procs, conc int) (res Result, err error) {
	n := r.opts.Jobs
	res = Result{Name: ScenarioPlain, Concurrency: conc, Processes: procs, Jobs: n}
	qname := "plain-p" + strconv.Itoa(procs)
	m0, err := r.snap(ctx, true)
	if err != nil {
		return res, err
	}
	if err := r.enqueue(ctx, noopQueue(qname), n, nil, &res); err != nil {
		return res, err
	}
	notify := make(chan struct{}, 1)
	var ps []*proc
	defer func() {
		for _, pr := range ps {
			_ = pr.stdin.Close()
			if err != nil {
				_ = pr.cmd.Process.Kill()
			}
			<-pr.exited
			_ = pr.cmd.Wait()
		}
	}()
	cfg := WorkerConfig{Namespace: r.srv.namespace, Queue: qname, Concurrency: conc, Partitions: r.opts.Partitions}
	for range procs {
		pr, err := r.startProc(cfg, notify)
		if err != nil {
			return res, err
		}
		ps = append(ps, pr)
	}
	for _, pr := range ps {
		select {
		case err := <-pr.ready:
			if err != nil {
				return res, pr.fail(err)
			}
		case <-time.After(stallTimeout):
			return res, pr.fail(errors.New("worker process not ready"))
		case <-ctx.Done():
			return res, ctx.Err()
		}
	}
	a, err := r.snap(ctx, false)
	if err != nil {
		return res, err
	}
	for _, pr := range ps {
		if _, err := io.WriteString(pr.stdin, "go\n"); err != nil {
			return res, pr.fail(err)
		}
	}
	if err := waitProcs(ctx, ps, notify, int64(n)); err != nil {
		return res, err
	}
	ran, err := r.snap(ctx, false)
	if err != nil {
		return res, err
	}
	var last, trips, cpuUs int64
	cpuOK := true
	for _, pr := range ps {
		_, _ = io.WriteString(pr.stdin, "stop\n")
		_ = pr.stdin.Close()
	}
	for _, pr := range ps {
		select {
		case <-pr.exited:
		case <-time.After(stallTimeout):
			return res, pr.fail(errors.New("worker process did not stop"))
		}
		if err := pr.cmd.Wait(); err != nil {
			return res, pr.fail(fmt.Errorf("worker process: %w", err))
		}
		if !pr.final.Final || pr.final.Err != "" {
			return res, pr.fail(errors.New("worker process ended without its figures"))
		}
		last = max(last, pr.final.LastNs)
		trips += pr.final.RoundTrips
		if pr.final.CPUUs == nil {
			cpuOK = false
		} else {
			cpuUs += *pr.final.CPUUs
		}
	}
	ps = nil
	b, err := r.snap(ctx, true)
	if err != nil {
		return res, err
	}
	res.Seconds = time.Unix(0, last).Sub(a.at).Seconds()
	res.JobsPerS = float64(n) / res.Seconds
	res.CommandsPerJob, _ = perJob(a, b, n)
	res.ServerUsPerJob = r.scriptUsPer(a, b, n)
	res.RoundTripsPerJob = float64(trips) / float64(n)
	res.MemoryPerJobBytes = memPer(m0, b, n)
	res.ServerCPUUsPerJob = serverCPUPer(a, ran, n)
	if cpuOK && r.srv.embedded == nil {
		v := float64(cpuUs) / float64(n)
		res.WorkerCPUUsPerJob = &v
	}
	return res, nil
}

// waitProcs waits until the processes completed n jobs together.
func waitProcs(ctx context.Context, ps []*proc, notify <-chan struct{}, n int64) error {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	seen, since := int64(-1), time.Now()
	for {
		var sum int64
		for _, pr := range ps {
			sum += pr.done.Load()
			select {
			case <-pr.exited:
				return pr.fail(errors.New("worker process ended early"))
			default:
			}
		}
		if sum >= n {
			return nil
		}
		select {
		case <-notify:
		case <-ctx.Done():
			return ctx.Err()
		case now := <-t.C:
			if sum != seen {
				seen, since = sum, now
			} else if now.Sub(since) > stallTimeout {
				return fmt.Errorf("%w: %d of %d jobs after %s", errStalled, sum, n, stallTimeout)
			}
		}
	}
}
