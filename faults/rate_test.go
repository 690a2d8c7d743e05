//go:build unix && faults

package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/worker"
)

// Settings of the rate-limit fault test.
const (
	rateN        = 5                      // starts allowed in any window
	ratePeriod   = 200 * time.Millisecond // the window
	rateJobs     = 150                    // jobs enqueued
	rateProcs    = 3                      // worker processes alive at once
	rateConc     = 8                      // each one's concurrency, above rateN
	rateKills    = 5                      // worker processes SIGKILLed
	rateRestarts = 2                      // redis-server restarts (SIGKILL, reload from the AOF)
	rateLease    = 2 * time.Second        // worker lease: longer than a restart's downtime
	envRate      = "WEIR_FAULT_RATE"      // "1": run as a rate worker process
)

// rateQueue is the rate-limited queue: the payload is the job's index, the
// result its double.
var rateQueue = client.NewQueue[int, int]("rated")

// TestQueueRateKills checks that a queue's rate limit holds while worker
// processes are SIGKILLed with jobs in hand and redis-server is killed and
// restarted from its AOF (appendfsync always): rateJobs short jobs run on a
// queue limited to rateN starts in any ratePeriod, by rateProcs worker
// processes of concurrency rateConc each, replaced as they are killed. A
// killed process's jobs start again, on another worker, once their leases
// expire: each such start counts too.
//
// What is measured. Each worker process wraps its store so that every
// lease a claim (or the claim of a finish) hands it is printed on its
// stdout (a pipe the test reads to EOF) before the worker sees it: the
// job, the attempt and the lease's start by the store's clock (its
// deadline minus the lease length: the claim's time, in ms, as the store
// counts it). The test checks that no window [t, t + ratePeriod) holds more
// than rateN of those starts (and that some held rateN: the limit was
// reached, so the measure could have seen a breach). A start handed to a
// process killed before it printed it, or whose claim's reply was lost to
// a Redis restart (its job runs again once the lease expires), is missing
// from the log (a smaller count, never a false breach): the test compares
// the log with the attempts the store counted and says how many are
// missing. It also
// samples the store's log of starts (ZCARD of q:rated:starts, which never
// holds more than the limit), checks the store's invariants after each
// restart and at the end, and that every job completed with its result.
func TestQueueRateKills(t *testing.T) {
	rp := StartRedisT(t, "--appendonly", "yes", "--appendfsync", "always")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const ns = "rate"
	rdb := newRedisClient(t, rp.Addr())
	store := newStore(t, rdb, ns, killConfig())
	cl := client.New(store)
	if err := cl.RateLimitQueue(ctx, rateQueue.Name(), rateN, ratePeriod); err != nil {
		t.Fatal(err)
	}
	var jobs []*client.Job[int]
	enqueue := func(n int) {
		for range n {
			i := len(jobs)
			j, err := client.Enqueue(ctx, cl, rateQueue, i, client.ID(fmt.Sprintf("rate-%03d", i)),
				client.MaxAttempts(100), client.Backoff(time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			jobs = append(jobs, j)
		}
	}
	faults, first, perFault := faultOrder(rateKills, rateRestarts, rateJobs)
	enqueue(first)

	log := &limitLog{}
	stderr := &childLog{}
	defer stderr.check(t)
	fleet := startLimitFleet(t, limitProcOpts{addr: rp.Addr(), ns: ns, stderr: stderr, test: "TestFaultRateWorkerProcess", env: envRate}, log, rateProcs)

	// The store's own log of starts, sampled until the end.
	startsKey := "weir:{" + ns + ":0}:q:" + rateQueue.Name() + ":starts"
	stopSampling := sampleMax(ctx, func(ctx context.Context) (int64, bool) {
		n, err := rdb.ZCard(ctx, startsKey).Result()
		return n, err == nil
	})

	kills, restarts, midRun := 0, 0, 0
	for _, f := range faults {
		time.Sleep(time.Duration(200+rand.IntN(400)) * time.Millisecond)
		enqueue(perFault)
		switch f {
		case "kill":
			// the victim: one holding a job (any one after 2 s)
			if victim := fleet.killBusy(0); len(log.open(victim.pid)) > 0 {
				midRun++
			}
			kills++
		case "restart":
			restarts++
			restartAndCheck(t, rp, rdb, ns, restarts)
		}
	}

	waitDoubled(ctx, t, jobs, nil)
	sampled, samples := stopSampling()
	procs := fleet.stop()
	rep := checkInvariants(t, rdb, ns, "at the end")
	if rep.PlainJobs != rateJobs || rep.Running != 0 {
		t.Errorf("at the end: %s; want %d plain jobs, none running", rep, rateJobs)
	}

	// The starts, by the store's clock: never more than rateN in a window.
	runs := log.runs(procs)
	starts := make([]int64, len(runs))
	for i, r := range runs {
		starts[i] = r.start
	}
	slices.Sort(starts)
	most, at := 0, int64(0)
	for i, j := 0, 0; i < len(starts); i++ {
		for j < len(starts) && starts[j] < starts[i]+ratePeriod.Milliseconds() {
			j++
		}
		if j-i > most {
			most, at = j-i, starts[i]
		}
	}
	if most > rateN {
		t.Errorf("%d jobs started in the %v from %s, over the limit of %d", most, ratePeriod, time.UnixMilli(at).Format(time.StampMilli), rateN)
	}
	if most < rateN {
		t.Errorf("at most %d jobs started in a window: the limit %d was never reached, so the run could not show it holds", most, rateN)
	}
	// Every lease the store handed out is an attempt it counted.
	attempts := 0
	for _, j := range jobs {
		st, err := j.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		attempts += st.Attempt
	}
	if len(starts) > attempts {
		t.Errorf("%d starts logged, yet the store counted %d attempts", len(starts), attempts)
	}
	if sampled > rateN {
		t.Errorf("the store's log of starts held %d at once (sampled), over the limit of %d", sampled, rateN)
	}
	if midRun == 0 {
		t.Errorf("no kill caught a worker holding a job: the kills tested nothing")
	}
	qs, err := cl.Queues(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if q.Name == rateQueue.Name() && (q.Ready+q.Delayed+q.Running != 0 || q.RateLimit != rateN || q.RatePeriod != ratePeriod) {
			t.Errorf("queue at the end: %+v; want empty, rate %d/%v", q, rateN, ratePeriod)
		}
	}
	t.Logf("FAULT queue-rate: limit=%d/%v jobs=%d starts_logged=%d attempts=%d (%d unlogged: handed to a process killed before it printed them, or lost with a claim's reply to a Redis restart) killed_holding_jobs=%d kills=%d redis_restarts=%d max_starts_in_a_window=%d max_starts_log_sampled=%d (%d samples) %s",
		rateN, ratePeriod, rateJobs, len(starts), attempts, attempts-len(starts), midRun, kills, restarts, most, sampled, samples, rep)
}

// TestFaultRateWorkerProcess is the body of a rate worker process; run
// normally, it is skipped.
func TestFaultRateWorkerProcess(t *testing.T) {
	if os.Getenv(envRate) != "1" {
		t.Skip("runs only as a re-executed worker process (" + envRate + "=1)")
	}
	if err := runRateWorker(); err != nil {
		fmt.Fprintln(os.Stderr, "worker process:", err)
		os.Exit(3)
	}
}

// startPrinter is a store that prints every lease a claim hands out, "S
// <job> <attempt> <start ms>" (the start by the store's clock: the lease's
// deadline minus its length), before the worker sees it.
type startPrinter struct {
	engine.Store
	say func(format string, args ...any)
}

func (s *startPrinter) print(cs []engine.Claimed, lease time.Duration) {
	for _, c := range cs {
		s.say("S %s %d %d", c.Job.ID, c.Job.Attempt, c.Lease.Deadline.Add(-lease).UnixMilli())
	}
}

func (s *startPrinter) Claim(ctx context.Context, p engine.ClaimParams) ([]engine.Claimed, error) {
	cs, err := s.Store.Claim(ctx, p)
	s.print(cs, p.Lease)
	return cs, err
}

func (s *startPrinter) Finish(ctx context.Context, p engine.FinishParams) (engine.FinishResult, error) {
	r, err := s.Store.Finish(ctx, p)
	if p.Claim != nil {
		s.print(r.Claimed, p.Claim.Lease)
	}
	return r, err
}

// runRateWorker runs a worker of rateQueue until stdin closes. It prints
// "READY", a start line per lease (startPrinter) and "E <job> <attempt>
// <ns>" as a handler returns; each line is one write to the pipe, so a
// kill never tears one.
func runRateWorker() error {
	return runFleetWorker(rateWorker)
}

// rateWorker is runRateWorker's worker.
func rateWorker(store *redisstore.Store, say func(string, ...any)) *worker.Worker {
	w := worker.New(&startPrinter{Store: store, say: say}, worker.Config{
		Concurrency:   rateConc,
		Lease:         rateLease,
		SweepInterval: 100 * time.Millisecond,
		Limits:        killConfig().Limits,
		Logger:        quietLogger(),
	})
	worker.Handle(w, rateQueue, func(ctx context.Context, j *worker.Job[int]) (int, error) {
		defer func() { say("E %s %d %d", j.ID, j.Attempt, time.Now().UnixNano()) }()
		select {
		case <-time.After(time.Duration(5+j.Payload%16) * time.Millisecond):
		case <-ctx.Done():
			return 0, context.Cause(ctx)
		}
		return 2 * j.Payload, nil
	})
	return w
}
