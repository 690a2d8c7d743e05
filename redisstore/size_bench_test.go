package redisstore

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
)

// BenchmarkServerCPUSize measures whether a unit costs the server the same
// whatever the size (the performance issue's "flat in size"), on the
// function library with cpuClients clients, as BenchmarkServerCPU does:
//
//   - fanin/tasks=N and chain/tasks=N: workflows of N tasks (N−1 roots
//     joined by one; a chain, run so that each promoted task is alone in
//     its queue), N = 10, 1,000 and 10,000 (runWorkflows says how the
//     clients share them). Metrics submit-*: the submit of the
//     workflows (staging and the drain calls of their roots included),
//     per task submitted; then the others: per task run, fan-in tasks
//     claimed and finished 10 a call, chain tasks one a call. A client
//     runs its workflows whole when that is at most twice its share of
//     b.N (the workflows of 10: their joins and ends are in the figure),
//     else only its share (of 1,000 or 10,000 tasks: no join nor end).
//   - plain-job/retained=R and chain/tasks=100/retained=R: BenchmarkServerCPU's
//     plain job (enqueued 100 a call, claimed and finished 50 a call) and
//     a chain of 100 as above, with R = 0 and R = WEIR_RETAINED (default
//     1,000,000) retained records in the namespace: ended and not yet
//     removed, written by the store's own calls (fillRetained), nine tenths
//     plain jobs on the plain-job queues, the rest tasks of 10-task chains
//     on the chains' first queues.
//
// Under callgrind, filling R records takes long: BenchmarkFillRetained
// fills a plain redis-server and saves it, and a callgrind server started
// on that dump (its --dir and --dbfilename) is not filled again (the fill
// leaves a marker key) nor flushed. go test's first run of each
// sub-benchmark, of one unit, to size the run, does nothing here.
func BenchmarkServerCPUSize(b *testing.B) {
	if !realRedis() && callgrindFromEnv() == nil {
		b.Skip("set WEIR_REDIS_URL to measure on a private redis-server (or WEIR_CALLGRIND)")
	}
	for _, shape := range []string{"fanin", "chain"} {
		for _, n := range []int{10, 1000, 10000} {
			b.Run(shape+"/tasks="+strconv.Itoa(n), func(b *testing.B) {
				if b.N == 1 {
					return
				}
				rdb, s, cg := cpuStore(b, PathFunctions)
				runWorkflows(b, rdb, s, cg, shape, n, true)
			})
		}
	}
	for _, r := range []int{0, retainedFromEnv(b)} {
		b.Run("plain-job/retained="+strconv.Itoa(r), func(b *testing.B) {
			if b.N == 1 {
				return
			}
			rdb, s, cg := retainedStore(b, r)
			per := b.N/cpuClients + 1
			tag := runTag()
			b.ResetTimer()
			measureClients(b, rdb, cg, cpuClients, "", func(c int) int {
				q := "p" + strconv.Itoa(c)
				if !enqueuePlain(b, s, q, q+"-"+tag+"-", "", per) {
					return 0
				}
				done := 0
				for done < per {
					n, _ := drain(b, s, engine.ClaimParams{Queues: []string{q}, Max: 50, Lease: time.Minute})
					if n == 0 {
						break
					}
					done += n
				}
				return done
			})
		})
		b.Run("chain/tasks=100/retained="+strconv.Itoa(r), func(b *testing.B) {
			if b.N == 1 {
				return
			}
			rdb, s, cg := retainedStore(b, r)
			runWorkflows(b, rdb, s, cg, "chain", 100, false)
		})
	}
}

// retainedFromEnv is WEIR_RETAINED, the number of retained records of
// BenchmarkServerCPUSize's retained scenarios (default 1,000,000).
func retainedFromEnv(b *testing.B) int {
	v := os.Getenv("WEIR_RETAINED")
	if v == "" {
		return 1_000_000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("WEIR_RETAINED %q: want a count of records, at least 1", v)
	}
	return n
}

// runTag returns a tag for the IDs of one run, so that runs on a server
// that is not flushed (retainedStore) write new jobs and workflows.
func runTag() string { return fmt.Sprintf("%06x", time.Now().UnixNano()&0xffffff) }

