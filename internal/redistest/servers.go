package redistest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"
	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/internal/rediskeys"
)

// Server is one Redis server a test can run on.
type Server struct {
	// Name is "miniredis" or "redis" (the server of WEIR_REDIS_URL): the
	// name of a subtest per server.
	Name string
	// URL is the server's redis:// URL (WEIR_REDIS_URL as it is set).
	URL string
	// Options are URL parsed.
	Options *redis.Options
	// Mini is the miniredis, nil on a real server.
	Mini *miniredis.Miniredis
}

// Real reports whether the server is a redis-server.
func (s Server) Real() bool { return s.Mini == nil }

// Mini starts a miniredis that lives until t ends.
func Mini(t testing.TB) Server {
	t.Helper()
	m := miniredis.RunT(t)
	return Server{Name: "miniredis", URL: "redis://" + m.Addr() + "/0", Options: &redis.Options{Addr: m.Addr()}, Mini: m}
}

// MiniAs starts a miniredis that lives until t ends and answers INFO
// (with any arguments) with info, as another server would: the tests of
// how weir tells servers apart (redisstore.IdentifyServer). An info that
// starts with "-" is an error reply, the rest its text (an ACL without
// +info: "-NOPERM …").
func MiniAs(t testing.TB, info string) Server {
	t.Helper()
	s := Mini(t)
	s.Mini.Server().SetPreHook(func(c *server.Peer, cmd string, _ ...string) bool {
		if !strings.EqualFold(cmd, "info") {
			return false
		}
		if e, ok := strings.CutPrefix(info, "-"); ok {
			c.WriteError(e)
		} else {
			c.WriteBulk(info)
		}
		return true
	})
	return s
}

// Shared returns the redis-server of WEIR_REDIS_URL; it skips t when that
// is unset or names a server redisstore refuses (KeyDB: every store test
// would fail with the refusal, which redisstore's TestServerCheck checks),
// and fails it when the URL does not parse.
func Shared(t testing.TB) Server {
	t.Helper()
	url := os.Getenv("WEIR_REDIS_URL")
	if url == "" {
		t.Skip("needs a real redis-server (WEIR_REDIS_URL)")
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("WEIR_REDIS_URL: %v", err)
	}
	what, _ := sharedRefused.LoadOrStore(url, sync.OnceValue(func() string {
		c := redis.NewClient(opt)
		defer func() { _ = c.Close() }()
		return refused(c)
	}))
	if w := what.(func() string)(); w != "" {
		t.Skipf("WEIR_REDIS_URL is %s", w)
	}
	return Server{Name: "redis", URL: url, Options: opt}
}

// sharedRefused holds, per WEIR_REDIS_URL, a func returning what refused
// says of its server (asked once).
var sharedRefused sync.Map

// refused says why redisstore refuses the server of c, in words for a
// skip, or "" when it does not (or c does not answer INFO). It reads INFO
// as redisstore.IdentifyServer does (redisstore/server.go, which this
// package cannot import: redisstore's own tests import this one).
func refused(c *redis.Client) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := c.Info(ctx).Result()
	if err != nil {
		return ""
	}
	if strings.Contains(info, "\n# KeyDB") || strings.Contains(info, "\ncurrent_client_thread:") {
		return "KeyDB, which redisstore refuses (ErrUnsafeServer, docs/compatibility.md); redisstore's TestServerCheck checks the refusal"
	}
	return ""
}

// Default returns the server of the tests: the one of WEIR_REDIS_URL when
// it is set, else a miniredis of t's own.
func Default(t testing.TB) Server {
	t.Helper()
	if Wanted() {
		return Shared(t)
	}
	return Mini(t)
}

// Servers returns a miniredis of t's own and, when WEIR_REDIS_URL is set,
// its redis-server: the servers of a test that runs on each.
func Servers(t testing.TB) []Server {
	t.Helper()
	out := []Server{Mini(t)}
	if Wanted() {
		out = append(out, Shared(t))
	}
	return out
}

// Client returns a new client (a connection pool of its own) of the server
// at opt, closed when t ends.
func Client(t testing.TB, opt *redis.Options) *redis.Client {
	t.Helper()
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Cluster returns a client of the Redis Cluster whose seed addresses
// WEIR_REDIS_CLUSTER lists (comma-separated), closed when t ends; it skips
// t when that is unset, and fails it when the cluster does not answer.
func Cluster(t testing.TB) *redis.ClusterClient {
	t.Helper()
	addrs := os.Getenv("WEIR_REDIS_CLUSTER")
	if addrs == "" {
		t.Skip("WEIR_REDIS_CLUSTER is not set")
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(addrs, ",")})
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	return c
}

var seq atomic.Int64

// NewNamespace returns a namespace name no other test uses: prefix, the
// time and a count.
func NewNamespace(prefix string) string {
	return fmt.Sprintf("%s%d-%d", prefix, time.Now().UnixNano(), seq.Add(1))
}

// Namespace returns NewNamespace(prefix) and removes its keys from rdb
// when t ends (before the clients that Client made for t are closed, when
// it is called after Client).
func Namespace(t testing.TB, rdb redis.UniversalClient, prefix string) string {
	t.Helper()
	ns := NewNamespace(prefix)
	CleanupNamespace(t, rdb, ns)
	return ns
}

// CleanupNamespace removes the keys of namespace ns from rdb when t ends.
func CleanupNamespace(t testing.TB, rdb redis.UniversalClient, ns string) {
	t.Helper()
	t.Cleanup(func() { Clean(context.Background(), rdb, ns) })
}

// Clean deletes the keys of namespace ns (every primary of a cluster). An
// error is not reported: what it leaves on a test server is harmless.
func Clean(ctx context.Context, rdb redis.UniversalClient, ns string) {
	_ = rediskeys.Delete(ctx, rdb, rediskeys.Namespace(ns))
}
