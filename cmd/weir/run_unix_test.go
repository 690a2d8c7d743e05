//go:build unix

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An interrupt ends `weir run` at once with status 1, killing the running
// command.
func TestRunInterrupted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := writeFile(t, "sleep.yaml", "tasks:\n  - name: nap\n    run: echo $$ > "+filepath.Join(dir, "pid")+"; exec sleep 600\n")
	cmd := exec.Command(binary(t), "run", p)
	cmd.Env = append(os.Environ(), "WEIR_REDIS_URL=", "WEIR_REDIS_CLUSTER=")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "nap") && strings.Contains(sc.Text(), "running (attempt 1)") {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	// Wait for the command to have started (it writes its PID first).
	var pid int
	for pid == 0 {
		if b, err := os.ReadFile(filepath.Join(dir, "pid")); err == nil && strings.HasSuffix(string(b), "\n") {
			if pid, err = strconv.Atoi(strings.TrimSpace(string(b))); err != nil {
				t.Fatal(err)
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "weir: interrupted: workflow ") {
		t.Fatalf("after SIGINT: %v, stderr %q", err, stderr.String())
	}
	// The command was killed: signalling its process group fails.
	if err := syscall.Kill(-pid, 0); err == nil && !zombie(pid) {
		t.Errorf("process group %d still alive after weir ended", pid)
	}
}

// zombie reports whether pid is a dead process not yet reaped (in a
// container whose init does not reap, a killed orphan stays one).
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // gone
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] == "Z"
}
