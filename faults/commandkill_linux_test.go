//go:build unix && faults

package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/internal/proctest"
	"github.com/weirflow/weir/shell"
)

// TestWorkerKillCommands SIGKILLs worker processes running shell commands
// that start a child and wait for it, scaled(6) times: every other kill
// once each of the worker's four slots runs such a command, the others at
// a random moment 0–50 ms after four more jobs were enqueued (while jobs
// are claimed and commands start). After each kill no process the worker
// started (found by a variable only its environment has) may remain: none
// outlives its worker. Then a last worker, once the commands are let
// finish, completes every job, and the invariants hold.
func TestWorkerKillCommands(t *testing.T) {
	rounds := scaled(6)
	rp := StartRedisT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const ns = "cmdkill"
	rdb := newRedisClient(t, rp.Addr())
	store := newStore(t, rdb, ns, killConfig())
	cl := client.New(store)
	opts := workerOpts{addr: rp.Addr(), ns: ns, lease: killLease, sweep: killSweep, conc: 4, shell: true, stderr: &childLog{}}
	defer opts.stderr.check(t)
	dir := t.TempDir()
	// Until the test creates the file release, a command starts a child
	// that outlives it by far, and waits for it.
	payload := shell.Payload{Run: `if [ ! -e release ]; then sleep 60 & wait; fi; echo done`, Dir: dir}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	// a variable no process but a worker's descendants has
	markOf := func(name string) string {
		return fmt.Sprintf("WEIR_FAULT_MARK=%d-%d-%s", os.Getpid(), time.Now().UnixNano(), name)
	}

	var jobs []*client.Job[string]
	var killed, worst time.Duration
	procsAtKill := 0
	for round := range rounds {
		mark := markOf(fmt.Sprint(round))
		o := opts
		o.env = []string{mark}
		p, err := startWorker(t, o)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.waitLine("READY", 30*time.Second); !ok {
			t.Fatal("worker process did not start")
		}
		for i := range 4 {
			j, err := client.Enqueue(ctx, cl, shell.Queue(queueShell), payload, client.ID(fmt.Sprintf("cmd-%02d-%d", round, i)),
				client.MaxAttempts(20), client.Backoff(time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			jobs = append(jobs, j)
		}
		if round%2 == 0 {
			// every slot runs a command whose child sleeps (jobs never
			// complete before the release: there are always 4 to run)
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				ps, err := proctest.WithEnv(mark)
				if err != nil {
					t.Fatal(err)
				}
				if n := countSleeps(ps); n >= 4 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("round %d: the worker's commands did not all start: %v", round, ps)
				}
			}
		} else {
			time.Sleep(time.Duration(rng.IntN(51)) * time.Millisecond)
		}
		ps, err := proctest.WithEnv(mark)
		if err != nil {
			t.Fatal(err)
		}
		procsAtKill += len(ps)
		p.kill() // SIGKILL, reaped: nothing of the worker is left but what it started
		start := time.Now()
		for {
			if ps, err = proctest.WithEnv(mark); err != nil {
				t.Fatal(err)
			}
			if len(ps) == 0 {
				break
			}
			if time.Since(start) > 30*time.Second {
				for _, p := range ps {
					t.Errorf("round %d: process %d (%s) outlived its worker by 30 s", round, p.Pid, p.What)
					p.Kill()
				}
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		d := time.Since(start)
		killed += d
		worst = max(worst, d)
	}

	if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	o := opts
	o.env = []string{markOf("last")}
	last, err := startWorker(t, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := last.waitLine("READY", 30*time.Second); !ok {
		t.Fatal("worker process did not start")
	}
	for _, j := range jobs {
		if out, err := j.Wait(ctx); err != nil || out != "done\n" {
			t.Errorf("job %s: %q, %v; want it done by a later worker", j.ID(), out, err)
		}
	}
	if err := last.stop(); err != nil {
		t.Errorf("the last worker: %v", err)
	}
	killInvariants(t, ctx, rdb, ns, "at the end")
	t.Logf("%d worker kills, %d processes of the workers' (commands, their children, watchdogs) seen just before them, all gone %v after a kill on average, at worst %v; %d jobs completed",
		rounds, procsAtKill, killed/time.Duration(rounds), worst, len(jobs))
}

// countSleeps counts the sleep commands among ps.
func countSleeps(ps []proctest.Proc) int {
	return len(slices.DeleteFunc(slices.Clone(ps), func(p proctest.Proc) bool { return !strings.HasPrefix(p.What, "sleep ") }))
}
