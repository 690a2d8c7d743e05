//go:build unix

package faults

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ErrNoRedisServer reports that redis-server is not on PATH.
var ErrNoRedisServer = errors.New("faults: redis-server not found on PATH")

// RedisProc is one redis-server process owned by a test: its port, its
// directory (AOF files, log) and its configuration survive Kill and Restart,
// so a restarted server reloads what the killed one had persisted.
type RedisProc struct {
	// Port is the loopback port the server listens on; it stays the same
	// across restarts.
	Port int
	// Dir is the server's working directory (dir, AOF, log file).
	Dir string
	// Args are the extra "--name value" config arguments given at start.
	Args []string

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{}
	repairs []string // RepairAOFTail's cuts, one per Start that cut
}

// FreePort returns a loopback TCP port that was free when asked. Another
// process may take it before it is used; StartRedis retries on that.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// StartRedis starts a redis-server on a free loopback port with its working
// directory in dir (created if missing), persistence off unless args say
// otherwise (args are redis-server config pairs such as "--appendonly",
// "yes"), and waits until it answers PING. The caller stops it with Stop
// (tests: t.Cleanup(func() { p.Stop() })).
func StartRedis(dir string, args ...string) (*RedisProc, error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, ErrNoRedisServer
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var last error
	for range 20 {
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		p := &RedisProc{Port: port, Dir: dir, Args: append([]string(nil), args...)}
		if err := p.Start(); err != nil {
			last = err
			continue
		}
		return p, nil
	}
	return nil, fmt.Errorf("faults: start redis-server: %w", last)
}

// Addr returns "127.0.0.1:port".
func (p *RedisProc) Addr() string { return "127.0.0.1:" + strconv.Itoa(p.Port) }

// URL returns a redis:// URL for database 0 of the server.
func (p *RedisProc) URL() string { return "redis://" + p.Addr() + "/0" }

// Pid returns the running server's pid, or 0 when it is not running.
func (p *RedisProc) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Start (re)starts the server on p.Port with p.Dir and p.Args and waits up to
// 10 s until it answers PING (an AOF reload counts as started once it
// answers). It fails if the server is already running. An AOF left by an
// earlier run that ends in a torn transition is first cut back to its last
// whole one (RepairAOFTail: redis-server 7.0 would apply a part of it at a
// later restart); AOFRepairs lists the cuts.
func (p *RedisProc) Start() error {
	p.mu.Lock()
	if p.cmd != nil {
		p.mu.Unlock()
		return errors.New("faults: redis-server already running")
	}
	cut, err := RepairAOFTail(filepath.Join(p.Dir, aofDir))
	if err != nil {
		p.mu.Unlock()
		return err
	}
	if cut != "" {
		p.repairs = append(p.repairs, cut)
	}
	argv := []string{
		"--port", strconv.Itoa(p.Port),
		"--bind", "127.0.0.1",
		"--dir", p.Dir,
		"--save", "",
		"--appendonly", "no",
		"--daemonize", "no",
		"--logfile", "redis.log",
	}
	argv = append(argv, p.Args...) // later pairs override earlier ones
	cmd := exec.Command("redis-server", argv...)
	cmd.Dir = p.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		p.mu.Unlock()
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	p.cmd, p.done = cmd, done
	p.mu.Unlock()

	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			p.mu.Lock()
			p.cmd, p.done = nil, nil
			p.mu.Unlock()
			return fmt.Errorf("faults: redis-server on port %d exited at start: %s", p.Port, p.logTail())
		default:
		}
		if err := pingRaw(p.Addr()); err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = p.Kill()
	return fmt.Errorf("faults: redis-server on port %d did not answer PING within 10s: %s", p.Port, p.logTail())
}

// AOFRepairs returns what Start cut from torn AOF tails so far, one line
// per cut (RepairAOFTail).
func (p *RedisProc) AOFRepairs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.repairs...)
}

// Kill sends SIGKILL to the server (no shutdown, no final fsync) and waits
// for it to exit. Killing a stopped server is a no-op.
func (p *RedisProc) Kill() error {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.cmd, p.done = nil, nil
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
	return nil
}

// Restart kills the server with SIGKILL and starts it again with the same
// port, directory and configuration.
func (p *RedisProc) Restart() error {
	if err := p.Kill(); err != nil {
		return err
	}
	return p.Start()
}

// Stop kills the server. It is safe to call more than once and is meant for
// t.Cleanup; the directory is left to the test's TempDir cleanup.
func (p *RedisProc) Stop() { _ = p.Kill() }

// logTail returns the last lines of the server's log, for error messages.
func (p *RedisProc) logTail() string {
	b, err := os.ReadFile(filepath.Join(p.Dir, "redis.log"))
	if err != nil {
		return "(no log)"
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, " | ")
}

// LogLines returns the lines of the server's log (all its runs: the log
// file is appended to across restarts) that contain any of subs.
func (p *RedisProc) LogLines(subs ...string) []string {
	b, err := os.ReadFile(filepath.Join(p.Dir, "redis.log"))
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		for _, s := range subs {
			if strings.Contains(l, s) {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

// pingRaw sends PING over a fresh connection and expects +PONG; it does not
// depend on a Redis client library.
func pingRaw(addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("faults: PING answered %q", strings.TrimSpace(line))
	}
	return nil
}

// FaultScale returns WEIR_FAULT_SCALE as a positive integer (default 1).
func FaultScale() int {
	n, err := strconv.Atoi(os.Getenv("WEIR_FAULT_SCALE"))
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// StartRedisT starts a redis-server for a test (see StartRedis) in a fresh
// t.TempDir, stops it by pid in t.Cleanup (also when the test fails), and
// fails the test if the server cannot start.
func StartRedisT(t testing.TB, args ...string) *RedisProc {
	t.Helper()
	p, err := StartRedis(t.TempDir(), args...)
	if err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	t.Cleanup(p.Stop)
	return p
}

// aofDir is redis-server's default appenddirname (Redis 7 multi-part AOF).
const aofDir = "appendonlydir"

// CopyAOF copies the server's AOF directory, as it is on disk now, to a new
// directory under p.Dir and returns its path. A copy taken while the server
// writes may end in a torn command, which redis-server drops at load
// (aof-load-truncated, on by default), as after a machine crash.
func (p *RedisProc) CopyAOF() (string, error) {
	src := filepath.Join(p.Dir, aofDir)
	dst, err := os.MkdirTemp(p.Dir, "aofcopy-")
	if err != nil {
		return "", err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			return "", err
		}
	}
	return dst, nil
}

// RestoreAOF replaces the AOF directory of a stopped server with copy (from
// CopyAOF), so that the next Start loads the older state: what a machine
// crash loses when the last writes never reached the disk.
func (p *RedisProc) RestoreAOF(copy string) error {
	if p.Pid() != 0 {
		return errors.New("faults: RestoreAOF on a running server")
	}
	dir := filepath.Join(p.Dir, aofDir)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Rename(copy, dir)
}
