//go:build unix && faults

package faults

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/worker"
)

// faultOrder returns kills "kill" and restarts "restart" in a random
// order, and how many of jobs to enqueue before the first fault and
// before each: a batch of jobs comes before each fault, so that every
// fault hits a busy queue however fast the machine runs the jobs.
func faultOrder(kills, restarts, jobs int) (faults []string, first, perFault int) {
	faults = slices.Repeat([]string{"kill"}, kills)
	faults = append(faults, slices.Repeat([]string{"restart"}, restarts)...)
	rand.Shuffle(len(faults), func(i, j int) { faults[i], faults[j] = faults[j], faults[i] })
	perFault = jobs / (2 * len(faults))
	return faults, jobs - perFault*len(faults), perFault
}

// limitFleet is the worker processes of a limit fault test: the ones
// alive, and every one started (whose logs the test reads at the end).
type limitFleet struct {
	t     testing.TB
	opts  limitProcOpts
	log   *limitLog
	alive []*limitProc

	mu    sync.Mutex
	procs []*limitProc
}

// startLimitFleet starts n worker processes with opts, logging to log.
func startLimitFleet(t testing.TB, opts limitProcOpts, log *limitLog, n int) *limitFleet {
	f := &limitFleet{t: t, opts: opts, log: log, alive: make([]*limitProc, n)}
	for i := range f.alive {
		f.alive[i] = f.spawn()
	}
	return f
}

func (f *limitFleet) spawn() *limitProc {
	p, err := startLimitWorker(f.t, f.opts, f.log)
	if err != nil {
		f.t.Fatalf("start worker: %v", err)
	}
	f.mu.Lock()
	f.procs = append(f.procs, p)
	f.mu.Unlock()
	return p
}

// killBusy kills a worker that runs a handler (any one after 2 s, after
// a random pause of up to pause), waits until every line it wrote is in
// the log, starts another in its place, and returns the one it killed.
func (f *limitFleet) killBusy(pause time.Duration) *limitProc {
	k := rand.IntN(len(f.alive))
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		var busy []int
		for i, p := range f.alive {
			if len(f.log.open(p.pid)) > 0 {
				busy = append(busy, i)
			}
		}
		if len(busy) > 0 {
			k = busy[rand.IntN(len(busy))]
			break
		}
	}
	victim := f.alive[k]
	if pause > 0 {
		time.Sleep(time.Duration(rand.Int64N(int64(pause))))
	}
	victim.kill()
	<-victim.read
	f.alive[k] = f.spawn()
	return victim
}

// stop stops the live workers and waits until every line of every
// process is in the log; it returns every process started.
func (f *limitFleet) stop() []*limitProc {
	for _, p := range f.alive {
		if err := p.stop(); err != nil {
			f.t.Errorf("worker process %d: %v", p.pid, err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.procs {
		<-p.read
	}
	return f.procs
}

// sampleMax calls read every 2 ms until the returned stop is called, and
// stop returns the largest value read and how many reads succeeded.
func sampleMax(ctx context.Context, read func(context.Context) (int64, bool)) (stop func() (most, samples int64)) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var most, samples int64
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if n, ok := read(ctx); ok {
				most = max(most, n)
				samples++
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	return func() (int64, int64) {
		cancel()
		<-done
		return most, samples
	}
}

// runFleetWorker is the body of a fleet's worker process: it opens the
// store of envAddr and envNS, builds its worker (say prints one line to
// stdout in one write, so that a kill never tears one), starts it, prints
// "READY <pid>", and runs until stdin closes; then it stops the worker
// gracefully.
func runFleetWorker(build func(store *redisstore.Store, say func(string, ...any)) *worker.Worker) error {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv(envAddr)})
	defer rdb.Close()
	store, err := redisstore.New(rdb, redisstore.Options{Namespace: os.Getenv(envNS), Config: killConfig()})
	if err != nil {
		return err
	}
	var out sync.Mutex
	say := func(format string, args ...any) {
		line := fmt.Sprintf(format+"\n", args...)
		out.Lock()
		defer out.Unlock()
		_, _ = os.Stdout.WriteString(line)
	}
	w := build(store, say)
	if err := w.Start(ctx); err != nil {
		return err
	}
	say("READY %d", os.Getpid())
	_, _ = io.Copy(io.Discard, os.Stdin)
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return w.Stop(stopCtx)
}

// restartAndCheck restarts redis-server, the n-th time, and checks the
// store's invariants after it.
func restartAndCheck(t testing.TB, rp *RedisProc, rdb *redis.Client, ns string, n int) {
	t.Helper()
	if err := rp.Restart(); err != nil {
		t.Fatalf("restart redis-server: %v", err)
	}
	checkInvariants(t, rdb, ns, fmt.Sprintf("after restart %d", n))
}

// waitDoubled waits for every job and checks that job i's result is 2i
// (what the fleets' handlers return); about, when set, adds to the
// failure of a job that did not complete.
func waitDoubled(ctx context.Context, t testing.TB, jobs []*client.Job[int], about func() string) {
	t.Helper()
	for i, j := range jobs {
		r, err := j.Wait(ctx)
		if err != nil {
			if about != nil {
				t.Fatalf("job %s: %v (%s)", j.ID(), err, about())
			}
			t.Fatalf("job %s: %v", j.ID(), err)
		}
		if r != 2*i {
			t.Errorf("job %s: result %d, want %d", j.ID(), r, 2*i)
		}
	}
}
