package shell_test

import (
	"bufio"
	"context"
	"fmt"
	"github.com/weirflow/weir"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/internal/proctest"
	"github.com/weirflow/weir/shell"
	"github.com/weirflow/weir/worker"
)

// envHelper makes the test binary a worker process (TestWorkerProcess):
// it runs the command in envHelperRun as a shell job and blocks.
const (
	envHelper    = "WEIR_SHELL_TEST_WORKER"
	envHelperRun = "WEIR_SHELL_TEST_RUN"
)

// TestWorkerProcess is the body of the worker process the tests below
// start and kill; run normally, it is skipped.
func TestWorkerProcess(t *testing.T) {
	if os.Getenv(envHelper) != "1" {
		t.Skip("runs only as the worker process of TestCommandDiesWithWorker")
	}
	ctx := context.Background()
	store := memstore.New()
	w := worker.New(store, worker.Config{})
	shell.Register(w, []string{"sh"}, weir.DefaultLimits().MaxResult)
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Enqueue(ctx, client.New(store), shell.Queue("sh"), shell.Payload{Run: os.Getenv(envHelperRun)}); err != nil {
		t.Fatal(err)
	}
	fmt.Println("READY")
	select {} // until killed
}

// A worker process killed with SIGKILL takes its running command with it,
// and what the command started in the background: the watchdog in the
// command's group kills the group.
func TestCommandDiesWithWorker(t *testing.T) {
	t.Parallel()
	sh, child, _ := killWorkerProcess(t, false)
	for _, p := range proctest.GoneWithin(30*time.Second, sh, child) {
		t.Errorf("%s (pid %d) still runs 30 s after its worker was killed", p.What, p.Pid)
	}
}

// With its watchdog gone (killed by someone), a command still dies with
// its worker on Linux: the kernel sends sh the parent-death signal. What
// sh started then lives on.
func TestCommandDiesWithWorkerWithoutWatchdog(t *testing.T) {
	t.Parallel()
	sh, child, watchdog := killWorkerProcess(t, true)
	if !watchdog {
		t.Fatal("found no watchdog in the command's group")
	}
	for _, p := range proctest.GoneWithin(30*time.Second, sh) {
		t.Errorf("%s (pid %d) still runs 30 s after its worker was killed", p.What, p.Pid)
	}
	child.Kill()
}

// killWorkerProcess starts a worker process running a command that starts
// a child and waits for it, SIGKILLs it (after the command's watchdog,
// with killWatchdog) and returns the command's sh and child, and whether a
// watchdog was found in their group.
func killWorkerProcess(t *testing.T, killWatchdog bool) (sh, child proctest.Proc, watchdog bool) {
	dir := t.TempDir()
	run := `echo $$ > sh.tmp && mv sh.tmp sh.pid; sleep 120 & echo $! > child.tmp && mv child.tmp child.pid; wait`
	cmd := exec.Command(os.Args[0], "-test.run=^TestWorkerProcess$", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), envHelper+"=1", envHelperRun+"="+run)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if l, err := bufio.NewReader(out).ReadString('\n'); err != nil || l != "READY\n" {
		t.Fatalf("worker process: %q, %v", l, err)
	}
	sh = proctest.WaitPidFile(t, filepath.Join(dir, "sh.pid"))
	child = proctest.WaitPidFile(t, filepath.Join(dir, "child.pid"))
	t.Cleanup(func() { sh.Kill(); child.Kill() })
	members, err := proctest.GroupMembers(sh.Group)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		if strings.Contains(m.What, "kill -s KILL 0") {
			watchdog = true
			if killWatchdog {
				m.Kill()
				if len(proctest.GoneWithin(30*time.Second, m)) > 0 {
					t.Fatalf("the watchdog %d outlived SIGKILL", m.Pid)
				}
			}
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	return sh, child, watchdog
}

// A command is not killed while its worker lives, however many of the
// worker's threads end meanwhile: the parent-death signal fires when the
// thread that forked the child ends, and goroutines that exit locked to
// their thread end it.
func TestCommandOutlivesWorkerThreads(t *testing.T) {
	ctx, store := shellWorker(t)
	var jobs []*client.Job[string]
	for range 8 {
		j, err := client.Enqueue(ctx, client.New(store), shell.Queue("sh"), shell.Payload{Run: "sleep 1; echo ok"})
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	// Ends threads, one by one, for as long as the commands run.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			done := make(chan struct{})
			go func() {
				runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
				close(done)
			}()
			<-done
			runtime.Gosched()
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	for _, j := range jobs {
		if out, err := j.Wait(ctx); err != nil || out != "ok\n" {
			t.Errorf("job %s: %q, %v; want it to run to its end", j.ID(), out, err)
		}
	}
}

// A command that ends normally leaves what it started in the background
// running, as without the watchdog, and the watchdog is gone: the only
// process left in the command's group is the background one.
func TestCommandEndLeavesBackgroundProcess(t *testing.T) {
	ctx, store := shellWorker(t)
	j, err := client.Enqueue(ctx, client.New(store), shell.Queue("sh"), shell.Payload{Run: "sleep 60 </dev/null >/dev/null 2>&1 & echo $!"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := j.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("output %q", out)
	}
	bg, ok := proctest.Find(pid, "background sleep")
	if !ok {
		t.Fatalf("the background process %d is gone", pid)
	}
	defer bg.Kill()
	members, err := proctest.GroupMembers(bg.Group)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		if m.Pid != pid {
			t.Errorf("process %d (%s) is still in the command's group %d", m.Pid, m.What, bg.Group)
		}
	}
	if !bg.Alive() {
		t.Errorf("the background process %d was killed", pid)
	}
}
