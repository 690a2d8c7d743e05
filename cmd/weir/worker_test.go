package main

import (
	"bufio"
	"context"
	weirpkg "github.com/weirflow/weir"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/redisstore"
)

// weir worker refuses a lease or grace that cannot work, from a flag or
// from the environment, naming where it came from; a flag beats the
// variable.
func TestWorkerTimingRefused(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"--lease", "0"}, "--lease 0s: want whole milliseconds in [1ms, 24h0m0s]"},
		{nil, []string{"--lease", "-5s"}, "--lease -5s: want whole milliseconds"},
		{nil, []string{"--lease", "1500us"}, "--lease 1.5ms: want whole milliseconds"},
		{nil, []string{"--lease", "25h"}, "--lease 25h0m0s: want whole milliseconds in [1ms, 24h0m0s]"},
		{nil, []string{"--lease", "soon"}, `invalid argument "soon" for "--lease"`},
		{nil, []string{"--grace", "-1s"}, "--grace -1s: want 0 or more"},
		{nil, []string{"--grace", "1 minute"}, `invalid argument "1 minute" for "--grace"`},
		{[]string{"WEIR_LEASE=abc"}, nil, `WEIR_LEASE "abc": not a duration`},
		{[]string{"WEIR_LEASE=0s"}, nil, "WEIR_LEASE 0s: want whole milliseconds"},
		{[]string{"WEIR_GRACE=-2s"}, nil, "WEIR_GRACE -2s: want 0 or more"},
		{[]string{"WEIR_GRACE=5"}, nil, `WEIR_GRACE "5": not a duration`},
		// the flag is checked, not the variable it beats
		{[]string{"WEIR_LEASE=10s"}, []string{"--lease", "0s"}, "--lease 0s: want"},
	} {
		// a worker that accepted the setting would run until killed
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		cmd := exec.CommandContext(ctx, binary(t), append([]string{"worker"}, c.args...)...)
		cmd.Env = append(append(os.Environ(), "WEIR_LEASE=", "WEIR_GRACE=", "WEIR_REDIS_URL=redis://"+m.Addr()), c.env...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		cancel()
		if code := cmd.ProcessState.ExitCode(); code != exitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v worker %v: %v, stderr %q; want status %d and %q", c.env, c.args, err, stderr.String(), exitUsage, c.want)
		}
	}
}

// startedWorker is a weir worker process the test started.
type startedWorker struct {
	cmd    *exec.Cmd
	banner string // its first line on stderr: queues, concurrency, lease, grace
	rest   chan string
}

// startWeirWorker starts weir worker with args and env (added to the
// test's) and waits for its first line on stderr, printed once it runs.
// The test's cleanup kills it if it still runs.
func startWeirWorker(t *testing.T, env []string, args ...string) *startedWorker {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"worker"}, args...)...)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &startedWorker{cmd: cmd, rest: make(chan string, 1)}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	br := bufio.NewReader(stderr)
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatalf("weir worker %v printed no line: %v %q", args, err, line)
	}
	w.banner = line
	go func() {
		b, _ := io.ReadAll(br)
		w.rest <- string(b)
	}()
	return w
}

// wait waits for the process to exit and returns its error and the rest
// of its stderr.
func (w *startedWorker) wait() (error, string) {
	err := w.cmd.Wait()
	return err, <-w.rest
}

// testStore opens the store of namespace ns on the Redis at addr.
func testStore(t *testing.T, addr, ns string) *redisstore.Store {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { rdb.Close() })
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// waitFile waits for the file at path to exist.
func waitFile(t *testing.T, path string, what string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never happened (no %s)", what, path)
		}
	}
}

// weir worker --grace lets a command that runs longer than the old fixed
// 5 s grace finish after SIGTERM, and WEIR_LEASE sets the lease its jobs
// are held with.
func TestWorkerGraceAndLease(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	ns := "timing"
	env := []string{"WEIR_REDIS_URL=redis://" + m.Addr()}
	dir := t.TempDir()
	file := filepath.Join(dir, "slow.yaml")
	// the command runs 6 s after SIGTERM (sent once it started)
	doc := "id: slow\ntasks:\n  - name: slow\n    run: ': > started; sleep 6; echo done'\n"
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	weir(t, "", env, "submit", file, "--namespace", ns).WantCode(t, 0)
	w := startWeirWorker(t, append(env, "WEIR_LEASE=90s", "WEIR_GRACE=1s"), "--namespace", ns, "--grace", "1m")
	if !strings.Contains(w.banner, "lease 1m30s, grace 1m0s") {
		t.Errorf("banner %q: want lease 1m30s (WEIR_LEASE) and grace 1m0s (--grace beats WEIR_GRACE)", w.banner)
	}
	waitFile(t, filepath.Join(dir, "started"), "the command's start")

	// The lease is the worker's: at least 60 s ahead (heartbeats renew it
	// every 30 s), where the default would be at most 30 s.
	store := testStore(t, m.Addr(), ns)
	ctx := context.Background()
	j, err := store.GetJob(ctx, weirpkg.TaskJobID("slow", "slow"))
	if err != nil || j.Lease == nil {
		t.Fatalf("job %+v, %v: want it running with a lease", j, err)
	}
	if left := time.Until(j.Lease.Deadline); left < 50*time.Second {
		t.Errorf("lease deadline %v from now, want the 90 s lease", left)
	}

	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err, stderr := w.wait()
	if err != nil || !strings.Contains(stderr, "weir worker: stopped") {
		t.Fatalf("worker after SIGTERM: %v\n%s", err, stderr)
	}
	r := weir(t, "", env, "status", "slow", "--json", "--namespace", ns)
	r.WantCode(t, 0)
	tr := recordTask(t, decodeRecord(t, r), "slow")
	if tr.State != "completed" || tr.Attempts != 1 || tr.Result != "done\n" {
		t.Errorf("slow: %s after %d attempts, result %#v (error %v); want it completed within the grace", tr.State, tr.Attempts, tr.Result, deref(tr.Error))
	}
}
