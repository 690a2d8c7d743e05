package lua

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redistest"
)

var nsSeq atomic.Int64

// testEnv is one store on a fresh namespace, on miniredis or on the
// redis-server named by WEIR_REDIS_URL.
type testEnv struct {
	store *Store
	rdb   *redis.Client
	mini  *miniredis.Miniredis // nil on a real server
	ns    string
	now   *atomic.Int64 // test clock, ms
}

func realRedis() bool { return os.Getenv("WEIR_REDIS_URL") != "" }

// newEnv returns a store with a test clock starting at a fixed time.
func newEnv(t testing.TB, cfg engine.Config) *testEnv {
	t.Helper()
	e := &testEnv{now: new(atomic.Int64)}
	e.now.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
	if url := os.Getenv("WEIR_REDIS_URL"); url != "" {
		opt, err := redis.ParseURL(url)
		if err != nil {
			t.Fatal(err)
		}
		e.rdb = redis.NewClient(opt)
	} else {
		e.mini = miniredis.RunT(t)
		e.rdb = redis.NewClient(&redis.Options{Addr: e.mini.Addr()})
	}
	e.ns = fmt.Sprintf("t%d-%d", time.Now().UnixNano(), nsSeq.Add(1))
	s, err := New(e.rdb, Options{Namespace: e.ns, Config: cfg, Clock: func() time.Time { return time.UnixMilli(e.now.Load()) }})
	if err != nil {
		t.Fatal(err)
	}
	e.store = s
	t.Cleanup(func() {
		if e.mini == nil {
			ctx := context.Background()
			iter := e.rdb.Scan(ctx, 0, "weir:{"+e.ns+":*", 1000).Iterator()
			var ks []string
			for iter.Next(ctx) {
				ks = append(ks, iter.Val())
			}
			if len(ks) > 0 {
				e.rdb.Del(ctx, ks...)
			}
		}
		e.rdb.Close()
	})
	return e
}

func (e *testEnv) advance(d time.Duration) { e.now.Add(d.Milliseconds()) }
func (e *testEnv) clock() time.Time        { return time.UnixMilli(e.now.Load()) }

// privateRedis starts a redis-server of the test's own (for tests that
// change server-wide settings: maxmemory, the script cache, SLOWLOG), when
// WEIR_REDIS_URL says a real server is wanted and the binary is installed.
func privateRedis(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(redistest.Private(t))
	t.Cleanup(func() { c.Close() })
	return c
}

// newPrivateEnv is newEnv on a private redis-server.
func newPrivateEnv(t testing.TB, cfg engine.Config) *testEnv {
	t.Helper()
	rdb := privateRedis(t)
	e := &testEnv{now: new(atomic.Int64), rdb: rdb, ns: "private"}
	e.now.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
	s, err := New(rdb, Options{Namespace: e.ns, Config: cfg, Clock: func() time.Time { return time.UnixMilli(e.now.Load()) }})
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

// sentinel returns the engine sentinel an error matches (nil for nil).
func sentinel(err error) error {
	if e := engine.Sentinel(err); e != nil {
		return e
	}
	return err
}

func normSettled(ss []engine.Settled) []engine.Settled {
	if ss == nil {
		return nil
	}
	out := slices.Clone(ss)
	for i := range out {
		out[i].Err = sentinel(out[i].Err)
	}
	return out
}

// diffClient is one Redis for every rapid run of a test.
func diffClient(t *testing.T) redis.UniversalClient {
	if url := os.Getenv("WEIR_REDIS_URL"); url != "" {
		opt, err := redis.ParseURL(url)
		if err != nil {
			t.Fatal(err)
		}
		c := redis.NewClient(opt)
		t.Cleanup(func() { c.Close() })
		return c
	}
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { c.Close() })
	return c
}

func cleanNamespace(ctx context.Context, rdb redis.UniversalClient, ns string) {
	iter := rdb.Scan(ctx, 0, "weir:{"+ns+":*", 1000).Iterator()
	var ks []string
	for iter.Next(ctx) {
		ks = append(ks, iter.Val())
	}
	if len(ks) > 0 {
		rdb.Del(ctx, ks...)
	}
}
