package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redisflag"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/worker"
)

// WorkerConfig configures one worker process of a multi-process plain run.
type WorkerConfig struct {
	RedisURL string
	// Cluster, instead of RedisURL, is a Redis Cluster's seed addresses.
	Cluster string
	// Partitions is the namespace's Options.Config.Partitions.
	Partitions  int
	Namespace   string
	Queue       string
	Concurrency int
}

// Args returns cfg as the arguments ParseWorkerArgs reads. An empty
// RedisURL or Cluster is left out: the process then reads WEIR_REDIS_URL
// or WEIR_REDIS_CLUSTER (the bench passes the URL, which may hold a
// password, in the environment rather than on the command line).
func (cfg WorkerConfig) Args() []string {
	var args []string
	if cfg.RedisURL != "" {
		args = append(args, "--redis", cfg.RedisURL)
	}
	if cfg.Cluster != "" {
		args = append(args, "--cluster", cfg.Cluster)
	}
	if cfg.Partitions != 0 {
		args = append(args, "--partitions", strconv.Itoa(cfg.Partitions))
	}
	return append(args, "--namespace", cfg.Namespace, "--queue", cfg.Queue,
		"--concurrency", strconv.Itoa(cfg.Concurrency))
}

// ParseWorkerArgs reads the arguments of WorkerConfig.Args; with neither
// --redis nor --cluster, the Redis is WEIR_REDIS_URL's, else
// WEIR_REDIS_CLUSTER's (redisflag.Resolve).
func ParseWorkerArgs(args []string) (WorkerConfig, error) {
	var cfg WorkerConfig
	fs := flag.NewFlagSet("bench-worker", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&cfg.RedisURL, "redis", "", "")
	fs.StringVar(&cfg.Cluster, "cluster", "", "")
	fs.IntVar(&cfg.Partitions, "partitions", 0, "")
	fs.StringVar(&cfg.Namespace, "namespace", "", "")
	fs.StringVar(&cfg.Queue, "queue", "", "")
	fs.IntVar(&cfg.Concurrency, "concurrency", 0, "")
	if err := fs.Parse(args); err != nil {
		return cfg, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	var err error
	if cfg.RedisURL, cfg.Cluster, err = redisflag.Resolve(cfg.RedisURL, cfg.Cluster); err != nil {
		return cfg, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if cfg.RedisURL == "" && cfg.Cluster == "" || cfg.Namespace == "" || cfg.Queue == "" || cfg.Concurrency < 1 || fs.NArg() > 0 {
		return cfg, fmt.Errorf("%w: bench worker needs --redis (or --cluster), --namespace, --queue and --concurrency ≥ 1", ErrUsage)
	}
	if cfg.Partitions < 0 || cfg.Partitions > engine.MaxPartitions {
		return cfg, fmt.Errorf("%w: --partitions %d outside [0, %d]", ErrUsage, cfg.Partitions, engine.MaxPartitions)
	}
	return cfg, nil
}

// childMsg is one line a worker process writes: ready once connected, then
// its count of completed jobs as it grows, then a final line once stopped.
type childMsg struct {
	Ready      bool   `json:"ready,omitempty"`
	Done       int64  `json:"done"`
	LastNs     int64  `json:"last_ns,omitempty"`
	RoundTrips int64  `json:"round_trips,omitempty"`
	Final      bool   `json:"final,omitempty"`
	Err        string `json:"error,omitempty"`
	// CPUUs is the process's own CPU (user + system, getrusage) from "go"
	// to "stop", in µs, in the final line; absent where getrusage is
	// missing.
	CPUUs *int64 `json:"cpu_us,omitempty"`
}

// reportEvery is how often a worker process reports its count.
const reportEvery = 5 * time.Millisecond

// RunWorkerProcess is the worker side of a multi-process plain run, run by
// the program of Options.WorkerCommand: it connects, writes a ready line
// to out, waits for the line "go" on in, runs no-op jobs of cfg.Queue at
// cfg.Concurrency and writes its completed count as it grows, until the
// line "stop", the end of in or the end of ctx; then it stops the worker
// gracefully and writes a final line with its count, the time of its last
// completion, its client round trips since "go" and its own CPU from "go"
// to "stop" (the worker, its client, its lines to the parent and the Go
// runtime; the setup's garbage is collected before "ready").
func RunWorkerProcess(ctx context.Context, cfg WorkerConfig, in io.Reader, out io.Writer) error {
	enc := json.NewEncoder(out)
	fail := func(err error) error {
		_ = enc.Encode(childMsg{Err: err.Error(), Final: true})
		return err
	}
	var rdb redis.UniversalClient
	if cfg.Cluster != "" {
		opt, err := redisflag.ClusterOptions(cfg.Cluster)
		if err != nil {
			return fail(fmt.Errorf("%w: %w", ErrUsage, err))
		}
		opt.PoolSize = max(opt.PoolSize, poolSize)
		rdb = redis.NewClusterClient(opt)
	} else {
		opt, err := redis.ParseURL(cfg.RedisURL)
		if err != nil {
			return fail(fmt.Errorf("%w: redis URL: %w", ErrUsage, err))
		}
		opt.PoolSize = max(opt.PoolSize, poolSize)
		rdb = redis.NewClient(opt)
	}
	defer func() { _ = rdb.Close() }()
	var trips atomic.Int64
	rdb.AddHook(tripHook{&trips})
	store, err := redisstore.New(rdb, redisstore.Options{Namespace: cfg.Namespace, Config: engine.Config{Partitions: cfg.Partitions}})
	if err != nil {
		return fail(err)
	}
	if err := store.Load(ctx); err != nil {
		return fail(fmt.Errorf("load scripts: %w", err))
	}
	p := newProgress(worker.EventSucceeded, int(^uint(0)>>1))
	w := worker.New(store, worker.Config{Concurrency: cfg.Concurrency, Observer: p.observe,
		Logger: discardLogger, ShutdownTimeout: 10 * time.Second})
	worker.Handle(w, noopQueue(cfg.Queue), noop)

	rctx, rcancel := context.WithCancel(ctx)
	defer rcancel()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-rctx.Done():
				return
			}
		}
	}()
	runtime.GC() // the setup's garbage is not the jobs'
	if err := enc.Encode(childMsg{Ready: true}); err != nil {
		return err
	}
	select {
	case l, ok := <-lines:
		if !ok || l != "go" {
			return fail(errors.New("bench-worker: expected go"))
		}
	case <-ctx.Done():
		return ctx.Err()
	}
	trips0 := trips.Load()
	cpu0, cpuOK := processCPU()
	if err := w.Start(ctx); err != nil {
		return fail(err)
	}
	t := time.NewTicker(reportEvery)
	defer t.Stop()
	var sent int64
	running := true
	for running {
		select {
		case l, ok := <-lines:
			running = ok && l != "stop"
		case <-ctx.Done():
			running = false
		case <-t.C:
			if n := p.done.Load(); n != sent {
				sent = n
				if err := enc.Encode(childMsg{Done: n}); err != nil {
					running = false
				}
			}
		}
	}
	final := childMsg{Final: true}
	if cpu1, ok := processCPU(); ok && cpuOK {
		us := int64((cpu1 - cpu0) / time.Microsecond)
		final.CPUUs = &us
	}
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	_ = w.Stop(stopCtx)
	final.Done, final.LastNs, final.RoundTrips = p.done.Load(), p.last.Load(), trips.Load()-trips0
	return enc.Encode(final)
}