// runWorkflows submits the workflows of shape ("fanin" or "chain") and n
// tasks, then runs them, as BenchmarkServerCPUSize says; with
// submitMetrics it reports the submits' cost (metrics submit-*).
//
// A workflow of fewer than 16 · 10 tasks is a client's own, in its queue
// (a chain in a queue of its own), and each client submits whole
// workflows, at least one. A larger one is shared by the clients, so that
// a unit is measured on workflows of that size without each of the 16
// clients submitting one: a fan-in's root i is in client i mod 16's
// queue, a chain is 16 chains side by side (task i after task i − 16,
// in client i mod 16's queue of that workflow), and as many are
// submitted as the clients' shares of b.N need.
func runWorkflows(b *testing.B, rdb *redis.Client, s *Store, cg *callgrindServer, shape string, n int, submitMetrics bool) {
	per := b.N/cpuClients + 1
	fanin := shape == "fanin"
	shared := n >= 10*cpuClients
	queue := func(c, w int) string {
		if fanin {
			return "qf" + strconv.Itoa(c)
		}
		return "qa" + strconv.Itoa(c) + "." + strconv.Itoa(w)
	}
	// w workflows for each of the submitting clients; target units a
	// client runs
	var w, submitters, target int
	if shared {
		mine := n / cpuClients // a client's tasks of one workflow
		if fanin {
			mine = (n - 1) / cpuClients
		}
		w, submitters, target = 1, (per+mine-1)/mine, per
	} else {
		w, submitters = (per+n-1)/n, cpuClients
		target = per
		if w*n <= 2*per {
			target = w * n
		}
	}
	tag := runTag()
	b.ResetTimer()
	plan := func(c, k int) engine.Plan {
		p := engine.Plan{ID: shape[:1] + strconv.Itoa(c) + "." + strconv.Itoa(k) + "-" + tag}
		for i := range n {
			ts := engine.TaskSpec{Name: "t" + strconv.Itoa(i), Queue: queue(c, k)}
			switch {
			case shared && fanin:
				ts.Queue = queue(i%cpuClients, 0)
			case shared:
				ts.Queue = queue(i%cpuClients, c)
			}
			switch {
			case fanin && i == n-1:
				for d := range n - 1 {
					ts.After = append(ts.After, "t"+strconv.Itoa(d))
				}
			case !fanin && shared && i >= cpuClients:
				ts.After = []string{"t" + strconv.Itoa(i-cpuClients)}
			case !fanin && !shared && i > 0:
				ts.After = []string{"t" + strconv.Itoa(i-1)}
			}
			p.Tasks = append(p.Tasks, ts)
		}
		return p
	}
	submit := func(c int) int {
		if c >= submitters {
			return 0
		}
		for k := range w {
			if _, err := s.Submit(bg, engine.SubmitParams{Plan: plan(c, k)}); err != nil {
				b.Error(err)
				return 0
			}
		}
		return w * n
	}
	if submitMetrics {
		measureClients(b, rdb, cg, cpuClients, "submit-", submit)
	} else {
		var wg sync.WaitGroup
		for c := range cpuClients {
			wg.Go(func() { submit(c) })
		}
		wg.Wait()
	}
	if b.Failed() {
		b.FailNow()
	}
	measureClients(b, rdb, cg, cpuClients, "", func(c int) int {
		if fanin { // one queue holds all of the client's tasks
			return runQueue(b, s, engine.ClaimParams{Queues: []string{queue(c, 0)}, Max: 10, Lease: time.Minute}, target)
		}
		rounds := w // the client's chains, one after another
		if shared {
			rounds = submitters
		}
		done := 0
		for k := 0; k < rounds && done < target; k++ {
			done += runQueue(b, s, engine.ClaimParams{Queues: []string{queue(c, k)}, Max: 1, Lease: time.Minute}, target-done)
		}
		return done
	})
}

// runQueue claims and finishes jobs of cp's queues, each finish carrying
// the next claim, until the queue is empty or it finished at least want
// (the last finish then claims nothing); it returns the jobs finished.
func runQueue(b *testing.B, s *Store, cp engine.ClaimParams, want int) int {
	claimed, err := s.Claim(bg, cp)
	if err != nil {
		b.Error(err)
		return 0
	}
	done := 0
	for len(claimed) > 0 {
		outs := make([]engine.Outcome, 0, len(claimed))
		for _, c := range claimed {
			outs = append(outs, engine.Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted})
		}
		done += len(outs)
		fp := engine.FinishParams{Outcomes: outs}
		if done < want {
			fp.Claim = &cp
		}
		res, err := s.Finish(bg, fp)
		if err != nil {
			b.Error(err)
			return done
		}
		claimed = res.Claimed
	}
	return done
}

