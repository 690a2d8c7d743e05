// Package redistest gives weir's tests their Redis servers: a miniredis of
// the test's own, the redis-server named by WEIR_REDIS_URL (shared by every
// package's tests, which go test runs at the same time, so each test keeps
// to namespaces of its own, removed when it ends), the Redis Cluster whose
// seed addresses WEIR_REDIS_CLUSTER lists, and redis-server processes of a
// test's own (Private) for the tests that change server-wide state (the
// script cache and function libraries, maxmemory, SLOWLOG). The tests'
// clock is package testclock.
package redistest

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Wanted reports whether the tests should use a real redis-server: when
// WEIR_REDIS_URL is set.
func Wanted() bool { return os.Getenv("WEIR_REDIS_URL") != "" }

// ServerEnv names the server binary Private starts (a path, or a name
// looked up in PATH; default redis-server): .ci/run's server matrix sets
// it to the binary of the server under test (Valkey, a newer Redis), so
// that the tests of server-wide state run on that server too.
const ServerEnv = "WEIR_REDIS_SERVER"

// Private starts a server of the test's own (ServerEnv, default
// redis-server) on a free loopback port (no persistence, args appended to
// its command line), stops it when the test ends, and returns its options.
// It skips the test when no real server is wanted (WEIR_REDIS_URL unset),
// the binary is not installed, or it is one redisstore refuses (KeyDB).
func Private(t testing.TB, args ...string) *redis.Options {
	t.Helper()
	if !Wanted() {
		t.Skip("needs a real redis-server (WEIR_REDIS_URL)")
	}
	name := os.Getenv(ServerEnv)
	if name == "" {
		name = "redis-server"
	}
	bin, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed (%v)", name, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	argv := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir()}, args...)
	cmd := exec.Command(bin, argv...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	opt := &redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port)}
	c := redis.NewClient(opt)
	defer func() { _ = c.Close() }()
	for i := 0; ; i++ {
		err := c.Ping(context.Background()).Err()
		if err == nil {
			if what := refused(c); what != "" {
				t.Skipf("%s (%s) is %s", ServerEnv, bin, what)
			}
			return opt
		}
		if i == 500 {
			t.Fatalf("private redis-server did not start: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
