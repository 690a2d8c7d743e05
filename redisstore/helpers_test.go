package redisstore

import (
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/internal/testclock"
)

// testEnv is one store on a fresh namespace, on miniredis or on the
// redis-server named by WEIR_REDIS_URL.
type testEnv struct {
	store *Store
	rdb   *redis.Client
	mini  *miniredis.Miniredis // nil on a real server
	ns    string
	clk   *testclock.Clock
}

func realRedis() bool { return redistest.Wanted() }

// newEnv returns a store with a test clock starting at a fixed time.
func newEnv(t testing.TB, cfg engine.Config) *testEnv {
	t.Helper()
	srv := redistest.Default(t)
	e := &testEnv{clk: testclock.New(), mini: srv.Mini}
	e.rdb = redistest.Client(t, srv.Options)
	e.ns = redistest.Namespace(t, e.rdb, "t")
	s, err := New(e.rdb, Options{Namespace: e.ns, Config: cfg, Clock: e.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	e.store = s
	return e
}

func (e *testEnv) advance(d time.Duration) { e.clk.Advance(d) }
func (e *testEnv) clock() time.Time        { return e.clk.Now() }

// privateRedis starts a redis-server of the test's own (for tests that
// change server-wide settings: maxmemory, the script cache, SLOWLOG), when
// WEIR_REDIS_URL says a real server is wanted and the binary is installed.
func privateRedis(t testing.TB) *redis.Client {
	t.Helper()
	return redistest.Client(t, redistest.Private(t))
}

// newPrivateEnv is newEnv on a private redis-server.
func newPrivateEnv(t testing.TB, cfg engine.Config) *testEnv {
	t.Helper()
	rdb := privateRedis(t)
	e := &testEnv{clk: testclock.New(), rdb: rdb, ns: "private"}
	s, err := New(rdb, Options{Namespace: e.ns, Config: cfg, Clock: e.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	e.store = s
	return e
}

// newOwnEnv is newPrivateEnv when a real server is wanted, else newEnv:
// for tests that change or measure server-wide state (flushes, SLOWLOG).
func newOwnEnv(t testing.TB, cfg engine.Config) *testEnv {
	t.Helper()
	if realRedis() {
		return newPrivateEnv(t, cfg)
	}
	return newEnv(t, cfg)
}

// diffClient is one Redis for every rapid run of a test.
func diffClient(t *testing.T) redis.UniversalClient {
	return redistest.Client(t, redistest.Default(t).Options)
}