// retainedMarker is the key (outside every weir namespace) where
// fillRetained notes how many records it retained.
const retainedMarker = "weirbench:retained"

// retainedStore returns the server, the store and the callgrind server of
// a retained scenario: with retained 0, cpuStore's (flushed); else one
// whose namespace holds retained records (fillRetained), not flushed.
func retainedStore(b *testing.B, retained int) (*redis.Client, *Store, *callgrindServer) {
	if retained == 0 {
		return cpuStore(b, PathFunctions)
	}
	rdb, cg := cpuServer(b, false)
	s := cpuOpen(b, rdb, PathFunctions)
	fillRetained(b, rdb, s, retained)
	return rdb, s, cg
}

// fillRetained makes the namespace of s hold n retained records (ended,
// not yet removed: the default retention is 7 days) written by the
// store's own calls, unless the server's marker says it already does (a
// server started on a dump of BenchmarkFillRetained): nine tenths plain
// jobs on queues p0…p15, the rest the tasks of 10-task chains on queues
// qa0.0…qa15.0 (the queues of BenchmarkServerCPUSize's scenarios). It
// flushes the server first.
func fillRetained(b *testing.B, rdb *redis.Client, s *Store, n int) {
	if v, _ := rdb.Get(bg, retainedMarker).Result(); v == strconv.Itoa(n) {
		return
	}
	if err := rdb.FlushAll(bg).Err(); err != nil {
		b.Fatal(err)
	}
	plain := n - n/10
	wfs := (n - plain) / 10
	var wg sync.WaitGroup
	for c := range cpuClients {
		wg.Go(func() {
			q := "p" + strconv.Itoa(c)
			mine := plain/cpuClients + btoi(c < plain%cpuClients)
			if !enqueuePlain(b, s, q, "old"+strconv.Itoa(c)+"-", "", mine) {
				return
			}
			if got := runQueue(b, s, engine.ClaimParams{Queues: []string{q}, Max: 50, Lease: time.Minute}, mine); got != mine {
				b.Errorf("fill: %d plain jobs of %d ended on %s", got, mine, q)
				return
			}
			qa := "qa" + strconv.Itoa(c) + ".0"
			w := wfs/cpuClients + btoi(c < wfs%cpuClients)
			for k := range w {
				p := cpuPlan("x", 10, false)
				p.ID = "old" + strconv.Itoa(c) + "." + strconv.Itoa(k)
				for i := range p.Tasks {
					p.Tasks[i].Queue = qa
				}
				if _, err := s.Submit(bg, engine.SubmitParams{Plan: p}); err != nil {
					b.Error(err)
					return
				}
			}
			if got := runQueue(b, s, engine.ClaimParams{Queues: []string{qa}, Max: 50, Lease: time.Minute}, 10*w); got != 10*w {
				b.Errorf("fill: %d tasks of %d ended on %s", got, 10*w, qa)
			}
		})
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	if err := rdb.Set(bg, retainedMarker, n, 0).Err(); err != nil {
		b.Fatal(err)
	}
}

func btoi(v bool) int {
	if v {
		return 1
	}
	return 0
}

// BenchmarkFillRetained fills the redis-server of WEIR_FILL_URL as
// BenchmarkServerCPUSize's retained scenarios want it (fillRetained,
// WEIR_RETAINED records) and saves it (SAVE, to its dump file), so that a
// server under callgrind started on that dump measures without filling.
func BenchmarkFillRetained(b *testing.B) {
	url := os.Getenv("WEIR_FILL_URL")
	if url == "" {
		b.Skip("set WEIR_FILL_URL to the redis-server to fill")
	}
	if b.N > 1 {
		return
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		b.Fatal(err)
	}
	opt.ReadTimeout = -1
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	start := time.Now()
	fillRetained(b, rdb, cpuOpen(b, rdb, PathFunctions), retainedFromEnv(b))
	if err := rdb.Save(bg).Err(); err != nil {
		b.Fatal(err)
	}
	info, _ := rdb.Info(bg, "memory").Result()
	used, _, _ := strings.Cut(info[strings.Index(info, "used_memory:"):], "\r")
	b.Logf("filled in %v: %d keys, %s", time.Since(start).Round(time.Second), rdb.DBSize(bg).Val(), used)
}
